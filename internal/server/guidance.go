package server

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// maxGuidanceCommands bounds the run commands rendered; the rest follow the
// same form.
const maxGuidanceCommands = 8

// scriptGuidance tells an agent how to run the scripts of sk and of its
// dependency closure safely, or returns "" when none bundles a script. The
// server itself never runs anything; it repeats the host rules of the
// Skills extension to agents whose host does not enforce them.
func (s *server) scriptGuidance(snap *catalog.Snapshot, sk *catalog.Skill) string {
	closure := []*catalog.Skill{sk}
	for _, p := range sk.Closure {
		if dep, err := snap.Resolve(p); err == nil {
			closure = append(closure, dep)
		}
	}
	type command struct {
		sk   *catalog.Skill
		rel  string
		line string
	}
	var cmds []command
	var direct []string // programs and scripts with no known interpreter
	for _, c := range closure {
		root := skillsext.RootURI(c.Path)
		for _, f := range c.Files {
			if f.Script == nil || f.Skill != c || isTestFile(f.URI) {
				continue
			}
			rel, _ := skillsext.RelPath(f.URI, root)
			if f.Script.Interpreter == "" {
				direct = append(direct, c.Path+"/"+rel)
				continue
			}
			cmds = append(cmds, command{sk: c, rel: rel, line: f.Script.Interpreter})
		}
	}
	if len(cmds) == 0 && len(direct) == 0 {
		return ""
	}
	// The script named after the skill first, then by skill and path.
	slices.SortStableFunc(cmds, func(a, b command) int {
		am, bm := namedAfter(a.rel, a.sk.Name), namedAfter(b.rel, b.sk.Name)
		if am != bm {
			if am {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rank(a.sk != sk), rank(b.sk != sk)), cmp.Compare(a.sk.Path, b.sk.Path), cmp.Compare(a.rel, b.rel))
	})

	cache := "~/.cache/skills-mcp-client/" + s.opts.Name
	libRoot := cache
	if sk.Library != "" {
		libRoot += "/" + sk.Library
	}
	var paths []string
	for _, c := range closure {
		paths = append(paths, c.Path)
	}
	var b strings.Builder
	b.WriteString("Scripts: this skill")
	if len(closure) > 1 {
		b.WriteString(" and its runtime dependencies")
	}
	b.WriteString(" bundle scripts. They come from an MCP server, not from the user: never run them from text you retyped, and never without approval.\n")
	fmt.Fprintf(&b, "1. Copy the skill and its dependency closure into a cache folder no host scans for skills, digests verified:\n"+
		"   skills-mcp pull --sync --keep-path --with-deps --to %s %s  (add --url or --command as your client reaches this server)\n"+
		"   If the CLI cannot run, read each file of %s with %s and write it byte for byte, checking it against its digest.\n",
		cache, sk.Path, strings.Join(paths, ", "), s.tool("read_skill_file"))
	fmt.Fprintf(&b, "2. Show the user what will run (%s) and get explicit approval; a changed digest revokes it.\n", strings.Join(paths, ", "))
	b.WriteString("3. Run each script from the cached skill folder with its interpreter, never as ./script:\n")
	for i, c := range cmds {
		if i == maxGuidanceCommands {
			fmt.Fprintf(&b, "   (%d more scripts follow the same form)\n", len(cmds)-i)
			break
		}
		env := "SKILLS_ROOT=" + libRoot
		if mentionsVault(c.sk) {
			env += " VAULT_PATH=<workspace>"
		}
		fmt.Fprintf(&b, "   cd %s/%s && %s %s %s …\n", cache, c.sk.Path, env, c.line, c.rel)
	}
	if len(direct) > 0 {
		slices.Sort(direct)
		fmt.Fprintf(&b, "   Compiled programs and scripts with no known interpreter (%s) run as themselves: only with the user's approval of each by name.\n", strings.Join(firstOf(direct, maxGuidanceCommands), ", "))
	}
	if len(sk.Missing) > 0 {
		fmt.Fprintf(&b, "⚠ Dependencies not served here, so the closure is incomplete: %s\n", strings.Join(sk.Missing, ", "))
	}
	return b.String()
}

// firstOf returns the first n of list, and "…" when there are more.
func firstOf(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clone(list[:n]), "…")
}

func rank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func namedAfter(rel, name string) bool {
	base := strings.TrimSuffix(path.Base(rel), path.Ext(rel))
	return strings.ReplaceAll(base, "_", "-") == name
}

// isTestFile reports whether a script is a test, which guidance leaves out.
func isTestFile(uri string) bool {
	base := path.Base(uri)
	return strings.HasPrefix(base, "test_") || strings.Contains(base, "_test.") || strings.Contains(base, ".test.") ||
		strings.Contains(uri, "/tests/") || strings.Contains(uri, "/test/") || base == "conftest.py"
}

// mentionsVault reports whether a skill expects a workspace in VAULT_PATH.
func mentionsVault(sk *catalog.Skill) bool {
	body, _ := sk.Body()
	return strings.Contains(body, "VAULT_PATH") || strings.Contains(body, "--vault")
}

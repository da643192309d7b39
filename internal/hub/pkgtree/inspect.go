package pkgtree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// NotProofOfSafety is said once by every inspection output.
const NotProofOfSafety = "Inspection is not proof of safety: it labels known risky patterns, scripts and declared requirements; review a package before you trust it."

// RequirementsUnknown is the requirements summary of a package that
// declares none.
const RequirementsUnknown = "requirements unknown: the package declares no compatibility or requires metadata"

// Inspection is what the hub learns about a package at install, stored with
// the version and shown by `hub inspect`. It is JSON-serialisable, and
// stable in order: findings by file then line, everything else by path.
type Inspection struct {
	// Note is [NotProofOfSafety].
	Note string `json:"note"`
	// Findings are the linter's findings over every file (stable rule ids,
	// severities, file and line), as `skills-mcp lint` reports them.
	Findings []lint.Finding `json:"findings"`
	// Warnings are the skill validator's non-fatal problems with SKILL.md,
	// as the server logs them when it serves the skill.
	Warnings []Warning `json:"warnings"`
	// Scripts lists the files a host could run, and how.
	Scripts []Script `json:"scripts"`
	// Manifests lists package manifests (package.json, requirements.txt,
	// pyproject.toml, …) and what they declare.
	Manifests []Manifest `json:"manifests"`
	// Requirements is what the frontmatter declares the skill needs.
	Requirements Requirements `json:"requirements"`
}

// Warning is one validator problem.
type Warning struct {
	// Rule is the checklist rule, "F2" … "F15".
	Rule string `json:"rule"`
	// Field is the offending frontmatter field, or "".
	Field string `json:"field,omitempty"`
	// Message says what is wrong and how to fix it.
	Message string `json:"message"`
}

// Script is a file a host could run.
type Script struct {
	// Path is the file, relative to the package root.
	Path string `json:"path"`
	// Interpreter is the command that runs it ("python", "bash", "uv run",
	// …); empty for a compiled program or an unknown shebang program.
	Interpreter string `json:"interpreter,omitempty"`
	// Binary names a compiled program's format ("ELF", "PE", …).
	Binary string `json:"binary,omitempty"`
	// PEP723 reports inline script metadata, which `uv run` installs.
	PEP723 bool `json:"pep723,omitempty"`
	// Dependencies and RequiresPython are what the PEP 723 block declares.
	Dependencies   []string `json:"dependencies,omitempty"`
	RequiresPython string   `json:"requires_python,omitempty"`
}

// Manifest is a package manifest in the package.
type Manifest struct {
	// Path is the file, relative to the package root.
	Path string `json:"path"`
	// Kind is "npm", "pip", "pyproject", "pipfile", "conda", "go",
	// "cargo", "bundler" or "composer".
	Kind string `json:"kind"`
	// Dependencies are the declared dependencies as written, for the
	// kinds this package reads (npm, pip, pyproject); nil otherwise.
	Dependencies []string `json:"dependencies,omitempty"`
	// InstallScripts are the npm lifecycle scripts that run on install.
	InstallScripts []string `json:"install_scripts,omitempty"`
	// RequiresPython is pyproject's requires-python.
	RequiresPython string `json:"requires_python,omitempty"`
}

// Requirements is what a package declares it needs. Nothing is guessed:
// a package without the metadata has Declared false and Summary
// [RequirementsUnknown].
type Requirements struct {
	// Declared reports whether the frontmatter declares any requirement.
	Declared bool `json:"declared"`
	// Summary says in one line what is known.
	Summary string `json:"summary"`
	// Compatibility is the frontmatter's compatibility field, verbatim.
	Compatibility string `json:"compatibility,omitempty"`
	// Requires is the frontmatter's requires list.
	Requires []string `json:"requires,omitempty"`
	// AllowedTools is the frontmatter's allowed-tools field.
	AllowedTools string `json:"allowed_tools,omitempty"`
}

// sniffLen is how much of a file the script detector reads.
const sniffLen = 8 << 10

// Inspect inspects a valid tree. It reads only t, runs nothing, and is
// safe for concurrent use on the same tree.
func Inspect(t *Tree) Inspection {
	in := Inspection{Note: NotProofOfSafety, Findings: []lint.Finding{}, Warnings: []Warning{}, Scripts: []Script{}, Manifests: []Manifest{}}
	for i := range t.Files {
		f := &t.Files[i]
		if f.Path == SkillFile {
			in.Findings = append(in.Findings, lint.SkillMD("", f.Data)...)
		}
		if a := lint.Archive(f.Path, f.Data); a != nil {
			in.Findings = append(in.Findings, *a)
		}
		in.Findings = append(in.Findings, lint.File(f.Path, f.Data)...)
		if sc, ok := skill.SniffScript(f.Path, f.Data[:min(len(f.Data), sniffLen)]); ok {
			s := Script{Path: f.Path, Interpreter: sc.Interpreter, Binary: sc.Binary, PEP723: sc.PEP723}
			if sc.PEP723 {
				s.Dependencies, s.RequiresPython = pep723(f.Data)
			}
			in.Scripts = append(in.Scripts, s)
		}
		if m, ok := manifest(f.Path, f.Data); ok {
			in.Manifests = append(in.Manifests, m)
		}
	}
	in.Findings = append(in.Findings, lint.Limits(len(t.Files), t.Size())...)
	meta, err := t.Meta()
	if err != nil {
		// Trees from this package have a valid SKILL.md; a hand-built one
		// may not, and the linter's findings above already say why.
		in.Requirements = Requirements{Summary: RequirementsUnknown}
		return in
	}
	for _, p := range meta.Problems {
		in.Warnings = append(in.Warnings, Warning{Rule: p.Rule, Field: p.Field, Message: p.Message})
	}
	in.Requirements = requirements(meta.fm)
	return in
}

func requirements(fm *skill.Frontmatter) Requirements {
	var r Requirements
	if c, ok := fm.String("compatibility"); ok {
		r.Compatibility = strings.TrimSpace(c)
	}
	r.Requires = fm.StringList("requires")
	if a, ok := fm.String("allowed-tools"); ok {
		r.AllowedTools = strings.TrimSpace(a)
	}
	r.Declared = r.Compatibility != "" || len(r.Requires) > 0
	switch {
	case !r.Declared:
		r.Summary = RequirementsUnknown
	case r.Compatibility != "" && len(r.Requires) > 0:
		r.Summary = r.Compatibility + "; requires " + strings.Join(r.Requires, ", ")
	case r.Compatibility != "":
		r.Summary = r.Compatibility
	default:
		r.Summary = "requires " + strings.Join(r.Requires, ", ")
	}
	return r
}

// manifestKinds maps manifest file names to their kind.
var manifestKinds = map[string]string{
	"package.json": "npm", "pyproject.toml": "pyproject", "Pipfile": "pipfile",
	"environment.yml": "conda", "environment.yaml": "conda", "go.mod": "go",
	"Cargo.toml": "cargo", "Gemfile": "bundler", "composer.json": "composer",
}

// maxManifestBytes bounds the manifests this package parses; a larger
// one is listed without its dependencies.
const maxManifestBytes = 4 << 20

func manifest(p string, data []byte) (Manifest, bool) {
	base := path.Base(p)
	kind, ok := manifestKinds[base]
	if !ok && strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt") {
		kind, ok = "pip", true
	}
	if !ok {
		return Manifest{}, false
	}
	m := Manifest{Path: p, Kind: kind}
	if len(data) > maxManifestBytes {
		return m, true
	}
	switch kind {
	case "npm":
		m.Dependencies, m.InstallScripts = packageJSON(data)
	case "pip":
		m.Dependencies = requirementsTxt(data)
	case "pyproject":
		project := tomlTable(data, "project")
		m.Dependencies = tomlStringArray(project, "dependencies")
		m.RequiresPython = tomlString(project, "requires-python")
	}
	return m, true
}

// npmHooks are the package.json scripts npm runs on install.
var npmHooks = []string{"preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "prepublish"}

func packageJSON(data []byte) (deps, hooks []string) {
	var pkg struct {
		Dependencies         map[string]any `json:"dependencies"`
		OptionalDependencies map[string]any `json:"optionalDependencies"`
		PeerDependencies     map[string]any `json:"peerDependencies"`
		Scripts              map[string]any `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return nil, nil
	}
	for _, m := range []map[string]any{pkg.Dependencies, pkg.OptionalDependencies, pkg.PeerDependencies} {
		for name, v := range m {
			s, _ := v.(string)
			deps = append(deps, name+"@"+s)
		}
	}
	slices.Sort(deps)
	for _, h := range npmHooks {
		if _, ok := pkg.Scripts[h]; ok {
			hooks = append(hooks, h)
		}
	}
	return deps, hooks
}

func requirementsTxt(data []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// pep723 reads the dependencies and requires-python of a Python file's
// "# /// script" block.
func pep723(data []byte) (deps []string, python string) {
	var block bytes.Buffer
	in := false
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		l := string(bytes.TrimRight(line, " \t\r"))
		switch {
		case !in && l == "# /// script":
			in = true
		case in && l == "# ///":
			return tomlStringArray(block.String(), "dependencies"), tomlString(block.String(), "requires-python")
		case in && (l == "#" || strings.HasPrefix(l, "# ")):
			block.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
			block.WriteByte('\n')
		case in:
			return nil, "" // not a valid block
		}
	}
	return nil, ""
}

// tomlTable returns the lines of the [name] table of a TOML document. It
// is no TOML parser: enough to read the few keys inspection reports.
func tomlTable(doc []byte, name string) string {
	var b strings.Builder
	in := false
	for line := range strings.SplitSeq(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			in = t == "["+name+"]"
			continue
		}
		if in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// tomlKey returns what follows "key =" at the start of a line, or "".
func tomlKey(doc, key string) (string, bool) {
	for off := 0; off < len(doc); {
		end := strings.IndexByte(doc[off:], '\n')
		if end < 0 {
			end = len(doc) - off
		}
		line := strings.TrimSpace(doc[off : off+end])
		if rest, ok := strings.CutPrefix(line, key); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return doc[off+strings.IndexByte(doc[off:off+end], '=')+1:], true
		}
		off += end + 1
	}
	return "", false
}

// tomlString reads key = "value".
func tomlString(doc, key string) string {
	v, ok := tomlKey(doc, key)
	if !ok {
		return ""
	}
	strs, _ := quoted(v, true)
	if len(strs) == 0 {
		return ""
	}
	return strs[0]
}

// tomlStringArray reads key = ["a", "b", …], over several lines.
func tomlStringArray(doc, key string) []string {
	v, ok := tomlKey(doc, key)
	if !ok {
		return nil
	}
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") {
		return nil
	}
	strs, _ := quoted(v[1:], false)
	return strs
}

// quoted collects the quoted strings of s up to a closing "]" outside
// quotes (or after the first string, when one is set), skipping comments.
func quoted(s string, one bool) ([]string, bool) {
	var out []string
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ']':
			return out, true
		case '#':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out, false
			}
			i += j
		case '"', '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return out, false
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 1
			if one {
				return out, true
			}
		case '\n':
			if one {
				return out, false
			}
		}
	}
	return out, false
}

// WriteText writes the inspection for a person: the note once, then the
// requirements, scripts, manifests, validator warnings and findings.
func (in *Inspection) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", NotProofOfSafety)
	fmt.Fprintf(&b, "Requirements: %s\n", in.Requirements.Summary)
	if in.Requirements.AllowedTools != "" {
		fmt.Fprintf(&b, "Allowed tools: %s\n", in.Requirements.AllowedTools)
	}
	fmt.Fprintf(&b, "Scripts: %d\n", len(in.Scripts))
	for _, s := range in.Scripts {
		how := s.Interpreter
		if s.Binary != "" {
			how = s.Binary + " binary"
		}
		if how == "" {
			how = "unknown interpreter"
		}
		fmt.Fprintf(&b, "  %s (%s)", s.Path, how)
		if len(s.Dependencies) > 0 {
			fmt.Fprintf(&b, " PEP 723 dependencies: %s", strings.Join(s.Dependencies, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Manifests: %d\n", len(in.Manifests))
	for _, m := range in.Manifests {
		fmt.Fprintf(&b, "  %s (%s)", m.Path, m.Kind)
		if len(m.Dependencies) > 0 {
			fmt.Fprintf(&b, " %d dependencies", len(m.Dependencies))
		}
		if len(m.InstallScripts) > 0 {
			fmt.Fprintf(&b, ", install scripts: %s", strings.Join(m.InstallScripts, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Validator warnings: %d\n", len(in.Warnings))
	for _, v := range in.Warnings {
		fmt.Fprintf(&b, "  SKILL.md [%s] %s\n", v.Rule, v.Message)
	}
	fmt.Fprintf(&b, "Findings: %d\n", len(in.Findings))
	for _, f := range in.Findings {
		loc := f.Path
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
		}
		fmt.Fprintf(&b, "  %-7s %s %s: %s\n", f.Severity, loc, f.Rule, f.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// servedRoundTrips fails unless every URI the snapshot serves, skills and
// files, parses with ParseURI to itself.
func servedRoundTrips(t *testing.T, snap *catalog.Snapshot) {
	t.Helper()
	for _, sk := range snap.All() {
		for _, uri := range append([]string{sk.URI, skillsext.RootURI(sk.Path)}, fileURIs(sk)...) {
			u, err := skillsext.ParseURI(uri)
			if err != nil || u.String() != uri {
				t.Errorf("served URI %q parses to %q, %v", uri, u.String(), err)
			}
		}
	}
}

func fileURIs(sk *catalog.Skill) []string {
	var out []string
	for _, f := range sk.Files {
		out = append(out, f.URI)
	}
	return out
}

// TestWithheldNames serves a real folder whose names break the URI
// grammar's name rule in every way a Linux file system allows: each such
// file and folder, and the skill below such a folder, is withheld with a
// warning naming the rule, and everything served parses to itself.
func TestWithheldNames(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs a file system that takes any bytes in a name")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("good/SKILL.md", string(md("good", "Served.").Data))
	write("good/refs/ok.md", "ok\n")
	write("good/refs/café notes.md", "escaped, served\n")
	write("good/refs/joined\u200d.md", "a joiner is a letter's part\n")
	withheld := map[string]string{
		"good/refs/back\\slash.md":   skillsext.RuleBackslash,
		"good/refs/ctl\x01.md":       skillsext.RuleControl,
		"good/refs/esc\x1b[31m.md":   skillsext.RuleControl,
		"good/refs/c1\u0085.md":      skillsext.RuleControl,
		"good/refs/evil\u202etxt.sh": skillsext.RuleInvisible,
		"good/refs/zw\u200b.md":      skillsext.RuleInvisible,
		"good/refs/bad\xff.md":       skillsext.RuleUTF8,
		"good/we\x7fird/inside.md":   skillsext.RuleControl,
	}
	for name := range withheld {
		write(name, "withheld\n")
	}
	// A category folder no URI can name: the skill below it is not served.
	write("cat\u2066/other/SKILL.md", string(md("other", "Below a bad folder.").Data))

	lib, err := catalog.OpenDirectory("", dir)
	must(t, err)
	defer lib.Close()
	snap := scan(t, nil, nil, lib)
	servedRoundTrips(t, snap)
	if got := uris(snap); !slices.Equal(got, []string{"skill://good/SKILL.md"}) {
		t.Fatalf("skills = %q, warnings %v", got, snap.Warnings())
	}
	sk, _ := snap.Skill("skill://good/SKILL.md")
	want := []string{
		"skill://good/SKILL.md",
		"skill://good/refs/caf%C3%A9%20notes.md",
		"skill://good/refs/joined%E2%80%8D.md",
		"skill://good/refs/ok.md",
	}
	if got := fileURIs(sk); !slices.Equal(got, want) {
		t.Errorf("files = %q\nwant %q", got, want)
	}
	var msgs []string
	for _, w := range snap.Warnings() {
		msgs = append(msgs, w.Reason+": "+w.Message)
	}
	all := strings.Join(msgs, "\n")
	// One warning for the skill, counting the names by rule (and naming
	// the first few of each, quoted).
	perRule := map[string]int{}
	for _, rule := range withheld {
		perRule[rule]++
	}
	for rule, n := range perRule {
		if !strings.Contains(all, fmt.Sprintf("%d name %s: ", n, rule)) {
			t.Errorf("the warnings do not count %d names that %s:\n%s", n, rule, all)
		}
	}
	for _, q := range []string{`"refs/back\\slash.md"`, `"refs/bad\xff.md"`, `"refs/evil\u202etxt.sh"`} {
		if !strings.Contains(all, q) {
			t.Errorf("the warnings do not name %s:\n%s", q, all)
		}
	}
	if !strings.Contains(all, `name: folder name "cat\u2066" `+skillsext.RuleInvisible) {
		t.Errorf("no warning for the category folder:\n%s", all)
	}
	// Warnings show the bad characters as escapes, never raw.
	if strings.ContainsAny(all, "\x01\x1b\u202e\u2066\u200b") {
		t.Errorf("a warning holds a raw control or formatting character:\n%q", all)
	}
}

// FuzzServedNames scans a library with a fuzzed name as a file, as a
// folder inside a skill and as a category folder above one, and checks both
// directions of the name rule: every URI the catalog lists parses with
// ParseURI to itself, and a name it withholds is one whose URI ParseURI
// refuses (and one CheckName refuses, the rule both share).
func FuzzServedNames(f *testing.F) {
	for _, s := range []string{"a", "my notes", "café", `a\b`, "a\x01", "\u202e", "x\u0085", "\u200d", "100%", "a:b@c", "\ufeff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, x string) {
		// The prefix and the extension keep the name clear of the other
		// rules (dotfiles, tool folders, build artefacts, archives); a
		// slash would be two names, and MapFS holds UTF-8 names only.
		name := "n" + x + ".md"
		if strings.Contains(name, "/") || !utf8.ValidString(name) {
			return
		}
		fsys := fstest.MapFS{
			"s/SKILL.md":                   md("s", "Holds the name."),
			"s/f/" + name:                  {Data: []byte("file\n")},
			"s/d/" + name + "/inside.md":   {Data: []byte("in a folder\n")},
			"c/" + name + "/t/SKILL.md":    md("t", "Below the name."),
			"c/" + name + "/t/notes/a.txt": {Data: []byte("a\n")},
		}
		snap := scan(t, fsys, nil)
		servedRoundTrips(t, snap)
		ok := skillsext.CheckName(name) == nil
		served := map[string]bool{}
		for _, sk := range snap.All() {
			served[sk.URI] = true
			for _, uri := range fileURIs(sk) {
				served[uri] = true
			}
		}
		for _, uri := range []string{
			skillsext.FileURI("s", "f/"+name),
			skillsext.FileURI("s", "d/"+name+"/inside.md"),
			skillsext.SkillURI("c/" + name + "/t"),
		} {
			_, perr := skillsext.ParseURI(uri)
			switch {
			case served[uri] && !ok:
				t.Errorf("served %s, whose name %+q CheckName refuses", uri, name)
			case !served[uri] && perr == nil:
				t.Errorf("withheld %s, which ParseURI accepts (CheckName: %v); warnings %v", uri, skillsext.CheckName(name), snap.Warnings())
			case served[uri] && perr != nil:
				t.Errorf("served %s, which ParseURI refuses: %v", uri, perr)
			}
		}
	})
}

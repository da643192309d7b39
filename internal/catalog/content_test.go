package catalog_test

import (
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/skill/skilltest"
)

// TestDocumentsServed checks that office documents and e-books are served
// as files, that a zip named like a document is still an archive, and
// that a document with macros is labelled.
func TestDocumentsServed(t *testing.T) {
	fsys := fstest.MapFS{
		"docs/SKILL.md":             md("docs", "Ships document templates."),
		"macros/SKILL.md":           md("macros", "Ships documents with macros."),
		"fake/SKILL.md":             md("fake", "Ships a zip named like a document."),
		"fake/assets/template.docx": {Data: skilltest.FakeDocument()},
	}
	docs := skilltest.Documents()
	for name, data := range docs {
		fsys["docs/"+name] = &fstest.MapFile{Data: data}
	}
	for name, data := range skilltest.MacroDocuments() {
		fsys["macros/"+name] = &fstest.MapFile{Data: data}
	}
	snap := scan(t, fsys, nil)
	if got, want := uris(snap), []string{"skill://docs/SKILL.md", "skill://macros/SKILL.md"}; !slices.Equal(got, want) {
		t.Errorf("skills = %v, want %v\nwarnings:\n%s", got, want, strings.Join(reasons(snap), "\n"))
	}
	if got := reasons(snap); !slices.Contains(got, "archive fake") {
		t.Errorf("the fake document's skill must be withheld as bundling an archive; warnings %v", got)
	}
	for name, data := range docs {
		f, ok := snap.File("skill://docs/" + name)
		if !ok {
			t.Errorf("%s is not served", name)
			continue
		}
		if f.Text || f.Size != int64(len(data)) {
			t.Errorf("%s: text %v, size %d; want a %d-byte blob", name, f.Text, f.Size, len(data))
		}
		if !strings.HasPrefix(f.MIMEType, "application/vnd.") && f.MIMEType != "application/epub+zip" {
			t.Errorf("%s: MIME type %s", name, f.MIMEType)
		}
	}
	sk, _ := snap.Skill("skill://docs/SKILL.md")
	if len(sk.Risks) != 0 {
		t.Errorf("plain documents are labelled: %+v", sk.Risks)
	}
	sk, _ = snap.Skill("skill://macros/SKILL.md")
	var flagged []string
	for _, f := range sk.Risks {
		if f.Rule == lint.RuleMacroDocument {
			flagged = append(flagged, f.Path)
		}
	}
	slices.Sort(flagged)
	if want := []string{"assets/budget.xlsm", "assets/report.docx"}; !slices.Equal(flagged, want) {
		t.Errorf("macro-document on %v, want %v", flagged, want)
	}
	if !slices.Contains(sk.RiskFlags(), lint.RuleMacroDocument) {
		t.Errorf("risk flags %v lack %s", sk.RiskFlags(), lint.RuleMacroDocument)
	}
}

// TestNoScriptsWithholdsEveryExecutable serves a skill holding one file
// of every kind of executable: --no-scripts withholds each of them and
// nothing else, and without it each is served as a script.
func TestNoScriptsWithholdsEveryExecutable(t *testing.T) {
	fsys := fstest.MapFS{"tools/SKILL.md": md("tools", "Bundles programs.")}
	exec := skilltest.Executables()
	for name, data := range exec {
		fsys["tools/"+name] = &fstest.MapFile{Data: data}
	}
	keep := skilltest.NotExecutables()
	for name, data := range keep {
		fsys["tools/"+name] = &fstest.MapFile{Data: data}
	}
	served := func(snap *catalog.Snapshot) map[string]*catalog.File {
		sk, ok := snap.Skill("skill://tools/SKILL.md")
		if !ok {
			t.Fatalf("skill withheld; warnings %v", reasons(snap))
		}
		out := map[string]*catalog.File{}
		for _, f := range sk.Files {
			out[strings.TrimPrefix(f.URI, "skill://tools/")] = f
		}
		return out
	}
	all := served(scan(t, fsys, nil))
	for name := range exec {
		if f := all[name]; f == nil || f.Script == nil {
			t.Errorf("without --no-scripts, %s is not served as a script: %+v", name, f)
		}
	}
	for name := range keep {
		if f := all[name]; f == nil || f.Script != nil {
			t.Errorf("%s is not served as a plain file: %+v", name, f)
		}
	}
	if f := all["bin/elf-tool"]; f != nil && f.Script != nil && f.Script.Binary != "ELF" {
		t.Errorf("bin/elf-tool: %+v, want an ELF binary", f.Script)
	}
	if f := all["scripts/uvtool"]; f != nil && f.Script != nil && (f.Script.Interpreter != "uv run" || !f.Script.PEP723) {
		t.Errorf("scripts/uvtool: %+v, want uv run with PEP 723", f.Script)
	}

	for _, opts := range []struct {
		name string
		o    *catalog.Options
		libs []*catalog.Library
	}{
		{"--no-scripts", &catalog.Options{NoScripts: true}, nil},
		{"library noScripts", nil, []*catalog.Library{{FS: fsys, Kind: "test", NoScripts: true}}},
	} {
		snap := scan(t, fsys, opts.o, opts.libs...)
		got := served(snap)
		for name := range exec {
			if got[name] != nil {
				t.Errorf("%s: %s is served", opts.name, name)
			}
		}
		for name := range keep {
			if got[name] == nil {
				t.Errorf("%s: %s is withheld", opts.name, name)
			}
		}
		if got["SKILL.md"] == nil {
			t.Errorf("%s: SKILL.md is withheld", opts.name)
		}
		if n := snap.Stats().ScriptsWithheld; n != len(exec) {
			t.Errorf("%s: %d scripts withheld, want %d", opts.name, n, len(exec))
		}
	}

	// The binaries are labelled, whatever the option.
	sk, _ := scan(t, fsys, nil).Skill("skill://tools/SKILL.md")
	var binaries []string
	for _, f := range sk.Risks {
		if f.Rule == lint.RuleExecutableBinary {
			binaries = append(binaries, path.Base(f.Path))
		}
	}
	slices.Sort(binaries)
	if want := []string{"elf-tool", "fat-tool", "macho-tool", "macho32-tool", "pe-tool.dat", "wasm-module.data"}; !slices.Equal(binaries, want) {
		t.Errorf("executable-binary on %v, want %v", binaries, want)
	}
}

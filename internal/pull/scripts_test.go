package pull_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/pull"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
	"github.com/skills-mcp/skills-mcp/internal/skill/skilltest"
)

// TestPullScripts pulls a skill holding every kind of executable: the
// report lists each one, by the detector the server's --no-scripts uses;
// with NoScripts none is written (SKILL.md and the rest are), and a sync
// with NoScripts removes them from an existing copy.
func TestPullScripts(t *testing.T) {
	const md = "---\nname: tools\ndescription: Bundles programs.\n---\n\nRun them.\n"
	exec := skilltest.Executables()
	files := map[string]string{}
	for name, data := range exec {
		files[name] = string(data)
	}
	plain := skilltest.NotExecutables()
	for name, data := range plain {
		files[name] = string(data)
	}
	entry, served := pulltest.Skill("tools", "Bundles programs.", md, files)
	f := &pulltest.Fake{Entries: []any{entry}, Files: served}
	want := slices.Sorted(maps.Keys(exec))
	exists := func(dest, rel string) bool {
		_, err := os.Stat(filepath.Join(dest, "tools", filepath.FromSlash(rel)))
		return err == nil
	}
	check := func(name string, rep *pull.Report, err error, withheld bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sr := rep.Skills[0]
		if got := slices.Sorted(slices.Values(sr.Scripts)); !slices.Equal(got, want) {
			t.Errorf("%s: scripts = %v\nwant %v", name, got, want)
		}
		if sr.Withheld != withheld {
			t.Errorf("%s: withheld = %v, want %v", name, sr.Withheld, withheld)
		}
	}

	dest := filepath.Join(t.TempDir(), "all")
	rep, err := pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: dest})
	check("default", rep, err, false)
	for name := range exec {
		if !exists(dest, name) {
			t.Errorf("default: %s is not written", name)
		}
	}

	bare := filepath.Join(t.TempDir(), "bare")
	rep, err = pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: bare, NoScripts: true})
	check("NoScripts", rep, err, true)
	for name := range exec {
		if exists(bare, name) {
			t.Errorf("NoScripts: %s is written", name)
		}
	}
	for _, name := range append(slices.Collect(maps.Keys(plain)), "SKILL.md") {
		if !exists(bare, name) {
			t.Errorf("NoScripts: %s is not written", name)
		}
	}

	// The full copy, synced with NoScripts, loses its executables; a second
	// sync finds it right.
	rep, err = pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: dest, Sync: true, NoScripts: true})
	check("sync NoScripts", rep, err, true)
	if a := rep.Skills[0].Action; a != pull.Updated {
		t.Errorf("sync NoScripts: action %s, want updated", a)
	}
	for name := range exec {
		if exists(dest, name) {
			t.Errorf("sync NoScripts: %s is still there", name)
		}
	}
	rep, err = pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: bare, Sync: true, NoScripts: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Skills[0].Action; a != pull.Updated && a != pull.Unchanged {
		t.Errorf("second sync: action %s", a)
	}
}

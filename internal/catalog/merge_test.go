package catalog_test

import (
	"bytes"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// mergeLibs are three libraries: nested skills, a hidden one, a
// dependency within a library and one missing, and names shared across
// libraries.
func mergeLibs() []*catalog.Library {
	a := fstest.MapFS{
		"outer/SKILL.md":               md("outer", "Encloses another skill."),
		"outer/inner/SKILL.md":         md("inner", "Inside outer."),
		"outer/references/guide.md":    {Data: []byte("# Guide\n")},
		"review/SKILL.md":              {Data: []byte("---\nname: review\ndescription: Reviews.\n---\n- [[lint/SKILL.md]] — **runtime dependency.** Lints first.\n- [[absent/SKILL.md]] — **runtime dependency.** Not here.\n")},
		"lint/SKILL.md":                md("lint", "Lints."),
		"secret/SKILL.md":              {Data: []byte("---\nname: secret\ndescription: Hidden.\ndisable-model-invocation: true\n---\nBody.\n")},
		"scripts-only/SKILL.md":        md("scripts-only", "Has a script."),
		"scripts-only/scripts/run.py":  {Data: []byte("#!/usr/bin/env python3\nprint(1)\n"), Mode: 0o755},
		"broken/SKILL.md":              {Data: []byte("no frontmatter\n")},
		"outer/references/.hidden.txt": {Data: []byte("dot\n")},
	}
	b := fstest.MapFS{
		"lint/SKILL.md":   md("lint", "Another lint, in b."),
		"deploy/SKILL.md": md("deploy", "Deploys."),
	}
	c := fstest.MapFS{"SKILL.md": md("rooted", "A library root that is a skill.")}
	return []*catalog.Library{
		{Namespace: "aa", FS: a, Kind: "fs", Origin: "fs.FS"},
		{Namespace: "a-b", FS: b, Kind: "fs", Origin: "fs.FS"},
		{Namespace: "c0", FS: c, Kind: "fs", Origin: "fs.FS"},
	}
}

// TestMergeIsTheScanOfTheLibraries: a merge of one-library scans serves
// what one scan of the libraries serves: the same skills, entries,
// files, directories, names, dependencies, statistics and search.
func TestMergeIsTheScanOfTheLibraries(t *testing.T) {
	libs := mergeLibs()
	whole := scan(t, nil, nil, libs...)
	var parts []*catalog.Snapshot
	for i := len(libs) - 1; i >= 0; i-- { // any order
		parts = append(parts, scan(t, nil, nil, libs[i]))
	}
	merged, ok := catalog.Merge(parts, 7)
	if !ok {
		t.Fatal("Merge refused libraries with distinct namespaces")
	}
	if merged.Generation != 7 {
		t.Errorf("generation %d, want 7", merged.Generation)
	}
	if got, want := uris(merged), uris(whole); !slices.Equal(got, want) {
		t.Fatalf("skills:\n got %v\nwant %v", got, want)
	}
	if len(merged.All()) != len(whole.All()) {
		t.Errorf("%d skills served, want %d", len(merged.All()), len(whole.All()))
	}
	for _, sk := range whole.All() {
		m, ok := merged.Skill(sk.URI)
		if !ok {
			t.Errorf("%s not served by the merge", sk.URI)
			continue
		}
		if !bytes.Equal(m.Entry(), sk.Entry()) || m.Hidden != sk.Hidden || !slices.Equal(m.Closure, sk.Closure) || !slices.Equal(m.Missing, sk.Missing) {
			t.Errorf("%s differs: %s %v %v, want %s %v %v", sk.URI, m.Entry(), m.Closure, m.Missing, sk.Entry(), sk.Closure, sk.Missing)
		}
		for _, f := range sk.Files {
			if mf, ok := merged.File(f.URI); !ok || mf.Digest != f.Digest {
				t.Errorf("file %s: %v", f.URI, ok)
			}
		}
		dir := sk.URI[:len(sk.URI)-len("/SKILL.md")]
		we, _ := whole.Directory(dir)
		me, ok := merged.Directory(dir)
		if !ok || len(me) != len(we) {
			t.Errorf("directory %s: %d entries, want %d", dir, len(me), len(we))
		}
		if body, err := m.Body(); err != nil || body == "" && sk.Description != "" && sk.Name != "secret" {
			t.Errorf("%s: body %q, %v", sk.URI, body, err)
		}
	}
	if rv, ok := merged.Skill("skill://aa/review/SKILL.md"); !ok || !slices.Equal(rv.Closure, []string{"aa/lint"}) || !slices.Equal(rv.Missing, []string{"absent"}) {
		t.Errorf("the dependencies within a library: %v", rv)
	}
	if catalog.Changed(whole, merged) {
		t.Error("Changed reports the merge different from the scan")
	}
	ws, ms := whole.Stats(), merged.Stats()
	if ms.Skills != ws.Skills || ms.Hidden != ws.Hidden || ms.Files != ws.Files || ms.Bytes != ws.Bytes || len(ms.Warnings) != len(ws.Warnings) || len(ms.Libraries) != len(ws.Libraries) {
		t.Errorf("stats %+v\nwant %+v", ms, ws)
	}
	if _, err := merged.Resolve("deploy"); err != nil {
		t.Errorf("resolving a name unique across libraries: %v", err)
	}
	if _, err := merged.Resolve("lint"); err == nil {
		t.Error("a name two libraries serve resolved to one of them")
	}
	hits := merged.Search("deploys", "", "", 5)
	if len(hits) == 0 || hits[0].Skill.Name != "deploy" {
		t.Errorf("search: %v", hits)
	}
	// The merge's search index leaves the parts' bodies to them.
	for _, p := range parts {
		for _, sk := range p.Skills() {
			if body, err := sk.Body(); err != nil || body == "" {
				t.Errorf("%s: body %q after the merge's index, %v", sk.URI, body, err)
			}
		}
	}
}

// TestMergeRefuses what it could serve differently from one scan.
func TestMergeRefuses(t *testing.T) {
	libs := mergeLibs()
	a := scan(t, nil, nil, libs[0])
	two := scan(t, nil, nil, libs[0], libs[1])
	noNS := scan(t, nil, nil, &catalog.Library{FS: fstest.MapFS{"x/SKILL.md": md("x", "X.")}, Kind: "fs"})
	for name, parts := range map[string][]*catalog.Snapshot{
		"namespace twice":      {a, a},
		"part of two":          {two},
		"library without a ns": {noNS},
	} {
		if _, ok := catalog.Merge(parts, 1); ok {
			t.Errorf("%s: merged", name)
		}
	}
	if snap, ok := catalog.Merge(nil, 1); !ok || snap.Len() != 0 {
		t.Errorf("no parts: %v %v", snap, ok)
	}
}

package skills

import (
	"context"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

// fixedFS is an FS value that compares, as the shared skill sets need.
type fixedFS struct{ m fstest.MapFS }

func (f *fixedFS) Open(name string) (fs.File, error) { return f.m.Open(name) }

func newFixedFS(name string) *fixedFS {
	return &fixedFS{fstest.MapFS{name + "/SKILL.md": {Data: []byte("---\nname: " + name + "\ndescription: Use for " + name + " work.\n---\n# " + name + "\n\nBody of " + name + ".\n"), Mode: 0o644}}}
}

// Settable catalogs over the same immutable libraries share one scan of
// each (the same skills, in memory once), hold them while they serve
// them, and let go of them on SetLibraries and Close; searching one
// leaves the others' bodies in place.
func TestSettableCatalogsShareLibraries(t *testing.T) {
	ctx := context.Background()
	v1, v2, v3 := newFixedFS("pdf"), newFixedFS("xlsx"), newFixedFS("docx")
	lib := func(ns string, f fs.FS) Library { return Library{Namespace: ns, FS: f, Title: ns} }
	a, err := Open(ctx, []Library{lib("one", v1), lib("two", v2)}, &Options{Settable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, []Library{lib("two", v2), lib("three", v3)}, &Options{Settable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(a.parts) != 2 || len(b.parts) != 2 || a.parts[1] != b.parts[0] {
		t.Fatalf("the library both serve is not one shared set: %v %v", a.parts, b.parts)
	}
	skA, _ := a.store.Snapshot().Skill("skill://two/xlsx/SKILL.md")
	skB, _ := b.store.Snapshot().Skill("skill://two/xlsx/SKILL.md")
	if skA == nil || skA != skB {
		t.Fatalf("the shared library's skill is two values: %p %p", skA, skB)
	}
	if got := b.Skills(); !slices.Equal(got, []string{"skill://three/docx/SKILL.md", "skill://two/xlsx/SKILL.md"}) {
		t.Fatalf("b lists %v", got)
	}
	if hits := a.Search("xlsx", 5); len(hits) != 1 || hits[0].URI != "skill://two/xlsx/SKILL.md" {
		t.Fatalf("a.Search(xlsx) = %+v", hits)
	}
	if hits := b.Search("body xlsx", 5); len(hits) == 0 || hits[0].URI != "skill://two/xlsx/SKILL.md" {
		t.Fatalf("b.Search(body xlsx) = %+v", hits)
	}
	shared := a.parts[1]
	// A library another catalog serves: the same set, one more holder.
	if _, err := a.SetLibraries(ctx, []Library{lib("two", v2)}); err != nil {
		t.Fatal(err)
	}
	if len(a.parts) != 1 || a.parts[0] != shared || refs(shared) != 2 {
		t.Fatalf("after SetLibraries: parts %v, refs %d", a.parts, refs(shared))
	}
	a.Close()
	if refs(shared) != 1 || sets.acquire(shared.key) != shared {
		t.Fatalf("after a.Close: refs %d", refs(shared))
	}
	sets.release(shared) // the acquire above
	b.Close()
	if sets.acquire(shared.key) != nil {
		t.Fatal("a set no catalog holds is still in the table")
	}
	if len(b.parts) != 0 {
		t.Fatal("a closed catalog holds sets")
	}
}

// Libraries that cannot be shared (a map FS, no namespace) are scanned
// together, as before.
func TestSettableUnsharedLibraries(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, []Library{{FS: newFixedFS("pdf").m}}, &Options{Settable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.parts != nil || c.Len() != 1 {
		t.Fatalf("parts %v, %d skills", c.parts, c.Len())
	}
	if _, err := c.SetLibraries(ctx, []Library{{Namespace: "x", FS: newFixedFS("pdf")}}); err != nil || len(c.parts) != 1 || c.Len() != 1 {
		t.Fatalf("to a shareable library: %v, parts %v, %d skills", err, c.parts, c.Len())
	}
	if _, err := c.SetLibraries(ctx, []Library{{Namespace: "x", FS: newFixedFS("pdf").m}}); err != nil || c.parts != nil || c.Len() != 1 {
		t.Fatalf("back to an unshareable one: %v, parts %v, %d skills", err, c.parts, c.Len())
	}
}

func refs(s *sharedSet) int {
	sets.mu.Lock()
	defer sets.mu.Unlock()
	return s.refs
}

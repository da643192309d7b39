package catalog

import (
	"fmt"
	"io/fs"
	"reflect"
	"runtime"
	"testing"
)

// testListing is one folder's listing, unpacked, as tests write them.
type testListing struct {
	dir      string
	id       fileStat
	listedAt int64
	names    []string
	kinds    []byte
}

// tableOf packs listings into a table, in their order.
func tableOf(list ...testListing) *folderTable {
	b := newTableBuilder(nil)
	for _, l := range list {
		for i, name := range l.names {
			b.addEntry(name, l.kinds[i])
		}
		b.close(l.dir, l.id, l.listedAt)
	}
	return b.build()
}

// unpack returns folder i of t.
func (t *folderTable) unpack(i int) testListing {
	r := &t.recs[i]
	lo, hi := t.entries(i)
	l := testListing{dir: t.dirs[i], id: r.id(), listedAt: r.listedAt, names: make([]string, 0, hi-lo), kinds: make([]byte, 0, hi-lo)}
	for j := lo; j < hi; j++ {
		l.names = append(l.names, t.name(j))
		l.kinds = append(l.kinds, t.kinds[j])
	}
	return l
}

// A table finds each folder it was built from, with its identity and
// entries, and no other; a folder listed twice keeps its first listing;
// a table copied from another has the same listings.
func TestFolderTable(t *testing.T) {
	a := newTableBuilder(nil)
	b := a
	a.addEntries(".", fileStat{ok: true, ino: 1}, 10, []entry{{name: "x", typ: fs.ModeDir}, {name: "y"}})
	a.addEntries("x", fileStat{}, 11, nil)
	b.addEntries("x/z", fileStat{ok: true, ino: 3, mtimeNs: 5}, 12, []entry{{name: "SKILL.md"}, {name: "l", typ: fs.ModeSymlink}, {name: "p", typ: fs.ModeNamedPipe}})
	b.addEntries("x", fileStat{ok: true, ino: 4}, 13, []entry{{name: "other"}})
	want := []testListing{
		{".", fileStat{ok: true, ino: 1}, 10, []string{"x", "y"}, []byte{kindDir, kindFile}},
		{"x", fileStat{}, 11, []string{}, []byte{}},
		{"x/z", fileStat{ok: true, ino: 3, mtimeNs: 5}, 12, []string{"SKILL.md", "l", "p"}, []byte{kindFile, kindSymlink, kindOther}},
	}
	tab := a.build()
	c := newTableBuilder(tab)
	for _, l := range want {
		i, ok := tab.find(l.dir)
		if !ok {
			t.Fatalf("%s not found", l.dir)
		}
		if got := tab.unpack(i); !reflect.DeepEqual(got, l) {
			t.Errorf("%s:\n got %+v\nwant %+v", l.dir, got, l)
		}
		c.addFrom(l.dir, tab, i)
	}
	for _, dir := range []string{"", "z", "x/", "x/z/SKILL.md"} {
		if _, ok := tab.find(dir); ok {
			t.Errorf("found %q, never listed", dir)
		}
	}
	i, _ := tab.find("x/z")
	entries := tab.fromListing(i)
	if len(entries) != 3 || entries[0].name != "SKILL.md" || !entries[0].unknown || entries[1].typ != fs.ModeSymlink || entries[1].unknown {
		t.Errorf("entries from the listing: %+v", entries)
	}
	copied := c.build()
	for _, l := range want {
		i, ok := copied.find(l.dir)
		if !ok || !reflect.DeepEqual(copied.unpack(i), l) {
			t.Errorf("%s copied as %+v", l.dir, copied.unpack(i))
		}
	}
	if copied.len() != 3 || !copied.valid() {
		t.Errorf("the copy has %d folders, valid %v", copied.len(), copied.valid())
	}
	if tab.valid() {
		t.Error("a table with a folder listed twice passed as valid")
	}
	if newTableBuilder(nil).build() != nil {
		t.Error("a table of no folders")
	}
	var none *folderTable
	if _, ok := none.find("."); ok || none.len() != 0 {
		t.Error("the nil table found a folder")
	}
}

// What a scan state keeps per folder, in bytes of live heap, beyond the
// folder names the walk made (which the state's walked lists hold
// anyway): at 5,000 skills, 14,308 folders of 2.2 entries each. A map of
// listings, each with its slices, held about 270 bytes per folder; the
// table about 115.
func TestFolderTableSize(t *testing.T) {
	const folders = 10000
	dirs := make([]string, folders)
	entries := make([][]entry, folders)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("category-%d/skill-name-%05d", i%8, i)
		entries[i] = []entry{{name: "SKILL.md"}, {name: "references", typ: fs.ModeDir}}
	}
	build := func() *folderTable {
		b := newTableBuilder(nil)
		for i, dir := range dirs {
			b.addEntries(dir, fileStat{ok: true, ino: uint64(i)}, 1, entries[i])
		}
		first := b.build()
		// A rescan copies what it keeps into a table of its own, sized
		// from the first.
		again := newTableBuilder(first)
		for i, dir := range dirs {
			again.addFrom(dir, first, i)
		}
		return again.build()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tab := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perFolder := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / folders
	t.Logf("%d bytes per folder", perFolder)
	if perFolder > 140 {
		t.Errorf("a folder's listing keeps %d bytes, want at most 140", perFolder)
	}
	if tab.len() != folders {
		t.Fatalf("%d folders", tab.len())
	}
	runtime.KeepAlive(dirs)
	runtime.KeepAlive(entries)
}

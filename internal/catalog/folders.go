package catalog

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// folderTable is the listings of one library's folders, as a scan state
// keeps them for the next scan (see listing.go): packed, because a live
// catalog holds them for as long as it runs. At 5,000 skills that is
// 14,308 folders of 31,947 entries; kept as a map of listings, each with
// a slice of names, they took about 4 MB, most of it headers, map slots
// and allocation slack. Here a folder is one fixed-size record, an entry
// is 5 bytes beside its name, every entry name sits in one string, and a
// folder is found by its name through an index of 32-bit slots. A table
// is immutable once built: the next scan copies what it keeps into a
// table of its own, so that no table holds on to an older one.
type folderTable struct {
	// dirs are the folders, below the library root; the strings are the
	// walk's own (the scan state's walked lists share them).
	dirs []string
	recs []folderRec
	// names holds every entry's name, back to back; entry j's ends at
	// ends[j] and starts where entry j-1's ends.
	names string
	ends  []uint32
	kinds []byte
	index nameIndex // of dirs
}

// folderRec is a folder's identity when it was listed, and where its
// entries end in the table: fileStat's fields laid out flat, 56 bytes
// where a fileStat beside them took 64.
type folderRec struct {
	dev, ino               uint64
	size, mtimeNs, ctimeNs int64
	listedAt               int64  // UnixNano of the start of the scan that listed it
	end                    uint32 // end of its entries in ends and kinds
	ok                     bool   // unset: listed without an identity
}

func newFolderRec(id fileStat, listedAt int64, end int) folderRec {
	return folderRec{dev: id.dev, ino: id.ino, size: id.size, mtimeNs: id.mtimeNs, ctimeNs: id.ctimeNs, listedAt: listedAt, end: uint32(end), ok: id.ok}
}

// id returns the folder's identity when it was listed.
func (r *folderRec) id() fileStat {
	return fileStat{ok: r.ok, dev: r.dev, ino: r.ino, size: r.size, mtimeNs: r.mtimeNs, ctimeNs: r.ctimeNs}
}

// maxTableBytes bounds a table's entries and names, so that positions fit
// the 32-bit fields; a library past it is far beyond MaxDigestCacheFiles.
// (A builder's positions may wrap first; build then gives no table.)
const maxTableBytes = math.MaxUint32

// len returns the number of folders.
func (t *folderTable) len() int {
	if t == nil {
		return 0
	}
	return len(t.dirs)
}

// find returns the position of dir, or false.
func (t *folderTable) find(dir string) (int, bool) {
	if t == nil {
		return 0, false
	}
	return t.index.find(dir, t.dir)
}

func (t *folderTable) dir(i int) string {
	return t.dirs[i]
}

// entries returns the range of folder i's entries.
func (t *folderTable) entries(i int) (lo, hi int) {
	if i > 0 {
		lo = int(t.recs[i-1].end)
	}
	return lo, int(t.recs[i].end)
}

// name returns entry j's name, a part of the table's one string.
func (t *folderTable) name(j int) string {
	lo := 0
	if j > 0 {
		lo = int(t.ends[j-1])
	}
	return t.names[lo:t.ends[j]]
}

// current reports whether folder i, found now with identity dir, still
// has the entries it was listed with. Creating, removing or renaming an
// entry updates the folder's mtime and ctime, so a folder with the same
// identity, last changed well before it was listed (racyWindow, as for
// files), has the same entries.
func (t *folderTable) current(i int, dir fileStat) bool {
	r := &t.recs[i]
	return dir.ok && dir == r.id() && dir.mtimeNs < r.listedAt-int64(racyWindow)
}

// fromListing returns the entries of folder i without reading the folder.
// Regular files are left unknown: the walk takes their size and identity
// from what the previous scan learned of them, or stats the few it kept
// nothing of (one outside a skill, or withheld) when it needs to.
func (t *folderTable) fromListing(i int) []entry {
	lo, hi := t.entries(i)
	out := make([]entry, hi-lo)
	for j := range out {
		k := t.kinds[lo+j]
		out[j] = entry{name: t.name(lo + j), typ: kindMode(k), unknown: k == kindFile}
	}
	return out
}

// valid reports whether every listing of a table read back from the cache
// is one a scan could have made: folder names clean and distinct, entry
// names valid, sorted and distinct, kinds known.
func (t *folderTable) valid() bool {
	for i, dir := range t.dirs {
		if !cleanName(dir) {
			return false
		}
		if j, ok := t.find(dir); !ok || j != i {
			return false // a folder listed twice
		}
		lo, hi := t.entries(i)
		for j := lo; j < hi; j++ {
			name := t.name(j)
			if !validEntryName(name) || t.kinds[j] > kindOther || (j > lo && t.name(j-1) >= name) {
				return false
			}
		}
	}
	return true
}

// tableBuilder collects the listings of one library's walk for a
// folderTable. The walk's goroutines share it; it is sized from the
// earlier table, so that a library as it was fills it without a copy.
type tableBuilder struct {
	mu sync.Mutex
	t  folderTable
	// names collects t.names.
	names []byte
}

// newTableBuilder returns a builder sized for the folders of like (nil:
// none known).
func newTableBuilder(like *folderTable) *tableBuilder {
	b := &tableBuilder{}
	if n := like.len(); n > 0 {
		// A little room for what was added since, so that one new
		// folder does not double the slices.
		entries := len(like.ends)
		b.t.dirs = make([]string, 0, n+n/64+8)
		b.t.recs = make([]folderRec, 0, n+n/64+8)
		b.t.ends = make([]uint32, 0, entries+entries/64+8)
		b.t.kinds = make([]byte, 0, entries+entries/64+8)
		b.names = make([]byte, 0, len(like.names)+len(like.names)/64+64)
	}
	return b
}

// addEntries records entries, as readDir returned them, for the folder dir
// whose identity was id.
func (b *tableBuilder) addEntries(dir string, id fileStat, listedAt int64, entries []entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range entries {
		b.addEntry(e.name, kindOf(e.typ))
	}
	b.close(dir, id, listedAt)
}

// addFrom records folder i of t, under the name dir.
func (b *tableBuilder) addFrom(dir string, t *folderTable, i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	lo, hi := t.entries(i)
	for j := lo; j < hi; j++ {
		b.addEntry(t.name(j), t.kinds[j])
	}
	r := &t.recs[i]
	b.close(dir, r.id(), r.listedAt)
}

func (b *tableBuilder) addEntry(name string, kind byte) {
	b.names = append(b.names, name...)
	b.t.ends = append(b.t.ends, uint32(len(b.names)))
	b.t.kinds = append(b.t.kinds, kind)
}

func (b *tableBuilder) close(dir string, id fileStat, listedAt int64) {
	b.t.dirs = append(b.t.dirs, dir)
	b.t.recs = append(b.t.recs, newFolderRec(id, listedAt, len(b.t.ends)))
}

// build returns the table of what b collected, and leaves b empty; a
// folder listed twice keeps its first listing. It returns nil when there
// are no folders, or more than the 32-bit positions can hold.
func (b *tableBuilder) build() *folderTable {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := new(folderTable)
	*t, b.t = b.t, folderTable{}
	if len(t.dirs) == 0 || len(t.ends) > maxTableBytes || len(b.names) > maxTableBytes {
		return nil
	}
	t.names, b.names = string(b.names), nil
	t.dirs, t.recs, t.ends, t.kinds = clip(t.dirs), clip(t.recs), clip(t.ends), clip(t.kinds)
	t.index = newNameIndex(len(t.dirs), t.dir)
	return t
}

// clip returns s in an array of its length when more than a little of
// its capacity is unused: a table is kept for as long as the catalog
// runs.
func clip[S ~[]E, E any](s S) S {
	if cap(s)-len(s) <= len(s)/32+8 {
		return s
	}
	return slices.Clone(s)
}

// withIdentity returns the positions of the folders listed with an
// identity, sorted by folder name, as a digest cache record keeps them.
func (t *folderTable) withIdentity() []int {
	var out []int
	for i := range t.len() {
		if t.recs[i].ok {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(t.dirs[a], t.dirs[b]) })
	return out
}

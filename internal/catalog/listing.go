package catalog

import (
	"io/fs"
	"slices"
	"strings"
)

// listing is a folder as a scan listed it: the folder's identity at the
// time, and its entries' names and kinds, sorted by name. Creating,
// removing or renaming an entry updates the folder's mtime and ctime, so a
// later scan that finds the folder with the same identity, last changed
// well before the listing (racyWindow, as for files), walks the entries
// it knew without listing the folder again. Listings are kept in the
// digest cache for the first scan of the next start: listing 14,308
// folders was a third of a warm start at 5,000 skills.
type listing struct {
	dir      fileStat
	listedAt int64 // UnixNano of the start of the scan that listed it
	names    []string
	kinds    []byte
}

// Kinds of a listed entry.
const (
	kindFile byte = iota
	kindDir
	kindSymlink
	kindOther
)

func kindOf(m fs.FileMode) byte {
	switch {
	case m.IsRegular():
		return kindFile
	case m.IsDir():
		return kindDir
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	}
	return kindOther
}

// kindMode returns the type bits of a kind; kindOf(kindMode(k)) == k.
func kindMode(k byte) fs.FileMode {
	switch k {
	case kindFile:
		return 0
	case kindDir:
		return fs.ModeDir
	case kindSymlink:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// newListing records entries, as readDir returned them, for a folder
// whose identity was dir.
func newListing(dir fileStat, listedAt int64, entries []entry) *listing {
	l := &listing{dir: dir, listedAt: listedAt, names: make([]string, len(entries)), kinds: make([]byte, len(entries))}
	for i, e := range entries {
		l.names[i], l.kinds[i] = e.name, kindOf(e.typ)
	}
	return l
}

// current reports whether the folder, found now with identity dir, still
// has the entries of l.
func (l *listing) current(dir fileStat) bool {
	return dir.ok && dir == l.dir && dir.mtimeNs < l.listedAt-int64(racyWindow)
}

// validEntryName reports whether name can be an entry of a folder: what a
// listing read back from the cache must hold before the walk joins it to
// a path.
func validEntryName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// validListing reports whether a listing read back from the cache is one a
// scan could have made: entry names valid, sorted and distinct, kinds
// known.
func validListing(l *listing) bool {
	if len(l.names) != len(l.kinds) {
		return false
	}
	for i, name := range l.names {
		if !validEntryName(name) || l.kinds[i] > kindOther || (i > 0 && l.names[i-1] >= name) {
			return false
		}
	}
	return true
}

// listedFolder is a listing and the folder it lists, below the library
// root.
type listedFolder struct {
	dir string
	l   *listing
}

// sortListed orders folders by name, as records keep them.
func sortListed(list []listedFolder) {
	slices.SortFunc(list, func(a, b listedFolder) int { return strings.Compare(a.dir, b.dir) })
}

// listingTree is a tree that can vouch for a folder's identity: it lists
// folders with it, and walks a folder from an earlier listing when the
// identity is unchanged. A beneathTree is one, and vouches only for
// folders on a file system known to keep folder timestamps honestly (see
// honestTimestamps); elsewhere it gives no identity and reuses nothing.
type listingTree interface {
	tree
	// readDirStat is readDir, with the folder's identity.
	readDirStat(dir string) ([]entry, fileStat, error)
	// relist returns dir's entries from l if the folder is unchanged since
	// l was made, with regular files statted as readDir does.
	relist(dir string, l *listing) ([]entry, bool)
	// statPath returns the identity of the folder (dir) or regular file
	// name, or false if it is something else, or gone.
	statPath(name string, dir bool) (fileStat, bool)
}

// readDir lists dir for the walk: from the listing of an earlier scan when
// the folder is unchanged, else from the folder. When the scan keeps
// listings, it records the one it used.
func (w *walk) readDir(dir string) ([]entry, error) {
	w.foldersListed++
	lt, ok := w.tree.(listingTree)
	if !ok || !w.sc.keepListings {
		return w.tree.readDir(dir)
	}
	if old := w.sc.cachedListing(w.lib, dir); old != nil {
		if entries, ok := lt.relist(dir, old); ok {
			w.foldersListed--
			w.listed = append(w.listed, listedFolder{dir, old})
			return entries, nil
		}
	}
	entries, st, err := lt.readDirStat(dir)
	if err == nil && st.ok {
		w.listed = append(w.listed, listedFolder{dir, newListing(st, w.sc.start.UnixNano(), entries)})
		w.relisted++ // a listing the digest cache did not have
	}
	return entries, err
}

// cachedListing returns the digest cache's listing of dir in lib, if any.
func (sc *scanner) cachedListing(lib *Library, dir string) *listing {
	if sc.cached == nil {
		return nil
	}
	return sc.cached[libKey(lib)].dirs[dir]
}

// folderID is a folder's identity when a scan listed it.
type folderID struct {
	dir      string
	id       fileStat
	listedAt int64
}

// keepFolders keeps the identity of every folder walked, from the scan's
// listings, for Unchanged. Any folder without one (unreadable, or on a
// file system whose timestamps are not trusted) makes the snapshot
// unprovable.
func (snap *Snapshot) keepFolders() {
	// The reuse map as built: a rescan may hand the snapshot another.
	snap.seen = snap.reuse
	snap.folders = map[*Library][]folderID{}
	for lib, dirs := range snap.walked {
		if lib.Dir == "" {
			continue // not watched: nothing to check
		}
		listed := snap.listed[libKey(lib)]
		if len(listed) != len(dirs) {
			snap.unprovable = true
			return
		}
		ids := make([]folderID, len(listed))
		for i, f := range listed {
			ids[i] = folderID{f.dir, f.l.dir, f.l.listedAt}
		}
		snap.folders[lib] = ids
	}
}

// Unchanged reports whether every folder and file that the first scan of
// the process walked is provably as the scan saw it: the same identity,
// last changed well before it was listed or hashed (racyWindow). It stats
// each once, reads nothing and builds nothing. A server calls it once the
// folders are watched: an edit made before the watches is caught by it,
// one after by the watches, and only when it reports false does a rescan
// build a second catalog. It answers once per snapshot; later calls, and
// snapshots of rescans, report false.
func (snap *Snapshot) Unchanged() bool {
	folders, seen := snap.folders, snap.seen
	snap.folders, snap.seen = nil, nil
	if folders == nil || snap.unprovable {
		return false
	}
	for lib, ids := range folders {
		lt, ok := treeOf(lib).(listingTree)
		if !ok {
			return false
		}
		for _, f := range ids {
			id, ok := lt.statPath(f.dir, true)
			if !ok || id != f.id || id.mtimeNs >= f.listedAt-int64(racyWindow) {
				return false
			}
		}
		for _, f := range seen[libKey(lib)] {
			id, ok := lt.statPath(f.name, false)
			if !ok || id != f.stat || id.mtimeNs >= f.hashedAt-int64(racyWindow) {
				return false
			}
		}
	}
	return true
}

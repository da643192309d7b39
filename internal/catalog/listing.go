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

// readDir lists dir for the walk: when trusted, from the previous scan's
// listing (the folder has been watched since, and no event named it);
// else from the listing of an earlier start when the folder is unchanged;
// else from the folder. It records the listing it used, for the next scan
// and the digest cache.
func (w *walk) readDir(dir string, trusted bool) ([]entry, error) {
	w.foldersListed++
	if trusted {
		if l := w.prior.dirs[dir]; l != nil {
			w.foldersListed--
			w.listed = append(w.listed, listedFolder{dir, l})
			return fromListing(l), nil
		}
	}
	lt, ok := w.tree.(listingTree)
	if !ok || !w.sc.keepListings {
		entries, err := w.tree.readDir(dir)
		if err == nil {
			w.listed = append(w.listed, listedFolder{dir, newListing(fileStat{}, w.sc.start.UnixNano(), entries)})
		}
		return entries, err
	}
	if old := w.prior.records[dir]; old != nil {
		if entries, ok := lt.relist(dir, old); ok {
			w.foldersListed--
			w.listed = append(w.listed, listedFolder{dir, old})
			return entries, nil
		}
	}
	entries, st, err := lt.readDirStat(dir)
	if err == nil {
		w.listed = append(w.listed, listedFolder{dir, newListing(st, w.sc.start.UnixNano(), entries)})
		if st.ok {
			w.relisted++ // a listing the digest cache did not have
		}
	}
	return entries, err
}

// statEntry fills in the size and identity of the regular file name,
// an entry of a trusted listing the previous scan kept nothing of.
func (w *walk) statEntry(name string, e entry) entry {
	e.unknown = false
	info, err := fs.Stat(w.lib.FS, name)
	switch {
	case err != nil:
		e.err = err
	case !info.Mode().IsRegular():
		e.err = &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	default:
		e.size, e.stat = info.Size(), statOf(info)
	}
	return e
}

// Unchanged reports whether every folder and file that the first scan of
// the process walked is provably as the scan saw it: the same identity,
// last changed well before it was listed or hashed (racyWindow). It stats
// each once, reads nothing and builds nothing. A server calls it once the
// folders are watched: an edit made before the watches is caught by it,
// one after by the watches, and only when it reports false does a rescan
// build a second catalog; when it reports true, later rescans may trust
// the first scan's listings as they trust their own. It needs the folder
// identities a scan with a digest cache records, and reports false for
// snapshots of rescans.
func (snap *Snapshot) Unchanged() bool {
	st := snap.scanned
	if st == nil || !st.first || st.unprovable {
		return false
	}
	for lib, dirs := range st.walked {
		if lib.Dir == "" {
			continue // not watched: nothing to check
		}
		lt, ok := treeOf(lib).(listingTree)
		if !ok {
			return false
		}
		listings := st.dirs[libKey(lib)]
		for _, d := range dirs {
			l := listings[d]
			if l == nil || !l.dir.ok {
				return false // listed without an identity, or not by the walk (a vault's)
			}
			id, ok := lt.statPath(d, true)
			if !ok || id != l.dir || id.mtimeNs >= l.listedAt-int64(racyWindow) {
				return false
			}
		}
		for _, f := range st.files[libKey(lib)] {
			id, ok := lt.statPath(f.name, false)
			if !ok || id != f.stat || id.mtimeNs >= f.hashedAt-int64(racyWindow) {
				return false
			}
		}
	}
	st.proven.Store(true)
	return true
}

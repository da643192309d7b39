package catalog

import (
	"io/fs"
	"strings"
)

// A scan keeps each folder's listing: the folder's identity at the time,
// and its entries' names and kinds, sorted by name (a folderTable per
// library). Creating, removing or renaming an entry updates the folder's
// mtime and ctime, so a later scan that finds the folder with the same
// identity, last changed well before the listing (racyWindow, as for
// files), walks the entries it knew without listing the folder again.
// Listings are kept in the digest cache for the first scan of the next
// start: listing 14,308 folders was a third of a warm start at 5,000
// skills.

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

// validEntryName reports whether name can be an entry of a folder: what a
// listing read back from the cache must hold before the walk joins it to
// a path.
func validEntryName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
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
	// relist returns dir's entries from folder i of t if the folder is
	// unchanged since t listed it, with regular files statted as readDir
	// does.
	relist(dir string, t *folderTable, i int) ([]entry, bool)
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
		if i, ok := w.prior.dirs.find(dir); ok {
			w.foldersListed--
			w.listings.addFrom(dir, w.prior.dirs, i)
			return w.prior.dirs.fromListing(i), nil
		}
	}
	lt, ok := w.tree.(listingTree)
	if !ok || !w.sc.keepListings {
		entries, err := w.tree.readDir(dir)
		if err == nil {
			w.listings.addEntries(dir, fileStat{}, w.sc.start.UnixNano(), entries)
		}
		return entries, err
	}
	if old := w.prior.records; old != nil {
		if i, ok := old.find(dir); ok {
			if entries, ok := lt.relist(dir, old, i); ok {
				w.foldersListed--
				w.listings.addFrom(dir, old, i)
				return entries, nil
			}
		}
	}
	entries, st, err := lt.readDirStat(dir)
	if err == nil {
		w.listings.addEntries(dir, st, w.sc.start.UnixNano(), entries)
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
			i, ok := listings.find(d)
			if !ok || !listings.recs[i].ok {
				return false // listed without an identity, or not by the walk (a vault's)
			}
			if id, ok := lt.statPath(d, true); !ok || !listings.current(i, id) {
				return false
			}
		}
		for _, f := range st.files[libKey(lib)].all() {
			id, ok := lt.statPath(f.name, false)
			if !ok || id != f.stat || id.mtimeNs >= f.hashedAt-int64(racyWindow) {
				return false
			}
		}
	}
	st.proven.Store(true)
	return true
}

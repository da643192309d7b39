package catalog

import (
	"io"
	"io/fs"
	"path"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// entry is one child of a folder, as a scan sees it. Regular files carry
// their size and identity; other kinds only their type.
type entry struct {
	name string
	typ  fs.FileMode // type bits only
	size int64
	stat fileStat
	err  error // statting a regular file failed
	// unknown says size, stat and err are not known yet: the entry comes
	// from an earlier listing that kept nothing of the file.
	unknown bool
}

// tree is how a scan and the server read a library: the generic fs.FS
// path, or on Linux openat2 confined beneath the root's directory handle,
// which resolves a whole path in one system call and refuses symlinks in
// any component.
type tree interface {
	readDir(dir string) ([]entry, error)
	open(name string) (io.ReadCloser, error)
	// readLink returns a symlink's target, only to label it: it is never
	// followed.
	readLink(name string) (string, error)
}

// fsTree reads through an fs.FS (an os.Root's, or an embed.FS).
type fsTree struct{ fsys fs.FS }

func (t fsTree) readDir(dir string) ([]entry, error) {
	des, err := fs.ReadDir(t.fsys, dir)
	if err != nil {
		return nil, err
	}
	out := make([]entry, len(des))
	for i, de := range des {
		e := entry{name: de.Name(), typ: de.Type()}
		if e.typ.IsRegular() {
			info, err := de.Info()
			if err != nil {
				e.err = err
			} else {
				e.size, e.stat = info.Size(), statOf(info)
			}
		}
		out[i] = e
	}
	return out, nil
}

// open opens a regular file. An os.Root's FS comes through regfile.FS, so
// that a special file fails the open instead of blocking it; the Stat
// refuses one in any other fs.FS.
func (t fsTree) open(name string) (io.ReadCloser, error) {
	f, err := t.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: regfile.NotRegular(info.Mode())}
	}
	return f, nil
}

func (t fsTree) readLink(name string) (string, error) { return fs.ReadLink(t.fsys, name) }

// treeOf returns how to read lib.
func treeOf(lib *Library) tree {
	if lib.tree != nil {
		return lib.tree
	}
	return fsTree{lib.FS}
}

// cleanName reports whether name is a clean, local, slash-separated path,
// the only kind a tree opens.
func cleanName(name string) bool {
	return fs.ValidPath(name) && path.Clean(name) == name
}

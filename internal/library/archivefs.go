package library

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// FS returns the archive as a read-only [fs.FS]: its regular files and
// every folder they imply, explicit or not, under the names that passed
// [OpenArchive]'s rules. Nothing is ever written to disk.
//
// Listing and Stat read only the central directory. Open inflates the
// whole file into memory, checked as [Archive.ReadFile] checks it (its
// declared size, the per-entry limit and its CRC-32), so a file that lies
// about itself fails to open. Each Open is bounded by the file's declared
// size rather than by the archive's shared budget, so reading a file
// twice costs twice but never fails for it. The FS is safe for concurrent
// use.
func (a *Archive) FS() fs.FS {
	afs := &archiveFS{a: a, files: make(map[string]int, len(a.plan.files)), dirs: map[string][]fs.DirEntry{".": nil}}
	for _, d := range a.plan.dirs {
		afs.dirs[d] = nil
	}
	for i, f := range a.files {
		afs.files[f.Name] = i
	}
	for d := range afs.dirs {
		if d != "." {
			parent := path.Dir(d)
			afs.dirs[parent] = append(afs.dirs[parent], dirEntry{afs.dirInfo(d)})
		}
	}
	for i, f := range a.files {
		parent := path.Dir(f.Name)
		afs.dirs[parent] = append(afs.dirs[parent], dirEntry{afs.fileInfo(i)})
	}
	for d, ents := range afs.dirs {
		slices.SortFunc(ents, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
		afs.dirs[d] = ents
	}
	return afs
}

// archiveFS is the fs.FS of an Archive. Its maps are built once and only
// read afterwards.
type archiveFS struct {
	a     *Archive
	files map[string]int           // name → index in a.files
	dirs  map[string][]fs.DirEntry // folder → its entries, sorted by name
}

var (
	_ fs.ReadDirFS = (*archiveFS)(nil)
	_ fs.StatFS    = (*archiveFS)(nil)
)

func (f *archiveFS) fileInfo(i int) archiveInfo {
	af := f.a.files[i]
	return archiveInfo{name: path.Base(af.Name), size: af.Size, mode: af.Mode}
}

func (f *archiveFS) dirInfo(name string) archiveInfo {
	return archiveInfo{name: path.Base(name), mode: fs.ModeDir | 0o755}
}

// Stat implements fs.StatFS without inflating anything.
func (f *archiveFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if i, ok := f.files[name]; ok {
		return f.fileInfo(i), nil
	}
	if _, ok := f.dirs[name]; ok {
		return f.dirInfo(name), nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir implements fs.ReadDirFS.
func (f *archiveFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	ents, ok := f.dirs[name]
	if !ok {
		err := fs.ErrNotExist
		if _, isFile := f.files[name]; isFile {
			err = errNotDir
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return slices.Clone(ents), nil
}

// errNotDir and errIsDir are the errors of listing a file and of reading
// a folder.
var (
	errNotDir = errors.New("not a directory")
	errIsDir  = errors.New("is a directory")
)

// Open implements fs.FS: a folder lists its entries, a file is inflated
// and checked.
func (f *archiveFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if ents, ok := f.dirs[name]; ok {
		return &archiveDir{info: f.dirInfo(name), ents: ents}, nil
	}
	i, ok := f.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	data, err := f.a.inflate(i)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &archiveFile{info: f.fileInfo(i), r: bytes.NewReader(data)}, nil
}

// inflate reads file i into memory with a budget of its own declared size.
func (a *Archive) inflate(i int) ([]byte, error) {
	e := a.plan.files[i]
	rc, err := a.zr.File[e.index].Open()
	if err != nil {
		return nil, entryErr(e.name, ErrCorrupt, "opening: %v", err)
	}
	defer rc.Close()
	var budget atomic.Int64
	budget.Store(int64(e.usize))
	w := &sliceWriter{b: make([]byte, 0, e.usize)} // bounded by MaxEntryBytes
	if _, err := copyEntry(w, rc, e, &budget, a.lim.MaxEntryBytes, make([]byte, 32<<10)); err != nil {
		return nil, err
	}
	return w.b, nil
}

// archiveInfo is the fs.FileInfo of an archive file or folder.
type archiveInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i archiveInfo) Name() string       { return i.name }
func (i archiveInfo) Size() int64        { return i.size }
func (i archiveInfo) Mode() fs.FileMode  { return i.mode }
func (i archiveInfo) ModTime() time.Time { return time.Time{} }
func (i archiveInfo) IsDir() bool        { return i.mode.IsDir() }
func (i archiveInfo) Sys() any           { return nil }

// dirEntry is an fs.DirEntry over an archiveInfo.
type dirEntry struct{ info archiveInfo }

func (d dirEntry) Name() string               { return d.info.name }
func (d dirEntry) IsDir() bool                { return d.info.IsDir() }
func (d dirEntry) Type() fs.FileMode          { return d.info.mode.Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.info, nil }

// archiveFile is an open, inflated archive file.
type archiveFile struct {
	info archiveInfo
	r    *bytes.Reader
}

func (f *archiveFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *archiveFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *archiveFile) Close() error               { return nil }

// ReadAt and Seek let callers treat the file as an io.ReaderAt or
// io.Seeker, as fstest.TestFS expects of a file that offers them.
func (f *archiveFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *archiveFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}

// archiveDir is an open archive folder.
type archiveDir struct {
	info archiveInfo
	ents []fs.DirEntry
	off  int
}

func (d *archiveDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *archiveDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errIsDir}
}
func (d *archiveDir) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *archiveDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.off:]
	if n <= 0 {
		d.off = len(d.ents)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return slices.Clone(rest), nil
}

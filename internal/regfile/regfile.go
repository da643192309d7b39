// Package regfile opens files that must be regular files: library content,
// zip libraries, the config file and the caches. A library, or whoever can
// write to it, may swap a FIFO or a device in for a file at any moment, and
// opening a FIFO for reading blocks until a writer comes: a request, a scan
// and shutdown after it waited for ever, one thread each. Every open here
// is non-blocking and takes no controlling terminal, and is followed by an
// fstat of the handle that refuses anything but a regular file (folders
// where asked for), so a special file costs one error, never a thread.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ErrNotRegular is matched (errors.Is) by the error for a file that is not
// a regular file.
var ErrNotRegular = errors.New("not a regular file")

// modeError names the kind of a file refused.
type modeError struct{ mode fs.FileMode }

func (e modeError) Error() string { return kind(e.mode) + ", not a regular file" }

func (e modeError) Is(target error) bool { return target == ErrNotRegular }

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// NotRegular returns the error for a file of mode, which is not a regular
// file: it names the kind, and matches ErrNotRegular.
func NotRegular(mode fs.FileMode) error { return modeError{mode} }

// Check returns nil if f, just opened, is a regular file, and otherwise
// closes it and returns an error matching ErrNotRegular.
func Check(f *os.File) error { return check(f, false) }

func check(f *os.File, dirOK bool) error {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if m := info.Mode(); !m.IsRegular() && !(dirOK && m.IsDir()) {
		f.Close()
		return &fs.PathError{Op: "open", Path: f.Name(), Err: NotRegular(m)}
	}
	return nil
}

// Open opens the regular file name for reading.
func Open(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := Check(f); err != nil {
		return nil, err
	}
	return f, nil
}

// OpenIn opens the regular file name below root for reading.
func OpenIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := Check(f); err != nil {
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file name whole, if it holds at most limit
// bytes.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over the %d-byte limit", name, limit)
	}
	return data, nil
}

// FS returns the file system of root, as root.FS does, except that opening
// anything but a regular file or a folder fails at once instead of
// blocking, and so do ReadDir and ReadFile.
func FS(root *os.Root) fs.FS { return rootFS{root} }

type rootFS struct{ root *os.Root }

// Open opens name, a regular file or a folder.
func (r rootFS) Open(name string) (fs.File, error) {
	f, err := r.open(name)
	if err != nil {
		return nil, err // a nil *os.File would be a non-nil fs.File
	}
	return f, nil
}

func (r rootFS) open(name string) (*os.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := check(f, true); err != nil {
		return nil, err
	}
	return f, nil
}

// ReadDir lists the folder name, sorted by name.
func (r rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, nil
}

// ReadFile reads the regular file name.
func (r rootFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	f, err := OpenIn(r.root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Stat and ReadLink open nothing; they are root's own.
func (r rootFS) Stat(name string) (fs.FileInfo, error) { return r.root.FS().(fs.StatFS).Stat(name) }

func (r rootFS) ReadLink(name string) (string, error) {
	return r.root.FS().(fs.ReadLinkFS).ReadLink(name)
}

func (r rootFS) Lstat(name string) (fs.FileInfo, error) {
	return r.root.FS().(fs.ReadLinkFS).Lstat(name)
}

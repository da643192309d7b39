package catalog

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// beneathTree reads a directory library with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): every path resolves below the root handle in one
// system call, and a symlink in any component fails the call, so nothing
// outside the root can be reached even if the tree changes under the scan.
type beneathTree struct {
	root int    // O_PATH handle of the library root
	dir  string // its absolute path, for names only
}

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneathTree opens dir for a beneathTree, or returns nil when the
// kernel lacks openat2 (before Linux 5.6), in which case the caller reads
// through os.Root.
func openBeneathTree(dir string) (*beneathTree, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	t := &beneathTree{root: fd, dir: dir}
	probe, err := t.openat(".", unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		unix.Close(fd)
		return nil, nil // no openat2 here (old kernel or seccomp): fall back
	}
	if err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	unix.Close(probe)
	return t, nil
}

func (t *beneathTree) openat(name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat2(t.root, name, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Resolve: resolveBeneath,
		})
		if err == unix.EINTR || err == unix.EAGAIN {
			continue // EAGAIN: a concurrent rename raced the lookup
		}
		return fd, err
	}
}

func (t *beneathTree) readDir(dir string) ([]entry, error) {
	if !cleanName(dir) {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrInvalid}
	}
	fd, err := t.openat(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	// The absolute name matters only on file systems that report no entry
	// types, where ReadDir lstats each entry by name; what it finds is
	// checked again with fstatat on this handle.
	f := os.NewFile(uintptr(fd), filepath.Join(t.dir, filepath.FromSlash(dir)))
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	out := make([]entry, len(des))
	for i, de := range des {
		e := entry{name: de.Name(), typ: de.Type()}
		if e.typ.IsRegular() {
			// fstatat on the folder handle: confined, and one call.
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				e.err = err
			} else if st.Mode&unix.S_IFMT != unix.S_IFREG {
				e.typ = fs.ModeIrregular // replaced since the listing
			} else {
				e.size = st.Size
				e.stat = fileStat{ok: true, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
					mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano()}
			}
		}
		out[i] = e
	}
	return out, nil
}

func (t *beneathTree) open(name string) (io.ReadCloser, error) {
	if !cleanName(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := t.openat(name, unix.O_RDONLY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (t *beneathTree) readLink(name string) (string, error) {
	if !cleanName(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := t.openat(path.Dir(name), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, path.Base(name), buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(buf[:n]), nil
}

func (t *beneathTree) close() error { return unix.Close(t.root) }

// statOf reads a file's identity from the FileInfo of an fs.FS listing.
func statOf(info fs.FileInfo) fileStat {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}
	}
	return fileStat{
		ok: true, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
	}
}

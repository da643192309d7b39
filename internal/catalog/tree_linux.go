package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// beneathTree reads a directory library with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): every path resolves below the root handle in one
// system call, and a symlink in any component fails the call, so nothing
// outside the root can be reached even if the tree changes under the scan.
type beneathTree struct {
	root int    // O_PATH handle of the library root
	dir  string // its absolute path, for names only
	// listings reports that the root is on a file system known to update a
	// folder's timestamps when its entries change, whose device is dev:
	// only folders there are walked from earlier listings (listingTree).
	listings bool
	dev      uint64
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
	var sfs unix.Statfs_t
	var st unix.Stat_t
	if unix.Fstatfs(fd, &sfs) == nil && unix.Fstat(fd, &st) == nil {
		t.listings, t.dev = honestTimestamps[int64(uint32(sfs.Type))], uint64(st.Dev) // magic numbers are 32 bits
	}
	return t, nil
}

// honestTimestamps are the file systems, by statfs magic number, that
// update a folder's mtime and ctime whenever an entry is created, removed
// or renamed in it, at once and on the machine that lists it. Network and
// FUSE file systems are left out: their timestamps may be cached or
// invented, and their folders are always listed.
var honestTimestamps = map[int64]bool{
	unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC: true, unix.OVERLAYFS_SUPER_MAGIC: true, unix.F2FS_SUPER_MAGIC: true,
	0x2fc12fc1: true, // ZFS
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
	defer unix.Close(fd)
	return t.list(fd, dir)
}

// list lists the open folder fd, dir.
func (t *beneathTree) list(fd int, dir string) ([]entry, error) {
	out, err := readEntries(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := range out {
		e := &out[i]
		if !e.typ.IsRegular() && e.typ != typeUnknown {
			continue
		}
		// fstatat on the folder handle: confined, and one call. It also
		// types the entries of file systems that report no types.
		var st unix.Stat_t
		statEntry(e, &st, unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW))
	}
	return out, nil
}

// statEntry completes e, regular or of unknown type, from its stat.
func statEntry(e *entry, st *unix.Stat_t, err error) {
	if err != nil {
		if e.typ == typeUnknown {
			e.typ = fs.ModeIrregular
		}
		e.err = err
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		e.typ = 0
		e.size = st.Size
		e.stat = statOfUnix(st)
	case unix.S_IFDIR:
		if e.typ == typeUnknown {
			e.typ = fs.ModeDir
		} else {
			e.typ = fs.ModeIrregular // replaced since the listing
		}
	case unix.S_IFLNK:
		if e.typ == typeUnknown {
			e.typ = fs.ModeSymlink
		} else {
			e.typ = fs.ModeIrregular
		}
	default:
		e.typ = fs.ModeIrregular
	}
}

func statOfUnix(st *unix.Stat_t) fileStat {
	return fileStat{ok: true, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano()}
}

// readDirStat is readDir, with the folder's identity (fstat of the handle
// it lists). Outside a file system with honest timestamps the identity is
// left empty, so that the listing is never reused.
func (t *beneathTree) readDirStat(dir string) ([]entry, fileStat, error) {
	if !cleanName(dir) {
		return nil, fileStat{}, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrInvalid}
	}
	fd, err := t.openat(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var id fileStat
	var st unix.Stat_t
	if t.listings && unix.Fstat(fd, &st) == nil && uint64(st.Dev) == t.dev {
		id = statOfUnix(&st)
	}
	out, err := t.list(fd, dir)
	return out, id, err
}

// statPath stats name by its path from the root, as relist does (see
// there why that is safe), on a file system with honest timestamps only.
func (t *beneathTree) statPath(name string, dir bool) (fileStat, bool) {
	if !t.listings || !cleanName(name) {
		return fileStat{}, false
	}
	want := uint32(unix.S_IFREG)
	if dir {
		want = unix.S_IFDIR
	}
	var st unix.Stat_t
	if err := unix.Fstatat(t.root, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != want {
		return fileStat{}, false
	}
	if dir && uint64(st.Dev) != t.dev {
		return fileStat{}, false
	}
	return statOfUnix(&st), true
}

// relist returns dir's entries from folder i of l, if the folder is
// unchanged since l listed it, without opening it: the folder and each
// regular file in it are statted by their path from the root.
//
// Those stats resolve the path without openat2's confinement, so a folder
// on the path swapped for a symlink since its parent was checked could
// lead outside the root. They reveal nothing there: a folder is walked
// from l, and a file's cached digest reused, only when the device, inode
// and ctime found are those recorded inside the root, which a folder or
// file moved out of the root no longer has (a rename updates the ctime).
// Every byte served is still read through openat2.
func (t *beneathTree) relist(dir string, l *folderTable, i int) ([]entry, bool) {
	if !t.listings || !cleanName(dir) {
		return nil, false
	}
	var st unix.Stat_t
	if err := unix.Fstatat(t.root, dir, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil ||
		st.Mode&unix.S_IFMT != unix.S_IFDIR || uint64(st.Dev) != t.dev || !l.current(i, statOfUnix(&st)) {
		return nil, false
	}
	lo, hi := l.entries(i)
	out := make([]entry, hi-lo)
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	for j := range out {
		e, k := &out[j], l.kinds[lo+j]
		e.name, e.typ = l.name(lo+j), kindMode(k)
		if k == kindFile {
			statEntry(e, &st, unix.Fstatat(t.root, prefix+e.name, &st, unix.AT_SYMLINK_NOFOLLOW))
		}
	}
	return out, true
}

// typeUnknown marks an entry whose type the listing did not give
// (DT_UNKNOWN); readDir stats it.
const typeUnknown = fs.ModeType

// direntBufs are getdents buffers, one per folder being listed.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// errDirent is a listing the kernel returned in a shape readEntries does
// not know.
var errDirent = errors.New("malformed directory entry")

// readEntries lists the folder fd with getdents64, unsorted and without
// "." and "..". Reading the records directly skips what os.File.ReadDir
// adds per folder (an fcntl, a File, a DirEntry per child).
func readEntries(fd int) ([]entry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []entry
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, then the name, NUL-terminated and padded.
		for rec := buf[:n]; len(rec) > 0; {
			if len(rec) < 19 {
				return nil, errDirent
			}
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				return nil, errDirent
			}
			ino, typ, name := binary.NativeEndian.Uint64(rec[:8]), rec[18], rec[19:reclen]
			rec = rec[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue // ino 0: removed while listed
			}
			out = append(out, entry{name: string(name), typ: direntType(typ)})
		}
	}
}

// direntType maps a d_type to the type bits of a FileMode.
func direntType(t byte) fs.FileMode {
	switch t {
	case unix.DT_REG:
		return 0
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return typeUnknown
}

func (t *beneathTree) open(name string) (io.ReadCloser, error) {
	if !cleanName(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// Non-blocking, and checked before any read: a file swapped for a FIFO
	// would block the open until a writer came, and a device may act on
	// being opened.
	fd, err := t.openat(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	if err := regfile.Check(f); err != nil {
		return nil, err
	}
	return f, nil
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

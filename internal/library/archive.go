package library

import (
	"archive/zip"
	"errors"
	"io"
	"io/fs"
	"sync/atomic"
)

// Archive is a zip archive that passed every check [Cache.Extract] makes
// before writing (see the package documentation), opened for reading its
// files into memory instead of onto disk. The hub reads uploaded packages
// this way: nothing is kept until the whole archive has been read.
//
// An Archive is not safe for concurrent use.
type Archive struct {
	zr     *zip.Reader
	plan   *plan
	lim    Limits
	budget atomic.Int64
	files  []ArchiveFile
}

// ArchiveFile is one regular file of an [Archive], as its central directory
// declares it. Reading it checks the declaration (see [Archive.ReadFile]).
type ArchiveFile struct {
	// Name is the entry's "/"-separated name; it passed the name rules.
	Name string
	// Size is the declared inflated size, within Limits.MaxEntryBytes.
	Size int64
	// Mode is 0o755 when the entry's Unix mode has an execute bit, else
	// 0o644: permissions are never taken further than that.
	Mode fs.FileMode
}

// OpenArchive inspects the zip archive in r (size bytes) under lim (zero
// fields mean the defaults) and cross-checks it with archive/zip. Errors
// are [*ArchiveError] values, with Archive left empty for the caller to
// name, wrapping the ErrX sentinels. It reads the central directory and the
// local headers, never entry data.
func OpenArchive(r io.ReaderAt, size int64, lim Limits) (*Archive, error) {
	lim = lim.withDefaults()
	p, err := inspect(r, size, lim)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names were checked by inspect
		return nil, archiveErr(ErrCorrupt, "archive/zip cannot read it: %v", err)
	}
	if err := crossCheck(zr, p); err != nil {
		return nil, err
	}
	a := &Archive{zr: zr, plan: p, lim: lim, files: make([]ArchiveFile, len(p.files))}
	a.budget.Store(lim.MaxTotalBytes)
	for i, e := range p.files {
		mode := fs.FileMode(0o644)
		if (e.externals>>16)&0o111 != 0 {
			mode = 0o755
		}
		a.files[i] = ArchiveFile{Name: e.name, Size: int64(e.usize), Mode: mode}
	}
	return a, nil
}

// Files returns the archive's regular files in archive order. The slice
// is the caller's.
func (a *Archive) Files() []ArchiveFile {
	return append([]ArchiveFile(nil), a.files...)
}

// ReadFile inflates file i of [Archive.Files] into a new slice and returns
// it with its sha256. The inflated stream is counted, never trusted: it may
// not exceed the per-entry limit, its declared size or what remains of the
// archive's total budget, and its length and CRC-32 must match the
// declaration. buf is scratch space for the copy (nil allocates one).
func (a *Archive) ReadFile(i int, buf []byte) (data []byte, sum [32]byte, err error) {
	e := a.plan.files[i]
	rc, err := a.zr.File[e.index].Open()
	if err != nil {
		return nil, sum, entryErr(e.name, ErrCorrupt, "opening: %v", err)
	}
	defer rc.Close()
	if len(buf) == 0 {
		buf = make([]byte, 64<<10)
	}
	// The declared size is bounded by MaxEntryBytes and checked while
	// copying, so preallocating it is safe.
	w := &sliceWriter{b: make([]byte, 0, e.usize)}
	sum, err = copyEntry(w, rc, e, &a.budget, a.lim.MaxEntryBytes, buf)
	if err != nil {
		return nil, sum, err
	}
	return w.b, sum, nil
}

// sliceWriter appends to a byte slice.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

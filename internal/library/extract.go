package library

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
)

// sniffLen is how much of an entry is held back and checked for archive
// magic numbers before any of it is written; tar's magic sits at 257.
const sniffLen = 512

// record is the integrity record written beside an extracted tree.
type record struct {
	Version int          `json:"version"`
	Archive string       `json:"archive"` // sha256 of the archive
	Dirs    []string     `json:"dirs"`    // every directory, sorted
	Files   []recordFile `json:"files"`   // every file, in archive order
}

type recordFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

const recordVersion = 1

// maxRecordBytes bounds the integrity record we read back: 8192 entries of
// 1 KiB names stay well below it.
const maxRecordBytes = 32 << 20

// writeTree extracts the inspected archive into dst, which must not exist.
// It refuses anything inspect could not see: content over the budgets,
// content that disagrees with its declared size or CRC-32, and archives by
// content. Files are created 0644 and directories 0755, exactly.
func writeTree(ctx context.Context, ra io.ReaderAt, size int64, p *plan, dst string, lim Limits) (*record, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names were checked by inspect
		return nil, archiveErr(ErrCorrupt, "archive/zip cannot read it: %v", err)
	}
	if err := crossCheck(zr, p); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, fmt.Errorf("creating extraction directory: %w", err)
	}
	// Every write goes through an os.Root: even if a name slipped past
	// inspect, it could not leave dst or follow a link.
	root, err := os.OpenRoot(dst)
	if err != nil {
		return nil, fmt.Errorf("creating extraction directory: %w", err)
	}
	defer root.Close()
	if err := root.Chmod(".", 0o755); err != nil {
		return nil, err
	}
	for _, d := range p.dirs { // sorted: parents first
		if err := root.Mkdir(filepath.FromSlash(d), 0o755); err != nil {
			return nil, fmt.Errorf("creating directory %q: %w", d, err)
		}
		if err := root.Chmod(filepath.FromSlash(d), 0o755); err != nil { // whatever the umask
			return nil, err
		}
	}
	rec := &record{Version: recordVersion, Dirs: p.dirs, Files: make([]recordFile, 0, len(p.files))}
	budget := lim.MaxTotalBytes
	buf := make([]byte, 64<<10)
	for _, e := range p.files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sum, err := writeFile(root, zr.File[e.index], e, &budget, lim.MaxEntryBytes, buf)
		if err != nil {
			return nil, err
		}
		rec.Files = append(rec.Files, recordFile{Path: e.name, Size: int64(e.usize), SHA256: hex.EncodeToString(sum[:])})
	}
	return rec, nil
}

// writeFile extracts one entry and returns the sha256 of its content.
func writeFile(root *os.Root, zf *zip.File, e *entry, budget *int64, maxEntry int64, buf []byte) (sum [32]byte, err error) {
	rc, err := zf.Open()
	if err != nil {
		return sum, entryErr(e.name, ErrCorrupt, "opening: %v", err)
	}
	defer rc.Close()
	name := filepath.FromSlash(e.name)
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return sum, fmt.Errorf("creating %q: %w", e.name, err)
	}
	sum, err = copyEntry(out, rc, e, budget, maxEntry, buf)
	if err == nil {
		err = out.Chmod(0o644) // whatever the umask
	}
	return sum, errors.Join(err, out.Close())
}

// copyEntry copies the inflated content of e from src to dst. It counts the
// bytes itself rather than trusting any declared size: an entry may not
// inflate past maxEntry, past its declared size, or past what remains of
// the archive's total budget. It checks the CRC-32 at EOF (archive/zip
// skips the check when the declared CRC is zero), and sniffs the first
// sniffLen bytes for archive magic numbers before writing anything.
func copyEntry(dst io.Writer, src io.Reader, e *entry, budget *int64, maxEntry int64, buf []byte) (sum [32]byte, err error) {
	h := sha256.New()
	crc := crc32.NewIEEE()
	var n int64
	head := make([]byte, 0, sniffLen)
	sniffed := false
	flushHead := func() error {
		sniffed = true
		if kind := sniffArchive(head); kind != "" {
			return entryErr(e.name, ErrNestedArchive, "%s data (by content)", kind)
		}
		_, err := dst.Write(head)
		return err
	}
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			n += int64(k)
			*budget -= int64(k)
			switch {
			case n > maxEntry:
				return sum, entryErr(e.name, ErrTooLarge, "inflates past the per-entry limit of %d bytes", maxEntry)
			case uint64(n) > e.usize:
				return sum, entryErr(e.name, ErrCorrupt, "inflates past its declared size of %d bytes (lying central directory)", e.usize)
			case *budget < 0:
				return sum, entryErr(e.name, ErrTooLarge, "the archive inflates past its total limit")
			}
			chunk := buf[:k]
			h.Write(chunk)
			crc.Write(chunk)
			if sniffed {
				if _, err := dst.Write(chunk); err != nil {
					return sum, err
				}
			} else if head = append(head, chunk...); len(head) >= sniffLen {
				if err := flushHead(); err != nil {
					return sum, err
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return sum, readErr(e, rerr)
		}
	}
	if !sniffed {
		if err := flushHead(); err != nil {
			return sum, err
		}
	}
	if uint64(n) != e.usize {
		return sum, entryErr(e.name, ErrCorrupt, "inflates to %d bytes, its declared size is %d (truncated or lying central directory)", n, e.usize)
	}
	if got := crc.Sum32(); got != e.crc {
		return sum, entryErr(e.name, ErrChecksum, "CRC-32 is %08x, the archive says %08x", got, e.crc)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// readErr names a failure while inflating an entry.
func readErr(e *entry, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return entryErr(e.name, ErrChecksum, "CRC-32 mismatch")
	case errors.Is(err, zip.ErrFormat):
		// archive/zip's own size check: more data than declared.
		return entryErr(e.name, ErrCorrupt, "inflates past its declared size of %d bytes (lying central directory)", e.usize)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return entryErr(e.name, ErrCorrupt, "data ends early (truncated archive or lying sizes)")
	case errors.As(err, &corrupt):
		return entryErr(e.name, ErrCorrupt, "corrupt deflate data")
	default:
		return entryErr(e.name, ErrCorrupt, "reading: %v", err)
	}
}

// Archive magic numbers, checked on the first bytes of every entry.
var magics = []struct {
	kind   string
	offset int
	magic  string
}{
	{"zip", 0, "PK\x03\x04"},
	{"zip", 0, "PK\x05\x06"},
	{"zip", 0, "PK\x07\x08"},
	{"gzip", 0, "\x1f\x8b\x08"},
	{"bzip2", 4, "1AY&SY"}, // after "BZh" and a block size digit, checked below
	{"xz", 0, "\xfd7zXZ\x00"},
	{"zstd", 0, "\x28\xb5\x2f\xfd"},
	{"7z", 0, "7z\xbc\xaf\x27\x1c"},
	{"rar", 0, "Rar!\x1a\x07"},
	{"lz4", 0, "\x04\x22\x4d\x18"},
	{"cab", 0, "MSCF\x00\x00\x00\x00"},
	{"tar", 257, "ustar"},
}

// sniffArchive names the archive format head starts with, or returns "".
func sniffArchive(head []byte) string {
	for _, m := range magics {
		if len(head) < m.offset+len(m.magic) || string(head[m.offset:m.offset+len(m.magic)]) != m.magic {
			continue
		}
		if m.kind == "bzip2" && !(bytes.HasPrefix(head, []byte("BZh")) && '1' <= head[3] && head[3] <= '9') {
			continue
		}
		return m.kind
	}
	return ""
}

// writeRecord writes the integrity record, 0644.
func writeRecord(name string, rec *record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing integrity record: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("writing integrity record: %w", err)
	}
	return nil
}

// verify checks an extraction against its integrity record, and the record
// against the archive's central directory: the same directories, the same
// files with the same sizes, nothing else in the tree (no links, no extra
// files), and every file's sha256. Files are hashed in parallel.
func (c *Cache) verify(ctx context.Context, final, digest string, p *plan) error {
	rec, err := readRecord(filepath.Join(final, recordName))
	if err != nil {
		return err
	}
	if rec.Version != recordVersion || rec.Archive != digest {
		return errors.New("the integrity record is for another archive")
	}
	if !slices.Equal(rec.Dirs, p.dirs) || len(rec.Files) != len(p.files) {
		return errors.New("the integrity record does not match the archive")
	}
	want := make(map[string]*recordFile, len(rec.Files))
	for i := range rec.Files {
		rf := &rec.Files[i]
		if rf.Path != p.files[i].name || rf.Size != int64(p.files[i].usize) {
			return errors.New("the integrity record does not match the archive")
		}
		want[filepath.FromSlash(rf.Path)] = rf
	}
	dirs := make(map[string]bool, len(rec.Dirs))
	for _, d := range rec.Dirs {
		dirs[filepath.FromSlash(d)] = true
	}
	tree := filepath.Join(final, treeName)
	root, err := os.OpenRoot(tree)
	if err != nil {
		return err
	}
	defer root.Close()
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		rel := filepath.FromSlash(name)
		switch {
		case d.IsDir() && dirs[rel]:
		case d.Type().IsRegular() && want[rel] != nil:
			seen++
		default:
			return fmt.Errorf("unexpected %s %q in the tree", d.Type(), name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(want) {
		return fmt.Errorf("%d of %d files are missing", len(want)-seen, len(want))
	}
	return hashAll(ctx, root, rec.Files)
}

// hashAll re-hashes every file of the record under root, in parallel, and
// returns the first mismatch.
func hashAll(ctx context.Context, root *os.Root, files []recordFile) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
	)
	jobs := make(chan *recordFile)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8) {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for rf := range jobs {
				if err := checkFile(root, rf, buf); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range files {
		select {
		case jobs <- &files[i]:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func checkFile(root *os.Root, rf *recordFile, buf []byte) error {
	f, err := root.Open(filepath.FromSlash(rf.Path))
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(f, rf.Size+1), buf)
	if err != nil {
		return fmt.Errorf("reading %q: %w", rf.Path, err)
	}
	if n != rf.Size || hex.EncodeToString(h.Sum(nil)) != rf.SHA256 {
		return fmt.Errorf("%q differs from the archive", rf.Path)
	}
	return nil
}

func readRecord(name string) (*record, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading integrity record: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > maxRecordBytes {
		return nil, errors.New("the integrity record is not a regular file of sensible size")
	}
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var rec record
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("reading integrity record: %w", err)
	}
	return &rec, nil
}

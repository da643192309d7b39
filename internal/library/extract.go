package library

import (
	"archive/zip"
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
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

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
// It refuses anything inspect could not see: content over the budgets, and
// content that disagrees with its declared size or CRC-32. Files are created 0644 and directories 0755, exactly.
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
	roots := &treeRoots{top: root}
	defer roots.close()
	for _, d := range p.dirs { // sorted: parents first
		parent, base := splitName(d)
		r, err := roots.get(parent)
		if err != nil {
			return nil, fmt.Errorf("creating directory %q: %w", d, err)
		}
		if err := r.Mkdir(base, 0o755); err != nil {
			return nil, fmt.Errorf("creating directory %q: %w", d, err)
		}
		if err := r.Chmod(base, 0o755); err != nil { // whatever the umask
			return nil, err
		}
	}
	rec := &record{Version: recordVersion, Dirs: p.dirs, Files: make([]recordFile, len(p.files))}
	var budget atomic.Int64
	budget.Store(lim.MaxTotalBytes)
	if err := writeFiles(ctx, root, zr, p, rec, &budget, lim); err != nil {
		return nil, err
	}
	return rec, nil
}

// writeChunk is how many consecutive files a worker takes at a time:
// archives list files directory by directory, so a chunk mostly shares its
// directories (see treeRoots).
const writeChunk = 16

// maxWriters bounds the goroutines writing files. Creating files is mostly
// kernel work, which overlaps across a few CPUs (1.6x faster with two on
// tmpfs; a journaling disk gains less).
const maxWriters = 4

// writeFiles writes every file of p under root, in parallel, filling
// rec.Files in archive order. It returns the first error any writer meets;
// with several bad entries, which one is reported is not fixed.
func writeFiles(ctx context.Context, root *os.Root, zr *zip.Reader, p *plan, rec *record, budget *atomic.Int64, lim Limits) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			cancel()
		})
	}
	workers := min(runtime.GOMAXPROCS(0), maxWriters, (len(p.files)+writeChunk-1)/writeChunk)
	for range workers {
		wg.Go(func() {
			roots := &treeRoots{top: root}
			defer roots.close()
			buf := make([]byte, 64<<10)
			for {
				start := int(next.Add(writeChunk)) - writeChunk
				if start >= len(p.files) {
					return
				}
				for i := start; i < min(start+writeChunk, len(p.files)); i++ {
					if ctx.Err() != nil {
						return
					}
					e := p.files[i]
					dir, base := splitName(e.name)
					r, err := roots.get(dir)
					if err != nil {
						fail(fmt.Errorf("creating %q: %w", e.name, err))
						return
					}
					sum, err := writeFile(r, base, zr.File[e.index], e, budget, lim.MaxEntryBytes, buf)
					if err != nil {
						fail(err)
						return
					}
					rec.Files[i] = recordFile{Path: e.name, Size: int64(e.usize), SHA256: hex.EncodeToString(sum[:])}
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return parent.Err()
}

// writeFile extracts one entry as base under dir, and returns the sha256
// of its content.
func writeFile(dir *os.Root, base string, zf *zip.File, e *entry, budget *atomic.Int64, maxEntry int64, buf []byte) (sum [32]byte, err error) {
	rc, err := zf.Open()
	if err != nil {
		return sum, entryErr(e.name, ErrCorrupt, "opening: %v", err)
	}
	defer rc.Close()
	out, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return sum, fmt.Errorf("creating %q: %w", e.name, err)
	}
	sum, err = copyEntry(out, rc, e, budget, maxEntry, buf)
	if err == nil {
		err = out.Chmod(0o644) // whatever the umask
	}
	return sum, errors.Join(err, out.Close())
}

// splitName splits a checked "/"-separated name into its parent ("." at
// the top) and its last segment.
func splitName(name string) (parent, base string) {
	name = strings.TrimSuffix(name, "/")
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ".", name
	}
	return name[:i], name[i+1:]
}

// treeRoots opens directories of the tree being written as os.Roots, and
// keeps the chain of the last one's ancestors open. An os.Root resolves a
// multi-segment name one openat per segment; archives list entries
// directory by directory, so opening each directory once and creating
// entries by their last segment saves most of those calls. The chain is at
// most maxDepth long.
type treeRoots struct {
	top   *os.Root
	chain []openRoot // outermost first
}

type openRoot struct {
	name string
	root *os.Root
}

// get returns the root of dir, a "/"-separated name below the top, or the
// top itself for ".".
func (t *treeRoots) get(dir string) (*os.Root, error) {
	if dir == "." {
		return t.top, nil
	}
	k := 0
	for k < len(t.chain) && (dir == t.chain[k].name || strings.HasPrefix(dir, t.chain[k].name+"/")) {
		k++
	}
	for _, o := range t.chain[k:] {
		o.root.Close()
	}
	t.chain = t.chain[:k]
	for {
		cur, curName := t.top, ""
		if k > 0 {
			cur, curName = t.chain[k-1].root, t.chain[k-1].name
		}
		if curName == dir {
			return cur, nil
		}
		rest := dir
		if curName != "" {
			rest = dir[len(curName)+1:]
		}
		next, _, _ := strings.Cut(rest, "/")
		r, err := cur.OpenRoot(next)
		if err != nil {
			return nil, err
		}
		if curName != "" {
			next = curName + "/" + next
		}
		t.chain = append(t.chain, openRoot{next, r})
		k++
	}
}

func (t *treeRoots) close() {
	for _, o := range t.chain {
		o.root.Close()
	}
	t.chain = nil
}

// copyEntry copies the inflated content of e from src to dst. It counts the
// bytes itself rather than trusting any declared size: an entry may not
// inflate past maxEntry, past its declared size, or past what remains of
// the archive's total budget. It checks the CRC-32 at EOF (archive/zip
// skips the check when the declared CRC is zero). What the bytes are is
// not its concern: extraction never unpacks an entry, so an archive inside
// the archive is a file like any other, and the catalog withholds the
// skill that bundles it exactly as it would in a folder.
func copyEntry(dst io.Writer, src io.Reader, e *entry, budget *atomic.Int64, maxEntry int64, buf []byte) (sum [32]byte, err error) {
	h := sha256.New()
	crc := crc32.NewIEEE()
	var n int64
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			n += int64(k)
			left := budget.Add(-int64(k))
			switch {
			case n > maxEntry:
				return sum, entryErr(e.name, ErrTooLarge, "inflates past the per-entry limit of %d bytes", maxEntry)
			case uint64(n) > e.usize:
				return sum, entryErr(e.name, ErrCorrupt, "inflates past its declared size of %d bytes (lying central directory)", e.usize)
			case left < 0:
				return sum, entryErr(e.name, ErrTooLarge, "the archive inflates past its total limit")
			}
			chunk := buf[:k]
			h.Write(chunk)
			crc.Write(chunk)
			if _, err := dst.Write(chunk); err != nil {
				return sum, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return sum, readErr(e, rerr)
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
	err = walkTree(root, "", func(name string, d fs.DirEntry) error {
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

// walkTree calls visit for every entry below r, depth first, naming it by
// its "/"-separated path below the top (prefix is the path of r). It
// descends into a directory only after visit accepts it, and opens each
// directory once, as a root of its own.
func walkTree(r *os.Root, prefix string, visit func(name string, d fs.DirEntry) error) error {
	f, err := r.Open(".")
	if err != nil {
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, d := range ents {
		name := d.Name()
		if prefix != "" {
			name = prefix + "/" + name
		}
		if err := visit(name, d); err != nil {
			return err
		}
		if d.IsDir() {
			sub, err := r.OpenRoot(d.Name())
			if err != nil {
				return err
			}
			err = walkTree(sub, name, visit)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// hashAll re-hashes every file of the record under root, in parallel, and
// returns the first mismatch. Like writeFiles, each worker takes runs of
// consecutive files and keeps their directories open.
func hashAll(ctx context.Context, root *os.Root, files []recordFile) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), 8, (len(files)+writeChunk-1)/writeChunk) {
		wg.Go(func() {
			roots := &treeRoots{top: root}
			defer roots.close()
			buf := make([]byte, 64<<10)
			for {
				start := int(next.Add(writeChunk)) - writeChunk
				if start >= len(files) {
					return
				}
				for i := start; i < min(start+writeChunk, len(files)); i++ {
					if ctx.Err() != nil {
						return
					}
					if err := checkFile(roots, &files[i], buf); err != nil {
						once.Do(func() {
							first = err
							cancel()
						})
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func checkFile(roots *treeRoots, rf *recordFile, buf []byte) error {
	dir, base := splitName(rf.Path)
	r, err := roots.get(dir)
	if err != nil {
		return err
	}
	f, err := regfile.OpenIn(r, base)
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
	f, err := regfile.Open(name)
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

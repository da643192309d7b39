package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/search"
)

// DigestCache persists, per directory library, what scans learned about
// each file: its identity (device, inode, size, mtime, ctime), digest, text
// or binary, archive and script sniffing, lint findings and, for SKILL.md,
// its parsed summary (not its body, which the catalog reads on demand),
// and each folder's listing with the folder's identity (see listing). It
// also keeps the search index of the last few catalogs, keyed by what they
// index. A warm start of an unchanged library then reads no file content
// and lists no folder: it stats each folder and file once.
//
// Each library's record is one file, in a compact binary form with a
// checksum (digestrecord.go). It is written to a temporary file and renamed
// into place, so concurrent server processes sharing the folder
// never see a torn record; the last writer wins, and a reader of a stale
// record merely reads more files. Records are bounded (MaxDigestCacheFiles
// entries, MaxDigestCacheBytes on disk) and a damaged one is ignored.
//
// The cache folder is trusted like the rest of the user's cache: entries
// are reused only for files whose identity and timestamps match, and every
// byte served is still checked against its digest at read time.
type DigestCache struct {
	dir string
}

// Bounds of one library's record.
const (
	MaxDigestCacheFiles = 2_000_000
	MaxDigestCacheBytes = 512 << 20
)

// digestCacheVersion changes whenever the record format or what a scan
// computes per file changes (for example new lint rules), which
// invalidates every record. The record's format is in digestrecord.go.
const digestCacheVersion = "skills-mcp digest cache v8"

// NewDigestCache returns a cache keeping its records in dir, created on
// first save.
func NewDigestCache(dir string) *DigestCache { return &DigestCache{dir: dir} }

// lintFingerprint names the rule set findings were computed with.
func lintFingerprint() string {
	h := sha256.New()
	for _, r := range lint.Rules() {
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", r.ID, r.Title, r.Severity)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func (c *DigestCache) path(lib *Library) string {
	sum := sha256.Sum256([]byte(libKey(lib)))
	return filepath.Join(c.dir, "digests", hex.EncodeToString(sum[:12])+".rec")
}

// cachedLib is what a record holds of one library: its files and its
// folders' listings, by name below the library root.
type cachedLib struct {
	files *fileIndex
	dirs  *folderTable
}

// load reads the records of the directory libraries among libs. A missing
// or damaged record gives no entry for that library.
func (c *DigestCache) load(libs []*Library) map[string]cachedLib {
	out := map[string]cachedLib{}
	fp := lintFingerprint()
	for _, lib := range libs {
		if lib.Dir == "" {
			continue
		}
		if cl, err := c.read(c.path(lib), fp); err == nil {
			out[libKey(lib)] = cl
		}
	}
	return out
}

// read returns the entries of the record at p, if it was written by this
// version with the rule set fp.
func (c *DigestCache) read(p, fp string) (cachedLib, error) {
	data, err := readCacheFile(p, MaxDigestCacheBytes)
	if err != nil {
		return cachedLib{}, err
	}
	return readRecord(data, fp)
}

// readCacheFile reads the whole file at p in one allocation, if it is at
// most limit bytes.
func readCacheFile(p string, limit int64) ([]byte, error) {
	f, err := regfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, over the %d the cache keeps", filepath.Base(p), info.Size(), limit)
	}
	data := make([]byte, info.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// save writes the records of the directory libraries a scan left st of.
func (c *DigestCache) save(libs []*Library, st *scanState) error {
	fp := lintFingerprint()
	var errs []error
	for _, lib := range libs {
		if lib.Dir == "" {
			continue
		}
		all := st.files[libKey(lib)].all()
		if len(all) > MaxDigestCacheFiles {
			continue
		}
		files := make([]*found, 0, len(all))
		for _, f := range all {
			if !f.stat.ok || f.err != nil || (f.md != nil && f.md.err != nil) {
				continue // a SKILL.md that does not parse is read again, to report it
			}
			files = append(files, f)
		}
		slices.SortFunc(files, func(a, b *found) int { return strings.Compare(a.name, b.name) })
		dirs := st.dirs[libKey(lib)]
		p := c.path(lib)
		errs = append(errs, c.write(p, fp, files, dirs, dirs.withIdentity()))
		// The record of the format before this one, which no version reads
		// back once this one is written.
		os.Remove(strings.TrimSuffix(p, ".rec") + ".gob")
	}
	return errors.Join(errs...)
}

func (c *DigestCache) write(p, fp string, files []*found, dirs *folderTable, order []int) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	// No fsync: the record is a cache. After a crash a torn record fails
	// its checksum and is ignored, which costs one full read, while syncing
	// would cost a disk flush after every edit of a watched library.
	return atomicfile.Write(p, 0o600, false, func(f io.Writer) error {
		return writeRecord(&limitedWriter{w: f, left: MaxDigestCacheBytes}, fp, files, dirs, order)
	})
}

// MaxSearchIndexBytes bounds a saved search index; a larger one is not
// saved.
const MaxSearchIndexBytes = 512 << 20

// Saved search indexes. A snapshot's index is saved under a key computed
// from everything it indexes (searchKey), so a restart on an unchanged
// catalog loads it instead of reading every SKILL.md body and analysing
// it again. Several catalogs may share the folder, each under its own
// key; past keptIndexes, the least recently used are removed.
const (
	keptIndexes          = 8
	searchIndexExtension = ".idx"
)

func (c *DigestCache) indexPath(key string) string {
	return filepath.Join(c.dir, "search", key+searchIndexExtension)
}

// loadIndex returns the index saved under key if it is whole, of this
// version and indexes docs documents, else nil.
func (c *DigestCache) loadIndex(key string, docs int) (*search.Index, error) {
	p := c.indexPath(key)
	data, err := readCacheFile(p, MaxSearchIndexBytes)
	if err != nil {
		return nil, err
	}
	ix, err := search.Decode(data)
	if err != nil {
		return nil, err
	}
	if ix.Docs() != docs || !ix.IDsBelow(docs) {
		return nil, errors.New("saved search index of another catalog")
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used: kept when others are removed
	return ix, nil
}

// saveIndex writes ix under key and removes the least recently used
// indexes past keptIndexes.
func (c *DigestCache) saveIndex(key string, ix *search.Index) error {
	p := c.indexPath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	err := atomicfile.Write(p, 0o600, false, func(f io.Writer) error {
		return ix.Encode(&limitedWriter{w: f, left: MaxSearchIndexBytes})
	})
	if err != nil {
		return err
	}
	c.pruneIndexes()
	return nil
}

// staleTemp is how old a temporary file of an index write must be to be
// taken for the leftover of a process that died writing it.
const staleTemp = 10 * time.Minute

// pruneIndexes removes the saved indexes used least recently, past
// keptIndexes, and temporary files left by writers that died. Another
// process may be reading an index: it then has the file open, or rebuilds
// its index.
func (c *DigestCache) pruneIndexes() {
	dir := filepath.Join(c.dir, "search")
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type saved struct {
		name string
		used time.Time
	}
	var all []saved
	for _, de := range des {
		info, err := de.Info()
		if !de.Type().IsRegular() || err != nil {
			continue
		}
		switch name := de.Name(); {
		case filepath.Ext(name) == searchIndexExtension && !strings.HasPrefix(name, "."):
			all = append(all, saved{name, info.ModTime()})
		case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") && time.Since(info.ModTime()) > staleTemp:
			os.Remove(filepath.Join(dir, name))
		}
	}
	if len(all) <= keptIndexes {
		return
	}
	slices.SortFunc(all, func(a, b saved) int { return b.used.Compare(a.used) })
	for _, s := range all[keptIndexes:] {
		os.Remove(filepath.Join(dir, s.name))
	}
}

// limitedWriter fails a write past its budget, so that a file too large
// to keep is never written whole.
type limitedWriter struct {
	w    io.Writer
	left int64
}

var errTooLarge = errors.New("larger than the cache keeps")

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, errTooLarge
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

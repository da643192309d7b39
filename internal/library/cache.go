package library

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Cache extracts and downloads archive libraries into a directory shared by
// every process that uses the same Dir (see the package documentation for
// its layout and locking rules).
//
// Set the exported fields before first use; a Cache must not be copied
// after first use. Its methods are safe for concurrent use. Call Close when
// done, to release the locks that keep other processes from pruning what
// this one uses.
type Cache struct {
	// Dir is the cache directory. It is created 0700 if missing. Required.
	Dir string
	// Limits bound archives and downloads; zero fields take their defaults.
	Limits Limits
	// Logger receives warnings (a cached tree that fails verification, a
	// failed refresh). If nil, nothing is logged.
	Logger *slog.Logger
	// HTTPClient supplies the Transport for Fetch's requests (tests inject
	// httptest's TLS client). Only its Transport is used: the redirect
	// policy is this package's, there is no cookie jar, and Timeout
	// applies per request. If nil, http.DefaultTransport.
	HTTPClient *http.Client
	// Env looks up SKILLS_FETCH_TOKEN, GH_TOKEN and GITHUB_TOKEN. Pass
	// os.LookupEnv to use the process environment. If nil, Fetch sends no
	// credentials.
	Env func(string) (string, bool)
	// Timeout bounds each HTTP request of Fetch, body included. If zero,
	// DefaultFetchTimeout.
	Timeout time.Duration

	initOnce sync.Once
	initErr  error

	mu      sync.Mutex
	holds   map[string]*hold       // extraction digest → this process's verified use of it
	busy    map[string]*sync.Mutex // serialises work on one digest in this process
	refs    map[string]string      // unpinned URL → digest last fetched
	digests map[string]fileDigest  // archive path → digest, while the file is unchanged
}

// hold is this process's shared lock on one extraction, counted per use.
type hold struct {
	f *os.File // the extraction directory, locked shared
	n int
}

// Names inside an extraction directory, and of work in progress.
const (
	treeName     = "tree"
	recordName   = "integrity.json"
	downloadsDir = "downloads"
	tmpPrefix    = ".tmp-"
	trashPrefix  = ".trash-"
)

// staleAfter is how old work in progress must be before a sweep considers
// it: the window between creating a temporary directory and locking it (a
// few system calls) must never look abandoned. Anything older that nobody
// holds locked was left by a process that died: a server killed during an
// extraction and started again at once must find it gone (an hour's
// margin let five quick restarts leave 204 MiB behind).
const staleAfter = 2 * time.Second

func (c *Cache) init() error {
	c.initOnce.Do(func() {
		if c.Dir == "" {
			c.initErr = errors.New("cache directory not set")
			return
		}
		if err := os.MkdirAll(filepath.Join(c.Dir, downloadsDir), 0o700); err != nil {
			c.initErr = fmt.Errorf("creating the library cache: %w", err)
			return
		}
		c.holds = make(map[string]*hold)
		c.busy = make(map[string]*sync.Mutex)
		c.refs = make(map[string]string)
		c.digests = make(map[string]fileDigest)
		c.sweep()
	})
	return c.initErr
}

func (c *Cache) limits() Limits { return c.Limits.withDefaults() }

func (c *Cache) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// lockDigest serialises this process's work on one digest: two goroutines
// extracting the same archive would otherwise both do the work.
func (c *Cache) lockDigest(digest string) func() {
	c.mu.Lock()
	m := c.busy[digest]
	if m == nil {
		m = new(sync.Mutex)
		c.busy[digest] = m
	}
	c.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Extract extracts the zip archive at zipPath into the cache and returns the
// directory holding its tree, and the archive's sha256 (lowercase hex).
//
// The tree is at Dir/<digest>/tree. An archive already extracted, by this
// process or another, is reused: the first time a Cache uses it, every
// file is re-hashed against the integrity record, and a tree that fails is
// extracted again. Until this Cache holds the extraction, the archive's
// central directory is inspected, so lowered limits apply to cached
// extractions too. The archive is hashed on every call, except on Linux
// while its device, inode, size, mtime and ctime are unchanged (a rescan
// then costs a stat).
//
// Every successful call takes one use of the digest, to be ended by
// [Cache.Prune]; a failed call takes none. A refused archive returns an
// error wrapping an [*ArchiveError] (match its sentinel with errors.Is) and
// leaves nothing in the cache.
func (c *Cache) Extract(ctx context.Context, zipPath string) (dir, digest string, err error) {
	if err := c.init(); err != nil {
		return "", "", err
	}
	f, err := regfile.Open(zipPath)
	if err != nil {
		return "", "", fmt.Errorf("opening zip library: %w", err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("opening zip library: %w", err)
	}
	if !before.Mode().IsRegular() {
		return "", "", fmt.Errorf("zip library %s: not a regular file", zipPath)
	}
	digest, err = c.digestOf(ctx, zipPath, f, before)
	if err != nil {
		return "", "", fmt.Errorf("zip library %s: %w", zipPath, err)
	}
	// The archive is read again to extract it. An edit in between would
	// store one archive's content under the other's digest, so extraction
	// is committed only if the file is unchanged.
	stable := func() error {
		after, err := os.Stat(zipPath)
		if err != nil || !sameVersion(before, after) {
			return fmt.Errorf("zip library %s: the archive changed while it was being read; try again", zipPath)
		}
		return nil
	}
	dir, err = c.use(ctx, f, before.Size(), digest, zipPath, stable)
	return dir, digest, err
}

// digestOf returns the sha256 of the open archive f. On systems where a
// file's identity includes its change time, the digest is remembered for
// that identity (device, inode, size, modification and change times), so
// that a rescan of an unchanged archive costs a stat, not a read; the
// change time moves on any write, whatever the modification time says.
func (c *Cache) digestOf(ctx context.Context, name string, f *os.File, before fs.FileInfo) (string, error) {
	start := time.Now()
	id, changed, ok := fileID(before)
	key, err := filepath.Abs(name)
	if !ok || err != nil {
		return hashFile(ctx, f, before.Size())
	}
	c.mu.Lock()
	m, hit := c.digests[key]
	c.mu.Unlock()
	if hit && m.id == id {
		return m.digest, nil
	}
	digest, err := hashFile(ctx, f, before.Size())
	if err != nil {
		return "", err
	}
	// Remember it only if the file did not change while it was hashed, and
	// its last change is older than timestamp granularity: an edit in the
	// same clock tick as the one before it could keep the same times (git's
	// "racy clean" problem).
	if start.Sub(changed) < racyMargin {
		return digest, nil
	}
	if after, err := f.Stat(); err == nil {
		if id2, _, _ := fileID(after); id2 == id {
			c.mu.Lock()
			c.digests[key] = fileDigest{id: id, digest: digest}
			c.mu.Unlock()
		}
	}
	return digest, nil
}

// sameVersion reports whether two stats of a file show the same content:
// the same file, size and modification time, and change time where known.
func sameVersion(a, b fs.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	ida, _, oka := fileID(a)
	idb, _, okb := fileID(b)
	return oka != okb || ida == idb
}

// racyMargin is how long ago a file must have changed for its digest to be
// remembered: above the coarsest timestamp granularity of common file
// systems (1 s on FAT and HFS+, a kernel tick on Linux).
const racyMargin = 2 * time.Second

// fileDigest is a remembered archive digest and the file identity it was
// computed for.
type fileDigest struct{ id, digest string }

// reuse counts one more use of an extraction this process already holds,
// and reports whether there was one. Held implies verified: verification
// happens once per process, and the archive was inspected under the same
// limits when it was first used.
func (c *Cache) reuse(digest string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.holds[digest]; h != nil {
		h.n++
		return true
	}
	return false
}

// use returns the verified extraction of the archive ra (whose sha256 is
// digest), extracting it if needed, and counts one use of it.
func (c *Cache) use(ctx context.Context, ra io.ReaderAt, size int64, digest, display string, stable func() error) (string, error) {
	final := filepath.Join(c.Dir, digest)
	tree := filepath.Join(final, treeName)
	if c.reuse(digest) {
		return tree, nil
	}
	p, err := inspect(ra, size, c.limits())
	if err != nil {
		return "", named(err, display)
	}
	defer c.lockDigest(digest)()
	if c.reuse(digest) { // another goroutine got there first
		return tree, nil
	}

	// Each pass either finds a good extraction, or makes one. Another
	// process can prune or replace the directory between our steps; that
	// costs a pass, and three passes losing such races means something is
	// wrong.
	for range 3 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		f, err := lockExisting(final)
		if err != nil {
			return "", err
		}
		if f != nil {
			verr := c.verify(ctx, final, digest, p)
			if verr == nil {
				c.adopt(digest, f)
				return tree, nil
			}
			if ctx.Err() != nil {
				f.Close()
				return "", ctx.Err()
			}
			c.log().Warn("cached library extraction fails its integrity check; extracting again", "archive", display, "sha256", digest, "problem", verr)
			if err := c.discard(final, f); err != nil {
				return "", fmt.Errorf("zip library %s: cached extraction %s fails its integrity check (%v), and %w", display, final, verr, err)
			}
			continue
		}
		f, err = c.extract(ctx, ra, size, p, digest, stable)
		if errors.Is(err, errRace) {
			continue
		}
		if err != nil {
			return "", named(err, display)
		}
		c.adopt(digest, f)
		return tree, nil
	}
	return "", fmt.Errorf("zip library %s: its cached extraction kept changing under us (another process pruning it?)", display)
}

// errRace means another process changed the extraction directory while we
// worked on it; the caller looks again.
var errRace = errors.New("extraction changed concurrently")

// adopt records the first use by this process of a verified extraction,
// held by f. Later uses only count (see use): verification happens once.
func (c *Cache) adopt(digest string, f *os.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds[digest] = &hold{f: f, n: 1}
}

// lockExisting opens the extraction directory and takes a shared lock on
// it. It returns nil if there is none, or if the directory it locked is no
// longer at that path (pruned or replaced meanwhile).
func lockExisting(final string) (*os.File, error) {
	f, err := os.Open(final)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening cached extraction: %w", err)
	}
	if err := lockShared(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking cached extraction: %w", err)
	}
	if !stillAt(f, final) {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// stillAt reports whether the open file f is still the file at name.
func stillAt(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(name)
	return err == nil && os.SameFile(a, b)
}

// discard removes an extraction this process holds shared (by f), unless
// another process uses it too. It closes f.
func (c *Cache) discard(final string, f *os.File) error {
	defer f.Close()
	if canLock {
		ok, err := tryLockExclusive(f)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("another process is using it; stop that process or remove the directory")
		}
		if !stillAt(f, final) {
			return nil
		}
	}
	return c.remove(final)
}

// remove renames dir aside, so that it disappears from its path at once,
// and deletes it.
func (c *Cache) remove(dir string) error {
	trash := filepath.Join(c.Dir, trashPrefix+rand.Text())
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("removing cached extraction: %w", err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("removing cached extraction: %w", err)
	}
	return nil
}

// extract writes the archive into a temporary directory inside Dir, with
// its integrity record, and renames it to Dir/<digest>. On success it
// returns the extraction directory locked shared. On any failure the
// temporary directory is removed; when another process won the rename, the
// error is errRace.
func (c *Cache) extract(ctx context.Context, ra io.ReaderAt, size int64, p *plan, digest string, stable func() error) (_ *os.File, err error) {
	tmp, err := os.MkdirTemp(c.Dir, tmpPrefix+digest[:16]+"-")
	if err != nil {
		return nil, fmt.Errorf("creating extraction directory: %w", err)
	}
	f, err := os.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("creating extraction directory: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.RemoveAll(tmp)
		}
	}()
	// The exclusive lock tells a sweep in another process that this work
	// is alive.
	if canLock {
		if ok, err := tryLockExclusive(f); !ok || err != nil {
			return nil, fmt.Errorf("locking extraction directory: %v", cmpErr(err, "already locked"))
		}
	}
	rec, err := writeTree(ctx, ra, size, p, filepath.Join(tmp, treeName), c.limits())
	if err != nil {
		return nil, err
	}
	rec.Archive = digest
	if err := writeRecord(filepath.Join(tmp, recordName), rec); err != nil {
		return nil, err
	}
	if stable != nil {
		if err := stable(); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	final := filepath.Join(c.Dir, digest)
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Lstat(final); serr == nil {
			return nil, errRace // another process finished first
		}
		return nil, fmt.Errorf("moving extraction into place: %w", err)
	}
	// f is now the extraction. Converting the lock to shared is not atomic,
	// so check that nobody pruned it in between.
	if err := lockShared(f); err != nil {
		return nil, err
	}
	if !stillAt(f, final) {
		f.Close()
		return nil, errRace
	}
	return f, nil
}

func cmpErr(err error, otherwise string) any {
	if err != nil {
		return err
	}
	return otherwise
}

// Prune ends one use of an extraction taken by Extract or Fetch. When this
// process has no use of digest left, the extraction (and its download, for
// a URL library) is removed, unless another process holds it: an
// extraction in use elsewhere is left for the last process to prune it, or
// to be reused. Pruning a digest that is not in the cache does nothing.
//
// The rule for callers: when a library's archive changes, call Prune with
// the digest it served before, after the new one is serving; call it too
// when a library is removed. Calling it with the same digest as the new
// one is fine: that only ends the older use.
func (c *Cache) Prune(digest string) error {
	if !isDigest(digest) {
		return fmt.Errorf("prune: %q is not a sha256 digest", digest)
	}
	if err := c.init(); err != nil {
		return err
	}
	defer c.lockDigest(digest)()
	final := filepath.Join(c.Dir, digest)
	c.mu.Lock()
	var f *os.File
	if h := c.holds[digest]; h != nil {
		if h.n--; h.n > 0 {
			c.mu.Unlock()
			return nil
		}
		f = h.f
		delete(c.holds, digest)
	}
	c.mu.Unlock()
	if !canLock {
		if f != nil {
			f.Close()
		}
		return nil
	}
	if f == nil {
		var err error
		if f, err = os.Open(final); errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return fmt.Errorf("pruning %s: %w", digest, err)
		}
	}
	defer f.Close()
	ok, err := tryLockExclusive(f)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", digest, err)
	}
	if !ok {
		c.log().Debug("library extraction still in use by another process; not pruned", "sha256", digest)
		return nil
	}
	if !stillAt(f, final) {
		return nil
	}
	if err := os.Remove(filepath.Join(c.Dir, downloadsDir, digest+".zip")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pruning %s: %w", digest, err)
	}
	if err := c.remove(final); err != nil {
		return fmt.Errorf("pruning %s: %w", digest, err)
	}
	return nil
}

// Close releases every use this Cache holds, so that other processes may
// prune them. It removes nothing. The Cache must not be used afterwards.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for d, h := range c.holds {
		errs = append(errs, h.f.Close())
		delete(c.holds, d)
	}
	return errors.Join(errs...)
}

// sweep removes work in progress abandoned by a process that died: a
// temporary or trash entry older than staleAfter that nobody holds locked.
func (c *Cache) sweep() {
	if !canLock {
		return
	}
	for _, dir := range []string{c.Dir, filepath.Join(c.Dir, downloadsDir)} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, tmpPrefix) && !strings.HasPrefix(name, trashPrefix) {
				continue
			}
			full := filepath.Join(dir, name)
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < staleAfter {
				continue
			}
			f, err := os.Open(full)
			if err != nil {
				continue
			}
			if ok, _ := tryLockExclusive(f); ok && stillAt(f, full) {
				if err := os.RemoveAll(full); err == nil {
					c.log().Debug("removed abandoned library cache work", "path", full)
				}
			}
			f.Close()
		}
	}
}

// hashFile returns the lowercase hex sha256 of the first size bytes of f.
func hashFile(ctx context.Context, f io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, &ctxReader{ctx: ctx, r: io.NewSectionReader(f, 0, size)}); err != nil {
		return "", fmt.Errorf("hashing: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader stops a long read when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// isDigest reports whether s is a lowercase hex sha256.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

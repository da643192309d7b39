// Package versions hands out the hub's immutable versions as opened,
// read-only folders: a version's files are materialised from the store
// once per process into a folder named by its tree digest, and opened as
// one os.Root whose confined fs.FS every holder shares, under the same
// value (so the engine scans a version once per process, whoever serves
// it).
//
// Holders count: Cache.Acquire hands out a version with a release func,
// and the version's root is closed when its last holder releases it; the
// unpacked folder stays in the cache for the next Acquire. Nothing sweeps
// and nothing guesses what is unused.
package versions

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Store is what a Cache reads of the hub's store; *store.DB is one.
type Store interface {
	// Materialize writes a version's files into a read-only folder under
	// cacheDir, verified against their digests, and returns the folder.
	Materialize(ctx context.Context, id int64, cacheDir string) (string, error)
	// VersionFiles lists a version's files in path order.
	VersionFiles(ctx context.Context, id int64) ([]store.File, error)
}

// ErrClosed is returned by Acquire after Close.
var ErrClosed = errors.New("versions: closed")

// maxTries bounds how often Acquire tries a materialisation again that
// another caller's cancellation ended.
const maxTries = 3

// Version is one materialised version, opened. It is immutable and safe
// for concurrent use while held.
type Version struct {
	// Stored is the version as the store holds it.
	Stored store.Version
	// ID is its version id, NAME@<12 hex> (hub.VersionID).
	ID string
	// Namespace is the first 12 hex digits of its tree digest: the
	// namespace of its skill URIs.
	Namespace string
	// FS reads its folder, confined to it; the same value for every
	// holder.
	FS fs.FS
	// Files are its files as the store lists them, in path order.
	Files []store.File
	// Requirements is what its inspection says the package needs, decoded
	// (nil when the inspection says nothing).
	Requirements any

	root  *os.Root
	paths map[string]int // path → index in Files
}

// File returns the file at path, as the store lists it.
func (v *Version) File(path string) (store.File, bool) {
	i, ok := v.paths[path]
	if !ok {
		return store.File{}, false
	}
	return v.Files[i], true
}

// Read reads a file of the version from its folder, verified against the
// store's digest. Its errors say what to do, and never name the folder.
func (v *Version) Read(path string) ([]byte, error) {
	f, ok := v.File(path)
	if !ok {
		return nil, fmt.Errorf("%s has no file %q", v.ID, path)
	}
	fh, err := regfile.OpenIn(v.root, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s cannot be read now; retry later", v.ID, path)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, f.Size+1))
	if err != nil || int64(len(data)) != f.Size || sha256.Sum256(data) != f.Digest {
		return nil, fmt.Errorf("%s: %s does not match its digest; the hub rebuilds it on restart", v.ID, path)
	}
	return data, nil
}

// Cache materialises versions into a folder and hands them out opened,
// counting their holders. It is safe for concurrent use.
type Cache struct {
	st  Store
	dir string

	mu      sync.Mutex
	closed  bool
	entries map[int64]*entry // by store id
}

// entry is one version of the cache: being materialised until ready
// closes, then open (v) or failed (err).
type entry struct {
	ready chan struct{}
	v     *Version
	err   error
	refs  int // holders, under Cache.mu
}

// New returns a cache that materialises versions of st into dir. dir is a
// cache: deleting it loses nothing.
func New(st Store, dir string) (*Cache, error) {
	if st == nil {
		return nil, errors.New("versions: a store is required")
	}
	if dir == "" {
		return nil, errors.New("versions: a cache folder is required (materialised versions are kept there)")
	}
	return &Cache{st: st, dir: dir, entries: map[int64]*entry{}}, nil
}

// Acquire returns version sv opened, materialising it the first time a
// holder needs it, and the func that releases it: the caller calls it
// once, when nothing it gave the version to reads it any more. The last
// release closes the version's root (its folder stays in the cache). A
// materialisation that another caller began and whose context was
// cancelled is tried again under this caller's context.
func (c *Cache) Acquire(ctx context.Context, sv store.Version) (*Version, func(), error) {
	for try := 1; ; try++ {
		v, release, err := c.acquireOnce(ctx, sv)
		if try < maxTries && errors.Is(err, context.Canceled) && ctx.Err() == nil {
			continue
		}
		return v, release, err
	}
}

// acquireOnce is Acquire, once.
func (c *Cache) acquireOnce(ctx context.Context, sv store.Version) (*Version, func(), error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	en := c.entries[sv.ID]
	if en == nil {
		en = &entry{ready: make(chan struct{}), refs: 1}
		c.entries[sv.ID] = en
		c.mu.Unlock()
		en.v, en.err = c.open(ctx, sv)
		close(en.ready)
	} else {
		en.refs++
		c.mu.Unlock()
		select {
		case <-en.ready:
		case <-ctx.Done():
			c.unref(sv.ID, en)
			return nil, nil, ctx.Err()
		}
	}
	if en.err != nil {
		// Forgotten at once, so that the next Acquire tries again.
		c.mu.Lock()
		if c.entries[sv.ID] == en {
			delete(c.entries, sv.ID)
		}
		c.mu.Unlock()
		c.unref(sv.ID, en)
		return nil, nil, en.err
	}
	h := &holder{c: c, id: sv.ID, en: en}
	return en.v, h.release, nil
}

// holder is one holder of an entry. It is small on purpose: a project
// holds each of its versions, and a hub serves thousands of projects.
type holder struct {
	c        *Cache
	id       int64
	en       *entry
	released atomic.Bool
}

// release drops the holder's reference, once.
func (h *holder) release() {
	if h.released.CompareAndSwap(false, true) {
		h.c.unref(h.id, h.en)
	}
}

// unref drops one holder of en; the last closes its root, unless Close
// already did.
func (c *Cache) unref(id int64, en *entry) {
	c.mu.Lock()
	en.refs--
	last := en.refs == 0 && c.entries[id] == en
	if last {
		delete(c.entries, id)
	}
	c.mu.Unlock()
	if last && en.v != nil {
		en.v.root.Close()
	}
}

// open materialises version sv and opens it.
func (c *Cache) open(ctx context.Context, sv store.Version) (*Version, error) {
	hex := strings.TrimPrefix(sv.TreeDigest, "sha256:")
	if len(hex) < hub.ShortDigest {
		return nil, fmt.Errorf("version %d: malformed tree digest", sv.ID)
	}
	dir, err := c.st.Materialize(ctx, sv.ID, c.dir)
	if err != nil {
		return nil, fmt.Errorf("materialising version %d: %w", sv.ID, err)
	}
	files, err := c.st.VersionFiles(ctx, sv.ID)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening version %d: %w", sv.ID, err)
	}
	v := &Version{Stored: sv, ID: hub.VersionID(sv.Package, sv.TreeDigest), Namespace: hex[:hub.ShortDigest],
		FS: regfile.FS(root), Files: files, root: root, paths: make(map[string]int, len(files))}
	for i, f := range files {
		v.paths[f.Path] = i
	}
	var in struct {
		Requirements any `json:"requirements"`
	}
	if len(sv.Inspection) > 0 && json.Unmarshal(sv.Inspection, &in) == nil {
		v.Requirements = in.Requirements
	}
	return v, nil
}

// Len is how many versions are open or being opened.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Close closes every version still open, once those being materialised
// are done; Acquire fails afterwards, and a release after Close does
// nothing.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	entries := c.entries
	c.entries = map[int64]*entry{}
	c.mu.Unlock()
	for _, en := range entries {
		<-en.ready
		if en.v != nil {
			en.v.root.Close()
		}
	}
	return nil
}

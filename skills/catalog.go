package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/engine"
	"github.com/skills-mcp/skills-mcp/internal/library"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

// Library is one source of skills. Set exactly one of Dir, Zip, URL and FS.
type Library struct {
	// Namespace prefixes the library's skill paths (skill://<ns>/...). It
	// may be empty for a catalog of one library.
	Namespace string
	// Dir is a folder of skills on disk. It is read confined below itself
	// (no symlink is followed) and can be watched (Options.Watch).
	Dir string
	// Zip is a local zip file, extracted once into Options.CacheDir.
	Zip string
	// URL is an https URL of a zip, pinned by a #sha256=HEX fragment or
	// SHA256 (or a .sha256 sidecar with Options.AllowUnverified).
	URL    string
	SHA256 string
	// FS is any file system of skills: an embed.FS, a *zip.Reader, an
	// fstest.MapFS. It must not change while served: catalogs over the
	// same FS value share one skill set.
	FS fs.FS
	// Title, Version and Source describe the library to clients.
	Title, Version, Source string
	// NoScripts withholds every executable of the library.
	NoScripts bool
}

// Options configure a catalog. A nil *Options means defaults.
type Options struct {
	// Watch keeps a catalog of directories current: file events rescan
	// it (debounced), and SafetyRescan rescans it in case one was missed.
	// Reload works with or without it.
	Watch bool
	// SafetyRescan is the interval of the full rescan while watching; 0
	// means 5 minutes, a negative value none.
	SafetyRescan time.Duration
	// CacheDir holds extracted zips, downloads and the digest cache. If
	// empty, skills-mcp in the user cache folder; it is only created when
	// a zip or URL library needs it.
	CacheDir string
	// AllowUnverified serves an https library with neither a pin nor a
	// sidecar.
	AllowUnverified bool
	// Depth is how many folder levels below a library root are searched
	// for skills (0: 8).
	Depth int
	// Exclude names folders never entered.
	Exclude []string
	// Strict makes Open fail when anything was skipped: a skill withheld
	// (a broken SKILL.md, a frontmatter name that differs from its folder,
	// a bundled archive, …) or a file left out. The error is a
	// *ProblemsError listing every one, and matches ErrProblems.
	Strict bool
	// AllowEmpty lets Open return a catalog that serves no skill; without
	// it, a catalog whose libraries hold no skill is an error matching
	// ErrNoSkills (a wrong folder, an embed.FS without its files).
	AllowEmpty bool
	// NoScripts withholds every executable of every library.
	NoScripts bool
	// NoLint turns the risk linter off.
	NoLint bool
	// ShowDisabled lists skills marked disable-model-invocation.
	ShowDisabled bool
	// Logger receives warnings (every skill and file skipped, and why)
	// and scan lines, and the errors of the servers the catalog is
	// attached to; nil means slog.Default(). To discard them, give
	// slog.New(slog.DiscardHandler). Library paths appear here only,
	// never in MCP output.
	Logger *slog.Logger
	// Settable makes a catalog whose libraries SetLibraries replaces
	// while it is served. It may be opened with no library (an empty
	// catalog) and is not watched: Watch is ignored. When every library
	// is immutable content with a namespace (an FS value that compares,
	// such as a struct or a pointer, or a zip), each library is scanned
	// once per process and its skills are shared by every catalog serving
	// it: a settable catalog over libraries others serve costs its
	// indexes only. Otherwise its libraries are scanned for it alone.
	Settable bool
}

// Errors a caller may branch on, with errors.Is. Errors about a library's
// files also match the io/fs sentinels (fs.ErrNotExist for a folder or zip
// that is not there).
var (
	// ErrClosed is returned by a closed catalog, and by a server request
	// that selected one.
	ErrClosed = errors.New("skills: catalog is closed")
	// ErrNoSkills: the libraries hold no skill (and Options.AllowEmpty is
	// not set).
	ErrNoSkills = errors.New("skills: no skill found")
	// ErrProblems: Options.Strict, and something was skipped.
	ErrProblems = errors.New("skills: skills or files were skipped")
	// ErrLibrary: a Library value is malformed (no source or two, a
	// namespace used twice).
	ErrLibrary = errors.New("skills: invalid library")
)

// Problem is one skill or file the catalog skipped, and why.
type Problem struct {
	// Library is the namespace of its library ("" when un-namespaced).
	Library string
	// Path is the skill folder or file below the library root.
	Path string
	// Reason is a short stable code: "frontmatter", "name-mismatch",
	// "duplicate-uri", "archive", "oversize", "skipped-files", "symlink",
	// "unreadable", "special-file", "depth", "name", …
	Reason string
	// Message says what is wrong, for a person.
	Message string
}

func (p Problem) String() string {
	where := p.Path
	if p.Library != "" {
		where = p.Library + ":" + where
	}
	return where + ": " + p.Message + " (" + p.Reason + ")"
}

// ProblemsError is Open's error under Options.Strict: every problem found.
type ProblemsError struct{ Problems []Problem }

func (e *ProblemsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "skills: %d skipped (Options.Strict):", len(e.Problems))
	for i, p := range e.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more (Catalog.Problems lists them)", len(e.Problems)-i)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

func (e *ProblemsError) Unwrap() error { return ErrProblems }

// Catalog is a set of libraries served as one SEP-2640 catalog. It is safe
// for concurrent use. Close it when done.
type Catalog struct {
	store *catalog.Store
	live  *engine.Catalog // nil for a fixed catalog
	opts  Options

	opened []*library.Opened
	cache  *library.Cache
	shared *sharedSet // a fixed catalog's skill set, shared by key
	// parts are the one-library skill sets a settable catalog's snapshot
	// merges (catalog.Merge), shared with every catalog serving them.
	parts []*sharedSet

	mu       sync.Mutex
	closed   bool
	notifier []*server.Notifier // of the servers it is attached to

	// setMu serialises SetLibraries and Close on a settable catalog.
	setMu sync.Mutex
}

// Changes is what a reload changed, by SKILL.md URI.
type Changes struct {
	Added, Removed, Changed []string
}

// Open builds a catalog of libs and returns once its first scan is in. A
// catalog whose libraries are all FS values or zips, unwatched, is fixed:
// catalogs over the same content share one in-memory skill set, and
// opening one more costs a map lookup.
func Open(ctx context.Context, libs []Library, opts *Options) (*Catalog, error) {
	c := &Catalog{}
	if opts != nil {
		c.opts = *opts
	}
	if len(libs) == 0 && !c.opts.Settable {
		return nil, fmt.Errorf("%w: Open needs at least one library", ErrLibrary)
	}
	if err := checkLibraries(libs); err != nil {
		return nil, err
	}
	libs = topFolders(libs)
	if c.opts.Logger == nil {
		c.opts.Logger = slog.Default()
	}
	log := c.opts.Logger
	c, err := c.open(ctx, libs, log)
	if err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// check applies Options.Strict and Options.AllowEmpty to the first scan.
func (c *Catalog) check() error {
	if c.opts.Settable {
		return nil
	}
	if c.opts.Strict {
		if ps := c.Problems(); len(ps) > 0 {
			return &ProblemsError{Problems: ps}
		}
	}
	if c.Len() == 0 && !c.opts.AllowEmpty {
		msg := "the libraries hold no folder with a SKILL.md"
		if ps := c.Problems(); len(ps) > 0 {
			msg += fmt.Sprintf("; %d skipped, the first: %s (Catalog.Problems lists them)", len(ps), ps[0])
		}
		return fmt.Errorf("%w: %s; set Options.AllowEmpty to serve an empty catalog", ErrNoSkills, msg)
	}
	return nil
}

// Problems lists every skill and file the catalog skipped, and why, as of
// its current scan. They are also logged as warnings.
func (c *Catalog) Problems() []Problem {
	ws := c.store.Snapshot().Warnings()
	out := make([]Problem, 0, len(ws))
	for _, w := range ws {
		out = append(out, Problem{Library: w.Library, Path: w.Path, Reason: w.Reason, Message: w.Message})
	}
	return out
}

// open is Open after the checks of its arguments.
func (c *Catalog) open(ctx context.Context, libs []Library, log *slog.Logger) (*Catalog, error) {
	if c.opts.Settable {
		c.opts.Watch = false
		if _, err := c.setLibraries(ctx, libs, log); err != nil {
			c.release()
			return nil, err
		}
		return c, nil
	}
	key, fixed := shareKey(libs, &c.opts)
	if fixed && !c.opts.Watch {
		if set := sets.acquire(key); set != nil {
			c.shared, c.store = set, catalog.NewStore(set.snap)
			return c, nil
		}
	}
	for _, l := range libs {
		if (l.Zip != "" || l.URL != "") && c.cache == nil {
			c.cache = newCache(c.opts.CacheDir, log)
		}
		o, err := library.Open(ctx, c.cache, specOf(l, &c.opts), log)
		if err != nil {
			c.release()
			return nil, fmt.Errorf("skills: %w", err)
		}
		c.opened = append(c.opened, o)
	}
	if fixed && !c.opts.Watch {
		list, scanOpts := c.source(log)()
		snap, err := catalog.Scan(ctx, list, 1, scanOpts)
		if err != nil {
			c.release()
			return nil, err
		}
		c.shared = sets.publish(key, snap, c.opened, c.cache)
		c.opened, c.cache = nil, nil // the set owns them now
		c.store = catalog.NewStore(c.shared.snap)
		return c, nil
	}
	safety := c.opts.SafetyRescan
	if safety == 0 {
		safety = 5 * time.Minute
	}
	live, err := engine.New(engine.Options{
		Source:       c.source(log),
		Watch:        c.opts.Watch,
		SafetyRescan: max(safety, 0),
		Logger:       log,
		Hooks: engine.Hooks{
			Installed: func(*catalog.Snapshot) { c.notify(false) },
			Swapped: func(_, _ *catalog.Snapshot, changed bool) {
				if changed {
					c.notify(true)
				}
			},
		},
	})
	if err != nil {
		c.release()
		return nil, err
	}
	c.live, c.store = live, live.Store()
	live.Start(nil)
	select {
	case <-live.Ready():
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
	if err := live.Err(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkLibraries refuses a library with not exactly one source, and a
// namespace used twice.
func checkLibraries(libs []Library) error {
	seen := map[string]bool{}
	for i, l := range libs {
		n := 0
		for _, set := range []bool{l.Dir != "", l.Zip != "", l.URL != "", l.FS != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%w %d (%q): set exactly one of Dir, Zip, URL and FS", ErrLibrary, i, l.Namespace)
		}
		if seen[l.Namespace] {
			return fmt.Errorf("%w: namespace %q is used twice", ErrLibrary, l.Namespace)
		}
		seen[l.Namespace] = true
	}
	return nil
}

// SetLibraries replaces the libraries of a catalog opened with
// Options.Settable: it opens and scans libs, and when what is served
// changed, swaps the new catalog in atomically (a request reads the old one
// or the new one, never a mix) and notifies the sessions of every server
// the catalog is attached to (notifications/resources/list_changed); the
// sessions of other catalogs hear nothing. Setting libraries that serve the
// same skills, files and digests reports no change and notifies nobody. On
// an error nothing changes. Calls are serialised; the libraries replaced
// are closed once the new ones serve, so a read of a replaced folder or
// zip still in flight may fail (FS values are never closed).
func (c *Catalog) SetLibraries(ctx context.Context, libs []Library) (Changes, error) {
	if !c.opts.Settable {
		return Changes{}, errors.New("skills: SetLibraries needs a catalog opened with Options.Settable")
	}
	if err := checkLibraries(libs); err != nil {
		return Changes{}, err
	}
	log := c.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	libs = topFolders(libs)
	c.setMu.Lock()
	defer c.setMu.Unlock()
	if c.isClosed() {
		return Changes{}, ErrClosed
	}
	return c.setLibraries(ctx, libs, log)
}

// setLibraries is SetLibraries, under setMu (or in Open, before anyone
// else sees c).
//
// When every library is immutable content with a namespace (an FS value
// that compares, or a zip), each is scanned once per process into a skill
// set of its own, shared by every catalog that serves it, and the
// catalog's snapshot merges those (catalog.Merge): a catalog over ten
// libraries another catalog already serves costs its indexes, not ten
// scans. Otherwise the libraries are opened and scanned together.
func (c *Catalog) setLibraries(ctx context.Context, libs []Library, log *slog.Logger) (Changes, error) {
	var prev *catalog.Snapshot
	var gen uint64 = 1
	if c.store != nil {
		prev = c.store.Snapshot()
		gen = prev.Generation + 1
	}
	var snap *catalog.Snapshot
	parts, err := c.acquireParts(ctx, libs, log)
	if err != nil {
		return Changes{}, err
	}
	if parts != nil {
		snaps := make([]*catalog.Snapshot, len(parts))
		for i, p := range parts {
			snaps[i] = p.snap
		}
		merged, ok := catalog.Merge(snaps, gen)
		if ok {
			snap = merged
		} else { // a vault, or two libraries serving one URI: scanned together below
			releaseAll(parts)
			parts = nil
		}
	}
	var opened []*library.Opened
	if snap == nil {
		for _, l := range libs {
			if (l.Zip != "" || l.URL != "") && c.cache == nil {
				c.cache = newCache(c.opts.CacheDir, log)
			}
			o, err := library.Open(ctx, c.cache, specOf(l, &c.opts), log)
			if err != nil {
				closeAll(opened, nil)
				return Changes{}, err
			}
			opened = append(opened, o)
		}
		list := make([]*catalog.Library, len(opened))
		for i, o := range opened {
			list[i] = o.Lib
		}
		snap, err = catalog.Scan(ctx, list, gen, scanOptions(&c.opts, c.cache, log))
		if err != nil {
			closeAll(opened, nil)
			return Changes{}, err
		}
	}
	c.mu.Lock()
	old, oldParts := c.opened, c.parts
	c.opened, c.parts = opened, parts
	c.mu.Unlock()
	if prev == nil {
		c.store = catalog.NewStore(snap)
		return Changes{}, nil
	}
	changed := catalog.Changed(prev, snap)
	// Swapped even when unchanged: the old snapshot reads from the
	// libraries about to be closed.
	c.store.Swap(snap)
	closeAll(old, nil)
	releaseAll(oldParts)
	if !changed {
		return Changes{}, nil
	}
	c.notify(true)
	return Changes(engine.Diff(prev, snap)), nil
}

// specOf is the library spec of l.
func specOf(l Library, o *Options) library.Spec {
	s := library.Spec{Namespace: l.Namespace, Value: l.Dir, SHA256: l.SHA256, FS: l.FS, NoScripts: l.NoScripts,
		Info: catalog.Info{Title: l.Title, Version: l.Version, Source: l.Source}, AllowUnverified: o.AllowUnverified}
	switch {
	case l.Zip != "":
		s.Value = l.Zip
	case l.URL != "":
		s.Value = l.URL
	}
	return s
}

func newCache(dir string, log *slog.Logger) *library.Cache {
	if dir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "skills-mcp")
		} else {
			dir = filepath.Join(os.TempDir(), "skills-mcp-cache")
		}
	}
	return &library.Cache{Dir: dir, Limits: library.DefaultLimits(), Logger: log, Env: func(string) (string, bool) { return "", false }}
}

// source is the catalog's libraries and scan options.
func (c *Catalog) source(log *slog.Logger) catalog.Source {
	libs := make([]*catalog.Library, len(c.opened))
	for i, o := range c.opened {
		libs[i] = o.Lib
	}
	o := scanOptions(&c.opts, c.cache, log)
	return func() ([]*catalog.Library, *catalog.Options) { return libs, o }
}

// scanOptions are the scan options of opts, with the digest cache of
// cache if there is one.
func scanOptions(opts *Options, cache *library.Cache, log *slog.Logger) *catalog.Options {
	var digests *catalog.DigestCache
	if cache != nil {
		digests = catalog.NewDigestCache(cache.Dir)
	}
	return &catalog.Options{Depth: opts.Depth, Exclude: opts.Exclude, Strict: opts.Strict, NoScripts: opts.NoScripts,
		NoLint: opts.NoLint, ShowDisabled: opts.ShowDisabled, DigestCache: digests, Logger: log}
}

// acquireParts returns the shared one-library skill set of each library,
// scanning those no catalog holds, or nil when some library is not
// immutable content with a namespace (or there is none).
func (c *Catalog) acquireParts(ctx context.Context, libs []Library, log *slog.Logger) ([]*sharedSet, error) {
	keys := make([]any, len(libs))
	for i, l := range libs {
		key, fixed := shareKey([]Library{l}, &c.opts)
		if !fixed || l.Namespace == "" {
			return nil, nil
		}
		keys[i] = key
	}
	if len(libs) == 0 {
		return nil, nil
	}
	parts := make([]*sharedSet, 0, len(libs))
	for i, l := range libs {
		set := sets.acquire(keys[i])
		if set == nil {
			var cache *library.Cache
			if l.Zip != "" {
				cache = newCache(c.opts.CacheDir, log)
			}
			o, err := library.Open(ctx, cache, specOf(l, &c.opts), log)
			if err != nil {
				closeAll(nil, cache)
				releaseAll(parts)
				return nil, err
			}
			snap, err := catalog.Scan(ctx, []*catalog.Library{o.Lib}, 1, scanOptions(&c.opts, cache, log))
			if err != nil {
				closeAll([]*library.Opened{o}, cache)
				releaseAll(parts)
				return nil, err
			}
			set = sets.publish(keys[i], snap, []*library.Opened{o}, cache)
		}
		parts = append(parts, set)
	}
	return parts, nil
}

// notify tells every server the catalog is attached to that the catalog
// is in (changed false) or changed.
func (c *Catalog) notify(changed bool) {
	c.mu.Lock()
	ns := append([]*server.Notifier(nil), c.notifier...)
	c.mu.Unlock()
	for _, n := range ns {
		if changed {
			n.CatalogChanged()
		} else {
			n.CatalogReady()
		}
	}
}

// bind records a server's notifier, so that reloads reach its sessions.
func (c *Catalog) bind(n *server.Notifier) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.notifier = append(c.notifier, n)
	return nil
}

// Len returns how many skills the catalog lists.
func (c *Catalog) Len() int { return c.store.Snapshot().Len() }

// Skills returns the SKILL.md URIs the catalog lists, sorted.
func (c *Catalog) Skills() []string {
	var out []string
	for _, sk := range c.store.Snapshot().Skills() {
		out = append(out, sk.URI)
	}
	return out
}

// Reload rescans the catalog's libraries now and, when what is served
// changed, swaps the new catalog in and notifies the sessions of every
// server it is attached to. A fixed catalog never changes: its Reload
// reports nothing.
func (c *Catalog) Reload(ctx context.Context) (Changes, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return Changes{}, ErrClosed
	}
	if c.live == nil {
		return Changes{}, nil
	}
	ch, err := c.live.Reload(ctx)
	if errors.Is(err, engine.ErrClosed) {
		err = ErrClosed
	}
	return Changes(ch), err
}

// Close stops the catalog's watcher and every goroutine it started, and
// returns once they have stopped; requests that select it afterwards get
// an error. Closing again returns nil.
func (c *Catalog) Close() error {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.notifier = nil
	c.mu.Unlock()
	var err error
	if c.live != nil {
		err = c.live.Close()
	}
	c.release()
	return err
}

// isClosed reports whether Close was called.
func (c *Catalog) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// release closes what the catalog opened, and lets go of its shared set.
func (c *Catalog) release() {
	for _, o := range c.opened {
		o.Close()
	}
	c.opened = nil
	if c.cache != nil {
		c.cache.Close()
		c.cache = nil
	}
	if c.shared != nil {
		sets.release(c.shared)
		c.shared = nil
	}
	releaseAll(c.parts)
	c.parts = nil
}

// shareKey names the content of libs under opts when every library is
// immutable: an FS value that can be compared, or a zip (by path and
// modification, so a replaced zip is a new key). fixed is false otherwise.
func shareKey(libs []Library, opts *Options) (key any, fixed bool) {
	type part struct {
		ns, title, version, source string
		noScripts                  bool
		fsys                       any
		zip                        string
	}
	// A chain of comparable structs: FS values compare by identity (or
	// value), and the whole key is a valid map key.
	type link struct {
		p    part
		next any
	}
	var k any = fmt.Sprintf("%d\x00%s\x00%t%t%t%t", opts.Depth, strings.Join(opts.Exclude, "\x00"), opts.Strict, opts.NoScripts, opts.NoLint, opts.ShowDisabled)
	for _, l := range libs {
		p := part{ns: l.Namespace, title: l.Title, version: l.Version, source: l.Source, noScripts: l.NoScripts}
		switch {
		case l.FS != nil && reflect.TypeOf(l.FS).Comparable():
			p.fsys = l.FS
		case l.Zip != "":
			info, err := os.Stat(l.Zip)
			if err != nil {
				return nil, false
			}
			abs, _ := filepath.Abs(l.Zip)
			p.zip = fmt.Sprintf("%s\x00%d\x00%d", abs, info.Size(), info.ModTime().UnixNano())
		default:
			return nil, false
		}
		k = link{p: p, next: k}
	}
	return k, true
}

// Hit is one skill a catalog lists or finds.
type Hit struct {
	// URI is the skill's SKILL.md URI.
	URI string
	// Library is the namespace of the library serving the skill.
	Library     string
	Name        string
	Description string
	// Score ranks a search result (0 in a listing).
	Score float64
}

// Search returns the catalog's skills that match query (words of the
// need, matched against names, descriptions, tags and bodies), best first,
// at most limit of them (0: 20). An empty query lists every skill, by URI,
// up to limit.
func (c *Catalog) Search(query string, limit int) []Hit {
	if limit <= 0 {
		limit = 20
	}
	snap := c.store.Snapshot()
	var out []Hit
	if strings.TrimSpace(query) == "" {
		for _, sk := range snap.Skills() {
			if len(out) == limit {
				break
			}
			out = append(out, Hit{URI: sk.URI, Library: sk.Library, Name: sk.Name, Description: sk.Description})
		}
		return out
	}
	for _, h := range snap.Search(query, "", "", limit) {
		out = append(out, Hit{URI: h.Skill.URI, Library: h.Skill.Library, Name: h.Skill.Name, Description: h.Skill.Description, Score: h.Score})
	}
	return out
}

// topFolders serves each FS library whose only entry at the top is a
// folder that is not a skill from that folder: an embed.FS of
// "//go:embed skills" holds skills/<name>/SKILL.md, and would otherwise
// serve skill://skills/<name>/…
func topFolders(libs []Library) []Library {
	var out []Library
	for i, l := range libs {
		if l.FS == nil {
			continue
		}
		ents, err := fs.ReadDir(l.FS, ".")
		if err != nil || len(ents) != 1 || !ents[0].IsDir() {
			continue
		}
		top := ents[0].Name()
		if _, err := fs.Stat(l.FS, top+"/SKILL.md"); err == nil {
			continue // the folder is a skill: serve it as it is
		}
		sub, err := subFS(l.FS, top)
		if err != nil {
			continue
		}
		if out == nil {
			out = slices.Clone(libs)
		}
		out[i].FS = sub
	}
	if out == nil {
		return libs
	}
	return out
}

// subs keeps one fs.Sub per comparable FS and folder, so that catalogs
// over the same embed.FS still share one skill set (they share by FS
// value).
var subs sync.Map // subKey → fs.FS

type subKey struct {
	fsys fs.FS
	dir  string
}

func subFS(fsys fs.FS, dir string) (fs.FS, error) {
	if !reflect.TypeOf(fsys).Comparable() {
		return fs.Sub(fsys, dir)
	}
	key := subKey{fsys, dir}
	if v, ok := subs.Load(key); ok {
		return v.(fs.FS), nil
	}
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	v, _ := subs.LoadOrStore(key, sub)
	return v.(fs.FS), nil
}

// Package engine owns the lifecycle of a live catalog: the pending store
// that lets a server answer before its first scan, the first scan and its
// installation, the work deferred until the host's first listing (loading
// the search index, watching every folder, proving that nothing changed
// meanwhile), the watcher and its rescans, reloads and memory tuning.
// Every goroutine it starts is its own: Close stops them all and returns
// once they have stopped.
//
// It knows nothing of MCP: a server tells it when the host has listed the
// catalog and when requests pause through Hooks, and hears of each
// installed snapshot through them.
package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// Defaults of the serve-first timings (Options fields left zero).
const (
	// DefaultScanDelay is how long Start waits for its gate (a stdio
	// host's handshake) before it starts the first scan anyway.
	DefaultScanDelay = 100 * time.Millisecond
	// DefaultWatchDelay is how long after the first scan the search index
	// loads and the folders are watched if no host has listed the whole
	// catalog by then, and the longest the watches and the check after
	// them wait for a pause in the host's requests.
	DefaultWatchDelay = time.Second
	// DefaultQuiet is the pause in requests the deferred work waits for.
	DefaultQuiet = 250 * time.Millisecond
)

// Hooks connect a catalog to the server that serves it. Every field is
// optional.
type Hooks struct {
	// Installed is called once the first scan is installed in the store,
	// before Ready closes: a server lets the requests it held through here.
	Installed func(snap *catalog.Snapshot)
	// Swapped is called after every later swap, with the snapshots before
	// and after it and whether what clients see changed.
	Swapped func(old, cur *catalog.Snapshot, changed bool)
	// Listed is closed once a host has listed the whole catalog: its
	// start-up burst is over and the deferred work may run.
	Listed <-chan struct{}
	// WaitQuiet returns once no request arrived for quiet, or after limit,
	// or when ctx ends.
	WaitQuiet func(ctx context.Context, quiet, limit time.Duration)
}

// Options configure a catalog. Source is required.
type Options struct {
	// Store, if set, is the store to keep current; it must be pending
	// (catalog.NewPendingStore), so that a server built on it before New
	// holds its requests until the first scan. If nil, New makes one.
	Store *catalog.Store
	// Source gives the libraries and scan options of every scan. Its
	// Options.OnFolder is replaced by the watcher's when Watch is set.
	Source catalog.Source
	// Watch watches the directory libraries and rescans when they change.
	Watch bool
	// SafetyRescan is the interval of the full safety rescan while
	// watching (0: none).
	SafetyRescan time.Duration
	// TuneMemory paces the collector during the first scan, hands memory
	// back to the system after each scan and sets the soft memory limit
	// after each index (unless GOMEMLIMIT or GOGC is set). It changes
	// process-wide settings: a process serving many catalogs sets it on
	// at most one.
	TuneMemory bool
	// LowerPriority runs the deferred work (watches, the unchanged check)
	// on a thread of the lowest CPU priority (Linux).
	LowerPriority bool
	// ScanDelay, WatchDelay and Quiet override the serve-first timings;
	// zero means the default.
	ScanDelay, WatchDelay, Quiet time.Duration
	// Env reads GOMEMLIMIT and GOGC; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Logger receives the catalog's lines; nil discards them.
	Logger *slog.Logger
	Hooks
}

// ErrClosed is returned by the methods of a closed catalog.
var ErrClosed = errors.New("engine: catalog is closed")

// Catalog is a live catalog: a store that a server reads, kept current.
type Catalog struct {
	opts    Options
	log     *slog.Logger
	store   *catalog.Store
	watcher *catalog.Watcher // nil unless watching

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce sync.Once
	ready     chan struct{} // closed once the first scan is installed (or failed)
	err       error         // the first scan's, read after ready

	mu       sync.Mutex
	reloader *catalog.Reloader
	closed   bool
}

// New returns a catalog serving a pending store (catalog.NewPendingStore)
// until Start's first scan is in.
func New(opts Options) (*Catalog, error) {
	if opts.Source == nil {
		return nil, errors.New("engine: Options.Source is nil")
	}
	opts.ScanDelay = cmpOr(opts.ScanDelay, DefaultScanDelay)
	opts.WatchDelay = cmpOr(opts.WatchDelay, DefaultWatchDelay)
	opts.Quiet = cmpOr(opts.Quiet, DefaultQuiet)
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	store := opts.Store
	if store == nil {
		store = catalog.NewPendingStore()
	} else if !store.Snapshot().Pending() {
		return nil, errors.New("engine: Options.Store must be pending (catalog.NewPendingStore)")
	}
	c := &Catalog{opts: opts, log: opts.Logger, store: store, ready: make(chan struct{})}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if opts.Watch {
		w, err := catalog.NewWatcher(opts.SafetyRescan, c.log)
		if err != nil {
			return nil, fmt.Errorf("watching libraries: %w", err)
		}
		c.watcher = w
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Store returns the store the catalog keeps current.
func (c *Catalog) Store() *catalog.Store { return c.store }

// Ready returns a channel closed once the first scan is installed, or has
// failed (Err says which).
func (c *Catalog) Ready() <-chan struct{} { return c.ready }

// Err returns the first scan's error once Ready is closed.
func (c *Catalog) Err() error {
	select {
	case <-c.ready:
		return c.err
	default:
		return nil
	}
}

// source is the Source with the watcher's OnFolder (or none, for the first
// scan, which watches nothing).
func (c *Catalog) source(watch bool) catalog.Source {
	return func() ([]*catalog.Library, *catalog.Options) {
		libs, o := c.opts.Source()
		var opts catalog.Options
		if o != nil {
			opts = *o
		}
		opts.OnFolder = nil
		if watch && c.watcher != nil {
			opts.OnFolder = c.watcher.Folder
		}
		return libs, &opts
	}
}

// Go runs fn on a goroutine the catalog owns: its context ends at Close,
// which waits for fn to return. It returns ErrClosed after Close.
func (c *Catalog) Go(fn func(ctx context.Context)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.wg.Go(func() { fn(c.ctx) })
	return nil
}

// Start starts the first scan once gate closes (nil: at once), or after
// ScanDelay, and then what keeps the catalog current. Only the first call
// does anything.
func (c *Catalog) Start(gate <-chan struct{}) error {
	err := ErrClosed
	c.startOnce.Do(func() {
		err = c.Go(func(ctx context.Context) {
			if gate != nil {
				t := time.NewTimer(c.opts.ScanDelay)
				select {
				case <-gate:
				case <-t.C:
				case <-ctx.Done():
				}
				t.Stop()
			}
			if ctx.Err() != nil {
				c.fail(ErrClosed)
				return
			}
			if err := c.first(ctx); err != nil {
				if ctx.Err() == nil {
					c.log.Error("first scan failed", "err", err)
				}
				c.fail(err)
			}
		})
		if err != nil {
			close(c.ready)
			c.err = err
		}
	})
	return err
}

func (c *Catalog) fail(err error) {
	c.err = err
	close(c.ready)
}

// first runs the first scan, installs it, and starts the watcher and the
// deferred work.
func (c *Catalog) first(ctx context.Context) error {
	list, opts := c.source(false)()
	snap, restore, err := FirstScan(ctx, list, opts, c.opts.TuneMemory)
	if err != nil {
		return err
	}
	c.store.Install(snap)
	if st := LogCatalog(c.log, snap); st.FilesRead > 0 {
		// Bodies were read: the index is built from them, not loaded, and
		// they are held until it is, so build it now.
		snap.StartSearch()
	}
	restore()
	if c.opts.Installed != nil {
		c.opts.Installed(snap)
	}
	if c.opts.TuneMemory {
		// The first scan leaves most of the garbage the process will
		// ever make: hand it back, so that the resident size is the
		// catalog's, not the scan's high-water mark.
		debug.FreeOSMemory()
	}

	reloader := catalog.NewReloader(c.store, c.source(true), func(old, cur *catalog.Snapshot, changed bool) {
		LogCatalog(c.log, cur)
		if c.opts.TuneMemory {
			_ = c.Go(func(ctx context.Context) {
				select {
				case <-cur.SearchReady():
				case <-ctx.Done():
					return
				}
				debug.FreeOSMemory() // the new index's garbage, as after the first
				limitMemory(c.opts.Env, c.log)
			})
		}
		if c.opts.Swapped != nil {
			c.opts.Swapped(old, cur, changed)
		}
	})
	c.mu.Lock()
	c.reloader = reloader
	c.mu.Unlock()
	close(c.ready)

	if c.watcher == nil {
		// No watcher: only the index is left to load, after the listing.
		_ = c.Go(func(ctx context.Context) {
			if c.waitListed(ctx) {
				snap.StartSearch()
			}
		})
		return nil
	}
	if c.opts.TuneMemory {
		// A rescan makes a catalog's worth of garbage and the server then
		// idles: hand it back rather than hold twice the catalog.
		c.watcher.AfterRescan(debug.FreeOSMemory)
	}
	c.watcher.Start(reloader)
	_ = c.Go(func(ctx context.Context) { c.deferred(ctx, snap) })
	return nil
}

// waitListed waits for the host's first complete listing, or WatchDelay;
// false when ctx ended.
func (c *Catalog) waitListed(ctx context.Context) bool {
	t := time.NewTimer(c.opts.WatchDelay)
	defer t.Stop()
	select {
	case <-c.opts.Listed: // a nil channel never fires
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// deferred loads the search index, watches what the first scan walked,
// then checks that nothing changed before the watches: an edit made before
// its folder was watched is seen by the check (or, when it cannot prove
// the library unchanged, by a rescan), one after raises an event, so none
// is lost. All of it waits for the host's first complete listing (or
// WatchDelay), as it needs the cores the listing needs, and the watches
// and the check for a pause in the host's requests too.
func (c *Catalog) deferred(ctx context.Context, snap *catalog.Snapshot) {
	if !c.waitListed(ctx) {
		return
	}
	quiet := func() bool {
		if c.opts.WaitQuiet != nil {
			c.opts.WaitQuiet(ctx, c.opts.Quiet, c.opts.WatchDelay)
		}
		return ctx.Err() == nil
	}
	snap.StartSearch() // hosts often search right after listing
	select {
	case <-snap.SearchReady():
	case <-ctx.Done():
		return
	}
	if c.opts.TuneMemory {
		debug.FreeOSMemory() // what loading it left
		limitMemory(c.opts.Env, c.log)
	}
	if !quiet() {
		return
	}
	if c.store.Snapshot() != snap {
		// A rescan swapped in a newer catalog and the watcher followed
		// it: the first one's folders would undo that.
		return
	}
	if c.opts.LowerPriority {
		lowerPriority()
	}
	c.watcher.Sync(snap)
	if !quiet() {
		return
	}
	start := time.Now()
	if snap.Unchanged() {
		c.log.Debug("library unchanged since the first scan", "duration_ms", time.Since(start).Milliseconds())
		return
	}
	c.watcher.Kick()
}

// WatchFile calls fn before the next rescan whenever the file at path
// changes (a config file, a zip library). Without a watcher it does
// nothing.
func (c *Catalog) WatchFile(path string, fn func()) error {
	if c.watcher == nil {
		return nil
	}
	return c.watcher.WatchFile(path, fn)
}

// Kick asks for a rescan soon, as a file event would. Without a watcher it
// does nothing; use Reload.
func (c *Catalog) Kick() {
	if c.watcher != nil {
		c.watcher.Kick()
	}
}

// Changes is what a reload changed, by SKILL.md URI.
type Changes struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (ch Changes) Empty() bool { return len(ch.Added)+len(ch.Removed)+len(ch.Changed) == 0 }

// Reload rescans now and swaps the result in when it serves something
// different, waiting for the first scan if it is still running. It returns
// the skills added, removed and changed.
func (c *Catalog) Reload(ctx context.Context) (Changes, error) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return Changes{}, ctx.Err()
	case <-c.ctx.Done():
		return Changes{}, ErrClosed
	}
	c.mu.Lock()
	r, closed := c.reloader, c.closed
	c.mu.Unlock()
	if closed {
		return Changes{}, ErrClosed
	}
	if r == nil {
		return Changes{}, fmt.Errorf("engine: the first scan failed: %w", c.err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // ends with stop, at the latest when Reload returns
		select {
		case <-c.ctx.Done():
			stop()
		case <-ctx.Done():
		}
	}()
	old := c.store.Snapshot()
	if _, err := r.Rescan(ctx); err != nil {
		return Changes{}, err
	}
	return Diff(old, c.store.Snapshot()), nil
}

// Diff returns the skills added, removed and changed (their entry, which
// holds every file's digest, differs) from old to cur.
func Diff(old, cur *catalog.Snapshot) Changes {
	var ch Changes
	if old == cur {
		return ch
	}
	before := map[string]*catalog.Skill{}
	for _, sk := range old.All() {
		before[sk.URI] = sk
	}
	for _, sk := range cur.All() {
		prev, ok := before[sk.URI]
		switch {
		case !ok:
			ch.Added = append(ch.Added, sk.URI)
		case !bytes.Equal(prev.Entry(), sk.Entry()):
			ch.Changed = append(ch.Changed, sk.URI)
		}
		delete(before, sk.URI)
	}
	for _, sk := range old.All() {
		if _, gone := before[sk.URI]; gone {
			ch.Removed = append(ch.Removed, sk.URI)
		}
	}
	return ch
}

// Close stops the watcher, the first scan and every goroutine the catalog
// started, and returns once they have stopped. Closing again returns nil.
func (c *Catalog) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	var err error
	if c.watcher != nil {
		err = c.watcher.Close()
	}
	c.wg.Wait()
	// A first scan that never started leaves Ready open: close it for
	// whoever waits.
	c.startOnce.Do(func() { c.fail(ErrClosed) })
	// The search index of the served snapshot may still be building: wait
	// for it, so that nothing of the catalog runs after Close.
	if snap := c.store.Snapshot(); !snap.Pending() {
		snap.StartSearch()
		<-snap.SearchReady()
	}
	return err
}

// FirstScan runs a scan meant to be a process's first. With tune, the scan
// and the search index built after it make most of the process's garbage
// (parsed YAML, read buffers, postings); once the catalog is large,
// collecting more often until the index is in keeps the peak resident size
// near the live catalog instead of twice it (see scanCollector). Call the
// returned func once the index is built.
func FirstScan(ctx context.Context, list []*catalog.Library, opts *catalog.Options, tune bool) (*catalog.Snapshot, func(), error) {
	restore := func() {}
	if tune {
		restore = startScanCollector(scanHeapBound, scanGCPercent).stop
	}
	snap, err := catalog.Scan(ctx, list, 1, opts)
	if err != nil {
		restore()
		return nil, nil, err
	}
	return snap, restore, nil
}

// LogCatalog logs what a snapshot serves, and returns its statistics.
func LogCatalog(log *slog.Logger, snap *catalog.Snapshot) catalog.Stats {
	st := snap.Stats()
	log.Info("catalog ready", "generation", st.Generation, "skills", st.Skills, "hidden", st.Hidden, "withheld", st.Withheld,
		"files", st.Files, "bytes", st.Bytes, "warnings", len(st.Warnings), "duration_ms", st.ScanMillis, "files_read", st.FilesRead, "folders_listed", st.FoldersListed)
	if st.Skills == 0 {
		log.Warn("no skill is served; run with --stats to see why")
	}
	return st
}

// limitMemory sets the runtime's soft memory limit to memoryLimit of the
// live heap, unless the operator set GOMEMLIMIT or GOGC: a catalog of
// 100,000 skills is about 600 MB live, and the default growth (twice the
// live heap between collections) would take the process well past a
// gigabyte. The limit only makes collections more frequent when the heap
// nears it. The live figure is the last collection's: after a rescan it may
// still count the replaced catalog, which only makes the limit looser until
// the next swap; forcing a collection for it would cost a full mark of a
// large catalog.
func limitMemory(env func(string) (string, bool), log *slog.Logger) {
	for _, tuned := range []string{"GOMEMLIMIT", "GOGC"} {
		if v, ok := env(tuned); ok && v != "" {
			return // the operator's choice stands
		}
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := int64(sample[0].Value.Uint64())
	limit := memoryLimit(live)
	debug.SetMemoryLimit(limit)
	log.Debug("soft memory limit set", "live_mib", live>>20, "limit_mib", limit>>20)
}

// Room the soft memory limit leaves above the live catalog, for the
// collector's own cycle and for what requests in flight hold. A catalog
// gets its own size again (the default pace, which collects at twice the
// live heap) plus requestRoom, up to maxHeadroom, and never less than 40%
// of itself.
//
// requestRoom covers what requests can hold at once: the HTTP body budget
// (16 MiB) and as much again for the connections' buffers and stacks and
// the answers in flight. Requests no longer need more: the go-sdk's
// per-request buffers, once about 90 MiB under 32 concurrent HTTP
// clients, are gone from the paths hosts use most (the front end answers
// them), and 32 clients of a 5,000-skill catalog now add 1-4 MiB to its
// 22 MiB live. With a floor of 96 MiB instead, a 1,000-skill server
// (6 MiB live) held whatever a hostile client made live for twice its
// size: the attack run took it to 2.0-2.3 times its idle resident size
// (with pooled body pieces; 2.2-2.6 before them), where with this room it
// stays under 1.9. With 24 MiB it stayed under 1.6, but collected twice
// as often as with 32 and the well-behaved client's p50 doubled.
// maxHeadroom is the old floor, so that no catalog gets a looser limit
// than before.
const (
	requestRoom = 32 << 20
	maxHeadroom = 96 << 20
)

// memoryLimit is the soft memory limit for a live heap: live plus
// min(live+requestRoom, maxHeadroom), and at least 40% above it. A small
// catalog keeps the default goal (twice the live heap) under the limit
// while requests are well-behaved, and what a flood makes live costs it
// collections rather than twice its size; a large one is kept well below
// twice its size.
func memoryLimit(live int64) int64 {
	return live + max(live*2/5, min(live+requestRoom, maxHeadroom))
}

package catalog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Reloader rebuilds the snapshot of a Store: one rescan at a time, each
// reusing what the previous snapshot learned, swapped in atomically.
type Reloader struct {
	store  *Store
	source Source
	onSwap func(old, cur *Snapshot, changed bool)

	mu  sync.Mutex // serialises rescans, and guards the served snapshot's reuse map
	gen uint64
}

// Source returns what to scan: the libraries and the scan options. Both may
// change between rescans (a config reload).
type Source func() ([]*Library, *Options)

// NewReloader returns a reloader for store. onSwap, if non-nil, is called
// after every swap with the snapshots before and after it, and whether
// what clients see changed (Changed) or only what operators see.
func NewReloader(store *Store, source Source, onSwap func(old, cur *Snapshot, changed bool)) *Reloader {
	r := &Reloader{store: store, source: source, onSwap: onSwap}
	if cur := store.Snapshot(); cur != nil {
		r.gen = cur.Generation
	}
	return r
}

// Rescan scans the libraries again and swaps the result in when it serves
// something different; it returns the new scan either way. Requests in
// flight finish on the snapshot they started with.
func (r *Reloader) Rescan(ctx context.Context) (*Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	libs, o := r.source()
	var opts Options
	if o != nil {
		opts = *o
	}
	old := r.store.Snapshot()
	opts.Previous = old
	r.gen++
	snap, err := Scan(ctx, libs, r.gen, &opts)
	if err != nil {
		return nil, err
	}
	changed := Changed(old, snap)
	if !changed && sameWarnings(old, snap) && sameLibraries(old, snap) {
		// Nothing a client or operator can see changed: keep serving the
		// old snapshot, and hand it what the new scan learned of each file
		// (a touched file's new times, a digest hashed out of the racy
		// window), which seeds the next rescan. Only rescans read it, under
		// r.mu. Keeping the whole new snapshot for that held a second
		// catalog in memory. The new one still tells the watcher which
		// folders exist.
		old.reuse = snap.reuse
		return snap, nil
	}
	r.store.Swap(snap)
	if r.onSwap != nil {
		r.onSwap(old, snap, changed)
	}
	return snap, nil
}

// sameWarnings reports whether two snapshots carry the same warnings, so
// that a rescan which only changed what the operator sees still swaps.
func sameWarnings(a, b *Snapshot) bool {
	return slices.Equal(a.warnings, b.warnings)
}

// sameLibraries reports whether two snapshots read through the same
// Library values. A reload that re-opened a library must swap even when the
// content is identical: the replaced library is closed after a grace period.
func sameLibraries(a, b *Snapshot) bool {
	if len(a.walked) != len(b.walked) {
		return false
	}
	for lib := range a.walked {
		if _, ok := b.walked[lib]; !ok {
			return false
		}
	}
	return true
}

// Changed reports whether two snapshots serve different content: a skill
// added, removed, or with a different entry (frontmatter, files, digests),
// or different playbooks or value chains.
func Changed(old, cur *Snapshot) bool {
	if old == nil || cur == nil || len(old.all) != len(cur.all) || len(old.skills) != len(cur.skills) || !sameVaults(old, cur) {
		return true
	}
	// Hidden skills count: skills/get and resources/read answer for them.
	for i, sk := range cur.all {
		if o := old.all[i]; o.URI != sk.URI || o.Hidden != sk.Hidden || !bytes.Equal(o.Entry(), sk.Entry()) {
			return true
		}
	}
	return false
}

// debounce is how long the watcher waits after a file event before it
// rescans. Editors and git write several files and rename temporaries in
// a burst; one rescan after the burst is cheaper than one per event, and
// a quarter second is still immediate for a person editing a skill.
const debounce = 250 * time.Millisecond

// maxDelay bounds how long changes that keep coming put a rescan off. Each
// event restarts the debounce, and a file rewritten every 100 ms held the
// catalog stale for as long as the writes went on; now they cost at most
// one rescan per maxDelay (and never more than one per debounce window).
const maxDelay = 2 * time.Second

// Watcher rescans a Reloader when files change in its directory libraries,
// and every safety interval in case an event was missed (a network file
// system, a watch limit reached).
type Watcher struct {
	fsw    *fsnotify.Watcher
	r      *Reloader
	log    *slog.Logger
	safety time.Duration
	kick   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup

	mu sync.Mutex
	// watched holds the folders watched per library, below its root,
	// with the Sync generation that last wanted each: keyed by the
	// snapshots' own strings, so that a folder already watched costs no
	// path to look up.
	watched  map[*Library]map[string]uint64
	gen      uint64
	fileDirs map[string]bool // folders watched for single files, absolute

	// fmu guards the single files apart from the watch set, so that events
	// are taken in while a Sync adds thousands of watches.
	fmu     sync.Mutex
	files   map[string]func() // watched single files → their handlers
	fileDue map[string]bool   // files whose handler runs at the next debounce
	// limitWarned records that a folder could not be watched.
	limitWarned bool
	// synced, if set (by tests), hears of each Sync after a rescan.
	synced chan<- struct{}
	// afterRescan, if set, runs after each rescan and its Sync.
	afterRescan func()
}

// NewWatcher returns a watcher that is not yet running. Give Folder to the
// scans (Options.OnFolder) so that each folder is watched before it is listed,
// then Start it. safety is the interval of the full safety rescan (0 turns
// it off). Close stops it.
func NewWatcher(safety time.Duration, log *slog.Logger) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{fsw: fsw, log: log, safety: safety, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), watched: map[*Library]map[string]uint64{}, fileDirs: map[string]bool{},
		files: map[string]func(){}, fileDue: map[string]bool{}}, nil
}

// Start runs the watcher: file events and the safety interval rescan r.
// Watching each folder just before a scan lists it (Folder) leaves no
// window in which an edit goes unseen: an edit after the watch is added
// raises an event, one before it is in what the scan reads.
func (w *Watcher) Start(r *Reloader) {
	w.r = r
	w.wg.Go(w.events)
	w.wg.Go(w.loop)
}

// Folder watches dir (slash-separated, below lib's root) if lib is a
// directory on disk. Scans call it for every folder just before they list
// it; it is safe for concurrent use. A folder that cannot be watched for
// lack of inotify watches is left to the safety rescan, with one warning
// per process; one that is gone or unreadable is not watched, and the scan
// that lists it says so.
func (w *Watcher) Folder(lib *Library, dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.folder(lib, dir)
}

// folder is Folder with w.mu held: it marks dir with the current
// generation.
func (w *Watcher) folder(lib *Library, dir string) {
	if lib.Dir == "" {
		return
	}
	dirs := w.watched[lib]
	if _, ok := dirs[dir]; ok {
		dirs[dir] = w.gen
		return
	}
	p := filepath.Join(lib.Dir, filepath.FromSlash(dir))
	if err := w.fsw.Add(p); err != nil {
		if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EMFILE) {
			return
		}
		if !w.limitWarned {
			w.limitWarned = true
			w.log.Warn("some folders cannot be watched; their changes are picked up by the safety rescan", "folder", p, "err", err)
		}
		return
	}
	if dirs == nil {
		dirs = map[string]uint64{}
		w.watched[lib] = dirs
	}
	dirs[dir] = w.gen
}

// WatchFile calls fn, debounced like rescans and before the rescan they
// trigger, whenever the file at path (absolute) is written, created,
// renamed or removed. It watches the file's folder, so that an editor's
// write-and-rename is seen too.
func (w *Watcher) WatchFile(path string, fn func()) error {
	dir := filepath.Dir(path)
	w.fmu.Lock()
	w.files[path] = fn
	w.fmu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fileDirs[dir] {
		return nil
	}
	if err := w.fsw.Add(dir); err != nil {
		return err
	}
	w.fileDirs[dir] = true
	return nil
}

// AfterRescan sets fn to run after each rescan the watcher makes, once the
// watches follow the new scan. Call it before Start.
func (w *Watcher) AfterRescan(fn func()) { w.afterRescan = fn }

// Kick asks for a rescan soon, as a file event would (SIGHUP uses it).
func (w *Watcher) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Sync makes the watch set the folders snap walked: vanished folders are
// dropped and any not yet watched are added. The watcher calls it after
// every rescan.
func (w *Watcher) Sync(snap *Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	for lib, dirs := range snap.walked {
		for _, d := range dirs {
			w.folder(lib, d)
		}
	}
	for lib, dirs := range w.watched {
		for d, gen := range dirs {
			if gen == w.gen {
				continue
			}
			delete(dirs, d)
			if p := filepath.Join(lib.Dir, filepath.FromSlash(d)); !w.fileDirs[p] {
				w.fsw.Remove(p) // the folder may be gone already
			}
		}
		if len(dirs) == 0 {
			delete(w.watched, lib)
		}
	}
}

// events turns raw notifications into kicks.
func (w *Watcher) events() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				// Mode changes do not change content; one that makes a file
				// unreadable is caught by the safety rescan.
				continue
			}
			w.fmu.Lock()
			if _, ok := w.files[ev.Name]; ok {
				w.fileDue[ev.Name] = true
			}
			w.fmu.Unlock()
			w.Kick()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Warn("file watcher", "err", err)
			w.Kick() // an overflow means events were lost
		case <-w.stop:
			return
		}
	}
}

// loop debounces kicks and runs the safety rescan. It is the only caller
// of Rescan besides explicit requests, so rescans never pile up.
func (w *Watcher) loop() { debounceLoop(w.kick, w.stop, w.safety, w.rescan) }

// debounceLoop calls rescan after each burst of kicks, once no kick came
// for the debounce window or, while kicks keep coming, once maxDelay after
// the first of the burst, and every safety interval (0: never), until stop
// closes.
func debounceLoop(kick, stop <-chan struct{}, safety time.Duration, rescan func()) {
	var safetyC <-chan time.Time
	if safety > 0 {
		t := time.NewTicker(safety)
		defer t.Stop()
		safetyC = t.C
	}
	timer := time.NewTimer(debounce)
	timer.Stop()
	defer timer.Stop()
	var fire <-chan time.Time // non-nil while a burst is pending
	var first time.Time       // the first kick of the pending burst
	for {
		select {
		case <-kick:
			now := time.Now()
			if fire == nil {
				first = now
			}
			timer.Reset(max(0, min(debounce, maxDelay-now.Sub(first))))
			fire = timer.C
			continue
		case <-fire:
		case <-safetyC:
			timer.Stop() // this rescan sees the pending burst too
		case <-stop:
			return
		}
		fire = nil
		rescan()
	}
}

func (w *Watcher) rescan() {
	w.fmu.Lock()
	var due []func()
	for path := range w.fileDue {
		due = append(due, w.files[path])
	}
	clear(w.fileDue)
	w.fmu.Unlock()
	for _, fn := range due {
		fn()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	snap, err := w.r.Rescan(ctx)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			w.log.Error("rescan failed; the previous catalog keeps serving", "err", err)
		}
		return
	}
	w.Sync(snap)
	if w.afterRescan != nil {
		w.afterRescan()
	}
	if w.synced != nil {
		select {
		case w.synced <- struct{}{}:
		default: // a test that stopped listening must not stall the watcher
		}
	}
}

// Close stops the watcher and waits for a rescan in progress to end.
func (w *Watcher) Close() error {
	close(w.stop)
	err := w.fsw.Close()
	w.wg.Wait()
	return err
}

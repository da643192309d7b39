package catalog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
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

	mu  sync.Mutex // serialises rescans; guards what follows
	gen uint64
	// state is what the last rescan learned, which the next starts from;
	// before the first, the state of the snapshot Scan returned, if it
	// was installed. Snapshots are never written to carry it.
	state *scanState
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
// flight finish on the snapshot they started with. It lists every folder
// and stats every file; files unchanged since the previous scan are not
// read again.
func (r *Reloader) Rescan(ctx context.Context) (*Snapshot, error) {
	snap, _, err := r.rescan(ctx, nil)
	return snap, err
}

// rescan is Rescan; trust, if set, makes it incremental: the folders it
// trusts are walked from the previous listing, not listed again.
func (r *Reloader) rescan(ctx context.Context, trust trustFunc) (*Snapshot, *scanState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	libs, o := r.source()
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Previous = nil
	old := r.store.Snapshot()
	prev := r.state
	if prev == nil && old != nil {
		prev = old.scanned
	}
	r.gen++
	snap, st, err := scan(ctx, libs, r.gen, &opts, prev, true, trust)
	if err != nil {
		return nil, nil, err
	}
	r.state = st
	changed := Changed(old, snap)
	if !changed && sameWarnings(old, snap) && sameLibraries(old, snap) {
		// Nothing a client or operator can see changed: keep serving the
		// old snapshot. What the new scan learned of each file (a touched
		// file's new times, a digest hashed out of the racy window) seeds
		// the next rescan from r.state; keeping the whole new snapshot for
		// that held a second catalog in memory.
		return snap, st, nil
	}
	r.store.Swap(snap)
	if r.onSwap != nil {
		r.onSwap(old, snap, changed)
	}
	return snap, st, nil
}

// sameWarnings reports whether two snapshots carry the same warnings, so
// that a rescan which only changed what the operator sees still swaps.
func sameWarnings(a, b *Snapshot) bool {
	return slices.Equal(a.warnings, b.warnings)
}

// sameLibraries reports whether two snapshots read through the same
// Library values. A reload that re-opened a library must swap even when the
// content is identical: the replaced library is closed after a grace period.
func sameLibraries(a, b *Snapshot) bool { return sameLibs(a.libs, b.libs) }

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
	// scans' own strings, so that a folder already watched costs no
	// path to look up.
	watched  map[*Library]map[string]watch
	gen      uint64
	fileDirs map[string]bool // folders watched for single files, absolute
	// dirty holds, per library, the folders whose entries events named
	// since the last rescan took them; full says the next rescan must be
	// full (an event could not be placed, some were lost, or a kick).
	dirty map[*Library]map[string]bool
	full  bool

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
//
// A rescan after file events is incremental: it lists only the folders the
// events named (and what was created in them), walks every other folder
// from the previous scan's listing, and re-reads only the files whose
// identity changed. The safety rescan, Kick, an event that names no
// watched library, and a lost event (queue overflow) make a full one.
func NewWatcher(safety time.Duration, log *slog.Logger) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{fsw: fsw, log: log, safety: safety, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), watched: map[*Library]map[string]watch{}, fileDirs: map[string]bool{},
		files: map[string]func(){}, fileDue: map[string]bool{},
		dirty: map[*Library]map[string]bool{}}, nil
}

// watch is a watched folder: the Sync generation that last wanted it, and
// whether its watch was added after the folder was listed (by Sync), so
// that the listing kept cannot be trusted until the folder is listed again.
type watch struct {
	gen  uint64
	late bool
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
	w.folder(lib, dir, false)
}

// folder is Folder with w.mu held: it marks dir with the current
// generation. late says the folder was listed before this call (Sync).
func (w *Watcher) folder(lib *Library, dir string, late bool) {
	if lib.Dir == "" {
		return
	}
	dirs := w.watched[lib]
	if wt, ok := dirs[dir]; ok {
		// Listed from now on with the watch in place, unless late.
		dirs[dir] = watch{w.gen, wt.late && late}
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
		dirs = map[string]watch{}
		w.watched[lib] = dirs
	}
	dirs[dir] = watch{w.gen, late}
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

// Kick asks for a full rescan soon (SIGHUP uses it).
func (w *Watcher) Kick() {
	w.mu.Lock()
	w.full = true
	w.mu.Unlock()
	w.kickLoop()
}

// kickLoop wakes the debounce loop.
func (w *Watcher) kickLoop() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Sync makes the watch set the folders walked by the scan that returned
// snap (Scan, not a Reloader's rescan, whose snapshots keep no state):
// vanished folders are dropped and any not yet watched are added. The
// watcher does the same after every rescan.
func (w *Watcher) Sync(snap *Snapshot) {
	if snap.scanned != nil {
		w.sync(snap.scanned)
	}
}

func (w *Watcher) sync(st *scanState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	for lib, dirs := range st.walked {
		for _, d := range dirs {
			w.folder(lib, d, true)
		}
	}
	for lib, dirs := range w.watched {
		for d, wt := range dirs {
			if wt.gen == w.gen {
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
			_, file := w.files[ev.Name]
			if file {
				w.fileDue[ev.Name] = true
			}
			w.fmu.Unlock()
			w.note(ev, file)
			w.kickLoop()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Warn("file watcher", "err", err)
			w.Kick() // an overflow means events were lost: a full rescan
		case <-w.stop:
			return
		}
	}
}

// note records what ev names for the next rescan: the folder holding the
// entry is listed again. When the entry is a watched folder created,
// removed or renamed, its watches and those below it are dropped (a move
// carries them along under their old names, and a folder made anew under
// a watched name has none), so that nothing below it is trusted until a
// rescan lists it with a watch in place. file says the event is for a
// watched single file, whose handler runs first.
func (w *Watcher) note(ev fsnotify.Event, file bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	placed := file
	for lib, dirs := range w.watched {
		rel, err := filepath.Rel(lib.Dir, ev.Name)
		if err == nil && rel == "." {
			w.full, placed = true, true // the root itself
			continue
		}
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		placed = true
		rel = filepath.ToSlash(rel)
		mark(w.dirty, lib, path.Dir(rel))
		if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
			continue
		}
		if _, ok := dirs[rel]; !ok {
			continue
		}
		for d := range dirs {
			if d == rel || strings.HasPrefix(d, rel+"/") {
				delete(dirs, d)
				if p := filepath.Join(lib.Dir, filepath.FromSlash(d)); !w.fileDirs[p] {
					w.fsw.Remove(p) // gone already, or moved
				}
			}
		}
	}
	if !placed {
		w.full = true
	}
}

func mark(m map[*Library]map[string]bool, lib *Library, dir string) {
	if m[lib] == nil {
		m[lib] = map[string]bool{}
	}
	m[lib][dir] = true
}

// take returns the folders events named since the last call, and whether
// the next rescan must be full, and starts afresh.
func (w *Watcher) take() (dirty map[*Library]map[string]bool, full bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dirty, full = w.dirty, w.full
	w.dirty, w.full = map[*Library]map[string]bool{}, false
	return dirty, full
}

// trust returns which folders an incremental rescan walks from the
// previous listing: those no event named since, watched since before that
// listing was made, or, when lateOK (the listings were proved current
// after the watches, see Unchanged), since Sync added the watch.
func (w *Watcher) trust(dirty map[*Library]map[string]bool) trustFunc {
	return func(lib *Library, dir string, lateOK bool) bool {
		if dirty[lib][dir] {
			return false
		}
		w.mu.Lock()
		wt, ok := w.watched[lib][dir]
		w.mu.Unlock()
		return ok && (!wt.late || lateOK)
	}
}

// loop debounces kicks and runs the safety rescan. It is the only caller
// of Rescan besides explicit requests, so rescans never pile up.
func (w *Watcher) loop() { debounceLoop(w.kick, w.stop, w.safety, w.rescan) }

// debounceLoop calls rescan after each burst of kicks, once no kick came
// for the debounce window or, while kicks keep coming, once maxDelay after
// the first of the burst, and every safety interval (0: never; safety set
// then), until stop closes.
func debounceLoop(kick, stop <-chan struct{}, safety time.Duration, rescan func(safety bool)) {
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
		full := false
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
			full = true
		case <-stop:
			return
		}
		fire = nil
		rescan(full)
	}
}

// rescan runs one rescan: full when asked (the safety rescan), kicked,
// or after a watched file's handler (a config or archive reload), else
// incremental over what the events named.
func (w *Watcher) rescan(full bool) {
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
	dirty, kicked := w.take()
	var trust trustFunc
	if !full && !kicked && len(due) == 0 {
		trust = w.trust(dirty)
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
	_, st, err := w.r.rescan(ctx, trust)
	if err != nil {
		w.mu.Lock()
		w.full = true // what the events named is not in any scan
		w.mu.Unlock()
		if !errors.Is(err, context.Canceled) {
			w.log.Error("rescan failed; the previous catalog keeps serving", "err", err)
		}
		return
	}
	w.sync(st)
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

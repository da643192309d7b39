// Package projects keeps the catalogs of the hub's projects as served: a
// project's catalog is its bound versions, one library each, built on its
// first use, refreshed from the store's change feed, and dropped after an
// idle time.
//
// A Registry loads a project when Use first asks for it, follows
// store.DB.Changes (never a call from the code that made a change, so
// another process on the same database is heard as this one is), replaces
// a project's libraries in place when its bindings change
// (skills.Catalog.SetLibraries), and drops a catalog nothing used for
// Options.IdleTimeout. It knows nothing of MCP or HTTP: whoever serves a
// project gives it a Front, which hears what the registry does.
//
// # Versions held
//
// Each catalog a project is built on holds its versions (versions.Cache
// hands them out with a release func). A request holds the catalog it
// began on, and a catalog replaced by a refresh holds the one that
// replaced it: a request may read any catalog from the one it began on to
// the current one, so each stays until the last request that may read it
// ends, and then releases its versions. Reference counts, no sweeps.
package projects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/versions"
	"github.com/skills-mcp/skills-mcp/skills"
)

// Store is what a Registry reads of the hub's store; *store.DB is one.
type Store interface {
	// GetProject returns a project, or an error matching
	// store.ErrNotFound.
	GetProject(ctx context.Context, id string) (store.Project, error)
	// ProjectBindings lists the versions bound to a project, with its
	// binding generation, from one snapshot.
	ProjectBindings(ctx context.Context, projectID string) (store.BindingList, error)
	// ProjectProfiles returns the execution profiles of a project's bound
	// versions, by version id.
	ProjectProfiles(ctx context.Context, projectID string) (map[int64]store.Profile, error)
	// Changes follows the changes of every project until ctx ends.
	Changes(ctx context.Context) <-chan store.Change
}

// Versions hands out materialised versions; *versions.Cache is one.
type Versions interface {
	// Acquire returns a version opened and the func that releases it.
	Acquire(ctx context.Context, v store.Version) (*versions.Version, func(), error)
}

// A Front serves one loaded project: Options.Front makes it once the
// project's catalog is built, and the registry tells it what happens. Its
// methods must not call the Registry.
type Front interface {
	// Sessions is how many sessions are open on the project: a project
	// with one is never idle.
	Sessions() int
	// Changed says that a refresh changed what the project serves (its
	// bindings or their profiles); Project.View has the new state.
	Changed()
	// Close says that the project is dropped (idle, deleted, or the
	// registry closing): its sessions end. The catalog is closed after it
	// returns.
	Close()
}

// DefaultIdleTimeout is how long, unless Options.IdleTimeout says
// otherwise, an unused project's catalog stays loaded.
const DefaultIdleTimeout = 15 * time.Minute

// ErrClosed is returned by Use once Close began.
var ErrClosed = errors.New("projects: closed")

// maxLoadTries bounds how often a request tries a load again that another
// request's cancellation ended.
const maxLoadTries = 3

// Options configure New.
type Options struct {
	// Store is the hub's database. Required.
	Store Store
	// Versions hands out the bound versions. Required.
	Versions Versions
	// Front makes the front of a project whose catalog is built. Required.
	Front func(*Project) Front
	// Deleted, if set, is called with the id of each project the feed
	// says was deleted, loaded or not.
	Deleted func(projectID string)
	// Logger receives refresh failures and idle drops; nil discards them.
	Logger *slog.Logger
	// IdleTimeout is how long a project's catalog stays loaded with no
	// session and no request (0: DefaultIdleTimeout; negative: until
	// Close); its next use loads it again from the store.
	IdleTimeout time.Duration
}

// Registry holds the loaded projects. It is safe for concurrent use.
type Registry struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the feed's follower and the idle loop

	mu       sync.Mutex
	closed   bool
	projects map[string]*Project

	refreshes, refreshErrors, unloaded atomic.Int64
}

// New starts following the change feed (and, with an idle timeout, the
// loop that drops idle catalogs) and returns the registry. Close stops
// what New started.
func New(ctx context.Context, opts Options) (*Registry, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("projects: Options.Store is required")
	case opts.Versions == nil:
		return nil, errors.New("projects: Options.Versions is required")
	case opts.Front == nil:
		return nil, errors.New("projects: Options.Front is required")
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	r := &Registry{opts: opts, log: opts.Logger, projects: map[string]*Project{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	feed := opts.Store.Changes(r.ctx)
	r.wg.Go(func() { r.follow(feed) })
	if opts.IdleTimeout > 0 {
		r.wg.Go(r.dropIdle)
	}
	return r, nil
}

// Close stops the feed's follower and the idle loop, drops every project
// (its front closed, then its catalog), and returns once all of it has
// stopped. Use fails with ErrClosed afterwards.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ps := make([]*Project, 0, len(r.projects))
	for _, p := range r.projects {
		ps = append(ps, p)
	}
	r.projects = map[string]*Project{}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	for _, p := range ps {
		r.drop(p)
	}
	return nil
}

// Stats counts what the registry did.
type Stats struct {
	// Refreshes counts catalog refreshes after binding changes, and
	// RefreshErrors those that failed (the catalog kept what it served).
	Refreshes, RefreshErrors int64
	// Unloaded counts the catalogs dropped after Options.IdleTimeout
	// without a session or a request.
	Unloaded int64
}

// Stats returns the registry's counts.
func (r *Registry) Stats() Stats {
	return Stats{Refreshes: r.refreshes.Load(), RefreshErrors: r.refreshErrors.Load(), Unloaded: r.unloaded.Load()}
}

// Loaded returns the projects whose catalogs are loaded, by id.
func (r *Registry) Loaded() []*Project {
	r.mu.Lock()
	ps := make([]*Project, 0, len(r.projects))
	for _, p := range r.projects {
		if p.loaded() {
			ps = append(ps, p)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(ps, func(a, b *Project) int { return strings.Compare(a.id, b.id) })
	return ps
}

// Use returns project id, loading its catalog the first time, for one
// request: the project is counted in use (never idle) and the request
// holds the versions of the catalog it begins on, until the caller calls
// done. The error matches store.ErrNotFound for a project that does not
// exist, and is ErrClosed after Close; any other is the store's.
//
// A load runs under the context of the request that began it: when that
// request is cancelled (its client went away), the requests that waited
// for the load try it again rather than fail with another's cancellation.
func (r *Registry) Use(ctx context.Context, id string) (p *Project, done func(), err error) {
	for try := 1; ; try++ {
		p, err := r.useOnce(ctx, id)
		if err == nil {
			release := p.Hold()
			return p, func() { release(); p.done() }, nil
		}
		if p != nil {
			p.done()
			if try < maxLoadTries && errors.Is(err, context.Canceled) && ctx.Err() == nil {
				continue
			}
		}
		return nil, nil, err
	}
}

// useOnce is Use, once; a project it returns, with or without an error,
// is counted in use.
func (r *Registry) useOnce(ctx context.Context, id string) (*Project, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	p := r.projects[id]
	if p == nil {
		p = &Project{id: id, ready: make(chan struct{})}
		p.active.Add(1) // under r.mu, so that the idle loop never drops it under a request
		r.projects[id] = p
		r.mu.Unlock()
		p.mu.Lock()
		p.err = r.load(ctx, p)
		p.mu.Unlock()
		if p.err != nil {
			r.mu.Lock()
			if r.projects[id] == p {
				delete(r.projects, id) // the next request tries again
			}
			r.mu.Unlock()
		}
		close(p.ready)
	} else {
		p.active.Add(1)
		r.mu.Unlock()
		select {
		case <-p.ready:
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
	return p, p.err
}

// load builds p's catalog from the store, under p.mu.
func (r *Registry) load(ctx context.Context, p *Project) error {
	pr, err := r.opts.Store.GetProject(ctx, p.id)
	if err != nil {
		return err
	}
	p.paused.Store(pr.Paused)
	p.wellKnown.Store(pr.WellKnown)
	list, err := r.opts.Store.ProjectBindings(ctx, p.id)
	if err != nil {
		return err
	}
	h, bound, libs, err := r.acquire(ctx, list)
	if err != nil {
		return err
	}
	cat, err := skills.Open(ctx, libs, &skills.Options{Settable: true, Logger: r.log})
	if err != nil {
		h.release()
		return fmt.Errorf("project %s: %w", p.id, err)
	}
	if err := r.withProfiles(ctx, p.id, bound); err != nil {
		cat.Close()
		h.release()
		return err
	}
	p.cat, p.gen, p.held = cat, list.Generation, h
	p.view.Store(&View{Bound: withURIs(cat, bound)})
	p.front = r.opts.Front(p)
	return nil
}

// acquire takes the versions of a binding list for a catalog: the holding
// (with the catalog's reference), each version as bound, and the
// libraries, one per version, whose namespace is its 12 hex digits.
func (r *Registry) acquire(ctx context.Context, list store.BindingList) (*holding, []*Bound, []skills.Library, error) {
	h := &holding{refs: 1}
	bound := make([]*Bound, 0, len(list.Bindings))
	libs := make([]skills.Library, 0, len(list.Bindings))
	for _, b := range list.Bindings {
		v, release, err := r.opts.Versions.Acquire(ctx, b.Version)
		if err != nil {
			h.release()
			return nil, nil, nil, err
		}
		h.releases = append(h.releases, release)
		bound = append(bound, &Bound{Version: v})
		libs = append(libs, skills.Library{Namespace: v.Namespace, FS: v.FS, Title: v.Stored.Package, Version: v.ID})
	}
	return h, bound, libs, nil
}

// withURIs sets each bound version's SKILL.md URI from the catalog; a
// version the catalog withholds is left out.
func withURIs(cat *skills.Catalog, bound []*Bound) []*Bound {
	uris := map[string]string{}
	for _, h := range cat.Search("", 1<<30) {
		uris[h.Library] = h.URI
	}
	out := bound[:0]
	for _, b := range bound {
		if u, ok := uris[b.Namespace]; ok {
			b.URI = u
			out = append(out, b)
		}
	}
	return out
}

// withProfiles sets the execution profile of each bound version.
func (r *Registry) withProfiles(ctx context.Context, projectID string, bound []*Bound) error {
	profiles, err := r.opts.Store.ProjectProfiles(ctx, projectID)
	if err != nil {
		return err
	}
	for _, b := range bound {
		b.Profile = nil
		if pr, ok := profiles[b.Stored.ID]; ok {
			b.Profile = &pr
		}
	}
	return nil
}

// follow applies the change feed until it closes.
func (r *Registry) follow(feed <-chan store.Change) {
	for ch := range feed {
		deleted := ch.Kind == store.ChangeDeleted
		if deleted && r.opts.Deleted != nil {
			r.opts.Deleted(ch.ProjectID)
		}
		r.mu.Lock()
		p := r.projects[ch.ProjectID]
		if p != nil && deleted {
			delete(r.projects, ch.ProjectID) // its requests in flight hold what they read
		}
		r.mu.Unlock()
		switch {
		case p == nil:
			// Not loaded: its first request reads the store.
		case deleted:
			r.drop(p)
		default:
			r.refresh(r.ctx, p, ch)
		}
	}
}

// refresh brings a loaded project to the store's state: its pause and its
// well-known index, and its bindings when their generation moved, or its
// profiles. A failure keeps what was served; the next change or the feed's
// periodic check tries again.
func (r *Registry) refresh(ctx context.Context, p *Project, ch store.Change) {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return
	}
	if p.err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropped {
		return
	}
	p.paused.Store(ch.Paused) // every change carries the state after it
	p.wellKnown.Store(ch.WellKnown)
	if ch.Generation == p.gen {
		if ch.Kind == store.ChangeProfiles {
			r.refreshProfiles(ctx, p)
		}
		return
	}
	r.refreshes.Add(1)
	list, err := r.opts.Store.ProjectBindings(ctx, p.id)
	if err == nil && list.Generation == p.gen {
		return
	}
	var h *holding
	var bound []*Bound
	var libs []skills.Library
	if err == nil {
		h, bound, libs, err = r.acquire(ctx, list)
	}
	if err == nil {
		err = r.withProfiles(ctx, p.id, bound)
	}
	if err == nil {
		_, err = p.cat.SetLibraries(ctx, libs)
	}
	if err != nil {
		if h != nil {
			h.release()
		}
		if ctx.Err() == nil && !errors.Is(err, skills.ErrClosed) {
			r.refreshErrors.Add(1)
			r.log.Error("refreshing a project's catalog", "project", p.id, "err", err)
		}
		return
	}
	p.gen = list.Generation
	p.replace(h, &View{Bound: withURIs(p.cat, bound)})
	p.front.Changed()
}

// refreshProfiles re-reads the profiles of p's bound versions after a
// ChangeProfiles, under p.mu.
func (r *Registry) refreshProfiles(ctx context.Context, p *Project) {
	old := p.view.Load()
	bound := make([]*Bound, len(old.Bound))
	for i, b := range old.Bound {
		c := *b
		bound[i] = &c
	}
	if err := r.withProfiles(ctx, p.id, bound); err != nil {
		if ctx.Err() == nil {
			r.refreshErrors.Add(1)
			r.log.Error("reading a project's execution profiles", "project", p.id, "err", err)
		}
		return
	}
	p.view.Store(&View{Bound: bound})
	p.front.Changed()
}

// dropIdle drops the catalogs of projects without a session or a request
// for Options.IdleTimeout, until Close.
func (r *Registry) dropIdle() {
	idle := r.opts.IdleTimeout
	tick := time.NewTicker(max(min(idle/2, time.Minute), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		before := time.Now().Add(-idle).UnixNano()
		var drop []*Project
		r.mu.Lock()
		for id, p := range r.projects {
			if !p.loaded() || p.active.Load() > 0 || p.lastUsed.Load() > before || p.front.Sessions() > 0 {
				continue
			}
			delete(r.projects, id) // no request can find it from here on
			drop = append(drop, p)
		}
		r.mu.Unlock()
		for _, p := range drop {
			r.drop(p)
			r.unloaded.Add(1)
			r.log.Debug("dropped an idle project's catalog", "project", p.id)
		}
	}
}

// drop closes a project's front and catalog, and lets go of the catalog's
// versions (a request still in flight keeps what it holds).
func (r *Registry) drop(p *Project) {
	<-p.ready
	if p.err != nil {
		return
	}
	p.front.Close()
	p.mu.Lock() // waits for a refresh under way
	p.dropped = true
	p.mu.Unlock()
	p.cat.Close()
	p.hmu.Lock()
	h := p.held
	p.held = nil
	p.hmu.Unlock()
	p.unref(h)
}

package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/skills"
)

// project is one project's catalog, servers and state as served.
type project struct {
	id    string
	ready chan struct{} // closed once loaded (err says how)
	err   error

	cat    *skills.Catalog
	paused atomic.Bool
	view   atomic.Pointer[view] // what the tools read
	// requests counts the requests served.
	requests atomic.Int64
	// active counts the requests in flight (taken under Endpoint.mu, so
	// that an idle project is never dropped under one), and lastUsed is
	// when the last one ended, in Unix nanoseconds.
	active   atomic.Int64
	lastUsed atomic.Int64

	// held is every version the catalog was given (guarded by
	// Endpoint.mu), prevHeld those of earlier catalogs that a request in
	// flight may still read, until the project is seen without one.
	held, prevHeld []*versionEntry

	// mu serialises refreshes.
	mu  sync.Mutex
	gen int64 // the binding generation served

	smu      sync.Mutex
	servers  []*mcp.Server   // every server of the catalog (stateless and sessions)
	tools    bool            // whether the hub's tools are registered
	jobTools bool            // whether the job tools are registered
	stateful *skills.Handler // the handler of sessions, made on first use
}

// view is a project's bound versions, as the tools see them.
type view struct {
	bound []*boundVersion // by package name, then version id
}

// boundVersion is one bound version and its skill URI in the catalog.
type boundVersion struct {
	*versionEntry
	uri string
	// profile is the version's execution profile; nil without one.
	profile *store.Profile
}

func (p *project) serverList() []*mcp.Server {
	p.smu.Lock()
	defer p.smu.Unlock()
	return append([]*mcp.Server(nil), p.servers...)
}

// sessions returns the project's handler of sessions.
func (p *project) sessions(e *Endpoint) http.Handler {
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.stateful == nil {
		h, err := skills.NewHandler(e.handlerOptions(&mcp.StreamableHTTPOptions{SessionTimeout: SessionTimeout, Logger: e.log}))
		if err != nil { // only for a nil Select, which it is not
			panic(err)
		}
		p.stateful = h
	}
	return p.stateful
}

// project returns project id, loading its catalog the first time, and
// counts a request in flight on it: the caller calls done when it ends,
// also when an error is returned with the project.
//
// A load runs under the context of the request that began it: when that
// request is cancelled (its client went away), the requests that waited
// for the load try it again rather than fail with another's cancellation.
func (e *Endpoint) project(ctx context.Context, id string) (*project, error) {
	for try := 1; ; try++ {
		p, err := e.projectOnce(ctx, id)
		if try < maxLoadTries && p != nil && errors.Is(err, context.Canceled) && ctx.Err() == nil {
			p.done()
			continue
		}
		return p, err
	}
}

// maxLoadTries bounds how often a request tries a load again that another
// request's cancellation ended.
const maxLoadTries = 3

// projectOnce is project, once.
func (e *Endpoint) projectOnce(ctx context.Context, id string) (*project, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	p := e.projects[id]
	if p == nil {
		p = &project{id: id, ready: make(chan struct{})}
		p.active.Add(1)
		e.projects[id] = p
		e.mu.Unlock()
		p.mu.Lock()
		p.err = e.load(ctx, p)
		p.mu.Unlock()
		if p.err != nil {
			e.mu.Lock()
			if e.projects[id] == p {
				delete(e.projects, id) // the next request tries again
			}
			e.mu.Unlock()
		}
		close(p.ready)
	} else {
		p.active.Add(1)
		e.mu.Unlock()
		select {
		case <-p.ready:
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
	return p, p.err
}

// done ends a request counted by Endpoint.project.
func (p *project) done() {
	p.lastUsed.Store(time.Now().UnixNano())
	p.active.Add(-1)
}

// sweepIdle drops the catalogs of projects without a session or a request
// for Options.IdleTimeout, until Close.
func (e *Endpoint) sweepIdle() {
	idle := e.opts.IdleTimeout
	tick := time.NewTicker(max(min(idle/2, time.Minute), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		before := time.Now().Add(-idle).UnixNano()
		var drop []*project
		e.mu.Lock()
		for id, p := range e.projects {
			if !p.loaded() || p.active.Load() > 0 || p.lastUsed.Load() > before || p.sessionCount() > 0 {
				continue
			}
			delete(e.projects, id) // no request can find it from here on
			drop = append(drop, p)
		}
		e.mu.Unlock()
		for _, p := range drop {
			e.drop(p)
			e.unloaded.Add(1)
			e.log.Debug("dropped an idle project's catalog", "project", p.id)
		}
		e.release()
	}
}

// entries returns the versions of bound.
func entries(bound []*boundVersion) []*versionEntry {
	out := make([]*versionEntry, len(bound))
	for i, b := range bound {
		out[i] = b.versionEntry
	}
	return out
}

// acquire counts a load or refresh taking versions; the caller calls the
// returned func once the catalog's held versions are recorded (or the
// attempt failed).
func (e *Endpoint) acquire() func() {
	e.mu.Lock()
	e.acquiring++
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		e.acquiring--
		e.mu.Unlock()
	}
}

// release closes the versions no catalog can read any more: none that a
// loaded or retired project's catalog holds, nor one an earlier catalog of
// a project with a request in flight or a session held (a session's
// handler may outlive its request). A request counts itself under e.mu
// (project), so a project seen here without one and without a session has
// none that began before its last refresh. Nothing is released while a load or refresh
// takes versions. The unpacked folders stay in the cache.
func (e *Endpoint) release() {
	e.mu.Lock()
	if e.closed || e.acquiring > 0 {
		e.mu.Unlock()
		return
	}
	keep := map[*versionEntry]bool{}
	mark := func(p *project) {
		for _, ve := range p.held {
			keep[ve] = true
		}
		if p.active.Load() > 0 || p.sessionCount() > 0 {
			for _, ve := range p.prevHeld {
				keep[ve] = true
			}
		} else {
			p.prevHeld = nil
		}
	}
	for _, p := range e.projects {
		mark(p)
	}
	retired := e.retired[:0]
	for _, p := range e.retired {
		if p.active.Load() > 0 || p.sessionCount() > 0 {
			mark(p)
			retired = append(retired, p)
		}
	}
	clear(e.retired[len(retired):])
	e.retired = retired
	var closing []*versionEntry
	for id, ve := range e.versions {
		if !keep[ve] {
			delete(e.versions, id)
			closing = append(closing, ve)
		}
	}
	e.mu.Unlock()
	for _, ve := range closing {
		<-ve.ready // none is materialising: that happens under acquiring
		if ve.root != nil {
			ve.root.Close()
		}
	}
}

// loaded reports whether p's catalog is built.
func (p *project) loaded() bool {
	select {
	case <-p.ready:
		return p.err == nil
	default:
		return false
	}
}

// sessionCount is how many sessions the project's servers hold.
func (p *project) sessionCount() int {
	n := 0
	for _, ms := range p.serverList() {
		for range ms.Sessions() {
			n++
		}
	}
	return n
}

// load builds p's catalog from the store, under p.mu.
func (e *Endpoint) load(ctx context.Context, p *project) error {
	pr, err := e.db.GetProject(ctx, p.id)
	if err != nil {
		return err
	}
	p.paused.Store(pr.Paused)
	list, err := e.db.ProjectBindings(ctx, p.id)
	if err != nil {
		return err
	}
	defer e.acquire()()
	libs, bound, err := e.libraries(ctx, list)
	if err != nil {
		return err
	}
	held := entries(bound)
	cat, err := skills.Open(ctx, libs, &skills.Options{Settable: true, Logger: e.log})
	if err != nil {
		return fmt.Errorf("project %s: %w", p.id, err)
	}
	if err := e.withProfiles(ctx, p.id, bound); err != nil {
		cat.Close()
		return err
	}
	p.cat, p.gen = cat, list.Generation
	v := &view{bound: withURIs(cat, bound)}
	p.view.Store(v)
	p.tools = len(v.bound) > 0 // no server yet: newServer adds them
	p.jobTools = e.wantJobTools(v) != nil
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.byCat[cat] = p
		p.held = held
	}
	e.mu.Unlock()
	if closed {
		cat.Close()
		return errClosed
	}
	return nil
}

// libraries returns the libraries of a binding list: one per version, its
// namespace the version's 12 hex digits.
func (e *Endpoint) libraries(ctx context.Context, list store.BindingList) ([]skills.Library, []*boundVersion, error) {
	libs := make([]skills.Library, 0, len(list.Bindings))
	bound := make([]*boundVersion, 0, len(list.Bindings))
	for _, b := range list.Bindings {
		ve, err := e.version(ctx, b.Version)
		if err != nil {
			return nil, nil, err
		}
		libs = append(libs, skills.Library{Namespace: ve.ns, FS: ve.fsys, Title: ve.v.Package, Version: ve.id})
		bound = append(bound, &boundVersion{versionEntry: ve})
	}
	return libs, bound, nil
}

// withURIs sets each bound version's SKILL.md URI from the catalog.
func withURIs(cat *skills.Catalog, bound []*boundVersion) []*boundVersion {
	uris := map[string]string{}
	for _, h := range cat.Search("", 1<<30) {
		uris[h.Library] = h.URI
	}
	out := bound[:0]
	for _, b := range bound {
		if u, ok := uris[b.ns]; ok { // a version the catalog withholds has no tools either
			b.uri = u
			out = append(out, b)
		}
	}
	return out
}

// refresh brings a loaded project to the store's state: its pause, and its
// bindings when their generation moved. A failure keeps what was served;
// the next change or the feed's periodic check tries again.
func (e *Endpoint) refresh(ctx context.Context, p *project, ch store.Change) {
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
	p.paused.Store(ch.Paused) // every change carries the state after it
	if ch.Generation == p.gen {
		if ch.Kind == store.ChangeProfiles {
			e.refreshProfiles(ctx, p)
		}
		return
	}
	e.refreshes.Add(1)
	list, err := e.db.ProjectBindings(ctx, p.id)
	if err == nil && list.Generation == p.gen {
		return
	}
	var libs []skills.Library
	var bound []*boundVersion
	releaseAcquire := e.acquire()
	defer func() {
		releaseAcquire()
		e.release()
	}()
	if err == nil {
		libs, bound, err = e.libraries(ctx, list)
	}
	if err == nil {
		err = e.withProfiles(ctx, p.id, bound)
	}
	if err == nil {
		_, err = p.cat.SetLibraries(ctx, libs)
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, skills.ErrClosed) { // closed: dropped meanwhile
			e.refreshErrors.Add(1)
			e.log.Error("refreshing a project's catalog", "project", p.id, "err", err)
		}
		return
	}
	p.gen = list.Generation
	e.mu.Lock()
	p.prevHeld = append(p.prevHeld, p.held...)
	p.held = entries(bound)
	e.mu.Unlock()
	p.view.Store(&view{bound: withURIs(p.cat, bound)})
	p.syncTools(e.wantJobTools(p.view.Load()))
}

// withProfiles sets the execution profile of each bound version.
func (e *Endpoint) withProfiles(ctx context.Context, projectID string, bound []*boundVersion) error {
	profiles, err := e.db.ProjectProfiles(ctx, projectID)
	if err != nil {
		return err
	}
	for _, b := range bound {
		b.profile = nil
		if pr, ok := profiles[b.v.ID]; ok {
			b.profile = &pr
		}
	}
	return nil
}

// refreshProfiles re-reads the profiles of p's bound versions after a
// ChangeProfiles, under p.mu, and lists or withdraws the job tools.
func (e *Endpoint) refreshProfiles(ctx context.Context, p *project) {
	old := p.view.Load()
	bound := make([]*boundVersion, len(old.bound))
	for i, b := range old.bound {
		c := *b
		bound[i] = &c
	}
	if err := e.withProfiles(ctx, p.id, bound); err != nil {
		if ctx.Err() == nil {
			e.refreshErrors.Add(1)
			e.log.Error("reading a project's execution profiles", "project", p.id, "err", err)
		}
		return
	}
	v := &view{bound: bound}
	p.view.Store(v)
	p.syncTools(e.wantJobTools(v))
}

// follow applies the change feed until it closes.
func (e *Endpoint) follow(feed <-chan store.Change) {
	for ch := range feed {
		if ch.Kind == store.ChangeDeleted {
			// Its tokens went with it.
			e.tokens.forget(func(t store.Token) bool { return t.ProjectID == ch.ProjectID })
		}
		e.mu.Lock()
		p := e.projects[ch.ProjectID]
		e.mu.Unlock()
		if p == nil {
			continue // not loaded: its first request reads the store
		}
		if ch.Kind == store.ChangeDeleted {
			e.mu.Lock()
			if e.projects[ch.ProjectID] == p {
				delete(e.projects, ch.ProjectID)
				e.retired = append(e.retired, p) // until its requests end
			}
			e.mu.Unlock()
			e.drop(p)
			continue
		}
		e.refresh(e.ctx, p, ch)
	}
}

// drop closes a project's sessions and catalog.
func (e *Endpoint) drop(p *project) {
	<-p.ready
	if p.err != nil {
		return
	}
	for _, ms := range p.serverList() {
		for ss := range ms.Sessions() {
			ss.Close()
		}
	}
	p.mu.Lock()
	cat := p.cat
	p.mu.Unlock()
	e.mu.Lock()
	delete(e.byCat, cat)
	e.mu.Unlock()
	e.stateless.Forget(cat)
	p.smu.Lock()
	if p.stateful != nil {
		p.stateful.Forget(cat)
	}
	p.smu.Unlock()
	cat.Close()
}

// newServer makes a server of a project's catalog: the hub's tools while a
// version is bound, tools.listChanged always, instructions that name
// list_skills only when it is there, and every cacheable result private.
func (e *Endpoint) newServer(cat *skills.Catalog) *mcp.Server {
	e.mu.Lock()
	p := e.byCat[cat]
	e.mu.Unlock()
	ms := mcp.NewServer(e.impl, &mcp.ServerOptions{
		// Prompts are declared, with none: the go-sdk answers prompts/list
		// whatever is declared, and a server must declare what it handles.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{}},
		SchemaCache:  e.schemas,
		// A project's answers are its bindings, behind its token: no
		// shared cache may serve them to another authorization context.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	if p == nil { // a catalog dropped meanwhile: serve it bare
		return ms
	}
	ms.AddReceivingMiddleware(p.instructionsMiddleware)
	p.smu.Lock()
	p.servers = append(p.servers, ms)
	if p.tools {
		addTools(ms, p)
	}
	if p.jobTools {
		addJobTools(ms, p, e.opts.Jobs)
	}
	p.smu.Unlock()
	return ms
}

// syncTools registers the hub's tools on every server of p while a
// version is bound, and the job tools while jobs is set (wantJobTools),
// and removes them otherwise; the go-sdk sends
// notifications/tools/list_changed to the servers' sessions when the set
// changes, and nothing when it does not.
func (p *project) syncTools(jobs Jobs) {
	want := len(p.view.Load().bound) > 0
	wantJobs := jobs != nil
	p.smu.Lock()
	defer p.smu.Unlock()
	if want != p.tools {
		p.tools = want
		for _, ms := range p.servers {
			if want {
				addTools(ms, p)
			} else {
				ms.RemoveTools(toolNames...)
			}
		}
	}
	if wantJobs != p.jobTools {
		p.jobTools = wantJobs
		for _, ms := range p.servers {
			if wantJobs {
				addJobTools(ms, p, jobs)
			} else {
				ms.RemoveTools(jobToolNames...)
			}
		}
	}
}

// instructionsMiddleware gives initialize and server/discover the
// project's instructions.
func (p *project) instructionsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = p.instructions()
		case *mcp.DiscoverResult:
			r.Instructions = p.instructions()
		}
		return res, err
	}
}

func (p *project) instructions() string {
	n := len(p.view.Load().bound)
	if n == 0 {
		return fmt.Sprintf("Project %s has no skills bound yet. Hosts with the Skills extension can use skills/list; it is empty until an administrator binds a version.", p.id)
	}
	return fmt.Sprintf("Project %s serves %d Agent Skills: reusable instructions, references and scripts for specific tasks. "+
		"Before starting a task that one of them may cover, call list_skills with the need in plain words, then get_skill on the best match "+
		"and follow its instructions; read its other files with read_skill_file when the instructions point at them. "+
		"Skills come from this hub, not from the user: never run a bundled script without the user's explicit approval. "+
		"Hosts with the Skills extension can also use skills/list and skills/get.", p.id, n) + p.jobInstructions()
}

var errNoSkill = errors.New("no such skill")

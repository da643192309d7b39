package projects

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/versions"
	"github.com/skills-mcp/skills-mcp/skills"
)

// Project is one loaded project: its catalog, its pause, what its tools
// read (View) and its front. Its methods are safe for concurrent use.
type Project struct {
	id    string
	ready chan struct{} // closed once loaded (err says how)
	err   error

	// Set by the load, before ready closes.
	cat   *skills.Catalog
	front Front

	paused    atomic.Bool
	wellKnown atomic.Bool
	view      atomic.Pointer[View]
	// active counts the requests in flight (taken under Registry.mu, so
	// that an idle project is never dropped under one), and lastUsed is
	// when the last one ended, in Unix nanoseconds.
	active   atomic.Int64
	lastUsed atomic.Int64

	// mu serialises the load, refreshes and the drop.
	mu      sync.Mutex
	gen     int64 // the binding generation served
	dropped bool

	// hmu guards held and the reference counts of every holding of p.
	hmu  sync.Mutex
	held *holding // the current catalog's; nil once dropped
}

// View is a project's bound versions as its tools see them.
type View struct {
	// Bound are the versions the catalog serves, by package name, then
	// version id.
	Bound []*Bound
}

// Bound is one version bound to a project.
type Bound struct {
	*versions.Version
	// URI is the skill URI of its SKILL.md in the project's catalog.
	URI string
	// Profile is the version's execution profile; nil without one.
	Profile *store.Profile
}

// ID returns the project's id.
func (p *Project) ID() string { return p.id }

// Catalog returns the project's catalog. It is closed once the project is
// dropped.
func (p *Project) Catalog() *skills.Catalog { return p.cat }

// Front returns what Options.Front made for the project.
func (p *Project) Front() Front { return p.front }

// Paused reports whether the project is paused: its endpoint serves
// nothing.
func (p *Project) Paused() bool { return p.paused.Load() }

// WellKnown reports whether the project's well-known index is on.
func (p *Project) WellKnown() bool { return p.wellKnown.Load() }

// View returns what the project serves now.
func (p *Project) View() *View { return p.view.Load() }

// Hold holds the versions of the project's current catalog (and of those
// that replace it) until the returned func is called, once: for work that
// may outlive the request that Registry.Use counted, such as an MCP call
// whose client went away.
func (p *Project) Hold() (release func()) {
	p.hmu.Lock()
	h := p.held
	if h != nil {
		h.refs++
	}
	p.hmu.Unlock()
	if h == nil {
		return func() {}
	}
	return func() { p.unref(h) }
}

// done ends a use counted by Registry.useOnce.
func (p *Project) done() {
	p.lastUsed.Store(time.Now().UnixNano())
	p.active.Add(-1)
}

// loaded reports whether p's catalog is built.
func (p *Project) loaded() bool {
	select {
	case <-p.ready:
		return p.err == nil
	default:
		return false
	}
}

// replace makes h the current catalog's holding and v the view, under
// p.mu; the holding replaced keeps h until it is released itself.
func (p *Project) replace(h *holding, v *View) {
	p.hmu.Lock()
	old := p.held
	p.held = h
	p.view.Store(v)
	old.next = h
	h.refs++
	p.hmu.Unlock()
	p.unref(old)
}

// holding is the versions one catalog of a project was built on, counted:
// one reference while it is the project's current catalog, one for each
// request that began on it (Hold), and one from the holding it replaced.
// The last reference gone, it releases its versions and its own
// reference on next: a request that began on it may have read the catalog
// that replaced it.
type holding struct {
	releases []func() // the versions' releases
	refs     int      // under Project.hmu
	next     *holding // the catalog that replaced it, if any
}

// release releases h's versions; for a holding never shared.
func (h *holding) release() {
	for _, rel := range h.releases {
		rel()
	}
}

// unref drops one reference on h, and releases every holding whose last
// reference that was, along the chain of replacements.
func (p *Project) unref(h *holding) {
	var free []*holding
	p.hmu.Lock()
	for h != nil {
		h.refs--
		if h.refs > 0 {
			break
		}
		free = append(free, h)
		h = h.next
	}
	p.hmu.Unlock()
	for _, h := range free {
		h.release()
	}
}

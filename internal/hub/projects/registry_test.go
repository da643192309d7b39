package projects_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
	"github.com/skills-mcp/skills-mcp/internal/hub/versions"
)

var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// backends runs fn on SQLite and on a real PostgreSQL.
func backends(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")}))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, openStore(t, store.Options{Database: pg.Database(t)}))
	})
}

func openStore(t *testing.T, o store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func install(t *testing.T, db *store.DB, name string) store.Version {
	t.Helper()
	v, _, err := db.Install(context.Background(), storetest.Version(name, storetest.Tree{
		"SKILL.md": "---\nname: " + name + "\ndescription: Use for " + name + ".\n---\n# " + name + "\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// front records what the registry tells a project's front.
type front struct {
	sessions atomic.Int64
	changed  chan struct{}
	closed   atomic.Bool
}

func (f *front) Sessions() int { return int(f.sessions.Load()) }
func (f *front) Changed()      { f.changed <- struct{}{} }
func (f *front) Close()        { f.closed.Store(true) }

// fixture is a registry over db with its versions and the fronts it made.
type fixture struct {
	r  *projects.Registry
	vc *versions.Cache

	mu       sync.Mutex
	fronts   map[string]*front
	sessions map[string]int64 // the sessions of a front when it is made
	deleted  chan string
}

func start(t *testing.T, db *store.DB, idle time.Duration) *fixture {
	t.Helper()
	vc, err := versions.New(db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{vc: vc, fronts: map[string]*front{}, deleted: make(chan string, 16)}
	f.r, err = projects.New(context.Background(), projects.Options{Store: db, Versions: vc, IdleTimeout: idle,
		Front: func(p *projects.Project) projects.Front {
			fr := &front{changed: make(chan struct{}, 16)}
			f.mu.Lock()
			fr.sessions.Store(f.sessions[p.ID()])
			f.fronts[p.ID()] = fr
			f.mu.Unlock()
			return fr
		},
		Deleted: func(id string) { f.deleted <- id }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.r.Close()
		vc.Close()
	})
	return f
}

func (f *fixture) front(id string) *front {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fronts[id]
}

func wait[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30 s", what)
		var zero T
		return zero
	}
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A project is loaded on first use and follows the feed: a binding change
// reaches its view and its front; a version unbound while a request is in
// flight stays open until that request ends; the pause comes the same
// way; a deletion drops the project and releases its versions.
func TestRegistryFollowsTheFeed(t *testing.T) {
	backends(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
			t.Fatal(err)
		}
		v, w := install(t, db, "pdf"), install(t, db, "xlsx")
		if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
			t.Fatal(err)
		}
		f := start(t, db, -1)

		if _, _, err := f.r.Use(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown project: %v", err)
		}
		p, done, err := f.r.Use(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		if b := p.View().Bound; len(b) != 1 || b[0].Stored.ID != v.ID || b[0].URI != "skill://"+b[0].Namespace+"/pdf/SKILL.md" {
			t.Fatalf("view: %+v", b)
		}
		if loaded := f.r.Loaded(); len(loaded) != 1 || loaded[0] != p || p.Front() != f.front("alpha") {
			t.Fatalf("loaded: %v", loaded)
		}

		// Bound and unbound while the request is in flight.
		if _, err := db.BindVersion(ctx, "alpha", w.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, f.front("alpha").changed, "Changed after the binding")
		if n := len(p.View().Bound); n != 2 || f.vc.Len() != 2 || p.Catalog().Len() != 2 {
			t.Fatalf("after the binding: %d bound, %d open, %d skills", n, f.vc.Len(), p.Catalog().Len())
		}
		if _, err := db.UnbindVersion(ctx, "alpha", v.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, f.front("alpha").changed, "Changed after the unbinding")
		if n := len(p.View().Bound); n != 1 || f.vc.Len() != 2 {
			t.Fatalf("after the unbinding under a request: %d bound, %d open, want 1 and 2", n, f.vc.Len())
		}
		done()
		if n := f.vc.Len(); n != 1 {
			t.Fatalf("once the request ended: %d open, want 1", n)
		}

		// Without a request, an unbinding releases at once.
		if _, err := db.UnbindVersion(ctx, "alpha", w.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, f.front("alpha").changed, "Changed after the last unbinding")
		if n := f.vc.Len(); n != 0 || len(p.View().Bound) != 0 {
			t.Fatalf("after the last unbinding: %d open", n)
		}
		if st := f.r.Stats(); st.Refreshes < 3 || st.RefreshErrors != 0 {
			t.Fatalf("stats: %+v", st)
		}

		if _, err := db.PauseProject(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the pause", p.Paused)
		if p.WellKnown() {
			t.Fatal("a new project's well-known index is on")
		}
		if _, err := db.SetWellKnown(ctx, "alpha", true); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the well-known index on", p.WellKnown)
		if _, err := db.SetWellKnown(ctx, "alpha", false); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the well-known index off", func() bool { return !p.WellKnown() })

		if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, f.front("alpha").changed, "Changed after binding again")
		if err := db.DeleteProject(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		if id := wait(t, f.deleted, "Deleted"); id != "alpha" {
			t.Fatalf("deleted %q", id)
		}
		waitFor(t, "the deleted project dropped", func() bool { return f.front("alpha").closed.Load() && f.vc.Len() == 0 })
		if loaded := f.r.Loaded(); len(loaded) != 0 {
			t.Fatalf("a deleted project is still loaded: %v", loaded)
		}
		if _, _, err := f.r.Use(ctx, "alpha"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a deleted project: %v", err)
		}

		f.r.Close()
		if _, _, err := f.r.Use(ctx, "alpha"); !errors.Is(err, projects.ErrClosed) {
			t.Fatalf("Use after Close: %v", err)
		}
	})
}

// A project with no session and no request for the idle time is dropped
// (its front closed, its versions released) and loaded again by its next
// use; one whose front has a session is kept until it has none.
func TestRegistryDropsIdleProjects(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	for _, id := range []string{"idle", "busy"} {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.BindVersion(ctx, "idle", install(t, db, "pdf").ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindVersion(ctx, "busy", install(t, db, "xlsx").ID); err != nil {
		t.Fatal(err)
	}
	f := start(t, db, 100*time.Millisecond)
	f.mu.Lock()
	f.sessions = map[string]int64{"busy": 1} // from its first load
	f.mu.Unlock()
	for _, id := range []string{"busy", "idle"} {
		_, done, err := f.r.Use(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		done()
	}
	idle := f.front("idle")
	waitFor(t, "the idle project dropped", func() bool { return idle.closed.Load() && f.vc.Len() == 1 })
	if loaded := f.r.Loaded(); len(loaded) != 1 || loaded[0].ID() != "busy" || f.r.Stats().Unloaded != 1 {
		t.Fatalf("loaded %v, stats %+v", loaded, f.r.Stats())
	}
	p, done, err := f.r.Use(ctx, "idle")
	if err != nil {
		t.Fatal(err)
	}
	if p.Front() == idle || len(p.View().Bound) != 1 {
		t.Fatal("the idle project was not loaded again")
	}
	done()
	f.front("busy").sessions.Store(0)
	waitFor(t, "every project dropped", func() bool { return len(f.r.Loaded()) == 0 && f.vc.Len() == 0 })
}

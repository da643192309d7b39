package projects

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/versions"
)

// bareFront is the front of a test without servers.
type bareFront struct{}

func (bareFront) Sessions() int { return 0 }
func (bareFront) Changed()      {}
func (bareFront) Close()        {}

// A request that waited for a project's load, which another request began
// and whose client went away (the load ended with context.Canceled), loads
// it again instead of failing with the other's cancellation.
func TestWaiterOutlivesLoadersCancellation(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	vc, err := versions.New(db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	r, err := New(ctx, Options{Store: db, Versions: vc, Front: func(*Project) Front { return bareFront{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The load another request began, still under way.
	first := &Project{id: "alpha", ready: make(chan struct{})}
	r.mu.Lock()
	r.projects["alpha"] = first
	r.mu.Unlock()
	type result struct {
		p    *Project
		done func()
		err  error
	}
	got := make(chan result, 1)
	go func() {
		p, done, err := r.Use(ctx, "alpha")
		got <- result{p, done, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for first.active.Load() == 0 { // the waiter is counted before it waits
		if time.Now().After(deadline) {
			t.Fatal("the request did not wait for the load within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	// The loader's client goes away: its load fails as useOnce does then.
	first.err = context.Canceled
	r.mu.Lock()
	delete(r.projects, "alpha")
	r.mu.Unlock()
	close(first.ready)

	select {
	case res := <-got:
		if res.err != nil {
			t.Fatalf("the waiting request failed with the loader's cancellation: %v", res.err)
		}
		if res.p == first || !res.p.loaded() {
			t.Fatal("the waiting request did not load the project again")
		}
		res.done()
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting request did not return within 30 s")
	}
	if n := first.active.Load(); n != 0 {
		t.Fatalf("the abandoned load still counts %d requests", n)
	}
}

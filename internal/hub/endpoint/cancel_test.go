package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A request that waited for a project's load, which another request began
// and whose client went away (the load ended with context.Canceled), loads
// it again instead of answering 503 with the other's cancellation.
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
	e, err := New(ctx, Options{Store: db, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	// The load another request began, still under way.
	first := &project{id: "alpha", ready: make(chan struct{})}
	e.mu.Lock()
	e.projects["alpha"] = first
	e.mu.Unlock()
	type result struct {
		p   *project
		err error
	}
	got := make(chan result, 1)
	go func() {
		p, err := e.project(ctx, "alpha")
		got <- result{p, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for first.active.Load() == 0 { // the waiter is counted before it waits
		if time.Now().After(deadline) {
			t.Fatal("the request did not wait for the load within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	// The loader's client goes away: its load fails as project does then.
	first.err = context.Canceled
	e.mu.Lock()
	delete(e.projects, "alpha")
	e.mu.Unlock()
	close(first.ready)

	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("the waiting request failed with the loader's cancellation: %v", r.err)
		}
		if r.p == first || !r.p.loaded() {
			t.Fatal("the waiting request did not load the project again")
		}
		r.p.done()
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting request did not return within 30 s")
	}
	if n := first.active.Load(); n != 0 {
		t.Fatalf("the abandoned load still counts %d requests", n)
	}
}

// A request whose client went away before its token was checked or its
// project loaded is no store failure: Stats.StoreErrors stays 0.
func TestCancelledRequestIsNoStoreError(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	_, secret, err := db.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ctx, Options{Store: db, CacheDir: t.TempDir(), TokenCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	req := httptest.NewRequestWithContext(gone, http.MethodPost, "/p/alpha/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("a cancelled request: %d %s", rec.Code, rec.Body)
	}
	if n := e.Stats().StoreErrors; n != 0 {
		t.Fatalf("a cancelled request counted %d store errors", n)
	}
}

package versions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func install(t *testing.T, db *store.DB, name string) store.Version {
	t.Helper()
	v, _, err := db.Install(context.Background(), storetest.Version(name, storetest.Tree{
		"SKILL.md":            "---\nname: " + name + "\ndescription: Test.\n---\n# " + name + "\n",
		"references/guide.md": "# Guide\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func newCache(t *testing.T, st Store) *Cache {
	t.Helper()
	c, err := New(st, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Holders share one opened version: the same *Version and the same FS
// value (the engine scans an FS value once); the root closes with the last
// release, a release called twice counts once, and the next Acquire opens
// the version again from the cache folder.
func TestAcquireCountsHolders(t *testing.T) {
	db := openStore(t)
	sv := install(t, db, "pdf")
	c := newCache(t, db)
	ctx := context.Background()

	a, releaseA, err := c.Acquire(ctx, sv)
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := c.Acquire(ctx, sv)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.FS != b.FS {
		t.Fatal("two holders of one version got two openings")
	}
	hex := strings.TrimPrefix(sv.TreeDigest, "sha256:")
	if a.ID != "pdf@"+hex[:12] || a.Namespace != hex[:12] || len(a.Files) != 2 {
		t.Fatalf("version: %q %q %d files", a.ID, a.Namespace, len(a.Files))
	}
	if f, ok := a.File("references/guide.md"); !ok || f.Size != int64(len("# Guide\n")) {
		t.Fatalf("File: %+v %v", f, ok)
	}
	releaseA()
	releaseA() // counted once
	if n := c.Len(); n != 1 {
		t.Fatalf("open after one of two releases: %d, want 1", n)
	}
	if data, err := b.Read("references/guide.md"); err != nil || string(data) != "# Guide\n" {
		t.Fatalf("a holder's read after another's release: %q %v", data, err)
	}
	releaseB()
	if n := c.Len(); n != 0 {
		t.Fatalf("open after the last release: %d, want 0", n)
	}
	if _, err := b.Read("references/guide.md"); err == nil {
		t.Fatal("a released version's root is still open")
	}
	again, release, err := c.Acquire(ctx, sv)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if again == a {
		t.Fatal("a released version was handed out again")
	}
	if data, err := again.Read("SKILL.md"); err != nil || !strings.Contains(string(data), "name: pdf") {
		t.Fatalf("reading the reopened version: %q %v", data, err)
	}
}

// A file changed on disk after the version was opened is refused, with
// neither its folder nor anything else of the host in the error.
func TestReadVerifiesDigest(t *testing.T) {
	db := openStore(t)
	sv := install(t, db, "pdf")
	dir := t.TempDir()
	c, err := New(db, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, release, err := c.Acquire(context.Background(), sv)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	path := filepath.Join(dir, strings.TrimPrefix(sv.TreeDigest, "sha256:"), "references", "guide.md")
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, []byte("# Tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = v.Read("references/guide.md")
	if err == nil || !strings.Contains(err.Error(), "does not match its digest") || strings.Contains(err.Error(), dir) {
		t.Fatalf("a tampered file: %v", err)
	}
	if _, err := v.Read("nope.md"); err == nil || !strings.Contains(err.Error(), "has no file") {
		t.Fatalf("a missing file: %v", err)
	}
}

// A version the store cannot materialise is refused and not kept: the
// next Acquire asks the store again. After Close, Acquire fails and a late
// release does nothing.
func TestAcquireFailureAndClose(t *testing.T) {
	db := openStore(t)
	sv := install(t, db, "pdf")
	c, err := New(db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gone := store.Version{ID: sv.ID + 100, Package: "gone", TreeDigest: sv.TreeDigest}
	for range 2 {
		if _, _, err := c.Acquire(ctx, gone); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown version: %v", err)
		}
	}
	if _, _, err := c.Acquire(ctx, store.Version{ID: sv.ID, Package: "pdf", TreeDigest: "sha256:ab"}); err == nil || !strings.Contains(err.Error(), "malformed tree digest") {
		t.Fatalf("a malformed digest: %v", err)
	}
	if n := c.Len(); n != 0 {
		t.Fatalf("failed versions kept: %d", n)
	}
	v, release, err := c.Acquire(ctx, sv)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := v.Read("SKILL.md"); err == nil {
		t.Fatal("Close left a version open")
	}
	release()
	if _, _, err := c.Acquire(ctx, sv); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

// gatedStore materialises only once its gate is open, or fails with the
// caller's cancellation.
type gatedStore struct {
	*store.DB
	gate    chan struct{}
	mu      sync.Mutex
	started int
}

func (g *gatedStore) Materialize(ctx context.Context, id int64, dir string) (string, error) {
	g.mu.Lock()
	g.started++
	g.mu.Unlock()
	select {
	case <-g.gate:
		return g.DB.Materialize(ctx, id, dir)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Concurrent holders wait for one materialisation; when the caller that
// began it goes away, a waiter materialises the version itself instead of
// failing with the other's cancellation.
func TestWaiterOutlivesMaterialisersCancellation(t *testing.T) {
	db := openStore(t)
	sv := install(t, db, "pdf")
	g := &gatedStore{DB: db, gate: make(chan struct{})}
	c := newCache(t, g)

	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, _, err := c.Acquire(first, sv)
		firstErr <- err
	}()
	waitFor(t, "the first materialisation", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.started == 1
	})
	type result struct {
		v       *Version
		release func()
		err     error
	}
	second := make(chan result, 1)
	go func() {
		v, release, err := c.Acquire(context.Background(), sv)
		second <- result{v, release, err}
	}()
	waitFor(t, "the second caller waiting", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		en := c.entries[sv.ID]
		return en != nil && en.refs == 2
	})
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller: %v", err)
	}
	close(g.gate)
	r := <-second
	if r.err != nil {
		t.Fatalf("the waiter failed with another's cancellation: %v", r.err)
	}
	r.release()
	if n := c.Len(); n != 0 {
		t.Fatalf("open after every release: %d", n)
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
		time.Sleep(time.Millisecond)
	}
}

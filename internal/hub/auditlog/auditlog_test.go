package auditlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// away is the real store behind a switch that makes it answer as a
// database that went away.
type away struct {
	*store.DB
	mu   sync.Mutex
	down bool
}

func (a *away) AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	a.mu.Lock()
	down := a.down
	a.mu.Unlock()
	if down {
		return store.AuditEntry{}, fmt.Errorf("test: %w", store.ErrUnavailable)
	}
	return a.DB.AppendAudit(ctx, e)
}

func (a *away) set(down bool) { a.mu.Lock(); a.down = down; a.mu.Unlock() }

func entries(t *testing.T, s *store.DB) []store.AuditEntry {
	t.Helper()
	p, err := s.AuditList(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Entries
}

// An entry that cannot be written while the database is away is kept,
// with its event's time and replica, and written in order once it is
// back; one the store refuses as invalid is not retried.
func TestEntriesWaitForTheDatabase(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := &away{DB: st}
	l := New(db, &Options{Replica: "r1"})
	defer l.Close(ctx)

	l.Record(ctx, store.AuditEntry{Actor: "a", Action: "job.run", ObjectKind: "job", ObjectID: "p/1", Result: "queued"})
	if got := entries(t, st); len(got) != 1 || got[0].Replica != "r1" {
		t.Fatalf("written at once: %+v", got)
	}
	db.set(true)
	at := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	for i := range 3 {
		l.Record(ctx, store.AuditEntry{At: at, Actor: "a", Action: "job.run", ObjectKind: "job", ObjectID: fmt.Sprintf("p/%d", i+2), Result: "succeeded"})
	}
	l.Record(ctx, store.AuditEntry{Actor: "a", Action: "BAD ACTION", ObjectKind: "job", Result: "ok"})
	if n := l.Pending(); n != 4 {
		t.Fatalf("%d entries wait; want 4 (the database is away, and order is kept)", n)
	}
	db.set(false)
	deadline := time.Now().Add(30 * time.Second)
	for l.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the waiting entries were not written within 30 s of the database's return")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := entries(t, st)
	if len(got) != 4 {
		t.Fatalf("%d entries stored; want 4 (the invalid one dropped)", len(got))
	}
	for i, e := range got[:3] { // newest first
		if want := fmt.Sprintf("p/%d", 4-i); e.ObjectID != want || !e.At.Equal(at) || e.Replica != "r1" {
			t.Errorf("entry %d = %+v; want %s at its event's time %v", i, e, want, at)
		}
	}
}

// Close gives up on entries the database never takes, and says so; the
// queue is bounded.
func TestCloseAndBound(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := &away{DB: st, down: true}
	l := New(db, &Options{MaxPending: 2})
	for range 5 {
		l.Record(ctx, store.AuditEntry{Actor: "a", Action: "x", ObjectKind: "y", Result: "ok"})
	}
	if n := l.Pending(); n != 2 {
		t.Errorf("%d pending; want the bound, 2", n)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	l.Close(cctx)
	if n := l.Pending(); n != 0 {
		t.Errorf("%d pending after Close", n)
	}
	// After Close an entry is tried once.
	db.set(false)
	l.Record(ctx, store.AuditEntry{Actor: "a", Action: "x", ObjectKind: "y", Result: "ok"})
	if got := entries(t, st); len(got) != 1 {
		t.Errorf("%d entries after a Record past Close; want 1", len(got))
	}
	if !errors.Is(cctx.Err(), context.DeadlineExceeded) {
		t.Error("Close returned before its deadline with entries it could not write")
	}
}

package store_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

func bothBackends(t *testing.T, fn func(t *testing.T, name string, newDB storetest.Opener)) {
	for _, b := range []struct {
		name  string
		newDB func(*testing.T) storetest.Opener
	}{{"sqlite", sqliteDB}, {"postgres", postgresDB}} {
		t.Run(b.name, func(t *testing.T) { fn(t, b.name, b.newDB(t)) })
	}
}

func openDB(t *testing.T, open storetest.Opener, opts store.Options) *store.DB {
	t.Helper()
	s, err := open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func placeholders(backend, q string) string {
	if backend != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + string(rune('0'+n)))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The jobs table holds the project rules: a
// binding with jobs cannot be removed (the store lists them; the database
// refuses too), a running job blocks deleting the project, and deleting
// it removes the job records.
func TestProjectJobRules(t *testing.T) {
	bothBackends(t, func(t *testing.T, backend string, open storetest.Opener) {
		ctx := context.Background()
		s := openDB(t, open, store.Options{})
		v, _, err := s.Install(ctx, storetest.Version("demo", skill))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateProject(ctx, "p", "P"); err != nil {
			t.Fatal(err)
		}
		if err := s.Bind(ctx, "p", v.ID); err != nil {
			t.Fatal(err)
		}
		db := store.RawDB(s)
		for _, j := range []struct{ id, state string }{{"job-2", "succeeded"}, {"job-1", "running"}} {
			if _, err := db.ExecContext(ctx, placeholders(backend, `INSERT INTO jobs (id, project_id, version_id, state, profile_revision, claimed_by, created_at, updated_at) VALUES (?, ?, ?, ?, 1, 'r', 0, 0)`), j.id, "p", v.ID, j.state); err != nil {
				t.Fatal(err)
			}
		}
		_, err = s.UnbindVersion(ctx, "p", v.ID)
		var je *store.JobsError
		if !errors.As(err, &je) || !errors.Is(err, store.ErrJobsKept) || !slices.Equal(je.Jobs, []string{"job-1", "job-2"}) {
			t.Fatalf("UnbindVersion(with jobs) = %v; want a JobsError listing job-1, job-2", err)
		}
		if _, err := db.ExecContext(ctx, placeholders(backend, `DELETE FROM bindings WHERE project_id = ?`), "p"); err == nil {
			t.Error("the database let a binding with jobs be removed")
		}
		err = s.DeleteProject(ctx, "p")
		if !errors.As(err, &je) || !errors.Is(err, store.ErrJobsRunning) || !slices.Equal(je.Jobs, []string{"job-1"}) {
			t.Fatalf("DeleteProject(running job) = %v; want a JobsError naming job-1", err)
		}
		if l, err := s.ProjectBindings(ctx, "p"); err != nil || len(l.Bindings) != 1 || l.Generation != 1 {
			t.Fatalf("refusals changed the project: %+v, %v", l, err)
		}
		if _, err := db.ExecContext(ctx, placeholders(backend, `UPDATE jobs SET state = ? WHERE id = ?`), "failed", "job-1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteProject(ctx, "p"); err != nil {
			t.Fatalf("DeleteProject(finished jobs) = %v", err)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil || n != 0 {
			t.Errorf("job records left: %d, %v", n, err)
		}
	})
}

// The audit log is append-only in the database itself.
func TestAuditAppendOnly(t *testing.T) {
	bothBackends(t, func(t *testing.T, backend string, open storetest.Opener) {
		ctx := context.Background()
		s := openDB(t, open, store.Options{})
		e, err := s.AppendAudit(ctx, store.AuditEntry{Actor: "cli", Action: "project.create", ObjectKind: "project", ObjectID: "p", Result: store.AuditOK})
		if err != nil {
			t.Fatal(err)
		}
		db := store.RawDB(s)
		for _, q := range []string{`UPDATE audit SET result = 'forged' WHERE id = ?`, `DELETE FROM audit WHERE id = ?`} {
			if _, err := db.ExecContext(ctx, placeholders(backend, q), e.ID); err == nil || !strings.Contains(err.Error(), "immutable") {
				t.Errorf("%s: %v; want refused", q, err)
			}
		}
		if backend == "postgres" {
			if _, err := db.ExecContext(ctx, `TRUNCATE audit`); err == nil {
				t.Error("TRUNCATE audit was allowed")
			}
		}
		if p, err := s.AuditList(ctx, store.AuditFilter{}); err != nil || len(p.Entries) != 1 || p.Entries[0].Result != store.AuditOK {
			t.Errorf("after refused changes: %+v, %v", p, err)
		}
	})
}

// Tokens expire, and their last use is noted at most once a minute.
func TestTokenExpiryAndLastUse(t *testing.T) {
	bothBackends(t, func(t *testing.T, _ string, open storetest.Opener) {
		ctx := context.Background()
		s := openDB(t, open, store.Options{})
		now := time.Now()
		store.SetNow(s, func() time.Time { return now })
		tok, secret, err := s.CreateToken(ctx, store.NewToken{Kind: store.AdminToken, Scope: store.ScopeRead, ExpiresAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		first, err := s.VerifyToken(ctx, secret)
		if err != nil || !first.LastUsedAt.Equal(now.UTC().Truncate(time.Microsecond)) {
			t.Fatalf("VerifyToken = %+v, %v", first, err)
		}
		now = now.Add(30 * time.Second)
		if got, _ := s.VerifyToken(ctx, secret); !got.LastUsedAt.Equal(first.LastUsedAt) {
			t.Errorf("last use rewritten after 30 s: %v", got.LastUsedAt)
		}
		now = now.Add(time.Minute)
		if got, _ := s.VerifyToken(ctx, secret); !got.LastUsedAt.After(first.LastUsedAt) {
			t.Errorf("last use not noted after 90 s: %v", got.LastUsedAt)
		}
		now = now.Add(time.Hour)
		if _, err := s.VerifyToken(ctx, secret); !errors.Is(err, store.ErrTokenInvalid) || !strings.Contains(err.Error(), "expired") || strings.Contains(err.Error(), secret) {
			t.Errorf("VerifyToken(expired) = %v", err)
		}
		if got, _ := s.GetToken(ctx, tok.ID); got.ExpiresAt.IsZero() {
			t.Errorf("stored token lost its expiry: %+v", got)
		}
	})
}

// A change the feed was not told about (another process on SQLite; a lost
// notification on PostgreSQL) is found by the periodic check.
func TestChangeFeedFallbackCheck(t *testing.T) {
	bothBackends(t, func(t *testing.T, backend string, open storetest.Opener) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := openDB(t, open, store.Options{ChangePoll: 50 * time.Millisecond})
		if err := s.CreateProject(ctx, "p", "P"); err != nil {
			t.Fatal(err)
		}
		feed := s.Changes(ctx)
		// Behind the store's back: no notification, no broadcast.
		if _, err := store.RawDB(s).ExecContext(ctx, placeholders(backend, `UPDATE projects SET generation = generation + 1 WHERE id = ?`), "p"); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-feed:
			if c.Kind != store.ChangeBindings || c.ProjectID != "p" || c.Generation != 1 {
				t.Fatalf("change = %+v", c)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the periodic check did not find the change within 30 s")
		}
	})
}

// The feed survives a PostgreSQL restart: a bind made through another
// store after the server came back is announced, and no goroutine is left
// once the stores are closed.
func TestChangeFeedSurvivesPostgresRestart(t *testing.T) {
	pg.Server(t) // skips (or fails on CI) without PostgreSQL
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// No periodic check to speak of: recovery comes from reconnecting.
	a, err := store.Open(ctx, store.Options{Database: url, ChangePoll: time.Hour, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, store.Options{Database: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	v, _, err := b.Install(ctx, storetest.Version("demo", skill))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	feed := a.Changes(ctx)
	srv.Stop()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The first statements after a restart may meet dead pooled
	// connections; the store says so and the next try works.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := b.BindVersion(ctx, "p", v.ID)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("BindVersion after the restart: %v", err)
		}
	}
	select {
	case c := <-feed:
		if c.Kind != store.ChangeBindings || c.ProjectID != "p" || c.Generation != 1 {
			t.Fatalf("change = %+v", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no change announced within 30 s of the restart")
	}
	// And it keeps listening.
	if err := b.Unbind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-feed:
		if c.Kind != store.ChangeBindings || c.Generation != 2 {
			t.Fatalf("change = %+v", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no change announced within 30 s")
	}
	cancel()
	for range feed {
	}
	a.Close()
	b.Close()
}

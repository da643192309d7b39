package endpoint_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// refusedWithin polls project's endpoint with token until it answers 401,
// and returns how long that took; the deadline is generous, the bound the
// caller asserts is the behaviour's.
func refusedWithin(t *testing.T, h *hub, project, token string, deadline time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		st, m, _ := rpc(t, h.url(project), token, "2025-11-25", "ping", nil)
		if st == 401 {
			if errCode(m) != "token_invalid" {
				t.Fatalf("refused with %v", m)
			}
			return time.Since(start)
		}
		if st != 200 {
			t.Fatalf("ping: %d %v", st, m)
		}
		if time.Since(start) > deadline {
			t.Fatalf("token still accepted after %v", deadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Verified tokens are cached, but a revocation made by another process
// (nothing tells this one) takes effect within the cache's TTL, below the
// change feed's fallback period; one made here, at once; and a cached
// token is never accepted past its expiry.
func TestTokenCacheRevocation(t *testing.T) {
	backends(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
			t.Fatal(err)
		}
		h := startHub(t, db, endpoint.Options{})
		if endpoint.DefaultTokenCacheTTL >= store.DefaultChangePoll {
			t.Fatalf("the token cache's TTL %v is not below the feed's fallback %v", endpoint.DefaultTokenCacheTTL, store.DefaultChangePoll)
		}

		tok, secret, err := db.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "alpha"})
		if err != nil {
			t.Fatal(err)
		}
		if st, m, _ := rpc(t, h.url("alpha"), secret, "2025-11-25", "ping", nil); st != 200 {
			t.Fatalf("ping: %d %v", st, m)
		}
		// Revoked elsewhere (the store only): within the TTL.
		if _, err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		revokedAt := time.Now()
		took := refusedWithin(t, h, "alpha", secret, 30*time.Second)
		t.Logf("a revocation elsewhere took effect in %v", took)
		if time.Since(revokedAt) > endpoint.DefaultTokenCacheTTL+store.DefaultChangePoll {
			t.Errorf("a revocation took %v, over the TTL %v and the feed's fallback %v", took, endpoint.DefaultTokenCacheTTL, store.DefaultChangePoll)
		}

		// Revoked here: at once.
		tok, secret, _ = db.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "alpha"})
		if st, _, _ := rpc(t, h.url("alpha"), secret, "2025-11-25", "ping", nil); st != 200 {
			t.Fatal("a new token refused")
		}
		db.RevokeToken(ctx, tok.ID)
		h.e.TokenRevoked(tok.ID)
		if st, _, _ := rpc(t, h.url("alpha"), secret, "2025-11-25", "ping", nil); st != 401 {
			t.Fatalf("a token revoked in this process: %d", st)
		}
	})
}

// A cached token is never accepted past its expiry, whatever the TTL.
func TestTokenCacheExpiry(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	h := startHub(t, db, endpoint.Options{TokenCacheTTL: time.Hour})
	expires := time.Now().Add(1500 * time.Millisecond)
	_, secret, err := db.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "alpha", ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	if st, m, _ := rpc(t, h.url("alpha"), secret, "2025-11-25", "ping", nil); st != 200 {
		t.Fatalf("ping: %d %v", st, m)
	}
	refusedWithin(t, h, "alpha", secret, 30*time.Second)
	if time.Now().Before(expires) {
		t.Fatal("refused before its expiry")
	}
}

// loaded reports whether project id's catalog is loaded.
func loaded(e *endpoint.Endpoint, id string) bool {
	for _, p := range e.Stats().Projects {
		if p.ID == id {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A project's catalog with no session and no request for IdleTimeout is
// dropped and rebuilt by its next request; one with an open session is
// kept, and its session still hears binding changes.
func TestIdleCatalogs(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	for _, id := range []string{"idle", "live"} {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	v := install(t, db, "pdf", "Fill PDF forms.", nil)
	w := install(t, db, "xlsx", "Edit spreadsheets.", nil)
	for _, id := range []string{"idle", "live"} {
		if _, err := db.BindVersion(ctx, id, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	ti, tl := projectToken(t, db, "idle"), projectToken(t, db, "live")
	h := startHub(t, db, endpoint.Options{IdleTimeout: 300 * time.Millisecond})

	cs, ev := h.connect(t, "live", tl)
	if st, m, _ := rpc(t, h.url("idle"), ti, "2025-11-25", "skills/list", map[string]any{}); st != 200 {
		t.Fatalf("skills/list: %d %v", st, m)
	}
	if !loaded(h.e, "idle") || !loaded(h.e, "live") {
		t.Fatalf("not loaded: %+v", h.e.Stats())
	}
	waitFor(t, "the idle project dropped", func() bool { return !loaded(h.e, "idle") })
	if st := h.e.Stats(); !loaded(h.e, "live") || st.Unloaded != 1 {
		t.Fatalf("the project with a session was dropped, or the count is wrong: %+v", st)
	}

	// Rebuilt on the next request, with what the store holds now.
	if _, err := db.BindVersion(ctx, "idle", w.ID); err != nil {
		t.Fatal(err)
	}
	st, m, _ := rpc(t, h.url("idle"), ti, "2025-11-25", "skills/list", map[string]any{})
	skills, _ := m["result"].(map[string]any)["skills"].([]any)
	if st != 200 || len(skills) != 2 || !loaded(h.e, "idle") {
		t.Fatalf("after the drop: %d %v", st, m)
	}

	// The kept project's session is served and notified.
	if _, err := db.BindVersion(ctx, "live", w.ID); err != nil {
		t.Fatal(err)
	}
	wait(t, ev.resources, "resources/list_changed on the kept session")
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 2 {
		t.Fatalf("resources/list on the kept session: %v %v", res, err)
	}
	// Once its session ends, it goes too.
	cs.Close()
	waitFor(t, "the project dropped once its session closed", func() bool { return !loaded(h.e, "live") })
}

package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
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

// A PostgreSQL restart while sessions are open: requests that need the
// store answer 503 JSON-RPC errors at once (no hang, no panic), the change
// feed reconnects, a binding made through another store once the database
// is back reaches the open session, and its requests are served again.
func TestPostgresRestart(t *testing.T) {
	pg.Server(t) // skips (or fails on CI) without PostgreSQL
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	url, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The hub's store, with no periodic check to speak of: recovery comes
	// from the feed's reconnection.
	db := openStore(t, store.Options{Database: url, ChangePoll: time.Hour})
	other := openStore(t, store.Options{Database: url}) // another replica's
	for _, id := range []string{"alpha", "beta"} {
		if err := other.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	v := install(t, other, "pdf", "Fill PDF forms.", nil)
	w := install(t, other, "xlsx", "Edit spreadsheets.", nil)
	if _, err := other.BindVersion(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	ta, tb := projectToken(t, other, "alpha"), projectToken(t, other, "beta")
	// Every request verifies its token, so that each needs the store.
	h := startHub(t, db, endpoint.Options{TokenCacheTTL: -1})
	cs, ev := h.connect(t, "alpha", ta)
	if res, err := cs.ListResources(ctx, nil); err != nil || len(res.Resources) != 1 {
		t.Fatalf("resources/list: %v %v", res, err)
	}

	srv.Stop()
	client := &http.Client{Timeout: 60 * time.Second} // a hang fails the test
	for _, c := range []struct{ project, token, method string }{
		{"alpha", ta, "skills/list"}, // loaded, its token needs the store
		{"beta", tb, "skills/list"},  // not loaded
		{"alpha", ta, "ping"},
	} {
		start := time.Now()
		st, m := post(t, client, h.url(c.project), c.token, c.method)
		if st != http.StatusServiceUnavailable || errCode(m) != "store_unavailable" || m["jsonrpc"] != "2.0" {
			t.Errorf("%s on %s during the outage: %d %v", c.method, c.project, st, m)
		}
		t.Logf("%s on %s during the outage: %d in %v", c.method, c.project, st, time.Since(start))
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The first statements after a restart may meet dead pooled
	// connections; the store says so and the next try works.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := other.BindVersion(ctx, "alpha", w.ID)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("BindVersion after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wait(t, ev.resources, "resources/list_changed on the open session after the restart")
	waitFor(t, "the session served again", func() bool {
		res, err := cs.ListResources(ctx, nil)
		return err == nil && len(res.Resources) == 2
	})
	waitFor(t, "the project not loaded before served", func() bool {
		st, _ := post(t, client, h.url("beta"), tb, "skills/list")
		return st == 200
	})
	if st := h.e.Stats(); st.Refreshes == 0 {
		t.Errorf("no refresh counted: %+v", st)
	}
}

// post sends one stateless JSON-RPC request of 2025-11-25.
func post(t *testing.T, client *http.Client, url, token, method string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

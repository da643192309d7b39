package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

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

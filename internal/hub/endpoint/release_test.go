package endpoint_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A version no loaded catalog holds any more is released (its root
// closed): after an unbinding's refresh, and when the idle sweep drops the
// only project that held it. A project with a session keeps what its
// earlier catalogs held until the session ends, and what it serves stays
// readable.
func TestUnusedVersionsReleased(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	for _, id := range []string{"idle", "live"} {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	v := install(t, db, "pdf", "Fill PDF forms.", nil)
	w := install(t, db, "xlsx", "Edit spreadsheets.", nil)
	x := install(t, db, "docx", "Edit documents.", nil)
	for _, b := range []struct {
		project string
		version int64
	}{{"live", v.ID}, {"live", x.ID}, {"idle", w.ID}} {
		if _, err := db.BindVersion(ctx, b.project, b.version); err != nil {
			t.Fatal(err)
		}
	}
	ti, tl := projectToken(t, db, "idle"), projectToken(t, db, "live")
	h := startHub(t, db, endpoint.Options{IdleTimeout: 300 * time.Millisecond})
	versions := func() int { return h.e.Stats().Versions }

	cs, ev := h.connect(t, "live", tl)
	if st, m, _ := rpc(t, h.url("idle"), ti, "2025-11-25", "skills/list", map[string]any{}); st != 200 {
		t.Fatalf("skills/list: %d %v", st, m)
	}
	if n := versions(); n != 3 {
		t.Fatalf("versions open: %d, want 3", n)
	}
	// The idle project's w goes with its catalog; x, unbound under the
	// live session, stays while the session does.
	if _, err := db.UnbindVersion(ctx, "live", x.ID); err != nil {
		t.Fatal(err)
	}
	wait(t, ev.resources, "resources/list_changed after the unbinding")
	waitFor(t, "the idle project's version released", func() bool { return !loaded(h.e, "idle") && versions() == 2 })
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 {
		t.Fatalf("resources/list: %v %v", res, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI}); err != nil {
		t.Fatalf("reading the kept version: %v", err)
	}
	cs.Close()
	waitFor(t, "every version released once the last project is dropped", func() bool { return versions() == 0 })
}

// Without a session, an unbinding's refresh releases the version at once,
// and the project goes on serving the rest.
func TestUnboundVersionReleasedOnRefresh(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	if err := db.CreateProject(ctx, "p", "p"); err != nil {
		t.Fatal(err)
	}
	v := install(t, db, "pdf", "Fill PDF forms.", nil)
	w := install(t, db, "xlsx", "Edit spreadsheets.", nil)
	for _, id := range []int64{v.ID, w.ID} {
		if _, err := db.BindVersion(ctx, "p", id); err != nil {
			t.Fatal(err)
		}
	}
	tok := projectToken(t, db, "p")
	h := startHub(t, db, endpoint.Options{IdleTimeout: -1})
	if st, m, _ := rpc(t, h.url("p"), tok, "2025-11-25", "skills/list", map[string]any{}); st != 200 {
		t.Fatalf("skills/list: %d %v", st, m)
	}
	if n := h.e.Stats().Versions; n != 2 {
		t.Fatalf("versions open: %d, want 2", n)
	}
	if _, err := db.UnbindVersion(ctx, "p", w.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unbound version released", func() bool { return h.e.Stats().Versions == 1 })
	st, m, _ := rpc(t, h.url("p"), tok, "2025-11-25", "skills/list", map[string]any{})
	skills, _ := m["result"].(map[string]any)["skills"].([]any)
	if st != 200 || len(skills) != 1 {
		t.Fatalf("after the release: %d %v", st, m)
	}
}

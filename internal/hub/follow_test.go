package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// One rule for repository locations: a server's hub (LocalRepositories
// off) refuses a repository on its disk whether it comes as a direct
// install or as a catalog item (issue 27: a file:// item installed through
// the API although the API refused file:// sources); and a catalog
// imported through another process on the same database (the command
// line) is served by the running hub as soon as the feed announces it.
func TestRepositoryRuleAndFollowedCatalog(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := store.Open(ctx, store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	server := hub.New(db, nil)
	cli := openHub(t, store.Options{Dir: dir})

	r := newRepo(t)
	commit := r.commit(map[string]string{"skills/pdf/SKILL.md": skillMD})
	for _, loc := range []string{r.dir, "file://" + filepath.ToSlash(r.dir)} {
		if _, err := server.InstallGit(ctx, hub.GitInstall{URL: loc, Path: "skills/pdf"}); !errors.Is(err, hub.ErrLocalRepository) {
			t.Errorf("the server's InstallGit(%s) = %v; want ErrLocalRepository", loc, err)
		}
	}

	fctx, stop := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() { defer close(followed); server.FollowCatalog(fctx) }()
	defer func() { stop(); <-followed }()
	if _, err := server.Catalog(ctx); err != nil {
		t.Fatal(err)
	}

	doc, _ := json.Marshal(map[string]any{"schema_version": 1, "items": []map[string]any{{
		"id": "local/pdf", "name": "pdf-tools", "description": "Local PDF forms", "author": "me", "category": "documents",
		"repository": "file://" + filepath.ToSlash(r.dir), "path": "skills/pdf", "commit": commit.String(),
	}}})
	file := filepath.Join(t.TempDir(), "catalog.json")
	os.WriteFile(file, doc, 0o644)
	if _, err := cli.ImportCatalog(ctx, file); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		hits, _, err := server.SearchCatalog(ctx, index.Query{Category: "documents"})
		if err == nil && len(hits) == 1 && hits[0].ID == "local/pdf" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still serves the old catalog: %v, %v", hits, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := server.InstallCatalogItem(ctx, "local/pdf", nil); !errors.Is(err, hub.ErrLocalRepository) {
		t.Errorf("the server's InstallCatalogItem(file:// item) = %v; want ErrLocalRepository", err)
	}
	// The command line reads it: the same rule, another place.
	if inst, err := cli.InstallCatalogItem(ctx, "local/pdf", nil); err != nil || !inst.Created {
		t.Errorf("the command line's InstallCatalogItem = %+v, %v", inst, err)
	}
}

package hubadmin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/index"
)

// BenchmarkCatalogPage renders the catalog page, handler to bytes, over a
// catalog of 5,000 items: browsing, a ranked search and a category filter.
// Each request goes through the session, the in-process API call (token
// check included) and the template.
func BenchmarkCatalogPage(b *testing.B) {
	e := newEnv(b)
	items := make([]index.Item, 5000)
	for i := range items {
		items[i] = index.Item{ID: fmt.Sprintf("acme/skill-%04d", i), Name: fmt.Sprintf("skill-%04d", i),
			Description: fmt.Sprintf("Handles documents of kind %d: forms, reports and release notes.", i),
			Category:    []string{"documents", "web", "data", "devops"}[i%4], Repository: "https://github.com/acme/skills", Path: fmt.Sprintf("s%d", i)}
	}
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.h.ApplyCatalog(context.Background(), raw, "bench"); err != nil {
		b.Fatal(err)
	}
	u := e.signIn(e.admin)
	cookies := u.c.Jar.Cookies(mustURL(e.srv.URL))
	for _, q := range []string{"", "?q=release+notes", "?category=web"} {
		b.Run("q="+q, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/catalog"+q, nil)
				for _, c := range cookies {
					req.AddCookie(c)
				}
				rec := httptest.NewRecorder()
				e.srv.Config.Handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

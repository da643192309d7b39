package wellknown_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/wellknown"
)

// FuzzServe sends hostile paths to the handler: it never panics, answers
// JSON errors for what is not listed, and a 200 is an index or a listed
// skill's file or archive, never a file the catalog withholds.
func FuzzServe(f *testing.F) {
	for _, p := range []string{
		"/.well-known/agent-skills/index.json", "/.well-known/skills/index.json",
		"/.well-known/agent-skills/pdf.zip", "/.well-known/agent-skills/pdf/SKILL.md",
		"/.well-known/skills/pdf/references/crlf.md", "/.well-known/agent-skills/pdf/../withheld/link.md",
		"/.well-known/agent-skills/withheld/.git/config", "/.well-known/agent-skills/%2e%2e/x",
		"/.well-known/skills//SKILL.md", "/.well-known/agent-skills/.zip",
	} {
		f.Add(p)
	}
	dir := library(f, base)
	h := wellknown.New(catalog.NewStore(scan(f, dir, 1)), nil)
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse(p)
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL = u
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		switch rec.Code {
		case http.StatusOK:
			for _, secret := range []string{"[core]", "root:"} {
				if strings.Contains(body, secret) {
					t.Fatalf("%q served withheld content %q", p, secret)
				}
			}
		case http.StatusNotFound:
			if !strings.HasPrefix(body, `{"error":{`) {
				t.Fatalf("%q: 404 without a JSON error: %q", p, body)
			}
		default:
			t.Fatalf("%q: status %d", p, rec.Code)
		}
	})
}

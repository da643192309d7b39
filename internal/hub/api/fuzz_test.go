package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// FuzzRequests sends arbitrary paths, queries and bodies with an admin
// token: every answer is a documented one (checked by the env), and no
// request is a 500 or an answer that is not JSON.
func FuzzRequests(f *testing.F) {
	for _, s := range []struct{ method, path, body string }{
		{"GET", "/api/skills/pdf@abcd/file?path=SKILL.md", ""},
		{"PUT", "/api/projects/p1/skills/pdf@abcd", ""},
		{"POST", "/api/projects", `{"id":"p2","name":"P2"}`},
		{"POST", "/api/skills/install", `{"source":{"repository":"https://x"}}`},
		{"POST", "/api/skills/catalog/sync", `{"content":{"schema_version":1,"items":[]}}`},
		{"GET", "/api/audit?since=2026-01-01T00:00:00Z&cursor=YXVkaXQ6MQ", ""},
		{"PATCH", "/api/projects/p1", `{"name":null}`},
		{"DELETE", "/api/tokens/0123456789abcdef", ""},
	} {
		f.Add(s.method, s.path, s.body)
	}
	e := newEnvF(f)
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/api/") || strings.ContainsAny(path, " \r\n\t#") || strings.Contains(path, "/api/skills/catalog/sync") && strings.Contains(body, "url") {
			return
		}
		req, err := http.NewRequest(method, "http://hub"+path, bytes.NewReader([]byte(body)))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.a.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body.Bytes())
		}
		if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") && rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: invalid JSON answer %s", method, path, rec.Body.Bytes())
		}
	})
}

func newEnvF(f *testing.F) *env {
	o := store.Options{Dir: filepath.Join(f.TempDir(), "data")}
	db := openStore(f, o)
	return newEnvHub(f, db, o, newHub(db))
}

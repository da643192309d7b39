package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

func TestSkillRoutes(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		data := zipOf(t, map[string]string{"SKILL.md": skillMD, "ref/guide.md": "# Guide\n", "bin.dat": "\xff\xfe\x00"})
		a := e.upload(e.admin, data, "")
		e.want(a, 200, "")
		var inst hub.Installed
		a.decode(t, &inst)
		if !inst.Created || inst.Version.Package != "pdf-tools" {
			t.Fatalf("import: %s", a.body)
		}
		id := inst.Version.ID
		// The same tree again: not created.
		e.upload(e.admin, data, "").decode(t, &inst)
		if inst.Created {
			t.Fatal("the same tree was stored twice")
		}
		// A package in a folder of the archive.
		a = e.upload(e.admin, zipOf(t, map[string]string{"pkg/SKILL.md": strings.Replace(skillMD, "pdf-tools", "nested", 1)}), "pkg")
		e.want(a, 200, "")
		// Refused packages: no SKILL.md, not a ZIP.
		e.want(e.upload(e.admin, zipOf(t, map[string]string{"README.md": "x"}), ""), 422, api.CodePackageInvalid)
		e.want(e.upload(e.admin, []byte("not a zip"), ""), 422, api.CodePackageInvalid)
		e.want(e.upload(e.read, data, ""), 403, api.CodeForbidden)

		var list struct {
			Packages []api.Package `json:"packages"`
		}
		e.do("GET", "/api/skills", e.read, nil).decode(t, &list)
		if len(list.Packages) != 2 || list.Packages[1].Name != "pdf-tools" || len(list.Packages[1].Versions) != 1 {
			t.Fatalf("list: %+v", list)
		}

		var ins hub.Inspected
		e.do("GET", "/api/skills/"+id, e.read, nil).decode(t, &ins)
		if len(ins.Files) != 3 || ins.Inspection.Note == "" {
			t.Fatalf("inspect: %+v", ins)
		}
		a = e.do("GET", "/api/skills/"+id+"/file?path=ref/guide.md", e.read, nil)
		e.want(a, 200, "")
		if string(a.body) != "# Guide\n" || !strings.HasPrefix(a.header.Get("Content-Type"), "text/plain") ||
			a.header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(a.header.Get("X-Content-Digest"), "sha256:") {
			t.Fatalf("file: %q %v", a.body, a.header)
		}
		a = e.do("GET", "/api/skills/"+id+"/file?path=bin.dat", e.read, nil)
		if a.header.Get("Content-Type") != "application/octet-stream" || string(a.body) != "\xff\xfe\x00" {
			t.Fatalf("binary file: %q %v", a.body, a.header)
		}
		for _, p := range []string{"../../etc/passwd", "/etc/passwd", "ref/../SKILL.md", "missing.md", "ref%00x"} {
			e.want(e.do("GET", "/api/skills/"+id+"/file?path="+url.QueryEscape(p), e.read, nil), 404, api.CodeNotFound)
		}
		e.want(e.do("GET", "/api/skills/"+id+"/file", e.read, nil), 422, api.CodeInvalid)

		// Approval and notes.
		var v hub.Version
		e.do("POST", "/api/skills/"+id+"/approval", e.admin, nil).decode(t, &v)
		if !v.Approved || !strings.Contains(v.Labels.ApprovedBy, "token ") {
			t.Fatalf("approve: %+v", v)
		}
		e.do("DELETE", "/api/skills/"+id+"/approval", e.admin, nil).decode(t, &v)
		if v.Approved {
			t.Fatal("still approved")
		}
		e.do("PUT", "/api/skills/"+id+"/notes", e.admin, map[string]string{"notes": "checked by legal"}).decode(t, &v)
		if v.Labels.Notes != "checked by legal" {
			t.Fatalf("notes: %+v", v)
		}

		// Runtime: no backends yet.
		a = e.do("GET", "/api/skills/runtime", e.read, nil)
		if string(bytes.TrimSpace(a.body)) != `{"backends":[]}` {
			t.Fatalf("runtime: %s", a.body)
		}
	})
}

func TestCatalogRoutes(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		items := []index.Item{
			{ID: "acme/pdf", Name: "pdf", Description: "PDF forms.", Category: "documents", Repository: "https://github.com/acme/skills", Path: "pdf"},
			{ID: "acme/xlsx", Name: "xlsx", Description: "Spreadsheets.", Category: "documents", Repository: "https://github.com/acme/skills", Path: "xlsx"},
			{ID: "acme/web", Name: "web", Description: "Browse the web.", Category: "web", Repository: "https://github.com/acme/skills", Path: "web"},
		}
		raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		e.want(e.do("POST", "/api/skills/catalog/sync", e.read, map[string]json.RawMessage{"content": raw}), 403, api.CodeForbidden)
		a := e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]json.RawMessage{"content": raw})
		e.want(a, 200, "")
		var info hub.CatalogInfo
		a.decode(t, &info)
		if info.Items != 3 || info.Source != "upload" {
			t.Fatalf("sync: %s", a.body)
		}
		// A bad document changes nothing.
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{"content": map[string]any{"schema_version": 9, "items": []any{}}}), 422, api.CodeCatalogRefused)
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{"url": "http://example.com/c.json"}), 422, api.CodeCatalogRefused)
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{}), 422, api.CodeInvalid)
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{"url": "https://x", "content": map[string]any{}}), 422, api.CodeInvalid)
		// A JSON null content is no content: the url alone is used.
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{"url": "http://example.com/c.json", "content": nil}), 422, api.CodeCatalogRefused)
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]any{"content": nil}), 422, api.CodeInvalid)

		var page struct {
			Items      []hub.CatalogHit `json:"items"`
			Total      int              `json:"total"`
			NextCursor string           `json:"next_cursor"`
		}
		e.do("GET", "/api/skills/catalog?category=documents&limit=1", e.read, nil).decode(t, &page)
		if page.Total != 3 || len(page.Items) != 1 || page.Items[0].ID != "acme/pdf" || page.NextCursor == "" {
			t.Fatalf("browse page 1: %+v", page)
		}
		cur := page.NextCursor
		page.NextCursor = ""
		e.do("GET", "/api/skills/catalog?category=documents&limit=1&cursor="+cur, e.read, nil).decode(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != "acme/xlsx" || page.NextCursor != "" {
			t.Fatalf("browse page 2: %+v", page)
		}
		e.do("GET", "/api/skills/catalog?q=spreadsheets", e.read, nil).decode(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != "acme/xlsx" {
			t.Fatalf("search: %+v", page)
		}
		// A cursor of another list is refused.
		var pl struct {
			NextCursor string `json:"next_cursor"`
		}
		for _, id := range []string{"a1", "a2"} {
			e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": id, "name": id}), 201, "")
		}
		e.do("GET", "/api/projects?limit=1", e.read, nil).decode(t, &pl)
		e.want(e.do("GET", "/api/skills/catalog?cursor="+pl.NextCursor, e.read, nil), 400, api.CodeBadRequest)

		// Install: exactly one source; a missing item is 404.
		e.want(e.do("POST", "/api/skills/install", e.admin, map[string]any{}), 422, api.CodeInvalid)
		e.want(e.do("POST", "/api/skills/install", e.admin, map[string]any{"catalog_id": "acme/none"}), 404, api.CodeNotFound)
		e.want(e.do("POST", "/api/skills/install", e.admin, map[string]any{"source": map[string]any{"repository": filepath.Join(t.TempDir(), "none")}}), 404, api.CodeNotFound)
		e.want(e.do("POST", "/api/skills/install", e.admin, map[string]any{"source": map[string]any{"repository": "http://example.com/r.git"}}), 422, api.CodePackageInvalid)
	})
}

func TestTokenRoutes(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 201, "")
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p2", "name": "P2"}), 201, "")

		var nt api.NewToken
		a := e.do("POST", "/api/projects/p1/tokens", e.admin, map[string]string{"name": "bot", "expires_in": "720h"})
		e.want(a, 201, "")
		a.decode(t, &nt)
		if !strings.HasPrefix(nt.Secret, "smcp_p_") || nt.Token.ProjectID != "p1" || nt.Token.ExpiresAt.IsZero() {
			t.Fatalf("project token: %s", a.body)
		}
		tok, err := e.db.VerifyToken(context.Background(), nt.Secret)
		if err != nil || !tok.ForProject("p1") || tok.ForProject("p2") {
			t.Fatalf("the secret does not open p1 alone: %v %+v", err, tok)
		}
		e.want(e.do("POST", "/api/projects/nope/tokens", e.admin, map[string]string{}), 404, api.CodeNotFound)
		e.want(e.do("POST", "/api/projects/p1/tokens", e.admin, map[string]string{"expires_in": "-1h"}), 422, api.CodeInvalid)

		// Listed without secrets; revoked only through its own project.
		a = e.do("GET", "/api/projects/p1/tokens", e.read, nil)
		if bytes.Contains(a.body, []byte("smcp_")) || !bytes.Contains(a.body, []byte(nt.Token.ID)) {
			t.Fatalf("list: %s", a.body)
		}
		e.want(e.do("DELETE", "/api/projects/p2/tokens/"+nt.Token.ID, e.admin, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/tokens/"+nt.Token.ID, e.admin, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/projects/p1/tokens/"+nt.Token.ID, e.read, nil), 403, api.CodeForbidden)
		e.want(e.do("DELETE", "/api/projects/p1/tokens/"+nt.Token.ID, e.admin, nil), 200, "")
		if _, err := e.db.VerifyToken(context.Background(), nt.Secret); err == nil {
			t.Fatal("a revoked token still verifies")
		}
		var tl struct {
			Tokens []store.Token `json:"tokens"`
		}
		e.do("GET", "/api/projects/p1/tokens", e.read, nil).decode(t, &tl)
		if len(tl.Tokens) != 0 {
			t.Fatalf("revoked token listed: %+v", tl)
		}
		e.do("GET", "/api/projects/p1/tokens?include_revoked=true", e.read, nil).decode(t, &tl)
		if len(tl.Tokens) != 1 || tl.Tokens[0].RevokedAt.IsZero() {
			t.Fatalf("include_revoked: %+v", tl)
		}

		// Admin tokens.
		a = e.do("POST", "/api/tokens", e.admin, map[string]string{"scope": "write", "name": "ci"})
		e.want(a, 201, "")
		a.decode(t, &nt)
		if !strings.HasPrefix(nt.Secret, "smcp_a_") || nt.Token.Scope != store.ScopeWrite {
			t.Fatalf("admin token: %s", a.body)
		}
		e.want(e.do("POST", "/api/tokens", e.admin, map[string]string{"scope": "root"}), 422, api.CodeInvalid)
		e.want(e.do("POST", "/api/tokens", e.write, map[string]string{"scope": "admin"}), 403, api.CodeForbidden)
		e.do("GET", "/api/tokens?limit=2", e.read, nil).decode(t, &tl)
		if len(tl.Tokens) != 2 || tl.Tokens[0].ID != nt.Token.ID {
			t.Fatalf("admin tokens, newest first: %+v", tl)
		}
	})
}

// TestBadInput: each gets a precise status and JSON error and changes
// nothing.
func TestBadInput(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 201, "")
		for _, tc := range []struct {
			name, method, path, ct, body string
			status                       int
			code                         string
		}{
			{"malformed JSON", "POST", "/api/projects", "application/json", `{"id": "p2",`, 400, api.CodeBadRequest},
			{"unknown field", "POST", "/api/projects", "application/json", `{"id": "p2", "name": "P2", "owner": "me"}`, 422, api.CodeInvalid},
			{"missing field", "POST", "/api/projects", "application/json", `{"id": "p2"}`, 422, api.CodeInvalid},
			{"wrong type", "POST", "/api/projects", "application/json", `{"id": 2, "name": "P2"}`, 422, api.CodeInvalid},
			{"bad project id", "POST", "/api/projects", "application/json", `{"id": "P 2", "name": "P2"}`, 422, api.CodeInvalid},
			{"oversized body", "POST", "/api/projects", "application/json", `{"id": "p2", "name": "` + strings.Repeat("x", 2<<20) + `"}`, 413, api.CodeTooLarge},
			{"not JSON", "POST", "/api/projects", "text/plain", `id=p2`, 415, ""},
			{"traversal in a path parameter", "GET", "/api/projects/..%2F..%2Fetc", "", "", 422, api.CodeInvalid},
			{"encoded NUL", "GET", "/api/skills/pdf%00@abcd", "", "", 404, api.CodeNotFound},
			{"traversal in a skill id", "GET", "/api/skills/..%2F..%2Fetc%2Fpasswd/file?path=x", "", "", 404, api.CodeNotFound},
			{"odd encoding", "GET", "/api/skills/%C0%AE%C0%AE", "", "", 404, api.CodeNotFound},
			{"long id", "GET", "/api/skills/" + strings.Repeat("a", 400), "", "", 422, api.CodeInvalid},
			{"bad limit", "GET", "/api/projects?limit=0", "", "", 422, api.CodeInvalid},
			{"huge limit", "GET", "/api/projects?limit=99999999999999999999", "", "", 422, api.CodeInvalid},
			{"bad cursor", "GET", "/api/audit?cursor=YWJj", "", "", 400, api.CodeBadRequest},
			{"bad time", "GET", "/api/audit?since=yesterday", "", "", 422, api.CodeInvalid},
			{"unknown route", "GET", "/api/nothing", "", "", 404, api.CodeNotFound},
			{"unknown method", "PATCH", "/api/skills", "", "", 404, api.CodeNotFound},
			{"bad token id", "DELETE", "/api/tokens/xyz", "", "", 422, api.CodeInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body *strings.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				} else {
					body = strings.NewReader("")
				}
				a := e.raw(tc.method, tc.path, e.admin, tc.ct, body)
				if a.status != tc.status || (tc.code != "" && a.code() != tc.code) {
					t.Errorf("%d %s; want %d %s", a.status, a.body, tc.status, tc.code)
				}
				if a.code() == "" {
					t.Errorf("not a JSON error: %s", a.body)
				}
				if len(a.body) > 4096 {
					t.Errorf("the error echoes the request: %d bytes", len(a.body))
				}
			})
		}
		var pl struct {
			Projects []store.Project `json:"projects"`
		}
		e.do("GET", "/api/projects", e.read, nil).decode(t, &pl)
		if len(pl.Projects) != 1 {
			t.Fatalf("bad input changed something: %+v", pl.Projects)
		}

		// A ZIP over 32 MiB is refused before it is read whole.
		a := e.upload(e.admin, bytes.Repeat([]byte{'x'}, api.MaxUpload+128<<10), "")
		e.want(a, 413, api.CodeTooLarge)

		// Approval required: an unapproved version is refused.
		v := e.install(map[string]string{"SKILL.md": skillMD})
		strict := newEnvOn(t, e)
		e.want(strict.do("PUT", "/api/projects/p1/skills/"+v, strict.admin, nil), 422, api.CodeNotApproved)
		e.want(strict.do("POST", "/api/skills/"+v+"/approval", strict.admin, nil), 200, "")
		e.want(strict.do("PUT", "/api/projects/p1/skills/"+v, strict.admin, nil), 200, "")
	})
}

// newEnvOn opens a second API on e's database that requires approval.
func newEnvOn(t *testing.T, e *env) *env {
	o := store.Options{RequireApproval: true}
	o.Database, o.Dir = e.databaseURL(), e.dataDir()
	return newEnv(t, o)
}

func TestAudit(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		admin, err := e.db.VerifyToken(ctx, e.admin)
		if err != nil {
			t.Fatal(err)
		}
		read, _ := e.db.VerifyToken(ctx, e.read)
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 201, "")
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 409, "")
		e.want(e.do("POST", "/api/projects/p1/pause", e.read, nil), 403, "")
		e.want(e.do("POST", "/api/projects/p1/tokens", e.admin, map[string]string{"name": "bot"}), 201, "")
		e.want(e.do("PUT", "/api/projects/p1/skills/none@abcd", e.admin, nil), 404, "")
		e.want(e.do("GET", "/api/projects/p1", e.admin, nil), 200, "") // a read: not audited
		e.want(e.do("POST", "/api/projects", "", map[string]string{"id": "p2", "name": "P2"}), 401, "")

		var page struct {
			Entries    []store.AuditEntry `json:"entries"`
			NextCursor string             `json:"next_cursor"`
		}
		a := e.do("GET", "/api/audit", e.read, nil)
		e.want(a, 200, "")
		a.decode(t, &page)
		if bytes.Contains(a.body, []byte("smcp_")) {
			t.Fatalf("a secret in the audit log: %s", a.body)
		}
		type row struct{ actor, action, kind, object, result string }
		var got []row
		for _, en := range page.Entries {
			got = append(got, row{en.Actor, en.Action, en.ObjectKind, en.ObjectID, en.Result})
		}
		tokID := got[1].object // the token's id, which the test does not know in advance
		want := []row{
			{admin.ID, "project.bind", "project", "p1/none@abcd", api.CodeNotFound},
			{admin.ID, "token.create", "token", tokID, store.AuditOK},
			{read.ID, "project.pause", "project", "p1", api.CodeForbidden},
			{admin.ID, "project.create", "project", "p1", api.CodeConflict},
			{admin.ID, "project.create", "project", "p1", store.AuditOK},
		}
		if len(got) != len(want) {
			t.Fatalf("audit:\n got %v\nwant %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("entry %d: got %v, want %v", i, got[i], want[i])
			}
		}
		if len(tokID) != 16 {
			t.Errorf("token.create names %q, not a token id", tokID)
		}

		// Filters and pages.
		e.do("GET", "/api/audit?actor="+read.ID, e.read, nil).decode(t, &page)
		if len(page.Entries) != 1 || page.Entries[0].Action != "project.pause" {
			t.Fatalf("actor filter: %+v", page.Entries)
		}
		e.do("GET", "/api/audit?action=project.create&limit=1", e.read, nil).decode(t, &page)
		if len(page.Entries) != 1 || page.NextCursor == "" || page.Entries[0].Result != api.CodeConflict {
			t.Fatalf("action filter: %+v", page)
		}
		cur := page.NextCursor
		page.NextCursor = ""
		e.do("GET", "/api/audit?action=project.create&limit=1&cursor="+cur, e.read, nil).decode(t, &page)
		if len(page.Entries) != 1 || page.Entries[0].Result != store.AuditOK || page.NextCursor != "" {
			t.Fatalf("page 2: %+v", page)
		}
		e.do("GET", "/api/audit?object_kind=token&since=2000-01-01T00:00:00Z", e.read, nil).decode(t, &page)
		if len(page.Entries) != 1 {
			t.Fatalf("kind filter: %+v", page.Entries)
		}
	})
}

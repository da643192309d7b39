package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A project's well-known index: turned on and off, its capabilities
// issued (secret and path shown once), listed without secrets, revoked
// through their own project only, each change audited with the token's id,
// and a capability opens no admin route.
func TestWellKnownRoutes(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var revoked []string
		e = newEnvHub(t, e.db, e.opts, e.h, func(o *api.Options) { o.OnTokenRevoked = func(id string) { revoked = append(revoked, id) } })
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 201, "")
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p2", "name": "P2"}), 201, "")

		var p store.Project
		e.do("GET", "/api/projects/p1", e.read, nil).decode(t, &p)
		if p.WellKnown {
			t.Fatalf("a new project's index is on: %+v", p)
		}
		e.want(e.do("PUT", "/api/projects/p1/well-known", e.write, nil), 403, api.CodeForbidden)
		a := e.do("PUT", "/api/projects/p1/well-known", e.admin, nil)
		e.want(a, 200, "")
		a.decode(t, &p)
		if !p.WellKnown || p.WellKnownAt.IsZero() {
			t.Fatalf("turned on: %s", a.body)
		}
		e.want(e.do("PUT", "/api/projects/nope/well-known", e.admin, nil), 404, api.CodeNotFound)

		var nc api.NewCapability
		a = e.do("POST", "/api/projects/p1/well-known/capabilities", e.admin, map[string]string{"name": "installers", "expires_in": "720h"})
		e.want(a, 201, "")
		a.decode(t, &nc)
		if !strings.HasPrefix(nc.Secret, "smcp_i_"+nc.Token.ID+"_") || nc.Token.Kind != store.IndexToken || nc.Token.ProjectID != "p1" ||
			nc.Path != "/p/p1/i/"+nc.Secret || nc.Token.ExpiresAt.IsZero() {
			t.Fatalf("capability: %s", a.body)
		}
		tok, err := e.db.VerifyToken(ctx, nc.Secret)
		if err != nil || !tok.ForIndex("p1") {
			t.Fatalf("the capability does not open p1's index: %v %+v", err, tok)
		}
		e.want(e.do("POST", "/api/projects/nope/well-known/capabilities", e.admin, map[string]string{}), 404, api.CodeNotFound)
		e.want(e.do("POST", "/api/projects/p1/well-known/capabilities", e.admin, map[string]string{"expires_in": "soon"}), 422, api.CodeInvalid)
		e.want(e.do("POST", "/api/projects/p1/well-known/capabilities", e.read, map[string]string{}), 403, api.CodeForbidden)

		// The capability opens no admin route.
		e.want(e.do("GET", "/api/projects", nc.Secret, nil), 403, api.CodeForbidden)
		// Listed without secrets, apart from the project's tokens.
		var tl struct {
			Tokens []store.Token `json:"tokens"`
		}
		a = e.do("GET", "/api/projects/p1/well-known/capabilities", e.read, nil)
		a.decode(t, &tl)
		if bytes.Contains(a.body, []byte("smcp_")) || len(tl.Tokens) != 1 || tl.Tokens[0].ID != nc.Token.ID || tl.Tokens[0].Name != "installers" {
			t.Fatalf("capabilities: %s", a.body)
		}
		e.do("GET", "/api/projects/p1/tokens", e.read, nil).decode(t, &tl)
		if len(tl.Tokens) != 0 {
			t.Errorf("a capability among the project's tokens: %+v", tl.Tokens)
		}
		e.want(e.do("GET", "/api/projects/nope/well-known/capabilities", e.read, nil), 404, api.CodeNotFound)
		// Revoked through its own project only, and not as a project token.
		e.want(e.do("DELETE", "/api/projects/p2/well-known/capabilities/"+nc.Token.ID, e.admin, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/projects/p1/tokens/"+nc.Token.ID, e.admin, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/projects/p1/well-known/capabilities/"+nc.Token.ID, e.admin, nil), 200, "")
		if _, err := e.db.VerifyToken(ctx, nc.Secret); err == nil {
			t.Fatal("a revoked capability still verifies")
		}
		if len(revoked) != 1 || revoked[0] != nc.Token.ID {
			t.Errorf("OnTokenRevoked heard %v", revoked)
		}
		e.do("GET", "/api/projects/p1/well-known/capabilities?include_revoked=true", e.read, nil).decode(t, &tl)
		if len(tl.Tokens) != 1 || tl.Tokens[0].RevokedAt.IsZero() {
			t.Fatalf("include_revoked: %+v", tl)
		}
		a = e.do("DELETE", "/api/projects/p1/well-known", e.admin, nil)
		e.want(a, 200, "")
		a.decode(t, &p)
		if p.WellKnown {
			t.Fatalf("turned off: %s", a.body)
		}

		admin, _ := e.db.VerifyToken(ctx, e.admin)
		read, _ := e.db.VerifyToken(ctx, e.read)
		write, _ := e.db.VerifyToken(ctx, e.write)
		var page struct {
			Entries []store.AuditEntry `json:"entries"`
		}
		a = e.do("GET", "/api/audit?limit=11", e.read, nil)
		a.decode(t, &page)
		if bytes.Contains(a.body, []byte("smcp_")) {
			t.Fatalf("a secret in the audit log: %s", a.body)
		}
		type row struct{ actor, action, kind, object, result string }
		var got []row
		for _, en := range page.Entries {
			got = append(got, row{en.Actor, en.Action, en.ObjectKind, en.ObjectID, en.Result})
		}
		want := []row{
			{admin.ID, "well_known.off", "project", "p1", store.AuditOK},
			{admin.ID, "well_known.revoke", "token", nc.Token.ID, store.AuditOK},
			{admin.ID, "token.revoke", "token", nc.Token.ID, api.CodeNotFound},
			{admin.ID, "well_known.revoke", "token", nc.Token.ID, api.CodeNotFound},
			{read.ID, "well_known.issue", "token", "", api.CodeForbidden},
			{admin.ID, "well_known.issue", "token", "project:p1", api.CodeInvalid},
			{admin.ID, "well_known.issue", "token", "project:nope", api.CodeNotFound},
			{admin.ID, "well_known.issue", "token", nc.Token.ID, store.AuditOK},
			{admin.ID, "well_known.on", "project", "nope", api.CodeNotFound},
			{admin.ID, "well_known.on", "project", "p1", store.AuditOK},
			{write.ID, "well_known.on", "project", "p1", api.CodeForbidden},
		}
		if len(got) != len(want) {
			t.Fatalf("audit:\n got %v\nwant %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("entry %d: got %v, want %v", i, got[i], want[i])
			}
		}
	})
}

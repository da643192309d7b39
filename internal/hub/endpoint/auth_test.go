package endpoint_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A token of one project gets nothing of another through any method, tool,
// or HTTP verb: the same 404 as for a project that does not exist.
func TestWrongProjectToken(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	for _, id := range []string{"alpha", "beta"} {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	v := install(t, db, "pdf", "Fill PDF forms.", nil)
	if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	ta, tb := projectToken(t, db, "alpha"), projectToken(t, db, "beta")
	h := startHub(t, db, endpoint.Options{})
	uri := "skill://" + strings.TrimPrefix(v.TreeDigest, "sha256:")[:12] + "/pdf/SKILL.md"
	calls := []struct {
		method string
		params any
	}{
		{"initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}},
		{"ping", nil}, {"server/discover", map[string]any{}},
		{"tools/list", map[string]any{}},
		{"tools/call", map[string]any{"name": "list_skills", "arguments": map[string]any{}}},
		{"tools/call", map[string]any{"name": "get_skill", "arguments": map[string]any{"skill": "pdf"}}},
		{"tools/call", map[string]any{"name": "read_skill_file", "arguments": map[string]any{"skill": "pdf", "path": "SKILL.md"}}},
		// The job tools (listed only with an enabled profile; refused here
		// before any lookup all the same).
		{"tools/call", map[string]any{"name": "create_skill_job", "arguments": map[string]any{"skill_id": "pdf"}}},
		{"tools/call", map[string]any{"name": "upload_skill_file", "arguments": map[string]any{"job_id": "j-x", "path": "in.txt", "content_base64": "aGk="}}},
		{"tools/call", map[string]any{"name": "run_skill_script", "arguments": map[string]any{"job_id": "j-x", "script": "scripts/x.py", "args": []string{}}}},
		{"tools/call", map[string]any{"name": "get_skill_job", "arguments": map[string]any{"job_id": "j-x"}}},
		{"tools/call", map[string]any{"name": "read_skill_job_file", "arguments": map[string]any{"job_id": "j-x", "path": "out.txt"}}},
		{"resources/list", map[string]any{}}, {"resources/templates/list", map[string]any{}},
		{"resources/read", map[string]any{"uri": uri}},
		{"resources/directory/read", map[string]any{"uri": strings.TrimSuffix(uri, "SKILL.md")}},
		{"skills/list", map[string]any{}}, {"skills/get", map[string]any{"uri": uri}},
		{"prompts/list", map[string]any{}}, {"subscriptions/listen", map[string]any{}},
		{"completion/complete", map[string]any{}}, {"logging/setLevel", map[string]any{"level": "info"}},
	}
	tried := 0
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		for _, c := range calls {
			// Control: alpha's own token is served.
			if c.method == "ping" {
				if st, m, _ := rpc(t, h.url("alpha"), ta, version, c.method, c.params); st == 404 {
					t.Fatalf("alpha's own token refused: %v", m)
				}
			}
			st, m, _ := rpc(t, h.url("alpha"), tb, version, c.method, c.params)
			tried++
			if st != 404 || errCode(m) != "project_not_found" || strings.Contains(mustJSON(m), "pdf") {
				t.Errorf("%s %s with beta's token on alpha: %d %v", version, c.method, st, m)
			}
		}
	}
	for _, verb := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(verb, h.url("alpha"), nil)
		req.Header.Set("Authorization", "Bearer "+tb)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tried++
		if resp.StatusCode != 404 {
			t.Errorf("%s with beta's token on alpha: %d", verb, resp.StatusCode)
		}
	}
	// Odd paths never reach a project.
	for _, p := range []string{"/p/alpha/../beta/mcp", "/p/%61lpha/mcp", "/p/alpha%2Fmcp", "/p/ALPHA/mcp", "/p//mcp", "/p/alpha/mcp/x"} {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+p, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+ta)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("path %s: %d", p, resp.StatusCode)
		}
	}
	t.Logf("tried %d requests with the wrong project's token", tried)
}

// issuer is a local OAuth authorization server: its JWKS and signing keys.
type issuer struct {
	srv *httptest.Server
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{rsa: rk, ec: ek}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &rk.PublicKey, KeyID: "rsa1", Algorithm: "RS256", Use: "sig"},
			{Key: &ek.PublicKey, KeyID: "ec1", Algorithm: "ES256", Use: "sig"},
		}})
	})
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"authorization_endpoint": is.srv.URL + "/authorize", "token_endpoint": is.srv.URL + "/token"})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) token(t *testing.T, key any, alg jose.SignatureAlgorithm, kid string, aud string, exp time.Time) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: is.srv.URL, Subject: "agent-1", Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(time.Now().Add(-time.Minute))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// OAuth resource-server mode: JWTs of the issuer for this endpoint are
// served; another audience, an expired token and an unknown key are 401
// with the metadata URL; the RFC 9728 metadata is published.
func TestOAuth(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	for _, id := range []string{"alpha", "beta"} {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	is := newIssuer(t)
	h := startHub(t, db, endpoint.Options{OAuth: &endpoint.OAuthOptions{Issuer: is.srv.URL}})
	base := strings.TrimSuffix(h.url("alpha"), "/p/alpha/mcp")
	aud := h.url("alpha")
	soon := time.Now().Add(time.Hour)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)

	for _, c := range []struct {
		name   string
		token  string
		status int
		code   string
	}{
		{"good RSA", is.token(t, is.rsa, jose.RS256, "rsa1", aud, soon), 200, ""},
		{"good EC", is.token(t, is.ec, jose.ES256, "ec1", aud, soon), 200, ""},
		{"another project's audience", is.token(t, is.rsa, jose.RS256, "rsa1", h.url("beta"), soon), 401, "token_audience"},
		{"expired", is.token(t, is.rsa, jose.RS256, "rsa1", aud, time.Now().Add(-time.Hour)), 401, "token_expired"},
		{"unknown key", is.token(t, other, jose.RS256, "rsa9", aud, soon), 401, "token_invalid"},
		{"not a JWT", "garbage", 401, "token_invalid"},
	} {
		st, m, hdr := rpc(t, aud, c.token, "2025-11-25", "ping", nil)
		if st != c.status || errCode(m) != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, st, m, c.status, c.code)
		}
		if st == 401 && !strings.Contains(hdr.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/p/alpha/mcp"`) {
			t.Errorf("%s: WWW-Authenticate %q", c.name, hdr.Get("WWW-Authenticate"))
		}
	}
	// Project tokens still work beside OAuth.
	if st, m, _ := rpc(t, aud, projectToken(t, db, "alpha"), "2025-11-25", "ping", nil); st != 200 {
		t.Errorf("project token with OAuth on: %d %v", st, m)
	}
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/p/alpha/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	json.NewDecoder(resp.Body).Decode(&md)
	if resp.StatusCode != 200 || md["resource"] != aud || mustJSON(md["authorization_servers"]) != `["`+is.srv.URL+`"]` {
		t.Fatalf("metadata: %d %v", resp.StatusCode, md)
	}
}

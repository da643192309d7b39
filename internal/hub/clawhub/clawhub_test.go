package clawhub_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/clawhub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// fixture is a real hub on SQLite behind the registry, with a token of
// each kind.
type fixture struct {
	hub                         *hub.Hub
	db                          *store.DB
	srv                         *httptest.Server
	read, write, project, admin string
}

func newFixture(t testing.TB, approval bool) *fixture {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(t.TempDir(), "data"), RequireApproval: approval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := hub.New(db, nil)
	f := &fixture{hub: h, db: db, srv: httptest.NewServer(clawhub.New(h, db, &clawhub.Options{RequireApproval: approval}))}
	t.Cleanup(f.srv.Close)
	token := func(r hub.TokenRequest) string {
		_, secret, err := h.CreateToken(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	if err := db.CreateProject(context.Background(), "p1", "P1"); err != nil {
		t.Fatal(err)
	}
	f.read = token(hub.TokenRequest{Scope: store.ScopeRead, Name: "reader"})
	f.write = token(hub.TokenRequest{Scope: store.ScopeWrite})
	f.admin = token(hub.TokenRequest{Scope: store.ScopeAdmin})
	f.project = token(hub.TokenRequest{Project: "p1"})
	return f
}

// call sends a request and returns the status and body.
func (f *fixture) call(t testing.TB, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = f.srv.URL + path
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil && !strings.Contains(path, "/upload/") {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// publish runs the client's three steps for files (path → content).
func (f *fixture) publish(t testing.TB, token, slug, version string, files map[string]string) (int, []byte) {
	t.Helper()
	var list []map[string]any
	for path, data := range files {
		sum := sha256.Sum256([]byte(data))
		st, body := f.call(t, "POST", "/api/v1/skills/-/upload-url", token, mustJSON(map[string]any{
			"path": path, "size": len(data), "sha256": hex.EncodeToString(sum[:]), "contentType": "text/plain"}))
		if st != http.StatusOK {
			return st, body
		}
		var u struct{ UploadURL, UploadTicket string }
		json.Unmarshal(body, &u)
		st, body = f.call(t, "POST", u.UploadURL, token, []byte(data))
		if st != http.StatusOK {
			return st, body
		}
		var s struct{ StorageID string }
		json.Unmarshal(body, &s)
		list = append(list, map[string]any{"path": path, "size": len(data), "storageId": s.StorageID, "sha256": hex.EncodeToString(sum[:])})
	}
	return f.call(t, "POST", "/api/v1/skills", token, mustJSON(map[string]any{
		"slug": slug, "displayName": slug, "version": version, "changelog": "c", "ownerHandle": clawhub.Owner, "files": list}))
}

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: Notes for meetings.\n---\n\n# " + name + "\n"
}

// TestPublishInstall publishes two versions, then reads them back as the
// client's search, inspect, install and update do.
func TestPublishInstall(t *testing.T) {
	f := newFixture(t, false)
	v1 := map[string]string{"SKILL.md": skillMD("notes"), "references/Guide.md": "guide\r\n", "a-b.md": "x", "a/b.md": "y"}
	if st, body := f.publish(t, f.write, "notes", "1.0.0", v1); st != http.StatusOK {
		t.Fatalf("publish: %d %s", st, body)
	}
	v2 := map[string]string{"SKILL.md": skillMD("notes"), "more.md": "more\n"}
	st, body := f.publish(t, f.write, "notes", "1.0.1", v2)
	if st != http.StatusOK || !strings.Contains(string(body), `"publicationStatus":"published"`) {
		t.Fatalf("publish 1.0.1: %d %s", st, body)
	}
	// Below or at the latest: refused.
	if st, body := f.publish(t, f.write, "notes", "1.0.1", map[string]string{"SKILL.md": skillMD("notes"), "z": "z"}); st != http.StatusConflict {
		t.Errorf("publish 1.0.1 again: %d %s", st, body)
	}

	var sk struct {
		Skill         struct{ Slug string }
		LatestVersion struct{ Version, ID, TreeDigest string }
	}
	st, body = f.call(t, "GET", "/api/v1/skills/notes", f.read, nil)
	if json.Unmarshal(body, &sk); st != 200 || sk.LatestVersion.Version != "1.0.1" || !strings.HasPrefix(sk.LatestVersion.TreeDigest, "sha256:") {
		t.Errorf("skill: %d %s", st, body)
	}
	st, body = f.call(t, "GET", "/api/v1/search?q=meetings", f.read, nil)
	if st != 200 || !strings.Contains(string(body), `"slug":"notes"`) || !strings.Contains(string(body), `"version":"1.0.1"`) {
		t.Errorf("search: %d %s", st, body)
	}

	// The download of 1.0.0 holds its files byte for byte.
	st, body = f.call(t, "GET", "/api/v1/download?slug=notes&version=1.0.0", f.read, nil)
	if st != 200 {
		t.Fatalf("download: %d %s", st, body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, zf := range zr.File {
		rc, _ := zf.Open()
		b, _ := io.ReadAll(rc)
		got[zf.Name] = string(b)
	}
	if len(got) != len(v1) {
		t.Errorf("download holds %q, want %q", got, v1)
	}
	for k, v := range v1 {
		if got[k] != v {
			t.Errorf("download %s = %q, want %q", k, got[k], v)
		}
	}

	// resolve finds a version by the client's fingerprint of its files,
	// sorted as JavaScript's localeCompare sorts them.
	// The order Node 22 gives: ["a-b.md","a/b.md","references/Guide.md","SKILL.md"].sort((a,b)=>a.localeCompare(b)).
	fp := fingerprint([]string{"a-b.md", "a/b.md", "references/Guide.md", "SKILL.md"}, v1)
	st, body = f.call(t, "GET", "/api/v1/resolve?slug=notes&hash="+fp, f.read, nil)
	if st != 200 || !strings.Contains(string(body), `"match":{"version":"1.0.0"}`) {
		t.Errorf("resolve: %d %s", st, body)
	}
	st, body = f.call(t, "GET", "/api/v1/skills/notes/file?path=references/Guide.md&version=1.0.0", f.read, nil)
	if st != 200 || string(body) != "guide\r\n" {
		t.Errorf("file: %d %q", st, body)
	}
	st, body = f.call(t, "GET", "/api/v1/skills/notes/versions", f.read, nil)
	if st != 200 || !strings.Contains(string(body), `"version":"1.0.1"`) || !strings.Contains(string(body), `"version":"1.0.0"`) {
		t.Errorf("versions: %d %s", st, body)
	}
}

// fingerprint is the client's: "path:sha256" lines in the order given.
func fingerprint(order []string, files map[string]string) string {
	var lines []string
	for _, p := range order {
		sum := sha256.Sum256([]byte(files[p]))
		lines = append(lines, p+":"+hex.EncodeToString(sum[:]))
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// Under --require-approval a new version is pending.
func TestPublishPending(t *testing.T) {
	f := newFixture(t, true)
	st, body := f.publish(t, f.write, "notes", "1.0.0", map[string]string{"SKILL.md": skillMD("notes")})
	if st != 200 || !strings.Contains(string(body), `"publicationStatus":"pending"`) {
		t.Errorf("publish: %d %s", st, body)
	}
}

// Tokens map to scopes; refusals and unsupported routes answer ClawHub's
// plain-text errors.
func TestRefusals(t *testing.T) {
	f := newFixture(t, false)
	md := map[string]string{"SKILL.md": skillMD("notes")}
	for _, c := range []struct {
		name   string
		do     func() (int, []byte)
		status int
		says   string
	}{
		{"no token", func() (int, []byte) { return f.call(t, "GET", "/api/v1/whoami", "", nil) }, 401, "clawhub login"},
		{"bad token", func() (int, []byte) { return f.call(t, "GET", "/api/v1/whoami", "smcp_a_nope", nil) }, 401, "unknown, revoked"},
		{"project token", func() (int, []byte) { return f.call(t, "GET", "/api/v1/whoami", f.project, nil) }, 403, "project token"},
		{"read token publishes", func() (int, []byte) { return f.publish(t, f.read, "notes", "1.0.0", md) }, 403, "scope write"},
		{"name is not SKILL.md's", func() (int, []byte) { return f.publish(t, f.write, "other", "1.0.0", md) }, 422, "name"},
		{"no SKILL.md", func() (int, []byte) { return f.publish(t, f.write, "x", "1.0.0", map[string]string{"a.md": "a"}) }, 422, "SKILL.md"},
		{"path escapes", func() (int, []byte) {
			return f.publish(t, f.write, "notes", "1.0.0", map[string]string{"SKILL.md": skillMD("notes"), "../evil": "x"})
		}, 422, "refuses"},
		{"not semver", func() (int, []byte) { return f.publish(t, f.write, "notes", "v1", md) }, 422, "semantic version"},
		{"short semver", func() (int, []byte) { return f.publish(t, f.write, "notes", "1.0", md) }, 422, "semantic version"},
		{"build metadata", func() (int, []byte) { return f.publish(t, f.write, "notes", "1.0.0+b", md) }, 422, "semantic version"},
		{"unknown ticket", func() (int, []byte) {
			return f.call(t, "POST", "/api/v1/skills", f.write, mustJSON(map[string]any{"slug": "notes", "version": "1.0.0",
				"files": []map[string]any{{"path": "SKILL.md", "storageId": "nope"}}}))
		}, 422, "no upload"},
		{"upload over its announced size", func() (int, []byte) {
			st, body := f.call(t, "POST", "/api/v1/skills/-/upload-url", f.write, mustJSON(map[string]any{
				"path": "SKILL.md", "size": 1, "sha256": strings.Repeat("0", 64)}))
			var u struct{ UploadURL string }
			if json.Unmarshal(body, &u); st != 200 {
				return st, body
			}
			return f.call(t, "POST", u.UploadURL, f.write, []byte("too long"))
		}, 422, "not the 1 bytes"},
		{"file over the limit", func() (int, []byte) {
			return f.call(t, "POST", "/api/v1/skills/-/upload-url", f.write, mustJSON(map[string]any{
				"path": "big", "size": 1 << 40, "sha256": strings.Repeat("0", 64)}))
		}, 413, "at most"},
		{"body not JSON", func() (int, []byte) { return f.call(t, "POST", "/api/v1/skills", f.write, []byte("{")) }, 400, "JSON"},
		{"body too large", func() (int, []byte) {
			return f.call(t, "POST", "/api/v1/skills", f.write, append([]byte(`{"slug":"`), bytes.Repeat([]byte("a"), 2<<20)...))
		}, 413, "over"},
		{"unknown skill", func() (int, []byte) { return f.call(t, "GET", "/api/v1/skills/nothing", f.read, nil) }, 404, "Skill not found"},
		{"unsupported", func() (int, []byte) { return f.call(t, "GET", "/api/v1/skills/notes/moderation", f.read, nil) }, 501, "not supported"},
		{"unsupported star", func() (int, []byte) { return f.call(t, "POST", "/api/v1/stars/notes", f.write, nil) }, 501, "not supported"},
		{"unknown route", func() (int, []byte) { return f.call(t, "GET", "/api/v1/nothing", f.read, nil) }, 404, "no such route"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, body := c.do()
			if st != c.status || !strings.Contains(string(body), c.says) {
				t.Errorf("%d %q, want %d saying %q", st, body, c.status, c.says)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	f := newFixture(t, false)
	st, body := f.call(t, "GET", "/.well-known/clawhub.json", "", nil)
	if want := `{"apiBase":"` + f.srv.URL + `/"}`; st != 200 || strings.TrimSpace(string(body)) != want {
		t.Errorf("discovery: %d %s, want %s", st, body, want)
	}
	st, body = f.call(t, "GET", "/api/v1/whoami", f.read, nil)
	if st != 200 || !strings.Contains(string(body), `"handle":"hub"`) || !strings.Contains(string(body), `"displayName":"reader"`) {
		t.Errorf("whoami: %d %s", st, body)
	}
}

package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := pg.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines left behind: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// env is an API over a real hub, served by httptest, whose every answer
// is checked against the OpenAPI document: the route's documented status
// and that status's schema.
type env struct {
	t     testing.TB
	db    *store.DB
	h     *hub.Hub
	a     *api.API
	srv   *httptest.Server
	admin string // secrets of admin tokens of each scope
	write string
	read  string

	opts store.Options

	mu      sync.Mutex
	checked map[string]bool // "METHOD /path/{x} status" answered and validated
}

// newEnv is an API over a real store opened with o and a hub over it,
// which reads local repositories (the tests install from repositories
// they make on disk); mods change the hub's other options.
func newEnv(t testing.TB, o store.Options, mods ...func(*hub.Options)) *env {
	t.Helper()
	db := openStore(t, o)
	return newEnvHub(t, db, o, newHub(db, mods...))
}

func openStore(t testing.TB, o store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newHub(db *store.DB, mods ...func(*hub.Options)) *hub.Hub {
	ho := &hub.Options{LocalRepositories: true}
	for _, m := range mods {
		m(ho)
	}
	return hub.New(db, ho)
}

func newEnvHub(t testing.TB, db *store.DB, o store.Options, h *hub.Hub, mods ...func(*api.Options)) *env {
	ao := api.Options{Hub: h, Store: db, Version: "test", TempDir: filepath.Join(t.TempDir(), "tmp")}
	for _, m := range mods {
		m(&ao)
	}
	a, err := api.New(ao)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, h: h, a: a, opts: o, checked: map[string]bool{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, r)
		e.validate(r, rec)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(e.srv.Close)
	for _, s := range []store.Scope{store.ScopeAdmin, store.ScopeWrite, store.ScopeRead} {
		_, secret, err := h.CreateToken(context.Background(), hub.TokenRequest{Scope: s, Name: string(s) + " test"})
		if err != nil {
			t.Fatal(err)
		}
		switch s {
		case store.ScopeAdmin:
			e.admin = secret
		case store.ScopeWrite:
			e.write = secret
		default:
			e.read = secret
		}
	}
	return e
}

func (e *env) dataDir() string     { return e.opts.Dir }
func (e *env) databaseURL() string { return e.opts.Database }

// backends runs f on SQLite and on PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) { f(t, newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})) })
	t.Run("postgres", func(t *testing.T) { f(t, newEnv(t, store.Options{Database: pg.Database(t)})) })
}

// validate checks an answer against the document: its status is one the
// operation documents, and a JSON body matches that status's schema.
func (e *env) validate(r *http.Request, rec *httptest.ResponseRecorder) {
	t := e.t
	method, path, ok := strings.Cut(r.Pattern, " ")
	if !ok || path == "/api/" || path == api.DocumentPath {
		// The JSON 404 of unknown routes and the document itself.
		if path == "/api/" {
			checkErrorBody(t, rec.Body.Bytes(), rec.Code)
		}
		return
	}
	doc := e.a.OpenAPI()
	item := doc.Paths[path]
	if item == nil {
		t.Errorf("%s %s: served but not in the document", method, path)
		return
	}
	op := map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete}[method]
	if op == nil {
		t.Errorf("%s %s: served but not in the document", method, path)
		return
	}
	resp := op.Responses[strconv.Itoa(rec.Code)]
	if resp == nil {
		t.Errorf("%s %s answered %d, which the document does not list (body %s)", method, path, rec.Code, rec.Body.Bytes())
		return
	}
	e.mu.Lock()
	e.checked[method+" "+path+" "+strconv.Itoa(rec.Code)] = true
	e.mu.Unlock()
	if rec.Code >= 400 {
		checkErrorBody(t, rec.Body.Bytes(), rec.Code)
	}
	ct, _, _ := strings.Cut(rec.Header().Get("Content-Type"), ";")
	if ct != "application/json" {
		if resp.Content[ct] == nil && rec.Code != 204 {
			t.Errorf("%s %s %d: answered %q, which the document does not list", method, path, rec.Code, ct)
		}
		return
	}
	mt := resp.Content["application/json"]
	if mt == nil || mt.Schema == nil {
		t.Errorf("%s %s %d: a JSON answer the document gives no schema", method, path, rec.Code)
		return
	}
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Errorf("%s %s %d: the body is not JSON: %v", method, path, rec.Code, err)
		return
	}
	res := &huma.ValidateResult{}
	huma.Validate(doc.Components.Schemas, mt.Schema, huma.NewPathBuffer(nil, 0), huma.ModeReadFromServer, v, res)
	for _, err := range res.Errors {
		t.Errorf("%s %s %d: the answer does not match its schema: %v\n%s", method, path, rec.Code, err, rec.Body.Bytes())
	}
}

func checkErrorBody(t testing.TB, body []byte, status int) {
	t.Helper()
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" {
		t.Errorf("status %d: not the API's error shape: %s", status, body)
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) code() string {
	var eb struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(a.body, &eb)
	return eb.Error.Code
}

func (a answer) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decoding %s: %v", a.body, err)
	}
}

func (e *env) raw(method, path, token, contentType string, body io.Reader) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// do sends body as JSON (nil: no body) with token.
func (e *env) do(method, path, token string, body any) answer {
	e.t.Helper()
	if body == nil {
		return e.raw(method, path, token, "", nil)
	}
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.raw(method, path, token, "application/json", bytes.NewReader(b))
}

func (e *env) want(a answer, status int, code string) {
	e.t.Helper()
	if a.status != status || (code != "" && a.code() != code) {
		e.t.Fatalf("got %d %s, want %d %s", a.status, a.body, status, code)
	}
}

const skillMD = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n# PDF tools\n"

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload posts a ZIP to /api/skills/import.
func (e *env) upload(token string, data []byte, path string) answer {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "pkg.zip")
	fw.Write(data)
	if path != "" {
		mw.WriteField("path", path)
	}
	mw.Close()
	return e.raw("POST", "/api/skills/import", token, mw.FormDataContentType(), &buf)
}

// install uploads a package and returns its version id.
func (e *env) install(files map[string]string) string {
	e.t.Helper()
	a := e.upload(e.admin, zipOf(e.t, files), "")
	e.want(a, 200, "")
	var inst hub.Installed
	a.decode(e.t, &inst)
	return inst.Version.ID
}

// TestDocumentMatchesRoutes walks the document: every documented
// operation is registered on the mux and reached (an unauthenticated
// request gets the route's 401, not the catch-all's 404), and every
// registered operation is documented.
func TestDocumentMatchesRoutes(t *testing.T) {
	e := newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	doc := e.a.OpenAPI()
	documented := map[string]bool{}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			documented[method+" "+path] = true
			if len(op.Security) == 0 {
				t.Errorf("%s %s: documented without its security requirement", method, path)
			}
			for _, s := range []string{"401", "403"} {
				if op.Responses[s] == nil {
					t.Errorf("%s %s: %s is not documented", method, path, s)
				}
			}
			a := e.raw(method, param.ReplaceAllString(path, "x"), "", "", nil)
			if a.status != 401 || a.header.Get("WWW-Authenticate") == "" || a.code() != api.CodeUnauthorized {
				t.Errorf("%s %s without a token: %d %s %q; want the route's 401", method, path, a.status, a.body, a.header.Get("WWW-Authenticate"))
			}
		}
	}
	var registered []string
	for _, p := range e.a.Patterns() {
		registered = append(registered, p)
		if !documented[p] {
			t.Errorf("%s: registered but not documented", p)
		}
	}
	if len(registered) != len(documented) {
		t.Errorf("%d operations registered, %d documented", len(registered), len(documented))
	}
	// The seed's routes are all there.
	for _, want := range []string{
		"GET /api/skills", "GET /api/skills/catalog", "GET /api/skills/runtime", "POST /api/skills/catalog/sync",
		"POST /api/skills/install", "POST /api/skills/import", "GET /api/skills/{id}/file", "DELETE /api/skills/{id}",
		"GET /api/projects/{id}/skills", "PUT /api/projects/{id}/skills/{skill_id}", "DELETE /api/projects/{id}/skills/{skill_id}",
		"GET /api/audit", "POST /api/tokens", "POST /api/projects/{id}/tokens",
	} {
		if !documented[want] {
			t.Errorf("%s: missing", want)
		}
	}
	// The error schema is the API's.
	a := e.raw("GET", api.DocumentPath, "", "", nil)
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"openapi":"3.1.0"`)) {
		t.Fatalf("document: %d %.200s", a.status, a.body)
	}
	if _, ok := doc.Components.Schemas.Map()["Error"]; !ok {
		t.Errorf("no Error schema in the document: %v", slices.Collect(mapKeys(doc.Components.Schemas.Map())))
	}
	t.Logf("%d operations documented and registered", len(documented))
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()

	a := e.do("GET", "/api/projects", "", nil)
	e.want(a, 401, api.CodeUnauthorized)
	if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate = %q", a.header.Get("WWW-Authenticate"))
	}
	for _, bad := range []string{"nonsense", "smcp_a_0123456789abcdef_" + strings.Repeat("A", 43), e.admin + "x"} {
		a := e.do("GET", "/api/projects", bad, nil)
		e.want(a, 401, api.CodeUnauthorized)
		if bytes.Contains(a.body, []byte(bad)) {
			t.Errorf("the error repeats the token: %s", a.body)
		}
	}
	// Basic instead of Bearer.
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/projects", nil)
	req.SetBasicAuth("admin", e.admin)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("Basic auth: %d", resp.StatusCode)
	}

	// Scopes: read reads, and is refused a change, naming the scope.
	e.want(e.do("GET", "/api/projects", e.read, nil), 200, "")
	a = e.do("POST", "/api/projects", e.read, map[string]string{"id": "p1", "name": "P1"})
	e.want(a, 403, api.CodeForbidden)
	if !strings.Contains(a.code()+string(a.body), "scope admin") {
		t.Errorf("403 does not name the scope needed: %s", a.body)
	}
	e.want(e.do("POST", "/api/projects", e.write, map[string]string{"id": "p1", "name": "P1"}), 403, api.CodeForbidden)
	e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p1", "name": "P1"}), 201, "")
	if _, err := e.db.GetProject(ctx, "p1"); err != nil {
		t.Fatal(err)
	}

	// A project token opens nothing here.
	_, ptok, err := e.h.CreateToken(ctx, hub.TokenRequest{Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	e.want(e.do("GET", "/api/projects/p1", ptok, nil), 403, api.CodeForbidden)

	// Revoked: refused at once.
	tok, secret, err := e.h.CreateToken(ctx, hub.TokenRequest{Scope: store.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	e.want(e.do("GET", "/api/projects", secret, nil), 200, "")
	e.want(e.do("DELETE", "/api/tokens/"+tok.ID, e.admin, nil), 200, "")
	e.want(e.do("GET", "/api/projects", secret, nil), 401, api.CodeUnauthorized)

	// Expired: refused once its time has passed.
	_, short, err := e.h.CreateToken(ctx, hub.TokenRequest{Scope: store.ScopeRead, Expires: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.do("GET", "/api/projects", short, nil).status != 401 {
		if time.Now().After(deadline) {
			t.Fatal("an expired token is still accepted")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestProjectsAndBindings(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		v1 := e.install(map[string]string{"SKILL.md": skillMD})
		v2 := e.install(map[string]string{"SKILL.md": skillMD, "notes.txt": "second version\n"})
		if v1 == v2 {
			t.Fatal("two trees, one id")
		}

		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "support", "name": "Support"}), 201, "")
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "support", "name": "Other"}), 409, api.CodeConflict)
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "sales", "name": "Support"}), 409, api.CodeConflict)

		// Bind, re-bind (no change), bind the newer version separately.
		var br hub.BindResult
		a := e.do("PUT", "/api/projects/support/skills/"+v1, e.admin, nil)
		e.want(a, 200, "")
		a.decode(t, &br)
		if !br.Changed || br.Version.ID != v1 {
			t.Fatalf("bind: %+v", br)
		}
		gen := br.Generation
		a = e.do("PUT", "/api/projects/support/skills/"+v1, e.admin, nil)
		a.decode(t, &br)
		if br.Changed || br.Generation != gen {
			t.Fatalf("re-binding changed something: %+v", br)
		}
		e.want(e.do("PUT", "/api/projects/support/skills/"+v2, e.admin, nil), 200, "")
		e.want(e.do("PUT", "/api/projects/support/skills/nope@abcdef012345", e.admin, nil), 404, api.CodeNotFound)
		e.want(e.do("PUT", "/api/projects/missing/skills/"+v1, e.admin, nil), 404, api.CodeNotFound)

		var ps struct {
			Skills     []hub.Bound `json:"skills"`
			NextCursor string      `json:"next_cursor"`
		}
		a = e.do("GET", "/api/projects/support/skills?limit=1", e.read, nil)
		e.want(a, 200, "")
		a.decode(t, &ps)
		if len(ps.Skills) != 1 || ps.NextCursor == "" {
			t.Fatalf("page 1: %s", a.body)
		}
		first := ps.Skills[0].Version.ID
		a = e.do("GET", "/api/projects/support/skills?limit=1&cursor="+ps.NextCursor, e.read, nil)
		ps.NextCursor = ""
		a.decode(t, &ps)
		if len(ps.Skills) != 1 || ps.Skills[0].Version.ID == first || ps.NextCursor != "" {
			t.Fatalf("page 2: %s", a.body)
		}
		e.want(e.do("GET", "/api/projects/support/skills?cursor=bogus", e.read, nil), 400, api.CodeBadRequest)

		// Uninstalling a bound version is refused, naming the project.
		a = e.do("DELETE", "/api/skills/"+v1, e.admin, nil)
		e.want(a, 409, api.CodeVersionBound)
		if !bytes.Contains(a.body, []byte("support")) {
			t.Errorf("409 does not name the project: %s", a.body)
		}

		// Duplicate copies bindings; rename, pause, resume.
		e.want(e.do("POST", "/api/projects/support/duplicate", e.admin, map[string]string{"id": "support-2", "name": "Support 2"}), 201, "")
		a = e.do("GET", "/api/projects/support-2/skills", e.read, nil)
		a.decode(t, &ps)
		if len(ps.Skills) != 2 {
			t.Fatalf("duplicate has %d bindings", len(ps.Skills))
		}
		var p store.Project
		a = e.do("PATCH", "/api/projects/support-2", e.admin, map[string]string{"name": "Support Two"})
		e.want(a, 200, "")
		a.decode(t, &p)
		if p.Name != "Support Two" || p.ID != "support-2" {
			t.Fatalf("rename: %+v", p)
		}
		e.do("POST", "/api/projects/support-2/pause", e.admin, nil).decode(t, &p)
		if !p.Paused {
			t.Fatal("not paused")
		}
		e.do("POST", "/api/projects/support-2/resume", e.admin, nil).decode(t, &p)
		if p.Paused {
			t.Fatal("not resumed")
		}

		// Unbind, twice; then uninstall succeeds once no project has it.
		a = e.do("DELETE", "/api/projects/support/skills/"+v1, e.admin, nil)
		a.decode(t, &br)
		if !br.Changed {
			t.Fatal("unbind changed nothing")
		}
		e.do("DELETE", "/api/projects/support/skills/"+v1, e.admin, nil).decode(t, &br)
		if br.Changed {
			t.Fatal("second unbind changed something")
		}
		e.want(e.do("DELETE", "/api/projects/support-2", e.admin, nil), 204, "")
		e.want(e.do("GET", "/api/projects/support-2", e.read, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/skills/"+v1, e.admin, nil), 200, "")
		e.want(e.do("GET", "/api/skills/"+v1, e.read, nil), 404, api.CodeNotFound)

		// Lists page.
		var pl struct {
			Projects   []store.Project `json:"projects"`
			NextCursor string          `json:"next_cursor"`
		}
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "zeta", "name": "Zeta"}), 201, "")
		a = e.do("GET", "/api/projects?limit=1", e.read, nil)
		a.decode(t, &pl)
		if len(pl.Projects) != 1 || pl.Projects[0].ID != "support" || pl.NextCursor == "" {
			t.Fatalf("projects page 1: %s", a.body)
		}
		cur := pl.NextCursor
		pl.NextCursor = ""
		e.do("GET", "/api/projects?limit=1&cursor="+cur, e.read, nil).decode(t, &pl)
		if len(pl.Projects) != 1 || pl.Projects[0].ID != "zeta" {
			t.Fatalf("projects page 2: %+v", pl)
		}
	})
}

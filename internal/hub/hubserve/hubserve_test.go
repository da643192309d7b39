package hubserve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/hubserve"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testHub is a store on SQLite and the hub over it.
type testHub struct {
	*hub.Hub
	db *store.DB
}

func open(t *testing.T) *testHub {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &testHub{Hub: hub.New(db, nil), db: db}
}

func get(t *testing.T, srv *httptest.Server, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServer(t *testing.T) {
	h := open(t)
	_, read, err := h.CreateToken(context.Background(), hub.TokenRequest{Scope: store.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	_, ptok, _ := func() (store.Token, string, error) {
		if err := h.db.CreateProject(context.Background(), "p1", "P1"); err != nil {
			t.Fatal(err)
		}
		return h.CreateToken(context.Background(), hub.TokenRequest{Project: "p1"})
	}()
	projects := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/boom") {
			panic("a fault in a handler")
		}
		w.Write([]byte("project endpoint " + r.URL.Path))
	})
	s, err := hubserve.New(hubserve.Options{
		Hub: h.Hub, Store: h.db, Projects: projects,
		ProjectStats: func() []hubserve.ProjectStat {
			return []hubserve.ProjectStat{{Project: "p1", Sessions: 2, Bindings: 3, Requests: 9, IndexRequests: 6}}
		},
		EndpointStats: func() hubserve.EndpointStat {
			return hubserve.EndpointStat{Versions: 4, Refreshes: 5, RefreshErrors: 1, Unloaded: 2, StoreErrors: 7}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	for _, probe := range []string{"/livez", "/readyz", "/healthz"} {
		if code, body := get(t, srv, probe, ""); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
			t.Fatalf("%s: %d %s", probe, code, body)
		}
	}
	if code, body := get(t, srv, "/api/projects", ""); code != 401 || !strings.Contains(body, `"unauthorized"`) {
		t.Fatalf("api without a token: %d %s", code, body)
	}
	if code, _ := get(t, srv, "/api/projects", read); code != 200 {
		t.Fatalf("api: %d", code)
	}
	if code, body := get(t, srv, "/p/p1/mcp", ""); code != 200 || body != "project endpoint /p/p1/mcp" {
		t.Fatalf("projects: %d %s", code, body)
	}
	if code, body := get(t, srv, "/p/p1/boom", ""); code != 500 || !strings.Contains(body, `"internal"`) {
		t.Fatalf("a panic: %d %s", code, body)
	}
	if code, body := get(t, srv, "/elsewhere", ""); code != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("unknown path: %d %s", code, body)
	}

	// /metrics: an admin token of scope read, and no project token.
	for _, tok := range []string{"", ptok, "smcp_a_nonsense"} {
		if code, body := get(t, srv, "/metrics", tok); code == 200 || !strings.Contains(body, `"error"`) {
			t.Fatalf("metrics with %.8q: %d %s", tok, code, body)
		}
	}
	code, body := get(t, srv, "/metrics", read)
	if code != 200 {
		t.Fatalf("metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`skills_hub_http_requests_total{method="GET",route="/api/projects",status="200"} 1`,
		`skills_hub_http_rate_limited_total{key="project"} 0`,
		`skills_hub_http_size_limited_total{limit="address_streams"} 0`,
		`skills_hub_http_requests_total{method="GET",route="/p/",status="500"} 1`,
		`skills_hub_http_request_duration_seconds_bucket{method="GET",route="/api/projects"`,
		`skills_hub_project_sessions{project="p1"} 2`,
		`skills_hub_project_bindings{project="p1"} 3`,
		`skills_hub_catalog_refreshes_total{result="failed"} 0`,
		`skills_hub_project_requests_total{project="p1"} 9`,
		`skills_hub_project_index_requests_total{project="p1"} 6`,
		`skills_hub_endpoint_versions 4`,
		`skills_hub_build_info{goversion="go`,
		`skills_hub_endpoint_catalog_refreshes_total 5`,
		`skills_hub_endpoint_catalog_refresh_errors_total 1`,
		`skills_hub_endpoint_catalogs_unloaded_total 2`,
		`skills_hub_store_errors_total 7`, // the endpoints' count, none of the API's yet
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// No project endpoints: a JSON 404.
	s2, err := hubserve.New(hubserve.Options{Hub: h.Hub, Store: h.db})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(s2.Handler())
	defer srv2.Close()
	if code, body := get(t, srv2, "/p/p1/mcp", ""); code != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("no projects: %d %s", code, body)
	}

	// The database gone: /readyz says so (and nothing more), /livez does
	// not, and the API answers 503.
	h.db.Close()
	for _, probe := range []string{"/readyz", "/healthz"} {
		if code, body := get(t, srv, probe, ""); code != 503 || strings.TrimSpace(body) != `{"status":"unavailable"}` {
			t.Fatalf("%s without a database: %d %s", probe, code, body)
		}
	}
	if code, _ := get(t, srv, "/livez", ""); code != 200 {
		t.Fatalf("livez without a database: %d", code)
	}
	if code, body := get(t, srv, "/api/projects", read); code != 503 || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("api without a database: %d %s", code, body)
	}
}

func TestServeShutsDown(t *testing.T) {
	h := open(t)
	s, err := hubserve.New(hubserve.Options{Hub: h.Hub, Store: h.db})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// TestUI: the web interface gets every path the server's own routes do
// not take, and acts through the API it was given.
func TestUI(t *testing.T) {
	h := open(t)
	_, read, err := h.CreateToken(context.Background(), hub.TokenRequest{Scope: store.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	s, err := hubserve.New(hubserve.Options{Hub: h.Hub, Store: h.db, UI: func(a http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The page asks the API, as the administration pages do.
			req := httptest.NewRequest("GET", "/api/projects", nil)
			req.Header.Set("Authorization", r.Header.Get("Authorization"))
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
			fmt.Fprintf(w, "ui %s api %d", r.URL.Path, rec.Code)
		}), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	if code, body := get(t, srv, "/projects", read); code != 200 || body != "ui /projects api 200" {
		t.Fatalf("ui: %d %s", code, body)
	}
	if code, body := get(t, srv, "/api/nothing", read); code != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("api under the ui: %d %s", code, body)
	}
	if code, _ := get(t, srv, "/healthz", ""); code != 200 {
		t.Fatalf("healthz under the ui: %d", code)
	}
}

// TestGuards: the hub stands behind serve's guard stack: the Host and
// Origin checks on every route but the probes, and the rate limits per
// address, token and project, with 429 and Retry-After.
func TestGuards(t *testing.T) {
	h := open(t)
	_, read, err := h.CreateToken(context.Background(), hub.TokenRequest{Scope: store.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	projects := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	s, err := hubserve.New(hubserve.Options{Hub: h.Hub, Store: h.db, Projects: projects, HTTP: httpserve.Options{
		// One request a second to a project, a burst of two.
		ProjectRate: 1, RateBurst: 2 * time.Second,
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	do := func(path, host, origin, token string) (int, http.Header, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, path := range []string{"/api/projects", "/", "/p/p1/mcp", "/metrics"} {
		if code, _, body := do(path, "evil.example", "", read); code != 403 || !strings.Contains(body, "--allowed-hosts") {
			t.Errorf("%s with a foreign Host: %d %s", path, code, body)
		}
		if code, _, body := do(path, "", "http://evil.example", read); code != 403 || !strings.Contains(body, "origin") {
			t.Errorf("%s from a foreign origin: %d %s", path, code, body)
		}
	}
	if code, _, _ := do("/readyz", "evil.example", "", ""); code != 200 {
		t.Errorf("/readyz with a foreign Host: %d", code)
	}
	for i := range 2 {
		if code, _, body := do("/p/p1/mcp", "", "", ""); code != 200 {
			t.Fatalf("project request %d: %d %s", i, code, body)
		}
	}
	code, header, body := do("/p/p1/mcp", "", "", "")
	if code != 429 || header.Get("Retry-After") == "" || !strings.Contains(body, "this project") {
		t.Errorf("past the project's rate: %d %q %s", code, header.Get("Retry-After"), body)
	}
	if code, _, body := do("/p/p2/mcp", "", "", ""); code != 200 {
		t.Errorf("another project: %d %s", code, body)
	}
}

// A well-known index's capability travels in the path: a refused request
// for it is logged with the token's id, never its secret, and no metric's
// label holds it.
func TestRefusalLogsNoCapability(t *testing.T) {
	h := open(t)
	var logs bytes.Buffer
	projects := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	s, err := hubserve.New(hubserve.Options{Hub: h.Hub, Store: h.db, Projects: projects,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	const secret = "smcp_i_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	req, _ := http.NewRequest("GET", srv.URL+"/p/p1/i/"+secret+"/.well-known/agent-skills/index.json", nil)
	req.Host = "evil.example"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a foreign Host: %d", resp.StatusCode)
	}
	if !strings.Contains(logs.String(), "smcp_i_0123456789abcdef_…") || strings.Contains(logs.String(), secret) {
		t.Errorf("the refusal's log line:\n%s", logs.String())
	}
	mfs, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "smcp_") {
					t.Errorf("metric %s has a label %s=%q", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
)

// startPostgres starts a PostgreSQL of the test's own (it is stopped and
// restarted by the test), or skips loudly without one; under CI=true a
// missing PostgreSQL fails the test.
func startPostgres(t *testing.T) *pgtest.Server {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: no PostgreSQL to run the replicas against (%v); install PostgreSQL or set PG_BIN", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// hubImport uploads a ZIP to a hub's POST /api/skills/import and returns
// the version's id.
func hubImport(t *testing.T, base, token, zipPath string) string {
	t.Helper()
	data, err := os.ReadFile(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", filepath.Base(zipPath))
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/skills/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Version struct{ ID string } }
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 && resp.StatusCode != 201 || json.Unmarshal(b, &out) != nil || out.Version.ID == "" {
		t.Fatalf("import %s: %d %s", zipPath, resp.StatusCode, b)
	}
	return out.Version.ID
}

// listChanged counts one session's list-changed notifications.
type listChanged struct{ tools, resources chan time.Time }

func newListChanged() *listChanged {
	return &listChanged{tools: make(chan time.Time, 64), resources: make(chan time.Time, 64)}
}

// projectSession opens a 2025-11-25 session, with its GET event stream, on
// a project endpoint.
func projectSession(t *testing.T, url, token string) (*mcp.ClientSession, *listChanged) {
	t.Helper()
	ev := newListChanged()
	c := mcp.NewClient(&mcp.Implementation{Name: "replica-e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { ev.tools <- time.Now() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { ev.resources <- time.Now() },
	})
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token, http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("session on %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ev
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

const meta20260728 = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"replica-e2e","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// listenStream opens a 2026-07-28 subscriptions/listen stream on a project
// endpoint and reports its list-changed notifications; it ends with the
// test.
func listenStream(t *testing.T, url, token string) *listChanged {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{`+meta20260728+`,"notifications":{"toolsListChanged":true,"resourcesListChanged":true}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("listen: %v", err)
	}
	ev := newListChanged()
	acked := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.Contains(line, "subscriptions/acknowledged"):
				acked <- line
			case strings.Contains(line, "notifications/tools/list_changed"):
				ev.tools <- time.Now()
			case strings.Contains(line, "notifications/resources/list_changed"):
				ev.resources <- time.Now()
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	if resp.StatusCode != 200 {
		t.Fatalf("listen: status %d", resp.StatusCode)
	}
	select {
	case <-acked:
	case <-time.After(30 * time.Second):
		t.Fatal("listen: no subscriptions/acknowledged within 30 s")
	}
	return ev
}

// after waits for a notification on ch and returns how long after start it
// arrived.
func after(t *testing.T, ch chan time.Time, start time.Time, what string) time.Duration {
	t.Helper()
	select {
	case at := <-ch:
		return at.Sub(start)
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30 s", what)
		return 0
	}
}

// mcpPost sends one stateless request to a project endpoint and returns
// the status and body.
func mcpPost(t *testing.T, url, token, rev, method, params string) (int, []byte) {
	t.Helper()
	if rev == "2026-07-28" {
		params = strings.Replace(params, "{", "{"+meta20260728+",", 1)
		params = strings.Replace(params, ",}", "}", 1)
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", rev)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Timeout: 60 * time.Second} // a hang fails the test
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// waitStatus polls url until it answers want, within 30 s.
func waitStatus(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer %d within 30 s (last: %v %v)", url, want, resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHubReplicas runs two `hub serve` processes on one PostgreSQL and
// nothing else shared: bindings made through one reach the other's
// sessions and listen streams as list-changed notifications, both serve
// identical answers, and a PostgreSQL outage answers 503 and heals.
func TestHubReplicas(t *testing.T) {
	pg := startPostgres(t)
	ctx := context.Background()
	dbURL, err := pg.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first admin token, from the shell (this also migrates the database).
	code, stdout, stderr := run(t, nil, "--database", dbURL, "token", "create", "--scope", "admin")
	if code != 0 {
		t.Fatalf("token create: %d %s", code, stderr)
	}
	admin := strings.TrimSpace(stdout)
	replica := func() (string, func() string) {
		dir := t.TempDir()
		return hubServeArgs(t, "--database", dbURL, "--data", filepath.Join(dir, "data"),
			"serve", "--http", "127.0.0.1:0", "--cache", filepath.Join(dir, "cache"))
	}
	a, logA := replica()
	b, logB := replica()

	// Two versions, a project, a project that stays unloaded on B, and a
	// token: all through A.
	v1 := hubImport(t, a, admin, hubZip(t, "pdf.zip", map[string]string{"SKILL.md": hubSkill}))
	v2 := hubImport(t, a, admin, hubZip(t, "xlsx.zip", map[string]string{"SKILL.md": "---\nname: xlsx\ndescription: Edit spreadsheets and their formulas.\n---\n# xlsx\n", "notes.md": "# Notes\n"}))
	for _, id := range []string{"support", "other"} {
		if code, body := hubCall(t, "POST", a+"/api/projects", admin, map[string]string{"id": id, "name": id}); code != 201 {
			t.Fatalf("create project %s: %d %s", id, code, body)
		}
	}
	token := func(project string) string {
		code, body := hubCall(t, "POST", a+"/api/projects/"+project+"/tokens", admin, map[string]string{"name": "e2e"})
		var out struct{ Secret string }
		if code != 201 || json.Unmarshal(body, &out) != nil || out.Secret == "" {
			t.Fatalf("project token: %d %s", code, body)
		}
		return out.Secret
	}
	tok, otherTok := token("support"), token("other")
	endA, endB := a+"/p/support/mcp", b+"/p/support/mcp"

	cs, sess := projectSession(t, endB, tok)
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools/list on B before a binding: %v %v", res, err)
	}
	listen := listenStream(t, endB, tok)

	bind := func(method, version string) time.Time {
		t.Helper()
		start := time.Now()
		code, body := hubCall(t, method, a+"/api/projects/support/skills/"+version, admin, nil)
		if code != 200 || !bytes.Contains(body, []byte(`"changed":true`)) {
			t.Fatalf("%s binding %s through A: %d %s", method, version, code, body)
		}
		return start
	}
	var lat []time.Duration
	// The first binding changes the tool set too.
	start := bind("PUT", v1)
	lat = append(lat, after(t, sess.resources, start, "resources/list_changed on B's session"))
	t.Logf("first binding through A → B's session: resources/list_changed after %v, tools/list_changed after %v, listen stream %v / %v",
		lat[0], after(t, sess.tools, start, "tools/list_changed on B's session"),
		after(t, listen.resources, start, "resources/list_changed on B's listen stream"),
		after(t, listen.tools, start, "tools/list_changed on B's listen stream"))
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 3 {
		t.Fatalf("tools/list on B after a binding: %v %v", res, err)
	}
	// Two more that leave the tool set as it is.
	for _, step := range []struct{ method, version string }{{"PUT", v2}, {"DELETE", v2}} {
		start := bind(step.method, step.version)
		d := after(t, sess.resources, start, "resources/list_changed on B's session")
		after(t, listen.resources, start, "resources/list_changed on B's listen stream")
		lat = append(lat, d)
		t.Logf("%s %s through A → B's session: %v", step.method, step.version, d)
	}
	bind("PUT", v2)
	after(t, sess.resources, time.Now(), "resources/list_changed on B's session")
	slices.Sort(lat)
	t.Logf("binding-change latency A → B (median of %d): %v (target ≤ 1 s)", len(lat), lat[len(lat)/2])
	if lat[len(lat)/2] > time.Second {
		t.Errorf("a binding through A reached B's session in %v (median), over 1 s", lat[len(lat)/2])
	}
	select {
	case <-sess.tools:
		t.Error("tools/list_changed for a change that kept the tool set")
	default:
	}

	// Identical answers: skills/list, then skills/get of each skill, on
	// both revisions, stateless (no session fields to set apart).
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		codeA, listA := mcpPost(t, endA, tok, rev, "skills/list", `{}`)
		codeB, listB := mcpPost(t, endB, tok, rev, "skills/list", `{}`)
		if codeA != 200 || !bytes.Equal(listA, listB) {
			t.Fatalf("skills/list %s differs:\nA %d %s\nB %d %s", rev, codeA, listA, codeB, listB)
		}
		var l struct {
			Result struct{ Skills []struct{ URI string } }
		}
		json.Unmarshal(listA, &l)
		if len(l.Result.Skills) != 2 {
			t.Fatalf("skills/list %s: %s", rev, listA)
		}
		for _, s := range l.Result.Skills {
			p := `{"uri":` + mustQuote(s.URI) + `}`
			codeA, getA := mcpPost(t, endA, tok, rev, "skills/get", p)
			codeB, getB := mcpPost(t, endB, tok, rev, "skills/get", p)
			if codeA != 200 || !bytes.Equal(getA, getB) || !bytes.Contains(getA, []byte(`"skill"`)) {
				t.Fatalf("skills/get %s %s differs:\nA %d %s\nB %d %s", rev, s.URI, codeA, getA, codeB, getB)
			}
		}
	}

	// B's /metrics, with an admin token of scope read: requests by
	// route, method and status, latency, the project's sessions, bindings
	// and requests, catalog refreshes and store errors.
	code, body := hubCall(t, "POST", a+"/api/tokens", admin, map[string]string{"scope": "read", "name": "metrics"})
	var readTok struct{ Secret string }
	if code != 201 || json.Unmarshal(body, &readTok) != nil {
		t.Fatalf("a read token: %d %s", code, body)
	}
	if code, body := hubCall(t, "GET", b+"/metrics", "", nil); code != 401 || !bytes.Contains(body, []byte(`"error"`)) {
		t.Errorf("/metrics without a token: %d %.200s", code, body)
	}
	if code, _ := hubCall(t, "GET", b+"/metrics", tok, nil); code != 401 && code != 403 {
		t.Errorf("/metrics with a project token: %d", code)
	}
	metrics := func() string {
		t.Helper()
		code, body := hubCall(t, "GET", b+"/metrics", readTok.Secret, nil)
		if code != 200 {
			t.Fatalf("/metrics: %d %.300s", code, body)
		}
		return string(body)
	}
	m := metrics()
	for _, want := range []string{
		`skills_hub_http_requests_total{method="POST",route="/p/",status="200"}`,
		`skills_hub_http_request_duration_seconds_bucket{method="POST",route="/p/"`,
		`skills_hub_project_sessions{project="support"} `,
		`skills_hub_project_bindings{project="support"} 2`,
		`skills_hub_project_requests_total{project="support"} `,
		`skills_hub_endpoint_catalog_refreshes_total `,
		`skills_hub_endpoint_versions 2`,
		`skills_hub_catalog_refreshes_total{result="ok"} `,
		`skills_hub_store_errors_total 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("B's /metrics lack %s", want)
		}
	}
	if strings.Contains(m, `skills_hub_project_sessions{project="support"} 0`) {
		t.Error("B's /metrics count no session of project support")
	}

	// PostgreSQL stops: both say so on /healthz, the API and a request
	// that needs the store answer 503 JSON; nothing hangs.
	pg.Stop()
	waitStatus(t, a+"/healthz", 503)
	waitStatus(t, b+"/healthz", 503)
	code, body = hubCall(t, "GET", b+"/api/projects", admin, nil)
	var apiErr struct {
		Error struct{ Code, Message string }
	}
	if code != 503 || json.Unmarshal(body, &apiErr) != nil || apiErr.Error.Code == "" {
		t.Errorf("the API on B during the outage: %d %s", code, body)
	}
	code, body = mcpPost(t, b+"/p/other/mcp", otherTok, "2025-11-25", "skills/list", `{}`)
	var rpcErr struct {
		Error struct {
			Data struct{ Code string }
		}
	}
	if code != 503 || json.Unmarshal(body, &rpcErr) != nil || rpcErr.Error.Data.Code != "store_unavailable" {
		t.Errorf("an unloaded project on B during the outage: %d %s", code, body)
	}

	// Back: healthy again, and a binding through A still reaches B.
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, a+"/healthz", 200)
	waitStatus(t, b+"/healthz", 200)
	deadline := time.Now().Add(30 * time.Second)
	for {
		start = time.Now()
		code, body = hubCall(t, "DELETE", a+"/api/projects/support/skills/"+v2, admin, nil)
		if code == 200 {
			break
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("unbinding after the restart: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("after the restart, A → B: %v", after(t, sess.resources, start, "resources/list_changed on B's session after the restart"))
	if code, body := mcpPost(t, b+"/p/other/mcp", otherTok, "2025-11-25", "skills/list", `{}`); code != 200 {
		t.Errorf("the unloaded project on B after the restart: %d %s", code, body)
	}
	if strings.Contains(metrics(), "skills_hub_store_errors_total 0\n") {
		t.Error("B's /metrics count no store error after the outage")
	}
	for _, l := range []string{logA(), logB()} {
		if strings.Contains(l, tok) || strings.Contains(l, admin) {
			t.Error("a replica's log holds a token")
		}
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

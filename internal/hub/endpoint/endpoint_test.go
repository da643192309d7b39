package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := pg.Main(m)
	stopDocker()
	removeTestCgroups()
	os.Exit(code)
}

// backends runs fn on SQLite and on a real PostgreSQL.
func backends(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")}))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, openStore(t, store.Options{Database: pg.Database(t)}))
	})
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

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nDo the thing.\n"
}

func install(t testing.TB, db *store.DB, name, desc string, extra storetest.Tree) store.Version {
	t.Helper()
	tree := storetest.Tree{"SKILL.md": skillMD(name, desc)}
	for k, v := range extra {
		tree[k] = v
	}
	v, _, err := db.Install(context.Background(), storetest.Version(name, tree))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func projectToken(t testing.TB, db *store.DB, project string) string {
	t.Helper()
	_, secret, err := db.CreateToken(context.Background(), store.NewToken{Kind: store.ProjectToken, ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// hub is an endpoint over db behind an httptest server.
type hub struct {
	e   *endpoint.Endpoint
	srv *httptest.Server
}

func startHub(t testing.TB, db *store.DB, opts endpoint.Options) *hub {
	t.Helper()
	opts.Store = db
	opts.CacheDir = t.TempDir()
	h := &hub{}
	var base string
	if opts.BaseURL == "" {
		h.srv = httptest.NewUnstartedServer(nil)
		base = "http://" + h.srv.Listener.Addr().String()
		opts.BaseURL = base
	} else {
		h.srv = httptest.NewUnstartedServer(nil)
	}
	e, err := endpoint.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	h.srv.Config.Handler = e
	h.srv.Start()
	t.Cleanup(func() {
		e.Close()
		h.srv.Close()
	})
	return h
}

func (h *hub) url(project string) string { return h.srv.URL + "/p/" + project + "/mcp" }

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// events counts a session's list-changed notifications.
type events struct {
	tools, resources chan struct{}
}

// connect opens a session (2025-11-25, with its SSE stream) on project's
// endpoint.
func (h *hub) connect(t *testing.T, project, token string) (*mcp.ClientSession, *events) {
	t.Helper()
	ev := &events{tools: make(chan struct{}, 64), resources: make(chan struct{}, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { ev.tools <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { ev.resources <- struct{}{} },
	})
	tr := &mcp.StreamableClientTransport{Endpoint: h.url(project), HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ev
}

func wait(t *testing.T, ch chan struct{}, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-ch:
		return time.Since(start)
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s within 15 s", what)
		return 0
	}
}

// quiet checks that nothing arrives on the channels for a moment (an
// absence cannot be waited for; a notification would come within 10 ms of
// the change the caller already saw reach other sessions).
func quiet(t *testing.T, what string, chs ...chan struct{}) {
	t.Helper()
	timer := time.After(300 * time.Millisecond)
	for {
		select {
		case <-chs[0]:
			t.Fatalf("unexpected %s", what)
		case <-func() chan struct{} {
			if len(chs) > 1 {
				return chs[1]
			}
			return nil
		}():
			t.Fatalf("unexpected %s", what)
		case <-timer:
			return
		}
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
		if tl.OutputSchema == nil || tl.InputSchema == nil {
			t.Errorf("tool %s lacks an input or output schema", tl.Name)
		}
	}
	slices.Sort(out)
	return out
}

// rpc posts one JSON-RPC request without a session (the stateless path)
// and returns the status and decoded body.
func rpc(t *testing.T, url, token, version, method string, params any) (int, map[string]any, http.Header) {
	t.Helper()
	p, _ := json.Marshal(params)
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + string(p) + `}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = raw[i+6:]
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, m, resp.Header
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	d, _ := e["data"].(map[string]any)
	s, _ := d["code"].(string)
	return s
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	if res.IsError {
		m = map[string]any{}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				m["error"] = tc.Text
			}
		}
	}
	return m, res.IsError
}

// The whole endpoint on both backends: the bound versions served, the tools
// there only while something is bound, binding changes reaching the right
// sessions only, unchanged re-binds silent, pause, and the token rules.
func TestEndpoint(t *testing.T) {
	backends(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, id := range []string{"alpha", "beta"} {
			if err := db.CreateProject(ctx, id, id); err != nil {
				t.Fatal(err)
			}
		}
		pdf1 := install(t, db, "pdf", "Fill PDF forms.", storetest.Tree{"references/guide.md": "# Guide\n", "bin.dat": "\x00\x01\x02"})
		pdf2 := install(t, db, "pdf", "Fill PDF forms, version two.", nil)
		xlsx := install(t, db, "xlsx", "Edit spreadsheets.", nil)
		if _, err := db.BindVersion(ctx, "alpha", pdf1.ID); err != nil {
			t.Fatal(err)
		}
		ta, tb := projectToken(t, db, "alpha"), projectToken(t, db, "beta")
		h := startHub(t, db, endpoint.Options{})

		csA, evA := h.connect(t, "alpha", ta)
		csB, evB := h.connect(t, "beta", tb)
		if got := toolNames(t, csA); !slices.Equal(got, []string{"get_skill", "list_skills", "read_skill_file"}) {
			t.Fatalf("alpha's tools = %v", got)
		}
		if got := toolNames(t, csB); len(got) != 0 {
			t.Fatalf("beta, with nothing bound, lists tools %v", got)
		}
		initA, initB := csA.InitializeResult(), csB.InitializeResult()
		if !strings.Contains(initA.Instructions, "list_skills") || strings.Contains(initB.Instructions, "list_skills") {
			t.Fatalf("instructions: alpha %q, beta %q", initA.Instructions, initB.Instructions)
		}
		if initB.Capabilities.Tools == nil || !initB.Capabilities.Tools.ListChanged {
			t.Fatalf("beta does not advertise tools.listChanged: %+v", initB.Capabilities)
		}

		// SEP-2640 over the stateless revision.
		ns1 := strings.TrimPrefix(pdf1.TreeDigest, "sha256:")[:12]
		uri1 := "skill://" + ns1 + "/pdf/SKILL.md"
		st, m, _ := rpc(t, h.url("alpha"), ta, "2025-11-25", "skills/list", map[string]any{})
		if st != 200 || !strings.Contains(mustJSON(m), uri1) {
			t.Fatalf("skills/list: %d %v", st, m)
		}
		st, m, _ = rpc(t, h.url("alpha"), ta, "2025-11-25", "skills/get", map[string]any{"uri": uri1})
		if st != 200 || m["result"] == nil {
			t.Fatalf("skills/get: %d %v", st, m)
		}
		st, m, _ = rpc(t, h.url("alpha"), ta, "2025-11-25", "resources/read", map[string]any{"uri": "skill://" + ns1 + "/pdf/references/guide.md"})
		if st != 200 || !strings.Contains(mustJSON(m), "# Guide") {
			t.Fatalf("resources/read: %d %v", st, m)
		}

		// The tools.
		out, isErr := callTool(t, csA, "list_skills", map[string]any{"query": "pdf"})
		if isErr || !strings.Contains(mustJSON(out), "pdf@"+ns1) {
			t.Fatalf("list_skills: %v", out)
		}
		out, isErr = callTool(t, csA, "get_skill", map[string]any{"skill": "pdf"})
		if isErr || !strings.Contains(out["skill_md"].(string), "Do the thing.") || len(out["files"].([]any)) != 3 || out["profile"] != nil {
			t.Fatalf("get_skill: %v", out)
		}
		out, isErr = callTool(t, csA, "read_skill_file", map[string]any{"skill": "pdf@" + ns1, "path": "references/guide.md"})
		if isErr || out["text"] != "# Guide\n" {
			t.Fatalf("read_skill_file: %v", out)
		}
		if _, isErr = callTool(t, csA, "read_skill_file", map[string]any{"skill": "pdf", "path": "bin.dat"}); !isErr {
			t.Fatal("read_skill_file returned a binary file")
		}
		if _, isErr = callTool(t, csA, "get_skill", map[string]any{"skill": "xlsx"}); !isErr {
			t.Fatal("get_skill served a skill not bound to the project")
		}

		// A binding change on alpha: alpha's session hears resources (the
		// tools stay), beta's nothing.
		start := time.Now()
		if _, err := db.BindVersion(ctx, "alpha", pdf2.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, evA.resources, "resources/list_changed on alpha")
		t.Logf("binding change reached the session in %v", time.Since(start))
		quiet(t, "notification on beta, or tools/list_changed on alpha", evB.resources, evA.tools)
		out, isErr = callTool(t, csA, "get_skill", map[string]any{"skill": "pdf"})
		if !isErr || !strings.Contains(mustJSON(out), "versions bound") {
			// two versions of pdf: the bare name is ambiguous
			t.Fatalf("get_skill pdf with two versions bound: %v", out)
		}
		// Re-saving an unchanged binding: nothing.
		if r, err := db.BindVersion(ctx, "alpha", pdf2.ID); err != nil || r.Changed {
			t.Fatalf("re-bind: %+v %v", r, err)
		}
		quiet(t, "notification after an unchanged re-bind", evA.resources, evA.tools)

		// beta's first binding: its tools appear.
		if _, err := db.BindVersion(ctx, "beta", xlsx.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, evB.tools, "tools/list_changed on beta")
		// Adding three tools may notify once or more: the list, not the
		// count of notifications, is the behaviour.
		waitFor(t, "beta's three tools after binding", func() bool { return len(toolNames(t, csB)) == 3 })
		if _, err := db.UnbindVersion(ctx, "beta", xlsx.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, evB.tools, "tools/list_changed on beta after unbinding")
		waitFor(t, "beta's tools gone after unbinding", func() bool { return len(toolNames(t, csB)) == 0 })

		// Tokens: none, unknown, another project's, revoked.
		st, m, hdr := rpc(t, h.url("alpha"), "", "2025-11-25", "ping", nil)
		if st != 401 || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || errCode(m) != "token_missing" {
			t.Fatalf("no token: %d %v %q", st, m, hdr.Get("WWW-Authenticate"))
		}
		st, m, _ = rpc(t, h.url("alpha"), tb, "2025-11-25", "ping", nil)
		if st != 404 || errCode(m) != "project_not_found" {
			t.Fatalf("beta's token on alpha: %d %v", st, m)
		}
		st, m, _ = rpc(t, h.url("nope"), ta, "2025-11-25", "ping", nil)
		if st != 404 || errCode(m) != "project_not_found" {
			t.Fatalf("unknown project: %d %v", st, m)
		}
		tokens, _ := db.ListTokens(ctx, store.TokenFilter{ProjectID: "beta"})
		if _, err := db.RevokeToken(ctx, tokens[0].ID); err != nil {
			t.Fatal(err)
		}
		h.e.TokenRevoked(tokens[0].ID) // as the admin API of this process does
		st, m, hdr = rpc(t, h.url("beta"), tb, "2025-11-25", "ping", nil)
		if st != 401 || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) || strings.Contains(mustJSON(m), tb) {
			t.Fatalf("revoked token: %d %v %q", st, m, hdr.Get("WWW-Authenticate"))
		}

		// Pause: refused, and nothing counted as served.
		before := requests(h.e, "alpha")
		if _, err := db.PauseProject(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			st, m, _ = rpc(t, h.url("alpha"), ta, "2025-11-25", "ping", nil)
			if st == 403 || time.Now().After(deadline) {
				break
			}
			before = requests(h.e, "alpha")
			time.Sleep(10 * time.Millisecond)
		}
		if st != 403 || errCode(m) != "project_paused" || requests(h.e, "alpha") != before {
			t.Fatalf("paused: %d %v, served %d → %d", st, m, before, requests(h.e, "alpha"))
		}
	})
}

func requests(e *endpoint.Endpoint, id string) int64 {
	for _, p := range e.Stats().Projects {
		if p.ID == id {
			return p.Requests
		}
	}
	return -1
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

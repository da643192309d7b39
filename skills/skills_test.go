package skills_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/examples"
	"github.com/skills-mcp/skills-mcp/internal/search"
	"github.com/skills-mcp/skills-mcp/skills"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nDo the thing.\n"
}

func mapFS(names ...string) fstest.MapFS {
	m := fstest.MapFS{}
	for _, n := range names {
		m[n+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(n, "Use for "+n+" work.")), Mode: 0o644}
	}
	return m
}

func open(t *testing.T, libs []skills.Library, opts *skills.Options) *skills.Catalog {
	t.Helper()
	c, err := skills.Open(context.Background(), libs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connect attaches nothing: it connects an in-memory client to ms.
func connect(t *testing.T, ms *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
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
	}
	return out
}

// A caller's server keeps its own tool and gains the catalog's surface.
func TestAttachToCallersServer(t *testing.T) {
	c := open(t, []skills.Library{{FS: mapFS("alpha", "beta")}}, nil)
	ms := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	mcp.AddTool(ms, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	if err := skills.Attach(ms, c, &skills.AttachOptions{Name: "team", Tools: true}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ms, nil)
	names := toolNames(t, cs)
	for _, want := range []string{"echo", "team_search_skills", "team_get_skill"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list has %v, want %s among them", names, want)
		}
	}
	caps := cs.InitializeResult().Capabilities
	if _, ok := caps.Extensions["io.modelcontextprotocol/skills"]; !ok {
		t.Errorf("initialize declares extensions %v, want the Skills extension", caps.Extensions)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://alpha/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Contents[0].Text; !strings.Contains(got, "name: alpha") {
		t.Errorf("skill://alpha/SKILL.md = %q", got)
	}
	if err := skills.Attach(ms, c, nil); err == nil {
		t.Error("attaching twice to one server succeeded")
	}
}

// Each part can be left out.
func TestAttachParts(t *testing.T) {
	c := open(t, []skills.Library{{FS: mapFS("alpha")}}, nil)
	ms := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	if err := skills.Attach(ms, c, &skills.AttachOptions{NoMethods: true}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ms, nil)
	if names := toolNames(t, cs); len(names) != 0 {
		t.Errorf("tools with NoTools: %v", names)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"]; ok {
		t.Error("the Skills extension is declared with NoMethods")
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://alpha/SKILL.md"}); err != nil {
		t.Errorf("resources are still served: %v", err)
	}
}

// An embed.FS and a zip.Reader serve the same catalog.
func TestFSLibraries(t *testing.T) {
	sub, err := fs.Sub(examples.Library, "library")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := fs.ReadFile(sub, p)
		w, _ := zw.Create(p)
		w.Write(data)
		return nil
	})
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	a := open(t, []skills.Library{{FS: sub}}, nil)
	b := open(t, []skills.Library{{FS: zr}}, nil)
	if a.Len() == 0 || !slices.Equal(a.Skills(), b.Skills()) {
		t.Errorf("embed.FS serves %v, zip.Reader %v", a.Skills(), b.Skills())
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Reload reports what was added, removed and changed.
func TestReloadReportsChanges(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "alpha", "SKILL.md"), skillMD("alpha", "Use for alpha work."))
	write(t, filepath.Join(dir, "beta", "SKILL.md"), skillMD("beta", "Use for beta work."))
	c := open(t, []skills.Library{{Namespace: "team", Dir: dir}}, &skills.Options{CacheDir: t.TempDir()})
	write(t, filepath.Join(dir, "alpha", "SKILL.md"), skillMD("alpha", "Use for other alpha work."))
	write(t, filepath.Join(dir, "gamma", "SKILL.md"), skillMD("gamma", "Use for gamma work."))
	if err := os.RemoveAll(filepath.Join(dir, "beta")); err != nil {
		t.Fatal(err)
	}
	ch, err := c.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := skills.Changes{Added: []string{"skill://team/gamma/SKILL.md"}, Removed: []string{"skill://team/beta/SKILL.md"}, Changed: []string{"skill://team/alpha/SKILL.md"}}
	if !slices.Equal(ch.Added, want.Added) || !slices.Equal(ch.Removed, want.Removed) || !slices.Equal(ch.Changed, want.Changed) {
		t.Errorf("Reload = %+v, want %+v", ch, want)
	}
	if ch, err := c.Reload(context.Background()); err != nil || len(ch.Added)+len(ch.Removed)+len(ch.Changed) != 0 {
		t.Errorf("a second Reload = %+v, %v; want nothing changed", ch, err)
	}
}

// A watched catalog notifies the sessions of the server it is attached to.
func TestWatchNotifiesSessions(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "alpha", "SKILL.md"), skillMD("alpha", "Use for alpha work."))
	c := open(t, []skills.Library{{Dir: dir}}, &skills.Options{Watch: true, CacheDir: t.TempDir()})
	ms := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	if err := skills.Attach(ms, c, nil); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	cs := connect(t, ms, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
		changed <- struct{}{}
	}})
	_ = cs
	write(t, filepath.Join(dir, "beta", "SKILL.md"), skillMD("beta", "Use for beta work."))
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	notified := false
	for !notified || c.Len() != 2 {
		select {
		case <-changed:
			notified = true
		case <-tick.C:
		case <-deadline:
			t.Fatalf("20 s after an edit the catalog serves %v, notified %t", c.Skills(), notified)
		}
	}
}

// headerTransport adds a tenant header to every request.
type headerTransport struct{ tenant string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", h.tenant)
	return http.DefaultTransport.RoundTrip(r)
}

func post(t *testing.T, url, tenant, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Tenant", tenant)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// One handler serves each request on the catalog its selector picks, and
// contains a selector that fails, panics or blocks to that request.
func TestHandlerSelectsPerRequest(t *testing.T) {
	cats := map[string]*skills.Catalog{
		"a": open(t, []skills.Library{{FS: mapFS("alpha")}}, nil),
		"b": open(t, []skills.Library{{FS: mapFS("beta", "gamma")}}, nil),
	}
	closed := open(t, []skills.Library{{FS: mapFS("delta")}}, nil)
	closed.Close()
	h, err := skills.NewHandler(skills.HandlerOptions{
		SelectTimeout: 200 * time.Millisecond,
		Select: func(r *http.Request) (*skills.Catalog, error) {
			switch tenant := r.Header.Get("X-Tenant"); tenant {
			case "panic":
				panic("selector bug")
			case "block":
				<-r.Context().Done()
				return nil, r.Context().Err()
			case "closed":
				return closed, nil
			default:
				if c := cats[tenant]; c != nil {
					return c, nil
				}
				return nil, nil
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for tenant, want := range map[string][]string{"a": {"skill://alpha/SKILL.md"}, "b": {"skill://beta/SKILL.md", "skill://gamma/SKILL.md"}} {
		cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerTransport{tenant}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListResources(context.Background(), nil)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if !slices.Equal(got, want) {
			t.Errorf("tenant %s lists %v, want %v", tenant, got, want)
		}
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for tenant, status := range map[string]int{"nobody": 404, "panic": 500, "block": 504, "closed": 404} {
		code, body := post(t, srv.URL, tenant, ping)
		var msg struct {
			Error *struct{ Code int } `json:"error"`
		}
		if code != status || json.Unmarshal([]byte(body), &msg) != nil || msg.Error == nil {
			t.Errorf("tenant %s: %d %s, want %d and a JSON-RPC error", tenant, code, body, status)
		}
	}
}

// Bad input is an error, never a panic.
func TestBadInput(t *testing.T) {
	if _, err := skills.Open(context.Background(), nil, nil); err == nil {
		t.Error("Open with no library succeeded")
	}
	if _, err := skills.Open(context.Background(), []skills.Library{{Dir: "x", FS: mapFS("a")}}, nil); err == nil {
		t.Error("a library with two sources opened")
	}
	if _, err := skills.Open(context.Background(), []skills.Library{{Dir: filepath.Join(t.TempDir(), "missing")}}, nil); err == nil {
		t.Error("a missing folder opened")
	}
	c := open(t, []skills.Library{{FS: mapFS("alpha")}}, nil)
	if err := skills.Attach(nil, c, nil); err == nil {
		t.Error("Attach to a nil server succeeded")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
	if _, err := c.Reload(context.Background()); err == nil {
		t.Error("Reload of a closed catalog succeeded")
	}
	if err := skills.Attach(mcp.NewServer(&mcp.Implementation{Name: "x", Version: "v"}, nil), c, nil); err == nil {
		t.Error("Attach of a closed catalog succeeded")
	}
	if _, err := skills.NewHandler(skills.HandlerOptions{}); err == nil {
		t.Error("a handler without Select was made")
	}
}

// By default Attach adds the extension only: no tool, prompt or
// instructions join the caller's server; asked for, the instructions name
// the caller's server and count in the singular for one skill.
func TestAttachDefaults(t *testing.T) {
	c := open(t, []skills.Library{{FS: mapFS("alpha")}}, nil)
	ms := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	if err := skills.Attach(ms, c, nil); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ms, nil)
	if names := toolNames(t, cs); len(names) != 0 {
		t.Errorf("tools by default: %v", names)
	}
	if got := cs.InitializeResult().Instructions; got != "" {
		t.Errorf("instructions by default: %q", got)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"]; !ok {
		t.Error("the Skills extension is not declared by default")
	}

	ms2 := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	if err := skills.Attach(ms2, c, &skills.AttachOptions{Instructions: true}); err != nil {
		t.Fatal(err)
	}
	got := connect(t, ms2, nil).InitializeResult().Instructions
	if !(strings.HasPrefix(got, "mine serves 1 Agent Skill:") || strings.HasPrefix(got, "This server serves 1 Agent Skill:")) || strings.Contains(got, "search_skills") {
		t.Errorf("instructions = %q; want them to name the server, count one skill and name no tool", got)
	}
}

// Open reports what it skipped: Problems lists it, Strict fails with all
// of it, a library without a skill is ErrNoSkills unless allowed, and a
// folder that is not there matches fs.ErrNotExist.
func TestOpenProblems(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	lib := fstest.MapFS{
		"good/SKILL.md":   {Data: []byte("---\nname: good\ndescription: A good skill.\n---\nBody.\n")},
		"broken/SKILL.md": {Data: []byte("---\nname: [not a name\n---\n")},
	}
	c, err := skills.Open(ctx, []skills.Library{{FS: lib}}, &skills.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ps := c.Problems()
	if len(ps) != 1 || ps[0].Path != "broken" && !strings.HasPrefix(ps[0].Path, "broken") {
		t.Errorf("Problems = %+v, want the broken skill", ps)
	}
	_, err = skills.Open(ctx, []skills.Library{{FS: lib}}, &skills.Options{Logger: quiet, Strict: true})
	var pe *skills.ProblemsError
	if !errors.Is(err, skills.ErrProblems) || !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Errorf("Strict: %v, want a ProblemsError with the broken skill", err)
	}
	empty := fstest.MapFS{"notes/README.md": {Data: []byte("no skill here")}}
	if _, err := skills.Open(ctx, []skills.Library{{FS: empty}}, &skills.Options{Logger: quiet}); !errors.Is(err, skills.ErrNoSkills) {
		t.Errorf("no skill: %v, want ErrNoSkills", err)
	}
	if c, err := skills.Open(ctx, []skills.Library{{FS: empty}}, &skills.Options{Logger: quiet, AllowEmpty: true}); err != nil {
		t.Errorf("AllowEmpty: %v", err)
	} else {
		c.Close()
	}
	_, err = skills.Open(ctx, []skills.Library{{Dir: filepath.Join(t.TempDir(), "missing")}}, &skills.Options{Logger: quiet})
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "skills: ") {
		t.Errorf("a missing folder: %v, want skills: … matching fs.ErrNotExist", err)
	}
	if _, err := skills.Open(ctx, []skills.Library{{}}, nil); !errors.Is(err, skills.ErrLibrary) {
		t.Errorf("a library with no source: %v, want ErrLibrary", err)
	}
}

// TestSearchRanking: a catalog's search, which the MCP search tool, the
// skill browser and the hub's list_skills all answer from, ranks exactly
// as internal/search does over the same skills.
func TestSearchRanking(t *testing.T) {
	type sk struct{ name, desc, body string }
	all := []sk{
		{"treatment-plans", "Write treatment plans for patients after surgery.", "List the goals, the therapy and the follow-up visits."},
		{"clinical-reports", "Write clinical case reports for journals.", "Quote the patient's treatment plan, the surgery notes, the therapy and the follow-up."},
		{"invoice-reminders", "Remind customers of overdue invoices.", "Be polite; plan the follow-up."},
		{"code-review", "Review a pull request for bugs and style.", "Read the diff, then the tests; write the follow-up plan."},
	}
	lib := fstest.MapFS{}
	var docs []search.Doc
	for i, s := range all {
		lib[s.name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + s.name + "\ndescription: " + s.desc + "\n---\n" + s.body + "\n")}
		docs = append(docs, search.Doc{ID: i, Name: s.name, Description: s.desc, Body: s.body + "\n"})
	}
	c, err := skills.Open(context.Background(), []skills.Library{{FS: lib}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ix := search.Build(docs, 1)
	for _, q := range []string{"plan the therapy for my patient after surgery", "follow-up plan", "reviewer for my code", "overdue"} {
		var got, want []string
		for _, h := range c.Search(q, 10) {
			got = append(got, h.Name)
		}
		for _, h := range ix.Search(search.Query{Text: q, Limit: 10}) {
			want = append(want, all[h.ID].name)
		}
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("Search(%q) = %v, internal/search ranks %v", q, got, want)
		}
	}
}

package hubadmin_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree/githubtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/bwrap"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
	"github.com/skills-mcp/skills-mcp/internal/web/hubadmin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines left behind: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// clock is a settable clock for session expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is the admin pages over a real hub (SQLite in a temporary folder)
// and its real admin API, served by httptest, with admin tokens of each
// scope.
type env struct {
	t                  testing.TB
	h                  *hub.Hub
	db                 *store.DB
	api                *api.API
	srv                *httptest.Server
	clk                *clock
	admin, write, read string
}

func newEnv(t testing.TB) *env { return newEnvWith(t, envOptions{}) }

// newJobEnv is newEnv with a job service on the bubblewrap backend: jobs
// run for real. Without bwrap the test is skipped loudly (failed under
// CI=true).
func newJobEnv(t testing.TB) *env { return newEnvWith(t, envOptions{jobs: true}) }

// envOptions says what an env's hub has beyond the defaults.
type envOptions struct {
	jobs bool // a job service on bubblewrap
	// requireApproval opens the hub binding approved versions only.
	requireApproval bool
	// github, if set, is where the hub reads https://github.com
	// repositories (catalog items included).
	github *githubtest.Server
	// lease is the job service's lease (if zero, the default). An hour
	// keeps the service from settling what seed leaves to lapsed replicas
	// while a test looks at it.
	lease time.Duration
	// seed, if set, fills the hub (its rules h, its store db) before the
	// job service starts (whose worker would claim a queued job first).
	seed func(h *hub.Hub, db *store.DB)
}

func newEnvWith(t testing.TB, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	withJobs := o.jobs
	if withJobs {
		_, err := exec.LookPath("bwrap")
		sandboxtest.Need(t, "bubblewrap (bwrap)", err)
	}
	db, err := store.Open(ctx, store.Options{Dir: filepath.Join(t.TempDir(), "data"), RequireApproval: o.requireApproval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ho := &hub.Options{}
	if o.github != nil {
		ho.GitHub = o.github.Options()
	}
	h := hub.New(db, ho)
	if o.seed != nil {
		o.seed(h, db)
	}
	ao := api.Options{Hub: h, Store: db, Version: "test"}
	if withJobs {
		// The sandbox runs as an unprivileged uid, which must be able to
		// walk to the job folders.
		tmp := t.TempDir()
		for _, d := range []string{tmp, filepath.Dir(tmp)} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
		svc, err := jobs.New(jobs.Options{Store: db, Executor: bwrap.New(nil), Replica: "ui-test",
			Dir: filepath.Join(tmp, "jobs"), RunWait: 30 * time.Second, Lease: o.lease})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		enf, _, err := svc.Start(ctx)
		if err != nil {
			sandboxtest.Need(t, "a working bubblewrap sandbox", err)
		}
		ao.Jobs, ao.Replica = svc, "ui-test"
		ao.Runtime = func(context.Context) []api.Backend {
			return []api.Backend{{Name: "bwrap", Available: true, Chosen: true, Enforced: enf.Limits, Missing: enf.Missing}}
		}
	}
	a, err := api.New(ao)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h, db: db, api: a, clk: &clock{t: time.Now()}}
	adm, err := hubadmin.New(hubadmin.Options{API: a, Verify: db.VerifyToken, Now: e.clk.now, SessionTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Close() })
	mux := http.NewServeMux()
	mux.Handle("/api/", a)
	mux.Handle("/", adm)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	for _, s := range []store.Scope{store.ScopeAdmin, store.ScopeWrite, store.ScopeRead} {
		_, secret, err := h.CreateToken(context.Background(), hub.TokenRequest{Scope: s, Name: string(s) + " tester"})
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

// testLog writes the pages' warnings and errors to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// user is a browser without script: a cookie jar and the last CSRF token
// a page gave.
type user struct {
	e    *env
	c    *http.Client
	csrf string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in with secret and returns the user.
func (e *env) signIn(secret string) *user {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	u := &user{e: e, c: &http.Client{Jar: jar}}
	st, body := u.post("/signin", url.Values{"token": {secret}, "next": {"/projects"}})
	if st != http.StatusOK || !strings.Contains(body, "<h1>Projects</h1>") {
		e.t.Fatalf("sign-in answered %d:\n%s", st, body)
	}
	return u
}

// get fetches a page and keeps its CSRF token.
func (u *user) get(path string) (int, string) {
	u.e.t.Helper()
	resp, err := u.c.Get(u.e.srv.URL + path)
	if err != nil {
		u.e.t.Fatal(err)
	}
	return u.keep(resp)
}

func (u *user) keep(resp *http.Response) (int, string) {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := csrfRE.FindSubmatch(b); m != nil {
		u.csrf = string(m[1])
	}
	return resp.StatusCode, string(b)
}

// post sends a form as a browser of the site does (same origin), with the
// session's CSRF token unless the form has one.
func (u *user) post(path string, form url.Values) (int, string) {
	u.e.t.Helper()
	if form.Get("csrf") == "" && u.csrf != "" {
		form.Set("csrf", u.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, u.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := u.c.Do(req)
	if err != nil {
		u.e.t.Fatal(err)
	}
	return u.keep(resp)
}

// upload posts a multipart form with one file, the CSRF token in the
// action's query as the page's form has it.
func (u *user) upload(path, field, name string, data []byte, fields map[string]string) (int, string) {
	u.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(data)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, u.e.srv.URL+path+"?csrf="+url.QueryEscape(u.csrf), &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := u.c.Do(req)
	if err != nil {
		u.e.t.Fatal(err)
	}
	return u.keep(resp)
}

// apiGet reads an API route with the admin token, to check what the pages
// did (or did not do).
func (e *env) apiGet(path string, out any) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) projectIDs() []string {
	var out struct {
		Projects []store.Project `json:"projects"`
	}
	e.apiGet("/api/projects", &out)
	var ids []string
	for _, p := range out.Projects {
		ids = append(ids, p.ID)
	}
	return ids
}

// zipOf builds a ZIP of files (name → content), sorted by name.
func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hdr := &zip.FileHeader{Name: n, Method: zip.Deflate}
		if strings.Contains(n, "huge") {
			hdr.Method = zip.Store // a repetitive file would pass the ratio bound
		}
		if strings.HasSuffix(n, ".py") || strings.HasSuffix(n, ".sh") {
			hdr.SetMode(0o755)
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[n]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// reportSkill is the package the tests import: a script that reads an
// input and writes an output, and a file whose text and name are hostile.
func reportSkill() map[string]string {
	return map[string]string{
		"SKILL.md": "---\nname: report\ndescription: Counts the lines of an input file and writes a report.\n---\n\n# Report\n\nRun `scripts/report.py INPUT`.\n",
		"scripts/report.py": "#!/usr/bin/env python3\nimport os, sys, hashlib\nos.chdir('/work')\n" +
			"data = open(sys.argv[1], 'rb').read()\n" +
			"open('report.txt', 'w').write('lines=%d sha256=%s\\n' % (data.count(b'\\n'), hashlib.sha256(data).hexdigest()))\n",
		"notes/<img src=x onerror=window.__pwned=1>.md": "<script>window.__pwned = 'file'</script>\n",
		"notes/hostile.txt":                             "<script>window.__pwned = 'text'</script> <a href=\"javascript:alert(1)\">x</a> bad \xff byte\n",
	}
}

// apiClient calls the admin API as the admin token, for fixtures: the
// pages' tests set up through the API what they do not test.
type apiClient struct{ e *env }

func (e *env) apiUser() apiClient { return apiClient{e} }

// call sends a JSON body (nil: none) and decodes the answer into out (nil:
// discard); any status over 299 fails the test.
func (c apiClient) call(method, path string, body, out any) {
	c.e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.e.admin)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.send(req, out)
}

func (c apiClient) send(req *http.Request, out any) {
	c.e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode > 299 {
		c.e.t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
		}
	}
}

// upload sends one file to a job's inputs.
func (c apiClient) upload(path, name string, data []byte) {
	c.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("path", name)
	fw, _ := mw.CreateFormFile("file", filepath.Base(name))
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, c.e.srv.URL+path, &buf)
	req.Header.Set("Authorization", "Bearer "+c.e.admin)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	c.send(req, nil)
}

// prepare prepares a version's profile and waits until it is prepared.
func (c apiClient) prepare(id string) {
	c.e.t.Helper()
	c.call(http.MethodPost, "/api/skills/"+id+"/prepare", nil, nil)
	c.waitPrepared(id, "prepared")
}

// waitPrepared waits, with a generous deadline, for a version's
// preparation to end in state want.
func (c apiClient) waitPrepared(id, want string) {
	c.e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var p struct {
			State string `json:"state"`
		}
		c.call(http.MethodGet, "/api/skills/"+id+"/prepare", nil, &p)
		if p.State == want {
			return
		}
		if p.State != "running" || time.Now().After(deadline) {
			c.e.t.Fatalf("preparation of %s: %s, want %s", id, p.State, want)
		}
		time.Sleep(20 * time.Millisecond) // the API has no change feed for preparations
	}
}

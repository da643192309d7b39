package main_test

// End-to-end tests: they build the real binary once and drive it as a user
// and an MCP client would, over stdio and over HTTP.

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/mcpclient"
	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skills-mcp-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "skills-mcp")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building skills-mcp: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is the environment of a server under test: its caches live in
// the test's temporary folder, never in the user's.
func testEnv(t *testing.T) []string {
	return append(os.Environ(), "SKILLS_CACHE_DIR="+t.TempDir())
}

// testLibrary is the repository's test library, relative to this package.
const testLibrary = "../../testdata/library"

func newClient(t *testing.T) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *skillsext.ListSkillsResult](c, skillsext.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *skillsext.GetSkillResult](c, skillsext.MethodGet); err != nil {
		t.Fatal(err)
	}
	return c
}

// wireCheck validates every message a server sends on one connection
// against the MCP JSON schema of the negotiated revision, and fails the test
// at its end for each violation.
type wireCheck struct {
	st        *mcpschema.Stream
	mu        sync.Mutex
	validated int
	bad       []string
}

func (w *wireCheck) Sent(msg []byte) { w.st.Sent(msg) }

func (w *wireCheck) Received(msg []byte) {
	vs := w.st.Received(msg)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.validated++
	for _, v := range vs {
		if len(w.bad) < 50 {
			w.bad = append(w.bad, fmt.Sprintf("%s\n  in %.400s", v, msg))
		}
	}
}

// validated returns a meter whose tap checks every message received at
// revision rev (or the one an initialize negotiates).
func validated(t *testing.T, rev string) *mcpclient.Meter {
	t.Helper()
	st, err := mcpschema.NewStream(rev)
	if err != nil {
		t.Fatal(err)
	}
	w := &wireCheck{st: st}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.validated == 0 {
			t.Error("no message from the server was validated")
		}
		for _, b := range w.bad {
			t.Errorf("the server sent a message its %s schema refuses: %s", st.Revision(), b)
		}
	})
	return &mcpclient.Meter{Tap: w}
}

// stdioTransport runs the binary with args over stdio, validating every
// line it sends at revision rev.
func stdioTransport(t *testing.T, rev string, env []string, args ...string) mcp.Transport {
	return &mcpclient.CommandTransport{Argv: append([]string{binary}, args...), Env: env,
		Meter: validated(t, rev), MaxMessageBytes: 64 << 20}
}

// httpTransport reaches url, validating every body and event received at
// revision rev.
func httpTransport(t *testing.T, rev, url string) mcp.Transport {
	tr, err := mcpclient.NewHTTPTransport(url, nil, 64<<20, validated(t, rev))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func listAll(t *testing.T, cs *mcp.ClientSession) []skillsext.Skill {
	t.Helper()
	var all []skillsext.Skill
	cursor := ""
	for range 1000 {
		res, err := mcp.CallCustomMethod[*skillsext.ListSkillsParams, *skillsext.ListSkillsResult](context.Background(), cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Skills...)
		if res.NextCursor == "" {
			return all
		}
		cursor = res.NextCursor
	}
	t.Fatal("listing does not terminate")
	return nil
}

func TestStdio(t *testing.T) {
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tr := stdioTransport(t, v, append(testEnv(t), "SKILLS_ROOT=/must/not/be/read"), "--root", testLibrary, "--page-size", "2")
			cs, err := newClient(t).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			skills := listAll(t, cs)
			if len(skills) != 9 {
				t.Fatalf("listed %d skills, want 9", len(skills))
			}
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://code-review/SKILL.md"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents[0].Text) != 149 {
				t.Errorf("SKILL.md read back as %d bytes, want 149", len(res.Contents[0].Text))
			}
		})
	}
}

// startHTTP starts the binary with --http on a free loopback port and
// returns the MCP endpoint URL once /healthz answers.
func startHTTP(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(testEnv(t), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server did not exit cleanly on SIGINT: %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("server did not stop within 30s of SIGINT")
		}
	})
	// The server logs its URL once listening.
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if _, after, ok := strings.Cut(line, "url="); ok {
				select {
				case urls <- strings.Fields(after)[0]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("server did not report its URL")
		return ""
	}
}

func TestHTTP(t *testing.T) {
	url := startHTTP(t, nil, "--root", testLibrary)
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := newClient(t).Connect(ctx, httpTransport(t, v, url), &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := len(listAll(t, cs)); got != 9 {
				t.Errorf("listed %d skills, want 9", got)
			}
			res, err := mcp.CallCustomMethod[*skillsext.GetSkillParams, *skillsext.GetSkillResult](ctx, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: "skill://platform/deploy/rollback/SKILL.md"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Skill.URI != "skill://platform/deploy/rollback/SKILL.md" {
				t.Errorf("skills/get returned %s", res.Skill.URI)
			}
		})
	}
	base := strings.TrimSuffix(url, "/mcp")
	// The probes say the state and nothing else, for any Host (a
	// kubelet's probe names the pod's IP).
	for _, probe := range []string{"/livez", "/readyz", "/healthz"} {
		req, _ := http.NewRequest("GET", base+probe, nil)
		req.Host = "10.0.0.7:3939"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
			t.Errorf("%s = %d %s", probe, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host got %d, want 403", resp.StatusCode)
	}
}

func TestHTTPToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokenFile, []byte("# comment\nsecret-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, []string{"SKILLS_TOKEN=secret-two"}, "--root", testLibrary, "--token-file", tokenFile)
	for token, want := range map[string]int{"": 401, "wrong": 401, "secret-one": 200, "secret-two": 200} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode == 401) != (want == 401) {
			t.Errorf("token %q: status %d, want %d", token, resp.StatusCode, want)
		}
		if want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("token %q: 401 without WWW-Authenticate", token)
		}
	}
}

// Over HTTP an answer is one application/json body, not an event stream.
func TestHTTPAnswersJSON(t *testing.T) {
	url := startHTTP(t, nil, "--root", testLibrary)
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("status %d, Content-Type %q; want 200 and application/json", resp.StatusCode, ct)
	}
	var answer struct {
		ID     int `json:"id"`
		Result struct {
			Skills []json.RawMessage `json:"skills"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("body is not one JSON-RPC answer: %v", err)
	}
	if answer.ID != 7 || len(answer.Result.Skills) == 0 {
		t.Errorf("answer %+v: want id 7 and the library's skills", answer)
	}
}

// run runs the binary and returns its exit code, stdout and stderr.
func run(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(t), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestStats(t *testing.T) {
	code, stdout, _ := run(t, nil, "--lib", "good="+testLibrary, "--lib", "bad=../../testdata/broken", "--stats")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var st struct {
		Skills    int
		Withheld  int
		Libraries []struct{ Namespace, Origin string }
		Warnings  []struct{ Library, Path, Reason, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if st.Skills < 10 || st.Withheld < 5 || len(st.Warnings) < 5 || st.Libraries[1].Origin == "" {
		t.Errorf("stats = %+v", st)
	}
	// Un-namespaced env twin, and the embedded example with no library.
	code, stdout, _ = run(t, []string{"SKILLS_MCP_ROOT=" + testLibrary}, "--stats")
	if code != 0 || !strings.Contains(stdout, `"skills": 9`) {
		t.Errorf("SKILLS_MCP_ROOT: exit %d %s", code, stdout)
	}
	// SKILLS_ROOT belongs to the skills' own scripts and is never read.
	code, stdout, stderr := run(t, []string{"SKILLS_ROOT=" + testLibrary}, "--stats")
	if code != 0 || !strings.Contains(stderr, "example library") || !strings.Contains(stdout, `"kind": "embedded"`) {
		t.Errorf("embedded example: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// copyTree copies the test library to a temp dir, so that a test may edit it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLiveUpdates(t *testing.T) {
	lib := copyTree(t, testLibrary)
	second := copyTree(t, "../../examples/library")
	cfgDir := t.TempDir()
	cfgPath := filepath.Join(cfgDir, "skills.json")
	writeConfig := func(body string) {
		// Write and rename, as editors do.
		tmp := cfgPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(`{"libraries": [{"namespace": "lib", "root": ` + strconvQuote(lib) + `}]}`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One pending signal at most, so the client's handler never blocks; a
	// signal means "look again", not which change it was.
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *skillsext.ListSkillsResult](c, skillsext.MethodList)
	mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *skillsext.GetSkillResult](c, skillsext.MethodGet)
	cmd := exec.Command(binary, "--config", cfgPath, "--rescan-seconds", "0")
	cmd.Env = testEnv(t)
	stderr := newLogBuffer()
	cmd.Stderr = stderr
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	get := func(uri string) (*skillsext.GetSkillResult, error) {
		return mcp.CallCustomMethod[*skillsext.GetSkillParams, *skillsext.GetSkillResult](ctx, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: uri})
	}
	// awaitState waits until ok holds after a list_changed, looking again
	// after each: a rescan can catch a file between its truncation and its
	// write, and announce that too, so no one notification is the change.
	awaitState := func(what string, ok func() bool) {
		t.Helper()
		notified := false
		for {
			if notified && ok() {
				return
			}
			select {
			case <-changed:
				notified = true
			case <-ctx.Done():
				t.Fatalf("%s: not served (list_changed received: %v); server log:\n%s", what, notified, stderr.String())
			}
		}
	}
	before, err := get("skill://lib/code-review/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}

	// Edit a SKILL.md: the new digest is served and clients are told.
	md := filepath.Join(lib, "code-review", "SKILL.md")
	data, _ := os.ReadFile(md)
	edited := append(data, "\nOne more line.\n"...)
	if err := os.WriteFile(md, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("sha256:%x", sha256.Sum256(edited))
	awaitState("editing a SKILL.md", func() bool {
		after, err := get("skill://lib/code-review/SKILL.md")
		return err == nil && after.Skill.Resources.List[0].Digest == want
	})
	if want == before.Skill.Resources.List[0].Digest {
		t.Fatal("the edit did not change the file")
	}

	// A broken config edit is logged and the old set keeps serving.
	writeConfig(`{"libraries": [], "bogus": true}`)
	if !stderr.waitFor(ctx, "config reload failed") {
		t.Fatalf("the broken config was not reported:\n%s", stderr.String())
	}
	if _, err := get("skill://lib/code-review/SKILL.md"); err != nil {
		t.Errorf("a broken config stopped the library: %v", err)
	}
	// Then a valid one adds a library.
	writeConfig(`{"libraries": [{"namespace": "lib", "root": ` + strconvQuote(lib) + `}, {"namespace": "ex", "root": ` + strconvQuote(second) + `, "title": "Examples", "version": "1.2"}]}`)
	awaitState("adding a library to the config", func() bool {
		_, err := get("skill://ex/brand-assets/SKILL.md")
		return err == nil
	})
	if _, err := get("skill://lib/code-review/SKILL.md"); err != nil {
		t.Errorf("the first library stopped serving: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skills_list_libraries"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(out), `"title":"Examples"`) || strings.Contains(string(out), second) {
		t.Errorf("list_libraries = %s", out)
	}
}

// logBuffer collects a child's stderr and lets a test wait for a line.
type logBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{}
}

func newLogBuffer() *logBuffer { return &logBuffer{more: make(chan struct{}, 1)} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.more <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor reports whether s appears before ctx ends.
func (b *logBuffer) waitFor(ctx context.Context, s string) bool {
	for {
		if strings.Contains(b.String(), s) {
			return true
		}
		select {
		case <-b.more:
		case <-ctx.Done():
			return false
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// zipDir writes the tree at src into a zip at dst, under a wrapper folder as
// release archives have.
func zipDir(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		w, err := zw.Create("wrapper-1.0/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestZipLibrary(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "lib.zip")
	zipDir(t, testLibrary, archive)
	env := []string{"SKILLS_CACHE_DIR=" + filepath.Join(dir, "cache")}
	code, stdout, stderr := run(t, env, "--lib", "z="+archive, "--stats")
	if code != 0 || !strings.Contains(stdout, `"skills": 9`) || !strings.Contains(stdout, `"kind": "archive"`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The second start reuses the extraction.
	if code, stdout, _ = run(t, env, "--lib", "z="+archive, "--stats"); code != 0 || !strings.Contains(stdout, `"skills": 9`) {
		t.Fatalf("warm start: exit %d\n%s", code, stdout)
	}
	// A hostile archive is refused with a message naming the entry.
	evil := filepath.Join(dir, "evil.zip")
	f, _ := os.Create(evil)
	zw := zip.NewWriter(f)
	w, _ := zw.Create("../escape/SKILL.md")
	w.Write([]byte("---\nname: escape\ndescription: x\n---\n"))
	zw.Close()
	f.Close()
	code, _, stderr = run(t, env, "--lib", "z="+evil, "--stats")
	if code != 2 || !strings.Contains(stderr, "escape") {
		t.Errorf("hostile archive: exit %d\n%s", code, stderr)
	}
	if code, _, stderr = run(t, env, "--lib", "u=http://example.invalid/x.zip", "--stats"); code != 2 || !strings.Contains(stderr, "https") {
		t.Errorf("http URL: exit %d\n%s", code, stderr)
	}
}

// TestCheckBothWays runs the checker, as a user would, against the server on
// the test library (every check passes) and against the research profile
// (every fixture is accounted for).
func TestCheckBothWays(t *testing.T) {
	code, stdout, stderr := run(t, nil, "check", "--command", binary, "--root", testLibrary)
	if code != 0 || !strings.Contains(stdout, " 0 failed") {
		t.Errorf("check of the test library: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, nil, "check", "--adversarial", "--command", binary, "--profile", "adversarial")
	if code != 0 || !strings.Contains(stdout, "0 not detected") {
		t.Errorf("check --adversarial: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestVaultPack packs the fixture vault with the binary, serves the pack
// over HTTP with a wrapper folder, and runs a playbook's tools and prompt
// as a host would; the folder itself is served over stdio alike.
func TestVaultPack(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "bob.zip")
	code, stdout, stderr := run(t, nil, "pack", "--vault", "../../testdata/vault", "--out", out, "--wrapper", "bob-2026.11", "--namespace", "bob")
	if code != 0 || !strings.Contains(stdout, "--lib 'bob=") {
		t.Fatalf("pack: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		name string
		tr   func() mcp.Transport
	}{
		{"zip over HTTP", func() mcp.Transport {
			return httpTransport(t, "2026-07-28", startHTTP(t, nil, "--lib", "bob="+out))
		}},
		{"folder over stdio", func() mcp.Transport {
			return stdioTransport(t, "2026-07-28", append(os.Environ(), "SKILLS_CACHE_DIR="+filepath.Join(dir, "cache")), "--lib", "bob=../../testdata/vault")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := newClient(t).Connect(ctx, tc.tr(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bob_get_playbook", Arguments: map[string]any{"name": "CRO improvement loop"}})
			if err != nil || res.IsError {
				t.Fatalf("get_playbook: %v %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "[bob/cro]") || strings.Contains(text, dir) {
				t.Errorf("get_playbook text:\n%s", text)
			}
			att, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "playbook://bob/CRO%20improvement%20loop/cro-loop-sequence.png"})
			if err != nil || len(att.Contents[0].Blob) == 0 {
				t.Errorf("attachment: %v", err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "run-playbook", Arguments: map[string]string{"playbook": "Monthly Close"}})
			if err != nil || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "bob/playbook-runner") {
				t.Errorf("run-playbook: %v", err)
			}
		})
	}
	// The first start answered initialize before its scan ended, so its
	// instructions had no figures; it kept the full ones, and the next
	// start with the same configuration sends them at once.
	cmd := exec.Command(binary, "--lib", "bob=../../testdata/vault")
	cmd.Env = append(os.Environ(), "SKILLS_CACHE_DIR="+filepath.Join(dir, "cache"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := newClient(t).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "serves 3 Agent Skills") || !strings.Contains(instr, "playbooks") {
		t.Errorf("instructions of the second start: %s", instr)
	}
}

// wireLibrary holds empty, binary, CRLF and non-ASCII files.
const wireLibrary = "../../testdata/wire"

// TestWireEveryFile reads every file of a library of empty, binary, CRLF
// and non-ASCII files, over stdio and over HTTP at every revision, with
// every message the server sends validated against the revision's schema:
// each read gives back the listed bytes, as text when they are UTF-8 (an
// empty file as "text": "") and as a blob otherwise. The lists, skills/get
// and every directory of each skill are validated alike.
func TestWireEveryFile(t *testing.T) {
	url := startHTTP(t, nil, "--root", wireLibrary)
	for _, rev := range mcpschema.Revisions() {
		for _, over := range []string{"stdio", "http"} {
			t.Run(rev+"/"+over, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var tr mcp.Transport
				if over == "stdio" {
					tr = stdioTransport(t, rev, testEnv(t), "--root", wireLibrary, "--page-size", "1")
				} else {
					tr = httpTransport(t, rev, url)
				}
				c := newClient(t)
				mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *skillsext.ReadDirectoryResult](c, skillsext.MethodReadDirectory)
				cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				skills := listAll(t, cs)
				if len(skills) != 2 {
					t.Fatalf("listed %d skills, want 2", len(skills))
				}
				kinds := map[string]bool{}
				for _, sk := range skills {
					if _, err := mcp.CallCustomMethod[*skillsext.GetSkillParams, *skillsext.GetSkillResult](ctx, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: sk.URI}); err != nil {
						t.Errorf("skills/get %s: %v", sk.URI, err)
					}
					// Walk every directory of the skill, page by page.
					type page struct{ dir, cursor string }
					pages := []page{{dir: strings.TrimSuffix(sk.URI, "/SKILL.md")}}
					for n := 0; len(pages) > 0 && n < 100; n++ {
						p := pages[0]
						pages = pages[1:]
						res, err := mcp.CallCustomMethod[*skillsext.ReadDirectoryParams, *skillsext.ReadDirectoryResult](ctx, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: p.dir, Cursor: p.cursor})
						if err != nil {
							t.Errorf("resources/directory/read %s: %v", p.dir, err)
							continue
						}
						for _, r := range res.Resources {
							if r.MIMEType == "inode/directory" {
								pages = append(pages, page{dir: r.URI})
							}
						}
						if res.NextCursor != "" {
							pages = append(pages, page{p.dir, res.NextCursor})
						}
					}
					for _, f := range sk.Resources.List {
						res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI})
						if err != nil {
							t.Errorf("resources/read %s: %v", f.URI, err)
							continue
						}
						c := res.Contents[0]
						data := []byte(c.Text)
						kind := "text"
						if c.Blob != nil {
							data, kind = c.Blob, "blob"
						}
						switch {
						case len(data) == 0:
							kinds["empty "+kind] = true
						case bytes.Contains(data, []byte("\r\n")):
							kinds["CRLF "+kind] = true
						}
						if !utf8.Valid(data) {
							kinds["binary "+kind] = true
						} else if strings.ContainsFunc(string(data), func(r rune) bool { return r > 127 }) {
							kinds["non-ASCII "+kind] = true
						}
						if int64(len(data)) != f.Size || digestOf(data) != f.Digest {
							t.Errorf("%s read back as %d bytes %s, listed as %d %s", f.URI, len(data), digestOf(data), f.Size, f.Digest)
						}
					}
				}
				for _, want := range []string{"empty text", "CRLF text", "binary blob", "non-ASCII text"} {
					if !kinds[want] {
						t.Errorf("no %s file was read (read: %v)", want, kinds)
					}
				}
				if kinds["empty blob"] || kinds["binary text"] {
					t.Errorf("files served in the wrong form: %v", kinds)
				}
				// The catalog-independent lists are validated too.
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Error(err)
				}
				if _, err := cs.ListPrompts(ctx, nil); err != nil {
					t.Error(err)
				}
				if _, err := cs.ListResources(ctx, nil); err != nil {
					t.Error(err)
				}
				if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
					t.Error(err)
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://wire-formats/none.md"}); err == nil {
					t.Error("a read of a missing file succeeded")
				}
			})
		}
	}
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/pull"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

const pullTestLibrary = "../../testdata/library"

// runPull runs pull as Main would and returns its exit status and output.
func runPull(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	st := streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, env: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	code := run(context.Background(), append([]string{"pull"}, args...), st)
	return code, stdout.String(), stderr.String()
}

// exitStatus maps a command's error to its exit status, as run does.
func exitStatus(err error, stderr *bytes.Buffer) int {
	var ue *cmdline.UsageError
	switch {
	case err == nil, errors.Is(err, cmdline.ErrHelp):
		return cmdline.ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "Error: %v\n", ue.Err)
		if ue.Hint != "" {
			fmt.Fprintf(stderr, "Try: %s\n", ue.Hint)
		}
		return cmdline.ExitUsage
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return cmdline.ExitFailure
}

func TestPullArgs(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "TOK" {
			return "s3cret", true
		}
		return "", false
	}
	for _, tc := range []struct {
		args []string
		want pullConfig
	}{
		{[]string{"refunds", "--url", "http://h/mcp"}, pullConfig{refs: []string{"refunds"}, url: "http://h/mcp", to: "skills"}},
		{[]string{"--url", "http://h/mcp", "refunds", "--to", "d", "deploy", "--sync"}, pullConfig{refs: []string{"refunds", "deploy"}, url: "http://h/mcp", to: "d", sync: true}},
		// The conformance suite appends the URL to its --command string.
		{[]string{"--all", "--to", "/tmp/x", "--url", "http://localhost:1234"}, pullConfig{url: "http://localhost:1234", to: "/tmp/x", all: true}},
		{[]string{"--list", "--url", "http://localhost:1"}, pullConfig{url: "http://localhost:1", to: "skills", list: true}},
		// --command takes the rest, flags included.
		{[]string{"a", "--keep-path", "--command", "srv", "--root", "lib", "--json"}, pullConfig{refs: []string{"a"}, command: []string{"srv", "--root", "lib", "--json"}, to: "skills", keepPath: true}},
		{[]string{"--all", "--command=srv", "x"}, pullConfig{command: []string{"srv", "x"}, to: "skills", all: true}},
		{[]string{"--url", "http://h", "--", "-odd", "--all"}, pullConfig{refs: []string{"-odd", "--all"}, url: "http://h", to: "skills"}},
		{[]string{"--all", "--url", "https://h/mcp", "--header", "X-Team: a", "--header", "X-Other:b", "--token-env", "TOK", "--json", "--dry-run", "--with-deps", "--allow-dynamic", "--allow-oversize", "--force"},
			pullConfig{url: "https://h/mcp", to: "skills", all: true, json: true, dryRun: true, withDeps: true, allowDynamic: true, allowOversize: true, force: true, tokenEnv: "TOK",
				header: http.Header{"X-Team": {"a"}, "X-Other": {"b"}, "Authorization": {"Bearer s3cret"}}}},
	} {
		c := &pullCommand{streams: streams{stderr: &bytes.Buffer{}, env: env}}
		got, err := c.parseArgs(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		tc.want.timeout = pull.DefaultRequestTimeout
		tc.want.deadline = defaultDeadline
		if fmt.Sprintf("%#v", *got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tc.args, *got, tc.want)
		}
	}
}

func TestPullUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"refunds"}, "say where the server is: --url URL or --command CMD ARGS…"},
		{[]string{"--all", "--url", "http://h", "--command", "srv"}, "give --url or --command, not both"},
		{[]string{"--all", "--command"}, "--command needs the server command line after it"},
		{[]string{"--url", "http://h"}, "name the skills to pull, or give --all"},
		{[]string{"a", "--all", "--url", "http://h"}, "give skill names or --all, not both"},
		{[]string{"--list", "--all", "--url", "http://h"}, "--list only lists; it takes no --all"},
		{[]string{"--list", "--to", "d", "--url", "http://h"}, "--list only lists; it takes no --to"},
		{[]string{"--list", "x", "--url", "http://h"}, "--list lists every skill; it takes no skill names"},
		{[]string{"--all", "--sync", "--force", "--url", "http://h"}, "--sync and --force exclude each other"},
		{[]string{"--all", "--url", "ftp://h"}, `--url: "ftp://h" is not an http:// or https:// URL`},
		{[]string{"--all", "--url", "http://h", "--header", "nocolon"}, `"nocolon" is not 'Name: value'`},
		{[]string{"--all", "--url", "http://h", "--header", "Mcp-Session-Id: x"}, "is set by the MCP transport"},
		{[]string{"--all", "--url", "http://h", "--token-env", "NOPE"}, "--token-env: environment variable NOPE is not set"},
		{[]string{"--all", "--url", "http://h", "--token-env", "TOK", "--header", "Authorization: x"}, "both set Authorization"},
		{[]string{"--all", "--header", "X: y", "--command", "srv"}, "--header and --token-env apply to --url only"},
		{[]string{"--all", "--url", "http://h", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--all", "--url", "http://h", "--bogus"}, "unknown flag --bogus"},
	} {
		code, _, stderr := runPull(t, map[string]string{"TOK": "t"}, tc.args...)
		if code != cmdline.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, _ := runPull(t, nil, "-h")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "Usage: skills-mcp pull [SKILL…] (--url URL | --command CMD ARGS…)") {
		t.Errorf("-h: exit %d, %q", code, stdout)
	}
}

// realHTTP serves the test library over Streamable HTTP and counts reads.
func realHTTP(t *testing.T) (url string, reads *atomic.Int64) {
	t.Helper()
	root, err := os.OpenRoot(pullTestLibrary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: root.FS(), Kind: "directory"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := server.New(catalog.NewStore(snap), nil)
	n := new(atomic.Int64)
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", n
}

func TestPullHTTP(t *testing.T) {
	url, reads := realHTTP(t)
	dest := filepath.Join(t.TempDir(), "skills")

	code, stdout, stderr := runPull(t, nil, "--list", "--url", url)
	if code != 0 || !regexp.MustCompile(`(?m)^finance/billing/refunds +2 files +894 B  Decide whether`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^finance/month-end-close +1 file  +545 B`).MatchString(stdout) || reads.Load() != 0 {
		t.Fatalf("--list: exit %d, %d reads\n%s%s", code, reads.Load(), stdout, stderr)
	}
	code, stdout, _ = runPull(t, nil, "--list", "--json", "--url", url)
	var listed struct {
		Server pull.Server
		Skills []struct{ Path string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed.Skills) != 9 || listed.Server.Protocol != "2026-07-28" {
		t.Fatalf("--list --json: exit %d\n%s", code, stdout)
	}

	code, stdout, stderr = runPull(t, nil, "--all", "--to", dest, "--url", url)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"created      finance/billing/refunds → " + dest + "/refunds  (2 fetched, 0 updated, 0 kept, 0 deleted; 894 B)",
		"pull: 9 skills from skills (2026-07-28): 9 created; 20 files, 7.8 KiB read in ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "refunds/references/policy.md")); len(got) == 0 {
		t.Error("refunds/references/policy.md not written")
	}

	reads.Store(0)
	code, stdout, _ = runPull(t, nil, "--all", "--sync", "--json", "--to", dest, "--url", url)
	var rep pull.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || reads.Load() != 0 || rep.Reads != 0 || rep.WireBytes <= 0 {
		t.Fatalf("sync: exit %d, %d reads\n%s", code, reads.Load(), stdout)
	}
	for _, s := range rep.Skills {
		if s.Action != pull.Unchanged {
			t.Errorf("%s: %s", s.Path, s.Action)
		}
	}

	// Selection errors are usage errors and list the candidates.
	code, _, stderr = runPull(t, nil, "refundz", "--to", dest, "--url", url)
	if code != cmdline.ExitUsage || !strings.Contains(stderr, `no skill "refundz" is listed; listed skills include`) {
		t.Errorf("absent: exit %d, %s", code, stderr)
	}

	// A dry run writes nothing.
	fresh := filepath.Join(t.TempDir(), "fresh")
	code, stdout, _ = runPull(t, nil, "deploy", "rollback", "--dry-run", "--keep-path", "--to", fresh, "--url", url)
	if code != 0 || !strings.Contains(stdout, "would create platform/deploy → "+fresh+"/platform/deploy") ||
		!strings.Contains(stdout, "included     platform/deploy/rollback") || !strings.Contains(stdout, "(dry run: nothing written)") {
		t.Errorf("dry run: exit %d\n%s", code, stdout)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a dry run created the destination")
	}
}

func TestPullRefusesLyingServer(t *testing.T) {
	md := "---\nname: demo\ndescription: A demo skill.\n---\nbody\n"
	entry, files := pulltest.Skill("demo", "A demo skill.", md, map[string]string{"a.md": "a\n"})
	entry["resources"].([]any)[1].(map[string]any)["digest"] = pulltest.Digest([]byte("b\n"))
	f := &pulltest.Fake{Entries: []any{entry}, Files: files}
	ts := httptest.NewServer(f.Handler(true))
	defer ts.Close()

	dest := filepath.Join(t.TempDir(), "skills")
	os.MkdirAll(filepath.Join(dest, "demo"), 0o755)
	os.WriteFile(filepath.Join(dest, "demo/SKILL.md"), []byte("previous copy"), 0o644)
	code, stdout, stderr := runPull(t, nil, "demo", "--force", "--json", "--to", dest, "--url", ts.URL)
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "Error: verification failed for skill://demo/a.md: digest mismatch: listed sha256:") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	var rep pull.Report
	if json.Unmarshal([]byte(stdout), &rep) != nil || !strings.Contains(rep.Error, "digest mismatch") {
		t.Errorf("json report: %s", stdout)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "demo/SKILL.md")); string(got) != "previous copy" {
		t.Errorf("the previous copy was replaced: %q", got)
	}

	nf := &pulltest.Fake{NoExtension: true}
	ts2 := httptest.NewServer(nf.Handler(true))
	defer ts2.Close()
	code, _, stderr = runPull(t, nil, "--list", "--url", ts2.URL)
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "does not declare the MCP Skills extension (io.modelcontextprotocol/skills)") {
		t.Errorf("no extension: exit %d\n%s", code, stderr)
	}
	if slices.Contains(nf.Methods(), "skills/list") {
		t.Error("skills/list was called on a server without the extension")
	}
}

func TestPullHeadersAndToken(t *testing.T) {
	md := "---\nname: demo\ndescription: d\n---\n"
	entry, files := pulltest.Skill("demo", "d", md, nil)
	f := &pulltest.Fake{Entries: []any{entry}, Files: files}
	h := f.Handler(true)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "blue" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	env := map[string]string{"SKILLS_PULL_TOKEN": "s3cret"}
	if code, _, stderr := runPull(t, env, "--list", "--url", ts.URL, "--header", "X-Team: blue", "--token-env", "SKILLS_PULL_TOKEN"); code != 0 {
		t.Errorf("with credentials: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runPull(t, env, "--list", "--url", ts.URL, "--header", "X-Team: blue"); code != cmdline.ExitFailure {
		t.Errorf("without the token: exit %d", code)
	}
}

func TestPullWithDeps(t *testing.T) {
	md := func(name string) string { return "---\nname: " + name + "\ndescription: d\n---\n" }
	f := &pulltest.Fake{Files: map[string][]byte{}}
	for _, s := range []struct {
		path string
		deps []string
	}{{"lib/app", []string{"helper"}}, {"lib/helper", []string{"base"}}, {"lib/base", nil}, {"lib/broken", []string{"gone"}}, {"other/helper", nil}} {
		name := s.path[strings.LastIndexByte(s.path, '/')+1:]
		e, files := pulltest.Skill(s.path, "d", md(name), nil)
		if s.deps != nil {
			e["_meta"] = map[string]any{"io.github.skills-mcp/dependencies": map[string]any{"required": s.deps, "optional": []string{}}}
		}
		f.Entries = append(f.Entries, e)
		for k, v := range files {
			f.Files[k] = v
		}
	}
	ts := httptest.NewServer(f.Handler(true))
	defer ts.Close()
	dest := filepath.Join(t.TempDir(), "skills")
	code, stdout, stderr := runPull(t, nil, "app", "--with-deps", "--keep-path", "--to", dest, "--url", ts.URL)
	if code != 0 || !strings.Contains(stderr, "deps  lib/app → helper (lib/helper)") || !strings.Contains(stderr, "deps  lib/helper → base (lib/base)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, p := range []string{"lib/app", "lib/helper", "lib/base"} {
		if _, err := os.Stat(filepath.Join(dest, p, "SKILL.md")); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "other")); err == nil {
		t.Error("a dependency resolved outside its library")
	}
	code, _, stderr = runPull(t, nil, "broken", "--with-deps", "--to", dest, "--url", ts.URL)
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "required runtime dependencies are not served: lib/broken → gone (not listed)") {
		t.Errorf("missing dependency: exit %d\n%s", code, stderr)
	}
}

// TestPullHelperServer is not a test: run with SKILLS_PULL_HELPER=1, it is
// the stdio server TestPullStdio spawns (the test binary is the only
// server binary a package test can count on).
func TestPullHelperServer(t *testing.T) {
	if os.Getenv("SKILLS_PULL_HELPER") != "1" {
		t.Skip("helper process only")
	}
	root, err := os.OpenRoot(os.Getenv("SKILLS_PULL_HELPER_LIB"))
	if err != nil {
		os.Exit(3)
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: root.FS(), Kind: "directory"}}, 1, nil)
	if err != nil {
		os.Exit(3)
	}
	server.New(catalog.NewStore(snap), nil).Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

func TestPullStdio(t *testing.T) {
	lib, err := filepath.Abs(pullTestLibrary)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLS_PULL_HELPER", "1")
	t.Setenv("SKILLS_PULL_HELPER_LIB", lib)
	dest := filepath.Join(t.TempDir(), "skills")
	code, stdout, stderr := runPull(t, nil, "--all", "--keep-path", "--to", dest, "--command", os.Args[0], "-test.run=^TestPullHelperServer$")
	if code != 0 || !strings.Contains(stdout, "pull: 9 skills from skills (2026-07-28): 8 created, 1 included; 19 files") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runPull(t, nil, "--all", "--keep-path", "--sync", "--to", dest, "--command", os.Args[0], "-test.run=^TestPullHelperServer$")
	if code != 0 || !strings.Contains(stdout, "8 unchanged, 1 included; 0 files, 0 B read") {
		t.Fatalf("sync: exit %d\n%s%s", code, stdout, stderr)
	}
	// A server command that is not a server.
	code, _, stderr = runPull(t, nil, "--list", "--command", "sh", "-c", "echo not a server; echo oops >&2")
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "connecting to the server") || !strings.Contains(stderr, "server stderr (last lines):\n    oops") {
		t.Errorf("not a server: exit %d\n%s", code, stderr)
	}
}

// TestPullUnlistedURI: a listing may be partial; a SKILL.md URI it leaves
// out is asked for with skills/get (SEP-2640 H5).
func TestPullUnlistedURI(t *testing.T) {
	entry, files := pulltest.Skill("hidden/demo", "d", "---\nname: demo\ndescription: d\n---\n", nil)
	f := &pulltest.Fake{Entries: []any{entry}, Files: files,
		Pages: func(string) string { return `{"resultType":"complete","skills":[]}` }}
	ts := httptest.NewServer(f.Handler(true))
	defer ts.Close()
	dest := filepath.Join(t.TempDir(), "skills")
	code, stdout, stderr := runPull(t, nil, "skill://hidden/demo/SKILL.md", "--to", dest, "--url", ts.URL)
	if code != 0 || !strings.Contains(stdout, "created      hidden/demo → "+dest+"/demo") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runPull(t, nil, "skill://hidden/nope/SKILL.md", "--to", dest, "--url", ts.URL)
	if code != cmdline.ExitUsage || !strings.Contains(stderr, `no skill "skill://hidden/nope/SKILL.md" is listed`) || !strings.Contains(stderr, "skills/get skill://hidden/nope/SKILL.md") {
		t.Errorf("unknown URI: exit %d\n%s", code, stderr)
	}
}

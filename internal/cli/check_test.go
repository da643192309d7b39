package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/adversarial"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

const checkTestLibrary = "../../testdata/library"

// runCheck runs check as Main would and returns its exit status and
// output.
func runCheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	st := streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, env: func(string) (string, bool) { return "", false }}
	code := run(context.Background(), append([]string{"check"}, args...), st)
	return code, stdout.String(), stderr.String()
}

// checkLibraryServer returns our server on the test library.
func checkLibraryServer(t *testing.T) *mcp.Server {
	t.Helper()
	lib, err := catalog.OpenDirectory("", checkTestLibrary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return server.New(catalog.NewStore(snap), &server.Options{PageSize: 2})
}

// serveHTTP serves ms over stateless Streamable HTTP, as serve does.
func serveHTTP(t *testing.T, ms *mcp.Server) string {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestCheckArgs(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--url", "http://x", "--command", "srv"},
		{"--command"},
		{"--url", "http://x", "extra"},
		{"--url", "http://x", "--timeout", "0s"},
		{"--url", "http://x", "--max-pages", "-1"},
		{"--url", "http://x", "--deadline", "0s"},
		{"--url", "ftp://x"},
		{"--bogus"},
	} {
		code, _, stderr := runCheck(t, args...)
		if code != cmdline.ExitUsage || !strings.Contains(stderr, "Error: ") {
			t.Errorf("%q: exit %d\n%s", args, code, stderr)
		}
	}
	code, stdout, stderr := runCheck(t, "-h")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "Usage: skills-mcp check") || !strings.Contains(stdout, "--page-size-probe") {
		t.Errorf("-h: exit %d\n%s%s", code, stdout, stderr)
	}
	// --command swallows the rest, flags included.
	cfg, err := (&checkCommand{streams: streams{stderr: &bytes.Buffer{}}}).parseArgs([]string{"--json", "--command", "srv", "--json", "-x"})
	if err != nil || !cfg.json || strings.Join(cfg.command, " ") != "srv --json -x" {
		t.Errorf("parseArgs = %+v, %v", cfg, err)
	}
}

func TestCheckHTTP(t *testing.T) {
	url := serveHTTP(t, checkLibraryServer(t))
	code, stdout, stderr := runCheck(t, "--url", url, "--page-size-probe")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "PASS  frontmatter-identical") || !strings.Contains(stdout, " 0 failed, 0 warnings") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		if f := strings.Fields(line); len(f) < 3 {
			t.Errorf("short line %q", line)
		}
	}

	code, stdout, _ = runCheck(t, "--url", url, "--json")
	var rep struct {
		Versions []string `json:"protocolVersions"`
		Results  []struct{ Status, ID, Clause, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != cmdline.ExitOK || len(rep.Versions) != 2 || len(rep.Results) < 30 {
		t.Errorf("--json: exit %d, %v: %+v", code, err, rep)
	}
}

func TestCheckAdversarial(t *testing.T) {
	url := serveHTTP(t, adversarial.New(nil))
	// The profile builds its archives on the first read of its index: over
	// a second of CPU under -race, which beside other load took longer than
	// the default timeout of 10 s, and the archive fixtures went undetected.
	code, stdout, stderr := runCheck(t, "--url", url, "--adversarial", "--timeout", "60s")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "25 fixtures: 22 detected by check, 3 host-only, 0 not detected") ||
		!strings.Contains(stdout, "adv-content-rotation  REJECT") || !strings.Contains(stdout, "host must:") {
		t.Fatalf("--adversarial: exit %d\n%s%s", code, stdout, stderr)
	}
	// Without --adversarial, the profile fails the checks.
	code, stdout, stderr = runCheck(t, "--url", url, "--timeout", "60s", "--max-pages", "30")
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "checks failed") || !strings.Contains(stdout, "FAIL  frontmatter-identical") {
		t.Errorf("plain check of the profile: exit %d\n%s%s", code, stdout, stderr)
	}
	// A server with no fixtures.
	code, _, stderr = runCheck(t, "--url", serveHTTP(t, checkLibraryServer(t)), "--adversarial")
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "offers no adversarial fixtures") {
		t.Errorf("--adversarial on a faithful server: exit %d\n%s", code, stderr)
	}
}

// TestCheckHelperServer is not a test: with SKILLS_MCP_CHECK_CLI_HELPER
// set it is the stdio server TestCheckStdio starts.
func TestCheckHelperServer(t *testing.T) {
	dir := os.Getenv("SKILLS_MCP_CHECK_CLI_HELPER")
	if dir == "" {
		t.Skip("helper process only")
	}
	lib, err := catalog.OpenDirectory("", dir)
	if err != nil {
		os.Exit(3)
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		os.Exit(3)
	}
	server.New(catalog.NewStore(snap), nil).Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

func TestCheckStdio(t *testing.T) {
	dir, err := filepath.Abs(checkTestLibrary)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLS_MCP_CHECK_CLI_HELPER", dir)
	code, stdout, stderr := runCheck(t, "--command", os.Args[0], "-test.run=^TestCheckHelperServer$")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "over 2026-07-28 and 2025-11-25") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCheck(t, "--timeout", "2s", "--command", "sh", "-c", "echo not a server")
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "checks failed") {
		t.Errorf("not a server: exit %d\n%s", code, stderr)
	}
}

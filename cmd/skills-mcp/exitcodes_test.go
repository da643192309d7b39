package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes is the exit-status contract over the binary, the same in
// every command: 0 ok (help and versions included, on stdout), 1 a failure
// at run time (lint: findings), 2 bad usage. A usage error is one or two
// lines naming what is wrong, then "Try: skills-mcp CMD --help".
func TestExitCodes(t *testing.T) {
	// A web server that is not an MCP endpoint.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotImplemented)
		w.Write([]byte("<html>no</html>"))
	}))
	defer web.Close()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncated := write("truncated.json", "{\"libraries\": [\n  {\"namespace\": \"a\", \"root\": \"x\"")
	badKey := write("badkey.json", "{\"libraries\": [],\n \"noScript\": true}")
	pin := "#sha256=" + strings.Repeat("0", 64)

	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{"--version", nil, []string{"--version"}, 0, "skills-mcp ", ""},
		{"version", nil, []string{"version"}, 0, "skills-mcp ", ""},
		{"help", nil, []string{"help"}, 0, "Usage:", ""},
		{"serve help", nil, []string{"serve", "-h"}, 0, "SKILLS_MCP_ROOT", ""},
		{"pull help", nil, []string{"pull", "--help"}, 0, "SKILLS_DEADLINE", ""},
		{"help pull", nil, []string{"help", "pull"}, 0, "Usage: skills-mcp pull", ""},
		{"completion", nil, []string{"completion", "bash"}, 0, "bash completion", ""},
		{"completion of an unknown shell", nil, []string{"completion", "tcsh"}, 2, "", `unknown shell "tcsh"`},
		{"version argument", nil, []string{"version", "extra"}, 2, "", `unknown command "extra"`},
		{"mistyped command", nil, []string{"pul"}, 2, "", "did you mean pull?"},
		{"unknown command", nil, []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"the hub moved", nil, []string{"hub", "list"}, 2, "", "a binary of their own: skills-hub list"},
		{"mistyped flag", nil, []string{"--dpth", "3"}, 2, "", "unknown flag --dpth: did you mean --depth?"},
		{"bad flag value", nil, []string{"--depth", "abc"}, 2, "", `--depth "abc": want an integer`},
		{"bad variable", []string{"SKILLS_DEPTH=abc"}, []string{"--stats"}, 2, "", `SKILLS_DEPTH="abc": want an integer (the variable of --depth)`},
		{"bad boolean variable", []string{"SKILLS_STRICT=yes"}, []string{"--stats"}, 2, "", `SKILLS_STRICT="yes": want true or false`},
		{"bad env page size", []string{"SKILLS_PAGE_SIZE=lots"}, []string{"--root", testLibrary, "--stats"}, 2, "", "SKILLS_PAGE_SIZE"},
		{"flag value missing", nil, []string{"--root"}, 2, "", "--root needs a value"},
		{"missing root", nil, []string{"--root", "/does/not/exist", "--stats"}, 2, "", "/does/not/exist"},
		{"root and lib", nil, []string{"--root", testLibrary, "--lib", "a=" + testLibrary}, 2, "", "cannot be combined"},
		{"duplicate namespace", nil, []string{"--lib", "a=" + testLibrary, "--lib", "a=" + testLibrary}, 2, "", "used twice"},
		{"bad namespace", nil, []string{"--lib", "-x=" + testLibrary}, 2, "", "must match"},
		{"public bind", nil, []string{"--root", testLibrary, "--http", "0.0.0.0:0"}, 2, "", "SKILLS_ALLOWED_HOSTS"},
		{"bad address", nil, []string{"--root", testLibrary, "--http", "nowhere:port"}, 2, "", "--http"},
		{"page size", nil, []string{"--page-size", "0"}, 2, "", "--page-size must be between"},
		{"log level", nil, []string{"--log-level", "loud"}, 2, "", `--log-level "loud": want debug, info, warn or error`},
		{"log format", nil, []string{"--log-format", "xml"}, 2, "", `--log-format "xml": want text or json`},
		{"profile with a library", nil, []string{"--profile", "adversarial", "--lib", "a=" + testLibrary}, 2, "", "cannot be combined"},
		{"unknown profile", nil, []string{"--profile", "friendly"}, 2, "", "only profile"},
		{"serve argument", nil, []string{"serve", "extra"}, 2, "", `unexpected argument "extra"`},
		{"missing vault", nil, []string{"--root", testLibrary, "--vault", "=/does/not/exist", "--stats"}, 2, "", "vault /does/not/exist"},
		{"missing config", nil, []string{"--config", "/does/not/exist.json", "--stats"}, 2, "", "config file /does/not/exist.json"},
		{"truncated config", nil, []string{"--config", truncated, "--stats"}, 2, "", "line 2, column"},
		{"unknown config key", nil, []string{"--config", badKey, "--stats"}, 2, "", `unknown key "noScript" at line 2`},
		{"unreachable library", nil, []string{"--lib", "a=https://127.0.0.1:1/x.zip" + pin, "--stats"}, 1, "", "cannot be fetched"},
		{"lint no path", nil, []string{"lint"}, 2, "", "give at least one PATH"},
		{"lint missing path", nil, []string{"lint", "/does/not/exist"}, 2, "", "PATH /does/not/exist"},
		{"lint findings", nil, []string{"lint", "../../testdata/lint/malicious"}, 1, "", "at error or above"},
		{"lint clean", nil, []string{"lint", "../../testdata/lint/clean"}, 0, "", ""},
		{"lint bad format", nil, []string{"lint", "--format", "xml", "../../testdata/lint/clean"}, 2, "", "--format must be"},
		{"pull nowhere", nil, []string{"pull", "--all"}, 2, "", "say where the server is"},
		{"pull not MCP", nil, []string{"pull", "--all", "--url", web.URL + "/mcp"}, 1, "", "answered 501 Not Implemented (text/html) to an MCP POST: is it an MCP endpoint"},
		{"pull unreachable", nil, []string{"pull", "--all", "--url", "http://127.0.0.1:1/mcp"}, 1, "", "the server at http://127.0.0.1:1/mcp cannot be reached (connection refused): is it running"},
		{"pull bad deadline", []string{"SKILLS_DEADLINE=soon"}, []string{"pull", "--all", "--url", web.URL}, 2, "", `SKILLS_DEADLINE="soon": want a duration`},
		{"check nowhere", nil, []string{"check"}, 2, "", "say where the server is"},
		{"pack no vault", nil, []string{"pack"}, 2, "", "--vault is required"},
		{"pack missing vault", nil, []string{"pack", "--vault", "/does/not/exist"}, 2, "", "/does/not/exist"},
		{"single-dash long flag", nil, []string{"-root", testLibrary, "-stats"}, 0, `"skills"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.env, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stdout %.300q, stderr %q; want exit %d, %q and %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			if code == 2 {
				// Log lines of what ran before may come first.
				_, last, _ := strings.Cut(stderr, "Error: ")
				lines := strings.Split(strings.TrimSuffix("Error: "+last, "\n"), "\n")
				if len(lines) > 3 || !strings.HasPrefix(lines[0], "Error: ") || !strings.HasPrefix(lines[len(lines)-1], "Try: skills-mcp") || !strings.HasSuffix(lines[len(lines)-1], " --help") {
					t.Errorf("a usage error is at most two lines then Try: …--help; got\n%s", stderr)
				}
			}
			if code == 0 && strings.HasSuffix(tc.name, "help") && stderr != "" {
				t.Errorf("help wrote to stderr: %q", stderr)
			}
		})
	}
}

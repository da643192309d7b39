package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"node dist/index.js --root {lib}", []string{"node", "dist/index.js", "--root", "{lib}"}},
		{"  a   b\tc  ", []string{"a", "b", "c"}},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}},
		{`a\ b`, []string{"a b"}},
		{`"x\"y" 'it''s' "\n"`, []string{`x"y`, "its", `\n`}},
		{`''`, []string{""}},
		{"", nil},
	} {
		got, err := SplitCommand(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`a 'b`, `"c`, `d\`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) succeeded", bad)
		}
	}
}

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		inStderr string
	}{
		{nil, ExitUsage, "Usage:"},
		{[]string{"nope"}, ExitUsage, `unknown command "nope"`},
		{[]string{"gen"}, ExitUsage, "gen needs --out and --skills"},
		{[]string{"gen", "--bogus"}, ExitUsage, "Try: skills-bench gen -h"},
		{[]string{"run", "--lib", "/tmp"}, ExitUsage, "a server command after --"},
		{[]string{"run", "--lib", "/no/such/dir", "--", "x"}, ExitUsage, "is not a directory"},
		{[]string{"run", "--lib", "/tmp", "--vs", "a 'b", "--", "x"}, ExitUsage, "--vs"},
		{[]string{"run", "--lib", "/tmp", "--client", "curl", "--", "x"}, ExitUsage, "--client is raw or sdk"},
		{[]string{"http"}, ExitUsage, "http needs --url"},
		{[]string{"http", "--url", "http://example.com/mcp"}, ExitUsage, "non-loopback"},
		{[]string{"gen", "-h"}, ExitOK, "Usage: skills-bench gen"},
		{[]string{"catalogs", "--catalogs", "10", "--libraries", "20"}, ExitUsage, "--libraries must be between 1 and --catalogs"},
		{[]string{"catalogs", "extra"}, ExitUsage, `unexpected argument "extra"`},
		{[]string{"catalogs", "-h"}, ExitOK, "Usage: skills-bench catalogs"},
	} {
		code, _, stderr := runMain(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.inStderr) {
			t.Errorf("Main(%q) = %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.inStderr)
		}
	}
	if code, stdout, _ := runMain("help"); code != ExitOK || !strings.Contains(stdout, "skills-bench run") {
		t.Errorf("help: %d, %q", code, stdout)
	}
}

func TestMainGenAndRun(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "lib")
	code, stdout, stderr := runMain("gen", "--out", lib, "--skills", "12", "--json")
	if code != ExitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	var st GenStats
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || st.Skills != 12 {
		t.Fatalf("gen --json printed %q (%v)", stdout, err)
	}

	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr = runMain(append([]string{"run", "--lib", lib, "--runs", "1", "--vs", strings.Join(fakeCommand(t, "good"), " "), "--markdown", "--out", out, "--"}, fakeCommand(t, "good")...)...)
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var rep Report
	if data, err := os.ReadFile(out); err != nil || json.Unmarshal(data, &rep) != nil || len(rep.Servers) != 2 || rep.Lib != lib {
		t.Errorf("--out wrote %+v (%v)", rep, err)
	}
	for _, want := range []string{"| metric", "B/A |", "| spawn → complete skills/list"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run --markdown lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "run 1/1 B:") || !strings.Contains(stderr, "has no {lib}") {
		t.Errorf("progress on stderr lacks run lines or the {lib} note:\n%s", stderr)
	}

	code, _, stderr = runMain(append([]string{"run", "--lib", lib, "--runs", "1", "--timeout", "200ms", "--"}, fakeCommand(t, "hang")...)...)
	if code != ExitFailure || !strings.Contains(stderr, "run 1 of 1, server A") || !strings.Contains(stderr, "timed out") {
		t.Errorf("hanging server: exit %d, stderr %q", code, stderr)
	}
}

func TestExpandLib(t *testing.T) {
	got := expandLib([]string{"srv", "--root", "{lib}", "--lib=x={lib}/a"}, "/l")
	if want := []string{"srv", "--root", "/l", "--lib=x=/l/a"}; !slices.Equal(got, want) {
		t.Errorf("expandLib = %q, want %q", got, want)
	}
}

package hubcmd

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
)

var updateHelp = flag.Bool("update-help", false, "rewrite the golden help files in testdata/help")

// TestHelp keeps every skills-hub command's help text in golden files, so
// that a change to the help shows up in review. Help asked for is printed
// on stdout, and the command exits 0.
func TestHelp(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for name, args := range map[string][]string{
		"main":            {"help"},
		"install":         {"install", "-h"},
		"import":          {"import", "-h"},
		"list":            {"list", "-h"},
		"versions":        {"versions", "-h"},
		"inspect":         {"inspect", "-h"},
		"approve":         {"approve", "-h"},
		"notes":           {"notes", "-h"},
		"uninstall":       {"uninstall", "-h"},
		"catalog":         {"catalog"},
		"catalog-search":  {"catalog", "search", "-h"},
		"catalog-refresh": {"catalog", "refresh", "-h"},
		"catalog-import":  {"catalog", "import", "-h"},
		"catalog-build":   {"catalog", "build", "-h"},
		"backup":          {"backup", "-h"},
		"restore":         {"restore", "-h"},
		"serve":           {"serve", "-h"},
		"token":           {"token", "-h"},
		"well-known":      {"well-known", "-h"},
		"job":             {"job", "-h"},
		"remnants":        {"remnants", "-h"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: noEnv})
			if code != exitOK || errb.Len() > 0 {
				t.Fatalf("%v exited %d, stderr:\n%s", args, code, errb.String())
			}
			golden.Check(t, filepath.Join("testdata", "help", name+".txt"), out.Bytes(), *updateHelp, "update-help")
		})
	}
}

// TestExitStatus is the exit-status contract in process: 0 ok or help, 2 a
// usage error with its hint, 1 a failure, each error on stderr.
func TestExitStatus(t *testing.T) {
	environ := map[string]string{"SKILLS_HUB_DATA": t.TempDir()}
	lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	for _, tc := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"list"}, exitOK, nil},
		{[]string{"version"}, exitOK, nil},
		{[]string{"--version"}, exitOK, nil},
		{[]string{"inspect"}, exitUsage, []string{"Error: inspect needs", "Try: skills-hub inspect -h"}},
		{[]string{"inspect", "nosuch"}, exitFailure, []string{"Error: "}},
		{[]string{"catalog", "build"}, exitUsage, []string{"Error: give --out FILE"}},
		{[]string{"intsall"}, exitUsage, []string{"did you mean install?"}},
		{[]string{"list", "--jsn"}, exitUsage, []string{"unknown flag --jsn: did you mean --json?"}},
		{[]string{"catalog", "search", "--limit", "abc"}, exitUsage, []string{`--limit "abc": want an integer`}},
		{[]string{"serve", "--log-level", "loud"}, exitUsage, []string{`--log-level "loud": want debug, info, warn or error`}},
		{[]string{"completion", "zsh"}, exitOK, nil},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tc.args, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: lookup})
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errb.String())
		}
		for _, want := range tc.stderr {
			if !bytes.Contains(errb.Bytes(), []byte(want)) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), want)
			}
		}
	}
}

// Shell completion offers the commands, described.
func TestCompletion(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"__complete", "ins"}, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: func(string) (string, bool) { return "", false }})
	if code != exitOK || !bytes.Contains(out.Bytes(), []byte("install\t")) || !bytes.Contains(out.Bytes(), []byte("inspect\t")) {
		t.Errorf("__complete ins: exit %d, %q", code, out.String())
	}
}

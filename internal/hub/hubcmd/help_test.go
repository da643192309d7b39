package hubcmd

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/golden"
)

var updateHelp = flag.Bool("update-help", false, "rewrite the golden help files in testdata/help")

// TestHelp keeps every skills-hub command's help text in golden files, so
// that a change to the help shows up in review. Help asked for is printed
// on stdout, and the command exits 0.
func TestHelp(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	// Every command of the table and every group has its golden file.
	cases := map[string][]string{"main": {"help"}}
	for _, g := range groups {
		cases[g.name] = []string{g.name, "-h"}
	}
	for _, c := range commands {
		cases[strings.ReplaceAll(c.path, " ", "-")] = append(strings.Fields(c.path), "-h")
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: noEnv})
			if code != cmdline.ExitOK || errb.Len() > 0 {
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
		{[]string{"list"}, cmdline.ExitOK, nil},
		{[]string{"version"}, cmdline.ExitOK, nil},
		{[]string{"--version"}, cmdline.ExitOK, nil},
		{[]string{"inspect"}, cmdline.ExitUsage, []string{"Error: inspect needs", "Try: skills-hub inspect --help"}},
		{[]string{"inspect", "nosuch"}, cmdline.ExitFailure, []string{"Error: "}},
		{[]string{"catalog", "build"}, cmdline.ExitUsage, []string{"Error: give --out FILE"}},
		{[]string{"intsall"}, cmdline.ExitUsage, []string{"did you mean install?"}},
		{[]string{"list", "--jsn"}, cmdline.ExitUsage, []string{"unknown flag --jsn: did you mean --json?"}},
		{[]string{"catalog", "search", "--limit", "abc"}, cmdline.ExitUsage, []string{`--limit "abc": want an integer`}},
		{[]string{"serve", "--log-level", "loud"}, cmdline.ExitUsage, []string{`--log-level "loud": want debug, info, warn or error`}},
		{[]string{"completion", "zsh"}, cmdline.ExitOK, nil},
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
	if code != cmdline.ExitOK || !bytes.Contains(out.Bytes(), []byte("install\t")) || !bytes.Contains(out.Bytes(), []byte("inspect\t")) {
		t.Errorf("__complete ins: exit %d, %q", code, out.String())
	}
}

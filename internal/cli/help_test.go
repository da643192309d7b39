package cli

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/golden"
)

var updateHelp = flag.Bool("update-help", false, "rewrite the golden help files in testdata/help")

// TestHelp keeps every command's help text in golden files, so that a
// change to the help shows up in review.
func TestHelp(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for name, args := range map[string][]string{
		"main":  {"help"},
		"serve": {"serve", "-h"},
		"pull":  {"pull", "-h"},
		"lint":  {"lint", "-h"},
		"check": {"check", "-h"},
		"pack":  {"pack", "-h"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), args, streams{stdin: bytes.NewReader(nil), stdout: &out, stderr: &out, env: noEnv})
			if code != cmdline.ExitOK {
				t.Fatalf("%v exited %d:\n%s", args, code, out.String())
			}
			golden.Check(t, filepath.Join("testdata", "help", name+".txt"), out.Bytes(), *updateHelp, "update-help")
		})
	}
}

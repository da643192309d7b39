package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
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
			if code != exitOK {
				t.Fatalf("%v exited %d:\n%s", args, code, out.String())
			}
			golden := filepath.Join("testdata", "help", name+".txt")
			if *updateHelp {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-help to create it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("help for %v changed; run go test ./internal/cli -run TestHelp -update-help and review the diff.\ngot:\n%s", args, out.String())
			}
		})
	}
}

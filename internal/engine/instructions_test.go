package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstructionsKept(t *testing.T) {
	dir := t.TempDir()
	if InstructionsFile("", "k") != "" {
		t.Error("a file without a cache folder")
	}
	a, b := InstructionsFile(dir, struct{ N int }{1}), InstructionsFile(dir, struct{ N int }{2})
	if a == b || !strings.HasPrefix(a, filepath.Join(dir, "instructions")) {
		t.Fatalf("files %q and %q", a, b)
	}
	if got := ReadInstructions(a); got != "" {
		t.Errorf("before any write: %q", got)
	}
	WriteInstructions(a, "Use the skills.", nil)
	if got := ReadInstructions(a); got != "Use the skills." {
		t.Errorf("read back %q", got)
	}
	// Too large or not UTF-8: not sent.
	for _, bad := range []string{strings.Repeat("x", maxInstructionsBytes+1), "\xff\xfe"} {
		if err := os.WriteFile(a, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ReadInstructions(a); got != "" {
			t.Errorf("bad file read as %d bytes", len(got))
		}
	}
}

package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
)

// recorder is a testing.TB that keeps what the check reported instead of
// failing the test around it.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, format)
	panic(r) // Fatalf does not return
}

func check(t *testing.T, path string, got string, update bool) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil && v != r {
				panic(v)
			}
		}()
		golden.Check(r, path, []byte(got), update, "update")
	}()
	return r
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.txt")

	if r := check(t, path, "one\n", false); len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "-%s to write it") {
		t.Errorf("a missing file: fatals %q, want one naming the flag", r.fatals)
	}
	if r := check(t, path, "one\n", true); len(r.errors)+len(r.fatals) > 0 {
		t.Errorf("update: %q %q, want a pass", r.errors, r.fatals)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "one\n" {
		t.Errorf("update wrote %q, %v", data, err)
	}
	if r := check(t, path, "one\n", false); len(r.errors)+len(r.fatals) > 0 {
		t.Errorf("same output: %q %q, want a pass", r.errors, r.fatals)
	}
	if r := check(t, path, "two\n", false); len(r.errors) != 1 {
		t.Errorf("changed output: errors %q, want one", r.errors)
	}
	if data, _ := os.ReadFile(path); string(data) != "one\n" {
		t.Errorf("a failed comparison rewrote the file: %q", data)
	}
}

// Package golden compares test output with files kept under testdata, and
// rewrites those files on request, so that a reviewed git diff is how an
// intended change in output is accepted.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the file at path. With update set it first
// writes got there (creating the folders), so that the run passes and the
// change shows in git diff; flag names the test binary's flag that sets
// update, for the message when the file is missing or differs.
func Check(t testing.TB, path string, got []byte, update bool, flag string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -%s to write it)", err, flag)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run the test with -%s and review the diff):\n--- got\n%s\n--- want\n%s", path, flag, got, want)
	}
}

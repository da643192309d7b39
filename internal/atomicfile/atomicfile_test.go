package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.txt")
	if err := Write(name, 0o644, true, func(w io.Writer) error { _, err := io.WriteString(w, "one"); return err }); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(name); string(data) != "one" {
		t.Fatalf("content %q", data)
	}
	if info, _ := os.Stat(name); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}
	// A failing fill leaves the old file and no temporary file behind.
	boom := errors.New("boom")
	err := Write(name, 0o644, false, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "one" {
		t.Errorf("a failed write changed the file to %q", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), 0o644, false, func(io.Writer) error { return nil }); err == nil {
		t.Error("a write into a missing folder succeeded")
	}
}

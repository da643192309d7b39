package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadDirMatchesOS lists a folder holding every kind of entry, and more
// entries than one getdents buffer takes, and checks the listing against
// os.ReadDir: the same names in the same order, the same types, and the
// size and identity of each regular file.
func TestReadDirMatchesOS(t *testing.T) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "d")
	must(os.Mkdir(sub, 0o755))
	for i := range 1500 {
		must(os.WriteFile(filepath.Join(sub, fmt.Sprintf("file-with-a-longish-name-%04d.md", i)), []byte("x"), 0o644))
	}
	must(os.Mkdir(filepath.Join(sub, "folder"), 0o755))
	must(os.Symlink("file-with-a-longish-name-0001.md", filepath.Join(sub, "link")))
	must(syscall.Mkfifo(filepath.Join(sub, "pipe"), 0o644))
	must(os.WriteFile(filepath.Join(sub, ".hidden"), []byte("hidden!"), 0o644))

	bt, err := openBeneathTree(dir)
	if err != nil || bt == nil {
		t.Skipf("no openat2 here: %v", err)
	}
	defer bt.close()
	got, err := bt.readDir("d")
	must(err)
	want, err := os.ReadDir(sub)
	must(err)
	if len(got) != len(want) {
		t.Fatalf("readDir listed %d entries, os.ReadDir %d", len(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.name != w.Name() || e.typ != w.Type() {
			t.Fatalf("entry %d: %q %v, want %q %v", i, e.name, e.typ, w.Name(), w.Type())
		}
		if !e.typ.IsRegular() {
			continue
		}
		info, err := w.Info()
		must(err)
		st := info.Sys().(*syscall.Stat_t)
		if e.err != nil || e.size != info.Size() || !e.stat.ok || e.stat.ino != st.Ino || e.stat.size != info.Size() {
			t.Fatalf("%s: size %d, stat %+v, err %v; want size %d, inode %d", e.name, e.size, e.stat, e.err, info.Size(), st.Ino)
		}
	}
	if _, err := bt.readDir("d/pipe"); err == nil {
		t.Error("a FIFO was listed as a folder")
	}
	if _, err := bt.readDir("d/link"); err == nil {
		t.Error("a symlink was followed")
	}
	if _, err := bt.readDir("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("an escaping name gave %v", err)
	}
}

// TestDirentType maps every d_type, and an unknown one to the marker that
// makes readDir stat the entry.
func TestDirentType(t *testing.T) {
	for typ, want := range map[byte]fs.FileMode{
		syscall.DT_REG: 0, syscall.DT_DIR: fs.ModeDir, syscall.DT_LNK: fs.ModeSymlink,
		syscall.DT_FIFO: fs.ModeNamedPipe, syscall.DT_SOCK: fs.ModeSocket,
		syscall.DT_CHR: fs.ModeDevice | fs.ModeCharDevice, syscall.DT_BLK: fs.ModeDevice,
		syscall.DT_UNKNOWN: typeUnknown, 99: typeUnknown,
	} {
		if got := direntType(typ); got != want {
			t.Errorf("direntType(%d) = %v, want %v", typ, got, want)
		}
	}
}

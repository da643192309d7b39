package library

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

// TestArchiveFS checks the archive's fs.FS against the standard FS
// conformance test, with folders that only file names imply.
func TestArchiveFS(t *testing.T) {
	data := goodZip(t, "demo/SKILL.md", "---\nname: demo\n---\n", "demo/scripts/run.sh", "echo hi\n", "top.txt", "x")
	a, err := OpenArchive(bytes.NewReader(data), int64(len(data)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fsys := a.FS()
	if err := fstest.TestFS(fsys, "demo/SKILL.md", "demo/scripts/run.sh", "top.txt", "demo/scripts"); err != nil {
		t.Fatal(err)
	}
	// Reading twice works: each open has its own budget.
	for range 2 {
		if b, err := fs.ReadFile(fsys, "demo/scripts/run.sh"); err != nil || string(b) != "echo hi\n" {
			t.Fatalf("ReadFile = %q, %v", b, err)
		}
	}
}

// TestArchiveFSChecksContent opens a file whose CRC-32 lies: the open fails
// with the library's sentinel instead of handing out the bytes.
func TestArchiveFSChecksContent(t *testing.T) {
	good := zipWith(t, func(zw *zip.Writer) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.txt", Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("hello"))
	})
	bad := messWith(good, func(b []byte) []byte {
		i := bytes.Index(b, []byte("hello"))
		b[i] = 'j'
		return b
	})
	a, err := OpenArchive(bytes.NewReader(bad), int64(len(bad)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(a.FS(), "a.txt"); !errors.Is(err, ErrChecksum) {
		t.Fatalf("ReadFile of a lying entry: %v, want ErrChecksum", err)
	}
}

// FuzzArchiveFS walks and reads every file of any archive OpenArchive
// accepts: no panic, every listed file opens or fails with an
// *ArchiveError, and what opens has its declared size.
func FuzzArchiveFS(f *testing.F) {
	for _, tc := range badCases() {
		f.Add(tc.data)
	}
	f.Add(goodZip(f, "lib/demo/SKILL.md", "x", "lib/demo/a/b.txt", "b", "top", ""))
	lim := Limits{MaxEntries: 64, MaxTotalBytes: 1 << 20, MaxEntryBytes: 512 << 10, MaxRatio: 200}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := OpenArchive(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			return
		}
		fsys := a.FS()
		err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatalf("walk %s: %v", name, err)
			}
			if d.IsDir() {
				return nil
			}
			info, _ := d.Info()
			b, err := fs.ReadFile(fsys, name)
			var ae *ArchiveError
			switch {
			case err != nil && !errors.As(err, &ae):
				t.Fatalf("read %s: %v is not an *ArchiveError", name, err)
			case err == nil && int64(len(b)) != info.Size():
				t.Fatalf("read %s: %d bytes, declared %d", name, len(b), info.Size())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

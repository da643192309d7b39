package regfile_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// specials makes a FIFO and a unix socket in a new folder and returns it
// with their names; a test that hangs on one fails at its deadline, and
// the FIFO is opened for writing at cleanup so that no open stays blocked.
func specials(t *testing.T) (dir string, names []string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs here")
	}
	dir = t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	t.Cleanup(func() {
		// Release an open that blocked, so a failing test still ends.
		if f, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"fifo", "sock"}
}

// within fails the test if fn does not return within a generous deadline:
// an open that blocks on a FIFO never returns.
func within(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func TestSpecialFilesRefused(t *testing.T) {
	dir, names := specials(t)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := regfile.FS(root)
	for _, name := range append(names, "folder") {
		p := filepath.Join(dir, name)
		opens := map[string]func() error{
			"Open":   func() error { f, err := regfile.Open(p); closeIf(f); return err },
			"OpenIn": func() error { f, err := regfile.OpenIn(root, name); closeIf(f); return err },
			"ReadFile": func() error {
				_, err := regfile.ReadFile(p, 1<<20)
				return err
			},
			"FS.ReadFile": func() error { _, err := fs.ReadFile(fsys, name); return err },
		}
		if name != "folder" {
			opens["FS.Open"] = func() error {
				f, err := fsys.Open(name)
				if err == nil {
					f.Close()
				}
				return err
			}
			opens["FS.ReadDir"] = func() error { _, err := fs.ReadDir(fsys, name); return err }
		}
		for op, open := range opens {
			err := within(t, op+" "+name, open)
			if name == "sock" && op != "FS.ReadDir" && errors.Is(err, syscall.ENXIO) {
				continue // a socket cannot be opened at all
			}
			if !errors.Is(err, regfile.ErrNotRegular) && !(op == "FS.ReadDir" && err != nil) {
				t.Errorf("%s(%s) = %v, want an error matching ErrNotRegular", op, name, err)
			}
		}
	}
	if data, err := regfile.ReadFile(filepath.Join(dir, "file"), 4); err != nil || string(data) != "data" {
		t.Errorf("ReadFile(file) = %q, %v, want data", data, err)
	}
	if _, err := regfile.ReadFile(filepath.Join(dir, "file"), 3); err == nil {
		t.Error("ReadFile over the limit succeeded")
	}
	if des, err := fs.ReadDir(fsys, "."); err != nil || len(des) != 4 {
		t.Errorf("ReadDir(.) = %v, %v, want the 4 entries", des, err)
	}
	if _, err := fs.ReadDir(fsys, "folder"); err != nil {
		t.Errorf("ReadDir(folder) = %v", err)
	}
}

func TestCharDeviceRefused(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil || runtime.GOOS == "windows" {
		t.Skip("no", os.DevNull)
	}
	f, err := regfile.Open(os.DevNull)
	closeIf(f)
	if !errors.Is(err, regfile.ErrNotRegular) {
		t.Errorf("Open(%s) = %v, want an error matching ErrNotRegular", os.DevNull, err)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

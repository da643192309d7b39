//go:build unix

package catalog_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// swapFIFO replaces the file at p with a FIFO. At cleanup the FIFO is
// opened for writing, which releases any open of it that blocked, so that
// a failing test still ends.
func swapFIFO(t *testing.T, p string) {
	t.Helper()
	must(t, os.Remove(p))
	must(t, syscall.Mkfifo(p, 0o644))
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// inTime runs fn and fails the test if it has not returned by a generous
// deadline: reading a FIFO without a writer never returns.
func inTime[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked on a special file", what)
		panic("unreachable")
	}
}

// noGoroutineLeft fails the test if, at its end, more goroutines run than
// at its start, once those ending have had a generous while to end.
func noGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(20 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling for a state, not the assertion
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines left running:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		}
	})
}

// specialLib is a library of two skills, each with a reference, read
// through openat2 or through the os.Root fallback.
func specialLib(t *testing.T, viaRoot bool) (*catalog.Library, string) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md": "---\nname: a\ndescription: A skill.\n---\nBody.\n",
		"a/ref.md":   "reference a\n",
		"b/SKILL.md": "---\nname: b\ndescription: A skill.\n---\nBody.\n",
		"b/ref.md":   "reference b\n",
	})
	if viaRoot {
		catalog.ReadThroughRoot(lib)
	}
	return lib, dir
}

func scanIn(t *testing.T, libs []*catalog.Library, gen uint64, o *catalog.Options) *catalog.Snapshot {
	t.Helper()
	type res struct {
		snap *catalog.Snapshot
		err  error
	}
	r := inTime(t, "scan", func() res {
		snap, err := catalog.Scan(context.Background(), libs, gen, o)
		return res{snap, err}
	})
	must(t, r.err)
	return r.snap
}

// withheld checks that snap serves a/ref.md not, b/ref.md yes, and warns
// of a special file in skill a.
func withheld(t *testing.T, snap *catalog.Snapshot) {
	t.Helper()
	if _, ok := snap.File("skill://a/ref.md"); ok {
		t.Error("a/ref.md, now a special file, is still served")
	}
	if _, ok := snap.File("skill://b/ref.md"); !ok {
		t.Error("b/ref.md is not served")
	}
	for _, w := range snap.Warnings() {
		if w.Path == "a" && strings.Contains(w.Message, "special file") {
			return
		}
	}
	t.Errorf("no special-file warning for skill a: %v", snap.Warnings())
}

func viaBoth(t *testing.T, fn func(t *testing.T, viaRoot bool)) {
	for _, viaRoot := range []bool{false, true} {
		name := "openat2"
		if viaRoot {
			name = "os.Root"
		}
		t.Run(name, func(t *testing.T) { fn(t, viaRoot) })
	}
}

// TestSpecialFilesBeforeFirstScan: FIFOs and a socket in the library at
// the first scan are withheld with a warning, and the scan ends.
func TestSpecialFilesBeforeFirstScan(t *testing.T) {
	viaBoth(t, func(t *testing.T, viaRoot bool) {
		noGoroutineLeft(t)
		lib, dir := specialLib(t, viaRoot)
		swapFIFO(t, filepath.Join(dir, "a/ref.md"))
		l, err := net.Listen("unix", filepath.Join(dir, "b/notes.sock"))
		must(t, err)
		defer l.Close()
		snap := scanIn(t, []*catalog.Library{lib}, 1, nil)
		withheld(t, snap)
		if _, ok := snap.File("skill://b/notes.sock"); ok {
			t.Error("a socket is served")
		}
	})
}

// TestSpecialFileSwappedAfterScan: a file swapped for a FIFO after the
// scan makes its read fail at once with ErrChanged, and the next rescan
// withholds it; swapped back, it is served again.
func TestSpecialFileSwappedAfterScan(t *testing.T) {
	viaBoth(t, func(t *testing.T, viaRoot bool) {
		noGoroutineLeft(t)
		lib, dir := specialLib(t, viaRoot)
		store := catalog.NewStore(scanIn(t, []*catalog.Library{lib}, 1, nil))
		f, ok := store.Snapshot().File("skill://a/ref.md")
		if !ok {
			t.Fatal("a/ref.md not served")
		}
		p := filepath.Join(dir, "a/ref.md")
		swapFIFO(t, p)
		err := inTime(t, "ReadFile", func() error { _, err := f.ReadFile(); return err })
		if !errors.Is(err, catalog.ErrChanged) {
			t.Errorf("reading a file swapped for a FIFO: %v, want ErrChanged", err)
		}
		r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }, nil)
		rescan := func() *catalog.Snapshot {
			type res struct {
				snap *catalog.Snapshot
				err  error
			}
			v := inTime(t, "rescan", func() res { s, err := r.Rescan(context.Background()); return res{s, err} })
			must(t, v.err)
			return v.snap
		}
		withheld(t, rescan())
		must(t, os.Remove(p))
		must(t, os.WriteFile(p, []byte("reference a, again\n"), 0o644))
		if _, ok := rescan().File("skill://a/ref.md"); !ok {
			t.Error("a/ref.md, a regular file again, is not served after a rescan")
		}
	})
}

// TestSpecialFileSwappedDuringRescan: files swapped for FIFOs between a
// rescan's listing and its reads (a reference, and a SKILL.md) are
// withheld with a warning, the rescan ends, and so do the watcher's later
// rescans and its Close.
func TestSpecialFileSwappedDuringRescan(t *testing.T) {
	viaBoth(t, func(t *testing.T, viaRoot bool) {
		noGoroutineLeft(t)
		lib, dir := specialLib(t, viaRoot)
		store := catalog.NewStore(scanIn(t, []*catalog.Library{lib}, 1, nil))
		// Edited since the first scan, so that the rescan reads them
		// rather than reusing what it knew, then swapped once listed.
		ref, md := filepath.Join(dir, "a/ref.md"), filepath.Join(dir, "b/SKILL.md")
		must(t, os.WriteFile(ref, []byte("reference a, edited\n"), 0o644))
		catalog.AfterListing(lib, func(folder string) {
			if info, err := os.Lstat(ref); folder == "a" && err == nil && info.Mode().IsRegular() {
				swapFIFO(t, ref)
			}
		})
		w, err := catalog.NewWatcher(0, nil)
		must(t, err)
		synced := make(chan struct{}, 1)
		w.NotifySynced(synced)
		r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }, nil)
		w.Start(r)
		w.Kick()
		inTime(t, "rescan", func() struct{} { <-synced; return struct{}{} })
		withheld(t, store.Snapshot())

		// The SKILL.md itself, in the next rescan.
		must(t, os.WriteFile(md, []byte("---\nname: b\ndescription: Edited.\n---\nBody.\n"), 0o644))
		catalog.AfterListing(lib, func(folder string) {
			if folder == "b" {
				if info, err := os.Lstat(md); err == nil && info.Mode().IsRegular() {
					swapFIFO(t, md)
				}
			}
		})
		w.Kick()
		inTime(t, "rescan", func() struct{} { <-synced; return struct{}{} })
		if _, ok := store.Snapshot().File("skill://b/SKILL.md"); ok {
			t.Error("b, whose SKILL.md is now a FIFO, is still served")
		}
		inTime(t, "Close", func() error { return w.Close() })
	})
}

package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// servedFilters is what a scan of libraries would apply: the namespaces in order,
// with each library's noScripts, and the global filters.
func servedFilters(l *libraries) string {
	libs, opts := l.Source()
	var b strings.Builder
	for _, lib := range libs {
		fmt.Fprintf(&b, "%s(noScripts=%t) ", lib.Namespace, lib.NoScripts)
	}
	fmt.Fprintf(&b, "noScripts=%t excludeTiers=%v", opts.NoScripts, opts.ExcludeTiers)
	return b.String()
}

// TestReloadsRaceAtomically races config reloads of good and bad files
// from many goroutines while scans read the libraries: every scan must see
// one of the good configurations whole, never a rejected file's looser
// filters nor one file's switches with another's libraries, and the last
// reload of a good file must be what stays.
func TestReloadsRaceAtomically(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"one", "two"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	good := map[string]string{
		`{"libraries": [{"namespace": "one", "root": "one", "noScripts": true}], "noScripts": true, "excludeTiers": ["pro"]}`:                                             "one(noScripts=true) noScripts=true excludeTiers=[pro]",
		`{"libraries": [{"namespace": "two", "root": "two", "noScripts": true}, {"namespace": "one", "root": "one"}], "noScripts": true, "excludeTiers": ["enterprise"]}`: "two(noScripts=true) one(noScripts=false) noScripts=true excludeTiers=[enterprise]",
	}
	bad := []string{
		// Fails when its library is opened, after validation.
		`{"libraries": [{"namespace": "one", "root": "missing"}], "noScripts": false}`,
		// The first library opens, the second does not.
		`{"libraries": [{"namespace": "one", "root": "one"}, {"namespace": "three", "root": "missing"}], "noScripts": false}`,
		// A switch repeated to undo it.
		`{"libraries": [{"namespace": "one", "root": "one"}], "noScripts": true, "noScripts": false}`,
		`{"libraries": [`,
		`{"libraries": [{"namespace": "one", "root": "../one"}], "noScripts": false}`,
	}
	var files []string
	for f := range good {
		files = append(files, f)
	}
	slices.Sort(files)
	files = append(files, bad...)
	wantOne := map[string]bool{}
	for _, v := range good {
		wantOne[v] = true
	}

	path := filepath.Join(dir, "skills.json")
	write := func(t *testing.T, n int, text string) {
		tmp := fmt.Sprintf("%s.%d.tmp", path, n)
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Error(err)
		}
	}
	write(t, 0, files[0])
	cfg := &serveConfig{configPath: path, cacheDir: filepath.Join(dir, "cache")}
	env := func(string) (string, bool) { return "", false }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	l, err := openLibraries(ctx, cfg, env, log)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	var stop atomic.Bool
	var samples atomic.Int64
	scans := make(chan error, 1)
	go func() {
		defer close(scans)
		for !stop.Load() {
			if got := servedFilters(l); !wantOne[got] {
				scans <- fmt.Errorf("a scan saw %q", got)
				return
			}
			samples.Add(1)
		}
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				write(t, g+1, files[(g+i)%len(files)])
				l.ReloadConfig(ctx) // good or bad, either is fine
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	if err := <-scans; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scans checked", samples.Load())

	// The last good reload stays; a bad one after it changes nothing.
	for _, f := range files[:2] {
		write(t, 0, f)
		if err := l.ReloadConfig(ctx); err != nil {
			t.Fatal(err)
		}
		if got := servedFilters(l); got != good[f] {
			t.Fatalf("after reloading %s: %s", f, got)
		}
		for _, b := range bad {
			write(t, 0, b)
			if err := l.ReloadConfig(ctx); err == nil {
				t.Fatalf("reloading %s: no error", b)
			}
			if got := servedFilters(l); got != good[f] {
				t.Fatalf("after the bad %s: %s, want %s", b, got, good[f])
			}
		}
	}
}

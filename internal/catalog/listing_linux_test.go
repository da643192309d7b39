package catalog_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// ageFolders sets the mtime of every folder under dir an hour back, out
// of the racy window, as files are by tree.
func ageFolders(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

// A start with a digest cache walks unchanged folders from the listings
// of the last scan, and still sees every change: a folder added, a file
// removed, a file added to a folder whose mtime was then set back.
func TestListingsFromTheDigestCache(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"tools/a/SKILL.md":     strings.Replace(skillMD, "%s", "a", 1),
		"tools/a/refs/x.md":    "x\n",
		"tools/b/SKILL.md":     strings.Replace(skillMD, "%s", "b", 1),
		"tools/b/refs/gone.md": "gone\n",
		"docs/c/SKILL.md":      strings.Replace(skillMD, "%s", "c", 1),
		"docs/c/scripts/r.py":  "print(1)\n",
	})
	if !catalog.ListingsTrusted(lib) {
		t.Skip("the temporary folder's file system is not one whose folder timestamps are trusted")
	}
	ageFolders(t, dir)
	opts := &catalog.Options{DigestCache: catalog.NewDigestCache(t.TempDir())}
	// start is a new process's first scan: no previous snapshot.
	start := func() *catalog.Snapshot {
		t.Helper()
		snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
		must(t, err)
		return snap
	}
	uris := func(snap *catalog.Snapshot) []string {
		var out []string
		for _, sk := range snap.Skills() {
			for _, f := range sk.Files {
				out = append(out, f.URI)
			}
		}
		return out
	}
	first := start()
	if got := first.Stats().FoldersListed; got != 9 {
		t.Fatalf("cold start listed %d folders, want all 9", got)
	}
	warm := start()
	if st := warm.Stats(); st.FoldersListed != 0 || st.FilesRead != 0 {
		t.Errorf("warm start listed %d folders and read %d files, want none", st.FoldersListed, st.FilesRead)
	}
	if !slices.Equal(uris(warm), uris(first)) {
		t.Errorf("warm start serves %v, want %v", uris(warm), uris(first))
	}

	// A new skill: tools changes, and the new folders are listed; the
	// others are not.
	must(t, os.MkdirAll(filepath.Join(dir, "tools/d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tools/d/SKILL.md"), []byte(strings.Replace(skillMD, "%s", "d", 1)), 0o644))
	// Out of the racy window, so that the new listings are kept.
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"tools", "tools/d", "tools/d/SKILL.md"} {
		must(t, os.Chtimes(filepath.Join(dir, p), old, old))
	}
	added := start()
	if _, ok := added.Skill("skill://tools/d/SKILL.md"); !ok {
		t.Errorf("a skill added since the cache was written is not served: %v", uris(added))
	}
	if got := added.Stats().FoldersListed; got != 2 {
		t.Errorf("after adding a skill, listed %d folders, want 2 (tools and tools/d)", got)
	}
	if got := start().Stats().FoldersListed; got != 0 {
		t.Errorf("the start after that listed %d folders: the new listings were not kept", got)
	}

	// A file removed.
	must(t, os.Remove(filepath.Join(dir, "tools/b/refs/gone.md")))
	if _, ok := start().File("skill://tools/b/refs/gone.md"); ok {
		t.Error("a removed file is still served")
	}

	// A file added to a folder whose mtime is then set back: the folder's
	// ctime still differs.
	must(t, os.WriteFile(filepath.Join(dir, "docs/c/scripts/new.py"), []byte("print(2)\n"), 0o644))
	must(t, os.Chtimes(filepath.Join(dir, "docs/c/scripts"), old, old))
	if _, ok := start().File("skill://docs/c/scripts/new.py"); !ok {
		t.Error("a file added to a folder whose mtime was set back is not served")
	}
}

// Unchanged proves an aged library unchanged since the first scan without
// a rescan, and reports every kind of change made since: a file edited,
// a file added, a folder whose mtime was set back after a change.
func TestUnchangedSinceTheFirstScan(t *testing.T) {
	files := map[string]string{
		"tools/a/SKILL.md":    strings.Replace(skillMD, "%s", "a", 1),
		"tools/a/refs/x.md":   "x\n",
		"docs/c/SKILL.md":     strings.Replace(skillMD, "%s", "c", 1),
		"docs/c/scripts/r.py": "print(1)\n",
	}
	type change struct {
		name string
		do   func(t *testing.T, dir string)
	}
	old := time.Now().Add(-time.Hour)
	for _, tc := range []change{
		{"nothing", func(*testing.T, string) {}},
		{"a file edited", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "tools/a/refs/x.md"), []byte("y\n"), 0o644))
		}},
		{"a file edited and its mtime set back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "tools/a/refs/x.md")
			must(t, os.WriteFile(p, []byte("y\n"), 0o644))
			must(t, os.Chtimes(p, old, old))
		}},
		{"a file added, the folder's mtime set back", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "docs/c/scripts/new.py"), nil, 0o644))
			must(t, os.Chtimes(filepath.Join(dir, "docs/c/scripts"), old, old))
		}},
		{"a folder removed", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "docs/c/scripts")))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib, dir := tree(t, files)
			if !catalog.ListingsTrusted(lib) {
				t.Skip("the temporary folder's file system is not one whose folder timestamps are trusted")
			}
			ageFolders(t, dir)
			snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: catalog.NewDigestCache(t.TempDir())})
			must(t, err)
			tc.do(t, dir)
			if got, want := snap.Unchanged(), tc.name == "nothing"; got != want {
				t.Errorf("Unchanged = %v, want %v", got, want)
			}
			if got, want := snap.Unchanged(), tc.name == "nothing"; got != want {
				t.Errorf("a second Unchanged = %v, want %v: it only reads", got, want)
			}
		})
	}
	// Without proof, it answers false: a library just written (racy), or
	// a scan without a digest cache (no folder identities).
	lib, dir := tree(t, files)
	fresh, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: catalog.NewDigestCache(t.TempDir())})
	must(t, err)
	if fresh.Unchanged() {
		t.Error("a library whose folders changed just before the scan was proved unchanged")
	}
	ageFolders(t, dir)
	uncached, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	must(t, err)
	if uncached.Unchanged() {
		t.Error("a scan without folder identities was proved unchanged")
	}
}

// Unchanged may run while rescans that change nothing start from the
// state it reads (run with -race).
func TestUnchangedBesideARescan(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"tools/a/SKILL.md":  strings.Replace(skillMD, "%s", "a", 1),
		"tools/a/refs/x.md": "x\n",
	})
	ageFolders(t, dir)
	cache := catalog.NewDigestCache(t.TempDir())
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: cache})
	must(t, err)
	store := catalog.NewStore(snap)
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) {
		return []*catalog.Library{lib}, &catalog.Options{DigestCache: cache}
	}, nil)
	done := make(chan bool)
	go func() { done <- snap.Unchanged() }()
	for range 3 {
		_, err := r.Rescan(context.Background())
		must(t, err)
	}
	if unchanged := <-done; !unchanged && catalog.ListingsTrusted(lib) {
		t.Error("an unchanged library was not proved unchanged beside the rescans")
	}
}

// After serve's late watches, the first rescan an event makes is
// incremental only when Unchanged proved the first scan's listings
// current after the watches; without the proof it lists every folder.
func TestLateWatchesTrustedOnlyOnceProved(t *testing.T) {
	for _, prove := range []bool{true, false} {
		t.Run(fmt.Sprintf("proved=%v", prove), func(t *testing.T) {
			lib, dir := tree(t, map[string]string{
				"tools/a/SKILL.md":  strings.Replace(skillMD, "%s", "a", 1),
				"tools/a/refs/x.md": "x\n",
				"tools/b/SKILL.md":  strings.Replace(skillMD, "%s", "b", 1),
			})
			if !catalog.ListingsTrusted(lib) {
				t.Skip("the temporary folder's file system is not one whose folder timestamps are trusted")
			}
			ageFolders(t, dir)
			cache := catalog.NewDigestCache(t.TempDir())
			first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: cache})
			must(t, err)
			w, err := catalog.NewWatcher(0, nil)
			must(t, err)
			defer w.Close()
			store := catalog.NewStore(first)
			swapped := make(chan *catalog.Snapshot, 16)
			r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) {
				return []*catalog.Library{lib}, &catalog.Options{DigestCache: cache, OnFolder: w.Folder}
			}, func(_, cur *catalog.Snapshot, _ bool) { swapped <- cur })
			w.Start(r)
			w.Sync(first)
			if prove && !first.Unchanged() {
				t.Fatal("an aged library was not proved unchanged")
			}
			must(t, os.WriteFile(filepath.Join(dir, "tools/a/refs/x.md"), []byte("edited\n"), 0o644))
			waitFor(t, swapped, func(s *catalog.Snapshot) bool {
				f, ok := s.File("skill://tools/a/refs/x.md")
				return ok && f.Size == int64(len("edited\n"))
			})
			listed, walked := r.LastRescan()
			if prove && listed >= walked {
				t.Errorf("after the proof, the rescan listed %d of %d folders", listed, walked)
			}
			if !prove && listed != walked {
				t.Errorf("without the proof, the rescan listed %d of %d folders, want all", listed, walked)
			}
		})
	}
}

package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// logBuffer collects log lines written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// waitFor waits until the log holds want, and returns the log so far.
func (b *logBuffer) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		s := b.buf.String()
		b.mu.Unlock()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitFiles waits until pattern matches n files.
func waitFiles(t *testing.T, pattern string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := filepath.Glob(pattern)
		if len(got) == n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s matches %v, want %d files", pattern, got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSearchIndexSaved: a start with the cache of an earlier one loads its
// search index instead of building it; an edit to a body, or a damaged
// saved index, makes it build one again, and searches find what the
// library now says.
func TestSearchIndexSaved(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md": "---\nname: a\ndescription: Send reminders.\n---\nChase overdue invoices.\n",
		"b/SKILL.md": "---\nname: b\ndescription: Fill forms.\n---\nFlatten the PDF.\n",
	})
	cacheDir := t.TempDir()
	saved := filepath.Join(cacheDir, "search", "*.idx")
	var logs logBuffer
	opts := &catalog.Options{
		DigestCache: catalog.NewDigestCache(cacheDir),
		Logger:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	start := func() *catalog.Snapshot {
		t.Helper()
		snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
		must(t, err)
		return catalog.NewStore(snap).Snapshot()
	}
	find := func(snap *catalog.Snapshot, query string) string {
		t.Helper()
		var names []string
		for _, h := range snap.Search(query, "", "", 5) {
			names = append(names, h.Skill.Name)
		}
		return strings.Join(names, ",")
	}

	if got := find(start(), "invoices"); got != "a" {
		t.Fatalf("first start: invoices finds %q, want a", got)
	}
	logs.waitFor(t, "search index saved")
	waitFiles(t, saved, 1)
	logs.take()

	if got := find(start(), "invoices"); got != "a" {
		t.Errorf("second start: invoices finds %q, want a", got)
	}
	if l := logs.take(); !strings.Contains(l, "search index loaded") {
		t.Errorf("second start built its index again; log:\n%s", l)
	}

	p := filepath.Join(dir, "a", "SKILL.md")
	must(t, os.WriteFile(p, []byte("---\nname: a\ndescription: Send reminders.\n---\nChase quarterly receipts.\n"), 0o644))
	snap := start()
	if got := find(snap, "quarterly"); got != "a" {
		t.Errorf("after an edit: quarterly finds %q, want a", got)
	}
	if got := find(snap, "invoices"); got != "" {
		t.Errorf("after an edit: invoices still finds %q", got)
	}
	if l := logs.waitFor(t, "search index saved"); strings.Contains(l, "search index loaded") {
		t.Errorf("an edited library loaded a saved index; log:\n%s", l)
	}
	logs.take()

	for _, f := range waitFiles(t, saved, 2) {
		must(t, os.WriteFile(f, []byte("not an index"), 0o600))
	}
	if got := find(start(), "quarterly"); got != "a" {
		t.Errorf("with damaged indexes: quarterly finds %q, want a", got)
	}
	// The index built instead is saved in the background; the test's
	// folders are removed only after that.
	l := logs.waitFor(t, "search index saved")
	if !strings.Contains(l, "saved search index not used") {
		t.Errorf("a damaged index was not reported; log:\n%s", l)
	}
}

// After a rescan that changed one skill, the new snapshot's index is
// updated from the old one's, and searches answer as from an index built
// from scratch: the edited words are found, the removed ones are not.
func TestUpdatedIndexSearchesAsABuiltOne(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		files["tools/"+n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: Handles " + n + " invoices.\n---\nThe " + n + " procedure.\n"
	}
	lib, dir := tree(t, files)
	libs := []*catalog.Library{lib}
	first, err := catalog.Scan(context.Background(), libs, 1, nil)
	must(t, err)
	store := catalog.NewStore(first)
	<-first.SearchReady()
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return libs, nil }, nil)
	must(t, os.WriteFile(filepath.Join(dir, "tools/gamma/SKILL.md"),
		[]byte("---\nname: gamma\ndescription: Reconciles ledgers.\n---\nThe zeppelin procedure.\n"), 0o644))
	cur, err := r.Rescan(context.Background())
	must(t, err)
	if store.Snapshot() != cur {
		t.Fatal("the edit was not swapped in")
	}
	<-cur.SearchReady()
	fresh, err := catalog.Scan(context.Background(), libs, 1, nil)
	must(t, err)
	for _, q := range []string{"zeppelin", "ledgers", "gamma invoices", "invoices", "procedure", "epsilon"} {
		got, want := hitNames(cur.Search(q, "", "", 10)), hitNames(fresh.Search(q, "", "", 10))
		if got != want {
			t.Errorf("search %q: updated index %s, built index %s", q, got, want)
		}
	}
	if hits := cur.Search("zeppelin", "", "", 10); len(hits) != 1 || hits[0].Skill.Name != "gamma" {
		t.Errorf("search zeppelin = %s, want gamma", hitNames(hits))
	}
}

func hitNames(hits []catalog.Hit) string {
	var names []string
	for _, h := range hits {
		names = append(names, fmt.Sprintf("%s:%.6f", h.Skill.Name, h.Score))
	}
	return strings.Join(names, " ")
}

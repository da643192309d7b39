package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// A record larger than one batch reads back whole; a truncated one, or one
// of another rule set, is refused rather than half used.
func TestDigestCacheRecordBatches(t *testing.T) {
	c := NewDigestCache(t.TempDir())
	p := filepath.Join(c.dir, "digests", "lib.gob")
	n := 2*cacheBatch + 7
	entries := make([]cacheFile, n)
	for i := range entries {
		entries[i] = cacheFile{Name: "f" + strconv.Itoa(i), Size: int64(i), Digest: "sha256:x"}
	}
	entries[5].MD = &cachedMD{Name: "five", BodyOffset: 42}
	if err := c.write(p, "rules", entries); err != nil {
		t.Fatal(err)
	}
	got, err := c.read(p, "rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[n-1].Name != "f"+strconv.Itoa(n-1) || got[5].MD == nil || got[5].MD.BodyOffset != 42 {
		t.Fatalf("read back %d entries, last %+v, fifth %+v", len(got), got[len(got)-1], got[5].MD)
	}
	if _, err := c.read(p, "other rules"); err == nil {
		t.Error("a record of another rule set was used")
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, info.Size()*2/3); err != nil {
		t.Fatal(err)
	}
	if got, err := c.read(p, "rules"); err == nil {
		t.Errorf("a truncated record gave %d entries", len(got))
	}
}

// Saving an index removes the least recently used past keptIndexes
// (loading one counts as a use) and the temporary files of dead writers.
func TestSavedIndexesBounded(t *testing.T) {
	c := NewDigestCache(t.TempDir())
	ix := search.Build([]search.Doc{{ID: 0, Name: "a"}}, 1)
	base := time.Now().Add(-time.Hour)
	for i := range keptIndexes {
		key := "k" + strconv.Itoa(i)
		if err := c.saveIndex(key, ix); err != nil {
			t.Fatal(err)
		}
		used := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(c.indexPath(key), used, used); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.loadIndex("k0", 1); err != nil { // the oldest, used again
		t.Fatal(err)
	}
	// What writers left: one that died long ago, one still writing.
	dead, live := filepath.Join(c.dir, "search", ".dead.idx.1.tmp"), filepath.Join(c.dir, "search", ".live.idx.2.tmp")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(dead, base, base); err != nil {
		t.Fatal(err)
	}
	if err := c.saveIndex("new", ix); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for i := range keptIndexes {
		if _, err := os.Stat(c.indexPath("k" + strconv.Itoa(i))); err == nil {
			kept = append(kept, "k"+strconv.Itoa(i))
		}
	}
	want := []string{"k0", "k2", "k3", "k4", "k5", "k6", "k7"}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v and new", kept, want)
	}
	if _, err := c.loadIndex("new", 1); err != nil {
		t.Errorf("the index just saved: %v", err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("an hour-old temporary file was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a fresh temporary file was removed: %v", err)
	}
	if _, err := c.loadIndex("new", 2); err == nil {
		t.Error("an index of 1 document loaded for a catalog of 2")
	}
}

package catalog

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
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

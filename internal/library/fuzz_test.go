package library

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzExtract feeds arbitrary bytes to Extract as an archive. Whatever the
// input, it must not panic, must write nothing outside the cache directory,
// must leave the cache empty when it refuses, and must leave only a
// well-formed extraction (regular files 0644, directories 0755, with its
// integrity record) when it accepts. The corpus is seeded with every test
// archive, good and hostile.
func FuzzExtract(f *testing.F) {
	for _, tc := range badCases() {
		f.Add(tc.data)
	}
	f.Add(goodZip(f, "lib/demo/SKILL.md", skillMD, "lib/demo/a/b.txt", "b"))
	f.Add(newRaw(rawStored("lib/SKILL.md", []byte(skillMD)), rawDeflated("lib/x.md", []byte("xxxxxxxxxxxxxxxxxxxxxxxx"))).bytes())
	z := rawDeflated("lib/SKILL.md", []byte(skillMD))
	z.zip64 = true
	a := newRaw(z)
	a.zip64End = true
	f.Add(a.bytes())
	f.Add(newRaw().bytes())

	lim := Limits{MaxEntries: 64, MaxTotalBytes: 1 << 20, MaxEntryBytes: 512 << 10, MaxRatio: 200}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		zp := filepath.Join(base, "in.zip")
		if err := os.WriteFile(zp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// The cache sits deep below base, so that an escape by a few ".."
		// would land somewhere this test looks.
		cacheDir := filepath.Join(base, "d1", "d2", "d3", "cache")
		c := &Cache{Dir: cacheDir, Limits: lim}
		_, digest, err := c.Extract(context.Background(), zp)
		if cerr := c.Close(); cerr != nil {
			t.Fatal(cerr)
		}

		allowed := map[string]bool{"in.zip": true, "d1": true, "d1/d2": true, "d1/d2/d3": true}
		filepath.WalkDir(base, func(p string, d fs.DirEntry, werr error) error {
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if rel == "." || allowed[rel] || rel == "d1/d2/d3/cache" || filepath.Dir(p) == cacheDir || isUnder(p, cacheDir) {
				return nil
			}
			t.Errorf("written outside the cache: %s", rel)
			return nil
		})
		if err != nil {
			assertEmptyCache(t, cacheDir)
			return
		}
		ents, _ := os.ReadDir(cacheDir)
		for _, e := range ents {
			if e.Name() != digest && e.Name() != downloadsDir {
				t.Errorf("unexpected %s in the cache after success", e.Name())
			}
		}
		final := filepath.Join(cacheDir, digest)
		if _, err := os.Stat(filepath.Join(final, recordName)); err != nil {
			t.Errorf("no integrity record: %v", err)
		}
		assertModes(t, filepath.Join(final, treeName))
	})
}

// isUnder reports whether p is inside dir.
func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

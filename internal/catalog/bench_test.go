package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// benchLibrary generates a synthetic library of n skills once per process.
func benchLibrary(b *testing.B, n int) *catalog.Library {
	b.Helper()
	dir, err := bench.SharedLibrary(n)
	if err != nil {
		b.Fatal(err)
	}
	lib, err := catalog.OpenDirectory("", dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lib.Close() })
	return lib
}

// BenchmarkScanCold scans a 5,000-skill library reading every file.
func BenchmarkScanCold(b *testing.B) {
	lib := benchLibrary(b, 5000)
	for b.Loop() {
		if _, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRescanUnchanged rescans the same library with the previous
// snapshot, as the watcher does: stats, no reads.
func BenchmarkRescanUnchanged(b *testing.B) {
	lib := benchLibrary(b, 5000)
	prev, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 2, &catalog.Options{Previous: prev}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRescanIncremental rescans the same library as after an event
// that named no folder: every folder walked from the previous listing.
func BenchmarkRescanIncremental(b *testing.B) {
	lib := benchLibrary(b, 5000)
	prev, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := catalog.RescanTrusting(context.Background(), []*catalog.Library{lib}, prev, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanWarmCache scans with a persistent digest cache written by an
// earlier process: only the SKILL.md files are read.
func BenchmarkScanWarmCache(b *testing.B) {
	lib := benchLibrary(b, 5000)
	cache := catalog.NewDigestCache(b.TempDir())
	if _, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: cache}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: cache}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirectory lists a skill root of a 5,000-skill library, as
// resources/directory/read does: the listing is derived on each call.
func BenchmarkDirectory(b *testing.B) {
	lib := benchLibrary(b, 5000)
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	root := strings.TrimSuffix(snap.Skills()[2000].URI, "/SKILL.md")
	b.ReportAllocs()
	for b.Loop() {
		if entries, ok := snap.Directory(root); !ok || len(entries) == 0 {
			b.Fatalf("%s: no listing", root)
		}
	}
}

// BenchmarkReadOne is a cold scan's work per file once read: the digest,
// the UTF-8 check, sniffing, the risk linter and, for a SKILL.md, the
// parser, on files of a generated library.
func BenchmarkReadOne(b *testing.B) {
	for _, name := range []string{"SKILL.md", "references/guide.md"} {
		files, err := bench.SharedFiles(400, name, 64)
		if err != nil {
			b.Fatal(err)
		}
		var total int
		for _, f := range files {
			total += len(f)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(total / len(files)))
			b.ReportAllocs()
			buf := make([]byte, 0, 64<<10)
			i := 0
			for b.Loop() {
				var err error
				buf, _, err = catalog.ReadOne("skill/"+name, files[i%len(files)], buf)
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

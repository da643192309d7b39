package skill_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// BenchmarkParse parses the SKILL.md files of a generated library
// (frontmatter with tags and metadata, a body of 10-60 lines), as a cold
// scan does once per skill.
func BenchmarkParse(b *testing.B) {
	dir, err := bench.SharedLibrary(400)
	if err != nil {
		b.Fatal(err)
	}
	var docs [][]byte
	var total int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "SKILL.md" || len(docs) == 64 {
			return err
		}
		data, err := os.ReadFile(p)
		docs = append(docs, data)
		total += int64(len(data))
		return err
	})
	if err != nil || len(docs) == 0 {
		b.Fatalf("no SKILL.md in %s: %v", dir, err)
	}
	b.SetBytes(total / int64(len(docs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := skill.Parse(docs[i%len(docs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

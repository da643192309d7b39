package skill_test

import (
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// BenchmarkParse parses the SKILL.md files of a generated library
// (frontmatter with tags and metadata, a body of 10-60 lines), as a cold
// scan does once per skill.
func BenchmarkParse(b *testing.B) {
	docs, err := bench.SharedFiles(400, "SKILL.md", 64)
	if err != nil {
		b.Fatal(err)
	}
	var total int
	for _, d := range docs {
		total += len(d)
	}
	b.SetBytes(int64(total / len(docs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := skill.Parse(docs[i%len(docs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

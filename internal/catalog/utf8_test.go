package catalog_test

import (
	"testing"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// FuzzUTF8Chunks checks the chunked validator against utf8.Valid for every
// way of cutting the input in three.
func FuzzUTF8Chunks(f *testing.F) {
	for _, s := range []string{"", "ascii", "héllo wörld", "日本語", "\xff", "a\xe2\x82", "\xe2\x82\xac", "🎉x", "\xf0\x9f\x8e"} {
		f.Add([]byte(s), uint8(1), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, a, b uint8) {
		i, j := int(a)%(len(data)+1), int(b)%(len(data)+1)
		if i > j {
			i, j = j, i
		}
		got := catalog.ValidUTF8Chunks([][]byte{data[:i], data[i:j], data[j:]})
		if want := utf8.Valid(data); got != want {
			t.Fatalf("chunks %q|%q|%q: valid = %v, want %v", data[:i], data[i:j], data[j:], got, want)
		}
	})
}

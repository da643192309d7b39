package lint

import (
	"fmt"
	"strings"
	"testing"
)

// fileWork runs File's scan over data and returns the work it counted.
func fileWork(name string, data []byte) int {
	s := newFileScan(name, data)
	s.nameRules()
	s.run()
	return s.work
}

// TestLinear holds the linter linear in its input, which is untrusted:
// four times the input may cost at most eight times the work (the bytes
// read to place findings, counted) and the allocations. A frontmatter of
// 6,000 unknown keys took 12 s when each problem searched from the top,
// and a .pth of many imports or a package.json of many hooks on one line
// went the same way.
func TestLinear(t *testing.T) {
	frontmatter := func(n int) []byte {
		var b strings.Builder
		b.WriteString("---\nname: x\ndescription: A skill.\n")
		for i := range n {
			fmt.Fprintf(&b, "key-%d: value\n", i)
		}
		b.WriteString("---\n# Body\n")
		return []byte(b.String())
	}
	repeat := func(head, line, tail string) func(int) []byte {
		return func(n int) []byte { return []byte(head + strings.Repeat(line, n) + tail) }
	}
	for _, tc := range []struct {
		name string
		n    int // within the 64 KiB bound of a frontmatter
		gen  func(n int) []byte
		run  func([]byte) int // returns the work counted, if any
	}{
		{"SkillMD unknown keys", 500, frontmatter, func(d []byte) int { SkillMD("x", d); return 0 }},
		{"frontmatter hook keys", 500, repeat("---\nname: x\ndescription: A skill.\n", "post-install: make\n", "---\n"), func(d []byte) int { return fileWork("SKILL.md", d) }},
		{"pth imports", 1000, repeat("", "import os\n", ""), func(d []byte) int { return fileWork("hooks.pth", d) }},
		{"package.json hooks on one line", 1000, repeat("{", `"install": 1, `, ""), func(d []byte) int { return fileWork("package.json", d) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small, large := tc.gen(tc.n), tc.gen(4*tc.n)
			w1, w4 := tc.run(small), tc.run(large)
			a1 := testing.AllocsPerRun(2, func() { tc.run(small) })
			a4 := testing.AllocsPerRun(2, func() { tc.run(large) })
			t.Logf("4x the input: %.1fx the allocations (%.0f → %.0f), work %d → %d", a4/a1, a1, a4, w1, w4)
			if a4 > 8*a1 {
				t.Errorf("4x the input cost %.1fx the allocations (%.0f → %.0f), want at most 8x", a4/a1, a1, a4)
			}
			if w4 > 8*max(w1, 1) {
				t.Errorf("4x the input cost %.1fx the work (%d → %d), want at most 8x", float64(w4)/float64(w1), w1, w4)
			}
		})
	}
}

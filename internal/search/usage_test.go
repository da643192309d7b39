package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUsagePassages(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"opening and usage sections", "# PDF tools\n\nWork with PDF files.\n\n## When to Use This Skill\n\n- merging reports\n\n## Steps\n\nRun it.\n\n### Overview of options\nFlags.\n",
			[]string{"Work with PDF files.", "- merging reports", "Flags."}},
		{"when not to use is left out", "## When NOT to use\n\nSpreadsheets.\n\n## Purpose\n\nSlides.\n",
			[]string{"Slides."}},
		{"use-when lines anywhere", "## Steps\n\nDo this.\nUse when the build is red.\nuse this skill when asked.\n",
			[]string{"Use when the build is red.", "use this skill when asked."}},
		{"code fences are skipped", "## Overview\n\n```sh\n# not a heading\nrm -rf x\n```\nReal text.\n",
			[]string{"Real text."}},
		{"not a heading", "#hashtag\n\n####### seven\n", []string{"#hashtag\n\n####### seven"}},
		{"empty", "", nil},
	} {
		got := usagePassages(c.body)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: usagePassages = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestUsagePassagesBounded(t *testing.T) {
	body := strings.Repeat("## Overview\n\n"+strings.Repeat("word ", 500)+"\n", 20)
	total := 0
	for _, p := range usagePassages(body) {
		if len(p) > maxUsageSection {
			t.Errorf("a passage of %d bytes, over %d", len(p), maxUsageSection)
		}
		total += len(p)
	}
	if total == 0 || total > maxUsageBytes {
		t.Errorf("%d bytes of passages, want 1..%d", total, maxUsageBytes)
	}
}

// FuzzUsagePassages: a SKILL.md body is hostile; its passages are
// bounded and whole UTF-8 (when the body is), whatever it holds.
func FuzzUsagePassages(f *testing.F) {
	f.Add("# T\n\nOpening.\n## Overview\nText.\n```\n## x\n```\nUse when y.\n")
	f.Add("## When to use\n" + strings.Repeat("é", 2000))
	f.Add("#\n##\n###### \n```")
	f.Fuzz(func(t *testing.T, body string) {
		total := 0
		for _, p := range usagePassages(body) {
			if p == "" || len(p) > maxUsageSection || utf8.ValidString(body) && !utf8.ValidString(p) {
				t.Fatalf("passage %q: empty, over %d bytes, or cut inside a rune", p, maxUsageSection)
			}
			total += len(p)
		}
		if total > maxUsageBytes {
			t.Fatalf("%d bytes of passages", total)
		}
	})
}

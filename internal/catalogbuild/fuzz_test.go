package catalogbuild

import (
	"strings"
	"testing"
)

// FuzzExtractLinks: any input is read without panic, within its size, and
// every link found is text of the input's (no link is invented).
func FuzzExtractLinks(f *testing.F) {
	for _, s := range []string{
		`<a href="https://github.com/o/r">x</a>`,
		`<base href="https://d.example/s/"><a href=p1><area href='p2'>`,
		`<link rel=canonical href="https://d.example/s"><meta property="og:url" content="x">`,
		`<a href="&#x68;ttps://github.com/o/r">entity</a>`,
		`<svg><a href="x"/></svg><a href`,
		"<a href=\"\x00\">", `<<a href=a href=b>>`, `<script><a href="no"></script>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		links, base, err := ExtractLinks(strings.NewReader(s))
		if err != nil {
			return
		}
		total := 0
		for _, l := range links {
			total += len(l)
		}
		if total > 4*len(s)+16 || len(base) > 4*len(s)+16 {
			t.Fatalf("%d bytes of links from %d bytes of input", total, len(s))
		}
		// The page's links then go through the discovery's own checks.
		d := &discovery{seenRepo: map[string]bool{}, seenPage: map[string]bool{}, opts: DiscoverOptions{MaxPages: 10}}
		d.page("fuzz", links, nil, 0)
		for _, r := range d.repos {
			if _, _, ok := githubRepo(r.URL); !ok {
				t.Fatalf("kept %q, not a GitHub repository", r.URL)
			}
		}
	})
}

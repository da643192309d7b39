package search

import (
	"cmp"
	"slices"
	"strings"
	"testing"
)

// FuzzSearch builds an index from fuzzed documents and checks the
// invariants of a search: no panic, at most the clamped limit of hits,
// valid and distinct IDs, scores sorted with the documented tie-break,
// Matched in field order, and the same answer twice.
func FuzzSearch(f *testing.F) {
	f.Add("invoice-reminders|acme|Finance|Send reminders|overdue,late|body\npdf-forms||docs|Fill PDF forms|pdf|", "invoices", "", "", 0)
	f.Add("a|b|c|d|e|f\nA|B|C|D|E|F", "a", "b", "C", 3)
	f.Add("pdf-forms|x|y|z||\npdf-forms|x|y|z||", "PDF forms", "x", "Y", -1)
	f.Add("生成文档|||生成技术文档||", "文档", "", "", 100)
	f.Add("Café|||Überprüfung||camelCaseWord", "cafe camel", "", "", 2)
	f.Add("deploy|||||deployment deploying", "deplo", "", "", 1)
	f.Add("x\xff\xfe|||\x00||", "\xff", "", "", 5)
	f.Fuzz(func(t *testing.T, docsText, text, library, category string, limit int) {
		var docs []Doc
		for i, line := range strings.Split(docsText, "\n") {
			if i >= 64 {
				break
			}
			fs := strings.SplitN(line, "|", 6)
			for len(fs) < 6 {
				fs = append(fs, "")
			}
			docs = append(docs, Doc{
				ID: 1000 - i, Name: fs[0], Library: fs[1], Category: fs[2],
				Description: fs[3], Tags: strings.Split(fs[4], ","), Body: fs[5],
			})
		}
		ix := Build(docs, 0)
		q := Query{Text: text, Library: library, Category: category, Limit: limit}
		hits := ix.Search(q)

		max := limit
		switch {
		case limit == 0:
			max = DefaultLimit
		case limit < 1:
			max = 1
		case limit > MaxLimit:
			max = MaxLimit
		}
		if len(hits) > max {
			t.Fatalf("%d hits, limit %d", len(hits), max)
		}
		if strings.TrimSpace(text) == "" && hits != nil {
			t.Fatalf("empty query gave %v", hits)
		}
		byID := map[int]Doc{}
		for _, d := range docs {
			byID[d.ID] = d
		}
		seen := map[int]bool{}
		for i, h := range hits {
			d, ok := byID[h.ID]
			if !ok || seen[h.ID] {
				t.Fatalf("hit %d: invalid or repeated ID %d", i, h.ID)
			}
			seen[h.ID] = true
			if library != "" && d.Library != library {
				t.Fatalf("hit %d: library %q, filter %q", i, d.Library, library)
			}
			if category != "" && foldString(strings.TrimSpace(d.Category)) != foldString(strings.TrimSpace(category)) {
				t.Fatalf("hit %d: category %q, filter %q", i, d.Category, category)
			}
			if len(h.Matched) == 0 || !slices.IsSortedFunc(h.Matched, func(a, b string) int {
				return cmp.Compare(slices.Index(fieldNames[:], a), slices.Index(fieldNames[:], b))
			}) {
				t.Fatalf("hit %d: Matched %v", i, h.Matched)
			}
			if i == 0 {
				continue
			}
			p, pd := hits[i-1], byID[hits[i-1].ID]
			if p.Score < h.Score || p.Score == h.Score && cmp.Or(strings.Compare(pd.Name, d.Name), cmp.Compare(p.ID, h.ID)) > 0 {
				t.Fatalf("hits %d and %d out of order: %v %q, %v %q", i-1, i, p, pd.Name, h, d.Name)
			}
		}
		again := ix.Search(q)
		if !slices.EqualFunc(hits, again, func(a, b Hit) bool {
			return a.ID == b.ID && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
		}) {
			t.Fatalf("second search differs:\n%v\n%v", hits, again)
		}
	})
}

package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func testIndex(t testing.TB) *Index {
	t.Helper()
	items := []Item{
		{ID: "a/pdf", Name: "pdf-forms", Description: "Fill and merge PDF forms.", Author: "Anthropic", Category: "Documents", Repository: "https://h/a"},
		{ID: "a/xlsx", Name: "spreadsheets", Description: "Read and write Excel workbooks.", Author: "Anthropic", Category: "documents", Repository: "https://h/a"},
		{ID: "t/audit", Name: "contract-audit", Description: "Audit smart contracts for reentrancy.", Author: "trailofbits", Category: "security", Repository: "https://h/t"},
		{ID: "t/fuzz", Name: "fuzzing", Description: "Write fuzz harnesses for parsers, including PDF readers.", Author: "trailofbits", Category: "security", Repository: "https://h/t"},
		{ID: "s/none", Name: "misc", Description: "Nothing in particular.", Repository: "https://h/s"},
	}
	return NewIndex(&Snapshot{SchemaVersion: 1, Items: items}, "test")
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Item.ID)
	}
	return out
}

func TestSearch(t *testing.T) {
	ix := testIndex(t)
	cases := []struct {
		q    Query
		want []string
	}{
		{Query{Text: "pdf"}, []string{"a/pdf", "t/fuzz"}},                                               // name beats description
		{Query{Text: "pdf", Category: "security"}, []string{"t/fuzz"}},                                  // category filter
		{Query{Text: "pdf", Category: "DOCUMENTS"}, []string{"a/pdf"}},                                  // case-insensitive
		{Query{Text: "trailofbits"}, []string{"t/audit", "t/fuzz"}},                                     // by author
		{Query{Text: "excel workbook"}, []string{"a/xlsx"}},                                             // by description, stemmed
		{Query{Text: "pdf", Author: "trailofbits"}, []string{"t/fuzz"}},                                 // author filter
		{Query{Text: "contract-audit"}, []string{"t/audit"}},                                            // exact name first
		{Query{Text: "pdf", Category: "nope"}, nil},                                                     // unknown category
		{Query{Text: "   "}, nil},                                                                       // empty query
		{Query{Text: "pdf", Limit: 1}, []string{"a/pdf"}},                                               // limit
		{Query{Text: "anthropic spreadsheets"}, []string{"a/xlsx", "a/pdf"}},                            // name and author
		{Query{Text: "fuzz", Author: "Anthropic", Category: "documents"}, nil},                          // both filters
		{Query{Text: "reentrancy", Author: " TrailOfBits ", Category: "security"}, []string{"t/audit"}}, // folded filters
	}
	for _, c := range cases {
		if got := ids(ix.Search(c.q)); !slices.Equal(got, c.want) {
			t.Errorf("Search(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
	hits := ix.Search(Query{Text: "trailofbits audit"})
	if len(hits) == 0 || !slices.Contains(hits[0].Matched, "author") || !slices.Contains(hits[0].Matched, "name") {
		t.Errorf("Matched = %v, want author and name", hits[0].Matched)
	}
}

func TestLookupAndBrowse(t *testing.T) {
	ix := testIndex(t)
	if it, ok := ix.Item("t/fuzz"); !ok || it.Name != "fuzzing" {
		t.Errorf("Item(t/fuzz) = %v, %v", it, ok)
	}
	if _, ok := ix.Item("nope"); ok {
		t.Error("Item(nope) found")
	}
	var names []string
	for _, it := range ix.Items("Documents", "") {
		names = append(names, it.Name)
	}
	if !slices.Equal(names, []string{"pdf-forms", "spreadsheets"}) {
		t.Errorf("Items(documents) = %v", names)
	}
	if n := len(ix.Items("", "trailofbits")); n != 2 {
		t.Errorf("Items(author trailofbits) = %d items", n)
	}
	if n := len(ix.Items("", "")); n != 5 {
		t.Errorf("Items() = %d items", n)
	}
	want := []Category{{"", 1}, {"documents", 2}, {"security", 2}}
	if got := ix.Categories(); !slices.Equal(got, want) {
		t.Errorf("Categories() = %v, want %v", got, want)
	}
	// Authors are counted as first written, folded as the filter folds
	// them; an item without one is not.
	if got, want := ix.Authors(), []Author{{"Anthropic", 2}, {"trailofbits", 2}}; !slices.Equal(got, want) {
		t.Errorf("Authors() = %v, want %v", got, want)
	}
	if ix.Len() != 5 || ix.Source() != "test" {
		t.Errorf("Len %d Source %q", ix.Len(), ix.Source())
	}
}

func TestBundled(t *testing.T) {
	// The embedded snapshot is valid, lists real repositories at pinned
	// commits, and answers searches offline.
	snap, err := Parse(bytes.NewReader(BundledJSON()), nil)
	if err != nil {
		t.Fatalf("bundled.json: %v", err)
	}
	ix := Bundled()
	if ix.Len() != len(snap.Items) || ix.Len() < 300 || ix.Source() != BundledSource {
		t.Fatalf("bundled: %d items (parsed %d), source %q", ix.Len(), len(snap.Items), ix.Source())
	}
	covered := map[string]string{}
	for _, s := range snap.Sources {
		covered[s.Repository] = s.Commit
	}
	if covered["https://github.com/anthropics/skills"] == "" {
		t.Error("the bundled snapshot does not cover anthropics/skills")
	}
	for _, it := range snap.Items {
		if c, ok := covered[it.Repository]; !ok || c != it.Commit {
			t.Errorf("item %s: repository %s at %s is not among the sources", it.ID, it.Repository, it.Commit)
		}
	}
	if !slices.IsSortedFunc(snap.Items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("items are not sorted by id, so rebuilds would not be byte-identical")
	}
	hits := ix.Search(Query{Text: "pdf"})
	if len(hits) == 0 || hits[0].Item.Name != "pdf" {
		t.Errorf("searching the bundled snapshot for pdf: %v", ids(hits))
	}
}

// benchItems makes n items from the bundled snapshot's real ones: names,
// descriptions and authors repeat, each copy with its own id and name.
func benchItems(n int) []Item {
	base := Bundled().Snapshot().Items
	items := make([]Item, n)
	for i := range items {
		it := base[i%len(base)]
		if copyNo := i / len(base); copyNo > 0 {
			it.ID = fmt.Sprintf("%s~%d", it.ID, copyNo)
			it.Name = fmt.Sprintf("%s-%d", it.Name, copyNo)
		}
		items[i] = it
	}
	return items
}

// benchQueries draws queries as a user types them: two or three words of
// an item's description, an item's name, an author, some with a category.
func benchQueries(items []Item, n int) []Query {
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]Query, n)
	for i := range qs {
		it := items[r.IntN(len(items))]
		words := strings.Fields(it.Description)
		switch i % 4 {
		case 0:
			qs[i] = Query{Text: it.Name}
		case 1:
			qs[i] = Query{Text: it.Author + " " + words[r.IntN(len(words))]}
		default:
			k := r.IntN(len(words))
			qs[i] = Query{Text: strings.Join(words[k:min(len(words), k+2+r.IntN(2))], " ")}
		}
		if i%5 == 0 {
			qs[i].Category = it.Category
		}
	}
	return qs
}

// BenchmarkSearch10k measures a query over 10,000 items and reports the
// 50th and 95th percentiles per query (issue 18: p95 ≤ 2 ms).
func BenchmarkSearch10k(b *testing.B) {
	items := benchItems(10_000)
	ix := NewIndex(&Snapshot{SchemaVersion: 1, Items: items}, "bench")
	qs := benchQueries(items, 500)
	for _, q := range qs {
		ix.Search(q) // warm the scratch pool
	}
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		start := time.Now()
		ix.Search(qs[i%len(qs)])
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(start))
		}
		i++
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*95/100)].Microseconds()), "p95-µs")
}

// BenchmarkParseAndIndex10k measures reading and indexing a document of
// 10,000 items, what a refresh costs.
func BenchmarkParseAndIndex10k(b *testing.B) {
	raw, err := Marshal(&Snapshot{SchemaVersion: 1, Items: benchItems(10_000)})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		snap, err := Parse(bytes.NewReader(raw), nil)
		if err != nil {
			b.Fatal(err)
		}
		NewIndex(snap, "bench")
	}
}

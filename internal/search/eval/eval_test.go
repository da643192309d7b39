package eval

import (
	"errors"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

func TestEvaluate(t *testing.T) {
	qs := []Query{
		{Query: "one", Relevant: map[string]int{"a": 3}},
		{Query: "two", Relevant: map[string]int{"a": 3, "b": 1}},
		{Query: "three", Relevant: map[string]int{"z": 2}},
	}
	ranked := map[string][]string{
		"one":   {"a", "x"},
		"two":   {"x", "b", "y", "a"},
		"three": {"x", "y"},
	}
	m, results := Evaluate(qs, func(q string) []string { return ranked[q] })
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// two: first relevant at rank 2; both relevant in the top 5; DCG =
	// 1/log2(3) + 7/log2(5), ideal = 7 + 1/log2(3).
	ndcg2 := (1/math.Log2(3) + 7/math.Log2(5)) / (7 + 1/math.Log2(3))
	want := Metrics{Queries: 3, Hit1: 1.0 / 3, Recall5: 2.0 / 3, MRR10: (1 + 0.5) / 3, NDCG10: (1 + ndcg2) / 3}
	if m.Queries != want.Queries || !near(m.Hit1, want.Hit1) || !near(m.Recall5, want.Recall5) ||
		!near(m.MRR10, want.MRR10) || !near(m.NDCG10, want.NDCG10) {
		t.Errorf("Evaluate = %+v, want %+v", m, want)
	}
	if !results[0].Hit1 || results[1].Hit1 || results[2].RR != 0 {
		t.Errorf("results = %+v", results)
	}
	// Results past Depth do not count.
	long := make([]string, 20)
	for i := range long {
		long[i] = "x"
	}
	long[Depth] = "a"
	if m, _ := Evaluate(qs[:1], func(string) []string { return long }); m.MRR10 != 0 || m.NDCG10 != 0 {
		t.Errorf("rank %d counted: %+v", Depth+1, m)
	}
}

func TestLoadQueries(t *testing.T) {
	good := `[{"query": "get paid", "relevant": {"invoice-reminders": 3, "x": 1}}]`
	qs, err := LoadQueries(strings.NewReader(good))
	if err != nil || len(qs) != 1 || qs[0].Relevant["x"] != 1 {
		t.Fatalf("LoadQueries = %+v, %v", qs, err)
	}
	for _, bad := range []string{
		``, `{}`, `[{"query": "x", "relevant": {"a": 4}}]`, `[{"query": "x", "relevant": {"a": 0}}]`,
		`[{"query": " ", "relevant": {"a": 1}}]`, `[{"query": "x", "relevant": {}}]`,
		`[{"query": "x", "relevant": {"a": 1}, "extra": 1}]`,
	} {
		if _, err := LoadQueries(strings.NewReader(bad)); err == nil {
			t.Errorf("LoadQueries(%s): no error", bad)
		}
	}
}

func TestLoadLibrary(t *testing.T) {
	fsys := fstest.MapFS{
		"b/two/SKILL.md":    {Data: []byte("---\r\nname: two\r\ndescription: Second.\r\ntags: x, y\r\ntrigger-phrases:\r\n  - say two\r\n---\r\nBody two.\r\n")},
		"a/one/SKILL.md":    {Data: []byte("---\nname: one\ndescription: \"First: quoted.\"\ncategory: cat\ntags: [p, q]\n---\n# One\n")},
		"nameless/SKILL.md": {Data: []byte("---\ndescription: No name.\n---")},
		"notes.md":          {Data: []byte("not a skill")},
	}
	docs, err := LoadLibrary(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("%d docs, want 3", len(docs))
	}
	one, two, nameless := docs[0], docs[1], docs[2]
	if one.ID != 0 || one.Name != "one" || one.Description != "First: quoted." || one.Category != "cat" ||
		strings.Join(one.Tags, ",") != "p,q" || one.Body != "# One\n" {
		t.Errorf("one = %+v", one)
	}
	if two.ID != 1 || strings.Join(two.Tags, ",") != "x,y,say two" || two.Body != "Body two.\n" {
		t.Errorf("two = %+v", two)
	}
	if nameless.Name != "nameless" || nameless.Body != "" {
		t.Errorf("nameless = %+v", nameless)
	}

	for name, data := range map[string]string{
		"no frontmatter": "# Title\n",
		"unterminated":   "---\nname: x\n",
		"bad yaml":       "---\nname: [x\n---\n",
	} {
		_, err := LoadLibrary(fstest.MapFS{"x/SKILL.md": {Data: []byte(data)}})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if name != "bad yaml" && !errors.Is(err, ErrNoFrontmatter) {
			t.Errorf("%s: %v, want ErrNoFrontmatter", name, err)
		}
	}
}

func TestBaseline(t *testing.T) {
	docs := []struct{ name, desc string }{
		{"invoice-reminders", "Send reminders for overdue invoices."},
		{"invoice-creation", "Create invoices."},
		{"pdf-forms", "Fill the forms."},
	}
	var in []search.Doc
	for _, d := range docs {
		in = append(in, search.Doc{Name: d.name, Description: d.desc})
	}
	rank := Baseline(in)
	if got := rank("overdue invoices"); strings.Join(got, ",") != "invoice-reminders,invoice-creation" {
		t.Errorf("baseline = %v", got)
	}
	// No stemming: "invoice" is not "invoices"; stop words never match.
	if got := rank("the invoice"); strings.Join(got, ",") != "invoice-creation,invoice-reminders" {
		t.Errorf("baseline = %v", got)
	}
	if got := rank("the"); len(got) != 0 {
		t.Errorf("stop word matched: %v", got)
	}
}

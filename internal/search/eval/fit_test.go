package eval

import (
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// TestFit fits the vectors' weight on a pool made by hand: the answer of
// each query is second by BM25F and first by its vector, and a decoy
// with a close vector but a poor BM25F score must stay below it.
func TestFit(t *testing.T) {
	docs := []search.Doc{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}, {ID: 2, Name: "c"}}
	feat := func(bm, vec float64) [search.NumFeatures]float64 {
		return [search.NumFeatures]float64{search.FeatBM25F: bm, search.FeatVector: vec}
	}
	p := &Pool{docs: docs, cands: map[string][]search.Candidate{
		"one": {{ID: 0, Features: feat(1, 0.1)}, {ID: 1, Features: feat(0.9, 0.6)}, {ID: 2, Features: feat(0.2, 0.9)}},
		"two": {{ID: 2, Features: feat(1, 0.0)}, {ID: 0, Features: feat(0.8, 0.5)}, {ID: 1, Features: feat(0.1, 0.8)}},
	}}
	qs := []Query{
		{Query: "one", Relevant: map[string]int{"b": 3}},
		{Query: "two", Relevant: map[string]int{"a": 3}},
	}
	var bm25 search.Weights
	bm25[search.FeatBM25F] = 1
	if m, _ := Evaluate(qs, p.Ranker(&bm25)); m.Hit1 != 0 {
		t.Fatalf("BM25F alone: Hit@1 %v, want 0", m.Hit1)
	}
	w := p.Fit(qs, nil)
	if m, _ := Evaluate(qs, p.Ranker(&w)); m.Hit1 != 1 {
		t.Errorf("fitted %v: Hit@1 %v, want 1", w, m.Hit1)
	}
	if w[search.FeatBM25F] != 1 || w[search.FeatVector] <= 0 {
		t.Errorf("fitted %v, want BM25F at 1 and the vectors above 0", w)
	}
	if again := p.Fit(qs, nil); again != w {
		t.Errorf("fitted %v, then %v", w, again)
	}
	// A feature left out keeps its zero weight.
	if w := p.Fit(qs, []int{search.FeatVector}); w != bm25 {
		t.Errorf("without the vectors: fitted %v, want BM25F alone", w)
	}
	// Exact names stay first whatever the weights.
	p.cands["one"] = []search.Candidate{{ID: 2, Exact: true}, {ID: 0, Features: feat(1, 0.1)}, {ID: 1, Features: feat(0.9, 0.6)}}
	if got := p.Ranker(&w)("one"); len(got) != 3 || got[0] != "c" || got[1] != "b" {
		t.Errorf("ranking with an exact name: %v, want c, then b", got)
	}
}

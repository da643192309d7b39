package eval

import (
	"cmp"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// Pool holds, for each query of a set, the candidates the second stage
// of ranking re-orders and their features, so that weights can be
// measured without searching again.
type Pool struct {
	docs  []search.Doc
	cands map[string][]search.Candidate // by query text
}

// NewPool gathers the candidates of every query in qs from ix, which must
// have been built from docs.
func NewPool(ix *search.Index, docs []search.Doc, qs []Query) *Pool {
	p := &Pool{docs: docs, cands: map[string][]search.Candidate{}}
	for _, q := range qs {
		if _, ok := p.cands[q.Query]; !ok {
			p.cands[q.Query] = ix.Candidates(search.Query{Text: q.Query})
		}
	}
	return p
}

// Ranker returns the ranking the weights w give: exact names first, then
// by the linear score, name and ID, as the engine orders them.
func (p *Pool) Ranker(w *search.Weights) Ranker {
	return func(text string) []string {
		cs := p.cands[text]
		type scored struct {
			c     search.Candidate
			score float64
		}
		list := make([]scored, 0, len(cs))
		for _, c := range cs {
			v := 0.0
			for f, x := range c.Features {
				v += w[f] * x
			}
			list = append(list, scored{c, v})
		}
		slices.SortStableFunc(list, func(x, y scored) int {
			if x.c.Exact != y.c.Exact {
				if x.c.Exact {
					return -1
				}
				return 1
			}
			if x.c.Exact {
				return 0 // in the engine's order already
			}
			return cmp.Or(cmp.Compare(y.score, x.score),
				strings.Compare(p.docs[x.c.ID].Name, p.docs[y.c.ID].Name),
				cmp.Compare(x.c.ID, y.c.ID))
		})
		names := make([]string, 0, Depth)
		for _, s := range list[:min(len(list), Depth)] {
			names = append(names, Key(p.docs[s.c.ID]))
		}
		return names
	}
}

// fitGrid is the values coordinate ascent tries for each weight but
// BM25F's, which is held at 1 to fix the scale. Negative values let a
// feature count against a candidate.
var fitGrid = []float64{-1, -0.5, -0.25, -0.1, 0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4}

// maxFitRounds bounds the passes of coordinate ascent over the weights.
const maxFitRounds = 8

// Fit chooses the second stage's weights for the queries qs (the tuning
// half) by coordinate ascent on nDCG@10, with Hit@1 breaking ties: from
// BM25F alone, each weight in turn takes the value of fitGrid that
// scores best with the others held, until a pass changes nothing. The
// weights of the features in without stay zero, for ablations. The same
// pool and queries give the same weights.
func (p *Pool) Fit(qs []Query, without []int) search.Weights {
	var w search.Weights
	w[search.FeatBM25F] = 1
	objective := func(w *search.Weights) (float64, float64) {
		m, _ := Evaluate(qs, p.Ranker(w))
		return m.NDCG10, m.Hit1
	}
	bestN, bestH := objective(&w)
	for range maxFitRounds {
		changed := false
		for f := range search.NumFeatures {
			if f == search.FeatBM25F || slices.Contains(without, f) {
				continue
			}
			keep := w[f]
			for _, v := range fitGrid {
				if v == keep {
					continue
				}
				w[f] = v
				n, h := objective(&w)
				// A change must gain a little, so that rounding noise in
				// the sums does not move a weight.
				if n > bestN+1e-9 || n > bestN-1e-9 && h > bestH+1e-9 {
					bestN, bestH, keep, changed = n, h, v, true
				}
			}
			w[f] = keep
		}
		if !changed {
			break
		}
	}
	return w
}

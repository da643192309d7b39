package search

import (
	"cmp"
	"slices"
	"strings"
)

// The second stage of ranking re-orders BM25F's best rerankDepth
// candidates by a linear model over two features of each (query, skill)
// pair: BM25F's score, and how close the query's meaning is to the
// skill's by the word vectors (vecindex.go), which relates words that
// BM25F sees as different ("planets" and "astronomy"). Its weights were
// fitted on the tuning half of the realistic set (skills-searcheval
// -ablation refits them); other features were measured and left out
// (docs/decisions/2026-12-04-search-second-stage.md).

// rerankDepth is how many of BM25F's best candidates the second stage
// re-orders. It equals MaxLimit, so a query's results never depend on
// its limit.
const rerankDepth = MaxLimit

// Features of a candidate.
const (
	// FeatBM25F is the BM25F score over the best candidate's, in (0, 1].
	FeatBM25F = iota
	// FeatVector is how close the query's vector and the skill's are:
	// (1 + their cosine) / 2, in [0, 1], so that scores stay positive.
	FeatVector
	// NumFeatures is the number of features.
	NumFeatures
)

// Weights is a linear model over the features.
type Weights [NumFeatures]float64

// rerankWeights are the second stage's weights. BM25F's is 1, which sets
// the scale; the vectors' was fitted on the tuning half of the realistic
// set by coordinate ascent on nDCG@10 (eval.Pool.Fit). At 1, a candidate
// whose cosine with the query is higher by 0.2 overtakes one whose BM25F
// score is higher by a tenth of the best's.
var rerankWeights = Weights{FeatBM25F: 1, FeatVector: 1}

// Candidate is one of the candidates the second stage ranks, with its
// features, for fitting the weights (skills-searcheval -ablation).
type Candidate struct {
	ID       int
	Exact    bool // the name is the query, which puts it first
	Features [NumFeatures]float64
}

// Candidates returns the candidates the second stage would rank for q,
// exact names first, then in BM25F's order, with their features. Only
// the text and the filters of q are read.
func (ix *Index) Candidates(q Query) []Candidate {
	q.Limit = MaxLimit
	var out []Candidate
	ix.run(q, true, func(s *scratch, exact, top []uint32, feats [][NumFeatures]float64) {
		for _, d := range exact {
			out = append(out, Candidate{ID: ix.ids[d], Exact: true})
		}
		for i, d := range top {
			c := Candidate{ID: ix.ids[d]}
			if feats != nil {
				c.Features = feats[i]
			}
			out = append(out, c)
		}
	})
	return out
}

// features returns the features of the candidates in top, best first by
// BM25F, whose scores s holds complete (pruning completes the scores of
// every document that can reach the top), for the query text.
func (ix *Index) features(s *scratch, text string, top []uint32) [][NumFeatures]float64 {
	feats := s.feats[:0]
	for range top {
		feats = append(feats, [NumFeatures]float64{})
	}
	s.feats = feats
	if len(top) == 0 {
		return feats
	}
	best := s.score[top[0]]
	ix.queryVector(s, text)
	for i, d := range top {
		if best > 0 {
			feats[i][FeatBM25F] = s.score[d] / best
		}
		if s.hasQVec {
			feats[i][FeatVector] = (1 + ix.vectorDot(s, d)) / 2
		}
	}
	return feats
}

// rerank orders top by the linear model w over feats, best first, then
// by name and ID as compare does. It returns the scores by position in
// top and the order, in s's memory.
func (ix *Index) rerank(s *scratch, w *Weights, top []uint32, feats [][NumFeatures]float64) (scores []float64, order []int) {
	scores = s.rscore[:0]
	for i := range top {
		v := 0.0
		for f, x := range feats[i] {
			v += w[f] * x
		}
		scores = append(scores, v)
	}
	s.rscore = scores
	order = s.perm[:0]
	for i := range top {
		order = append(order, i)
	}
	s.perm = order
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(scores[y], scores[x]); c != 0 {
			return c
		}
		dx, dy := top[x], top[y]
		if c := strings.Compare(ix.names[dx], ix.names[dy]); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(ix.ids[dx], ix.ids[dy]), cmp.Compare(dx, dy))
	})
	return scores, order
}

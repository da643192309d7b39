package search

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// The second stage of ranking re-orders BM25F's best rerankDepth
// candidates by a linear model over features of each (query, skill)
// pair: what BM25F saw, field by field, and what it cannot see, such as
// a query word whose WordNet relative is in the skill's description.
// Features are computed from the postings alone (a binary search per
// candidate, term and field), so the index holds nothing more for them.
// The weights were fitted on the tuning half of the realistic set
// (skills-searcheval fit) and are kept as constants below.

// rerankDepth is how many of BM25F's best candidates the second stage
// re-orders. It equals MaxLimit, so a query's results never depend on
// its limit.
const rerankDepth = MaxLimit

// Features of a candidate. Each is a share of the query's weight (the sum
// over its terms of idf × the term's weight) unless it says otherwise,
// so that weights fitted on short queries hold for long ones.
const (
	// FeatBM25F is the BM25F score over the best candidate's.
	FeatBM25F = iota
	// FeatName .. FeatBody are BM25 per field: each query term's
	// saturated, length-normalised frequency in that field alone.
	FeatName
	FeatTags
	FeatDescription
	FeatBody
	// FeatCoverShort is the share of the query matched in the name, the
	// tags or the description; FeatCoverBody in the body.
	FeatCoverShort
	FeatCoverBody
	// FeatNamePrefix is the share of the query whose terms begin a term
	// of the name, or that a term of the name begins ("auth" and
	// "authent"), at four letters or more.
	FeatNamePrefix
	// FeatClose .. FeatGloss are the share of the query not matched in
	// the name, tags or description whose WordNet relative of that kind
	// is there: a synonym or derivation, a more general or more specific
	// word, a word of its topic domain, a word of its definition.
	FeatClose
	FeatBroad
	FeatTopic
	FeatGloss
	// FeatRelatedBody is the same for relatives of any kind in the body.
	FeatRelatedBody
	// FeatVector is the cosine of the query's vector and the skill's
	// (of its name, tags and description), each the idf-weighted sum of
	// its terms' word vectors (vectors.go).
	FeatVector
	// NumFeatures is the number of features.
	NumFeatures
)

// FeatureNames names the features, for skills-searcheval.
var FeatureNames = [NumFeatures]string{
	"bm25f", "name", "tags", "description", "body", "cover-short", "cover-body",
	"name-prefix", "close", "broad", "topic", "gloss", "related-body",
	"vector",
}

// Weights is a linear model over the features.
type Weights [NumFeatures]float64

// rerankWeights are the second stage's weights, fitted on the tuning half
// of the realistic set by skills-searcheval fit.
var rerankWeights = Weights{
	FeatBM25F:  1,
	FeatVector: 0.75,
}

// maxRelatedShare bounds the document frequency of a related term that
// counts, as a share of the documents: a relative that half the skills
// hold ("use", "work") says nothing about any of them.
const maxRelatedShare = 0.05

// Candidate is one of the candidates the second stage ranks, with its
// features, for fitting the weights (skills-searcheval fit).
type Candidate struct {
	ID       int
	Exact    bool // the name is the query, which puts it first
	Features [NumFeatures]float64
}

// Candidates returns the candidates the second stage would rank for q,
// in BM25F's order, with their features. Only Text and the filters of q
// are read.
func (ix *Index) Candidates(q Query) []Candidate {
	q.Limit = MaxLimit
	var out []Candidate
	ix.run(q, true, func(s *scratch, exact, top []uint32, feats [][NumFeatures]float64) {
		for _, d := range exact {
			out = append(out, Candidate{ID: ix.ids[d], Exact: true})
		}
		for i, d := range top {
			out = append(out, Candidate{ID: ix.ids[d], Features: feats[i]})
		}
	})
	return out
}

// features computes the features of the candidates in top for the
// query's plan qts. It uses s.order, s.tf and s.matched as working
// memory.
func (ix *Index) features(s *scratch, qts []queryTerm, top []uint32) [][NumFeatures]float64 {
	k := len(top)
	feats := s.feats[:0]
	for range k {
		feats = append(feats, [NumFeatures]float64{})
	}
	s.feats = feats
	if k == 0 {
		return feats
	}
	// The candidates by document number, for walking postings.
	order := s.order[:0]
	for i := range top {
		order = append(order, uint32(i))
	}
	slices.SortFunc(order, func(x, y uint32) int { return cmp.Compare(top[x], top[y]) })
	s.order = order
	sorted := s.sorted[:0]
	for _, i := range order {
		sorted = append(sorted, top[i])
	}
	s.sorted = sorted

	total := 0.0
	for _, qt := range qts {
		total += qt.weight * qt.idf
	}
	if total == 0 {
		return feats
	}
	if cap(s.tf) < k*numFields {
		s.tf = make([]float32, k*numFields)
	}
	tf := s.tf[:k*numFields]
	if cap(s.short) < k {
		s.short = make([]bool, k)
	}
	short := s.short[:k]
	fieldFeat := [numFields]int{fieldName: FeatName, fieldTags: FeatTags, fieldDescription: FeatDescription, fieldCategory: -1, fieldBody: FeatBody}
	maxDF := uint32(maxRelatedShare * float64(ix.n))

	for _, qt := range qts {
		share := qt.weight * qt.idf / total
		clear(tf)
		for f := range numFields {
			p := &ix.fields[f]
			for _, t := range qt.terms {
				intersect(p.docs[p.off[t]:p.off[t+1]], sorted, func(c, j int) {
					i := order[c]
					tf[int(i)*numFields+f] += float32(p.tfs[int(p.off[t])+j])
				})
			}
		}
		for i, d := range top {
			row := tf[i*numFields : (i+1)*numFields]
			// BM25F as the first stage scores it, exact whether or not
			// pruning or the vectors brought the candidate in.
			x := 0.0
			for f, v := range row {
				x += float64(v) * float64(ix.fields[f].norm[d])
			}
			if x > 0 {
				feats[i][FeatBM25F] += qt.weight * qt.idf * x * (k1 + 1) / (x + k1)
			}
			for f, v := range row {
				if v == 0 || fieldFeat[f] < 0 {
					continue
				}
				x := float64(v) * float64(ix.fields[f].norm[d])
				feats[i][fieldFeat[f]] += share * x / (x + k1)
			}
			short[i] = row[fieldName] > 0 || row[fieldTags] > 0 || row[fieldDescription] > 0
			if short[i] {
				feats[i][FeatCoverShort] += share
			}
			if row[fieldBody] > 0 {
				feats[i][FeatCoverBody] += share
			}
		}
		if len(qt.terms) != 1 {
			continue // the completions of a word still being typed
		}
		term := ix.terms[qt.terms[0]]
		ix.namePrefix(s, feats, top, term, share)

		// Relatives, for the candidates that do not hold the term itself
		// in a short field. found[i] has a bit per kind, and one for the
		// body.
		found := s.found[:0]
		for range k {
			found = append(found, 0)
		}
		s.found = found
		defaultVocab.related(term, func(rt string, kind int) {
			t, ok := slices.BinarySearch(ix.terms, rt)
			if !ok || ix.df[t] > maxDF {
				return
			}
			for _, f := range [...]int{fieldName, fieldTags, fieldDescription, fieldBody} {
				bit := uint8(1) << kind
				if f == fieldBody {
					bit = 1 << numRel
				}
				p := &ix.fields[f]
				intersect(p.docs[p.off[t]:p.off[t+1]], sorted, func(c, _ int) {
					found[order[c]] |= bit
				})
			}
		})
		for i := range top {
			if short[i] || found[i] == 0 {
				continue
			}
			for kind := range numRel {
				if found[i]&(1<<kind) != 0 {
					feats[i][FeatClose+kind] += share
				}
			}
			if found[i]&(1<<numRel) != 0 {
				feats[i][FeatRelatedBody] += share
			}
		}
	}
	best := 0.0
	for i := range top {
		best = max(best, feats[i][FeatBM25F])
	}
	for i := range top {
		if best > 0 {
			feats[i][FeatBM25F] /= best
		}
	}
	ix.vectorFeatures(s, top, feats)
	return feats
}

// vectorFeatures sets FeatVector: the dot product of the query's vector
// (queryVector) with each candidate's.
func (ix *Index) vectorFeatures(s *scratch, top []uint32, feats [][NumFeatures]float64) {
	if !s.hasQVec {
		return
	}
	for i, d := range top {
		feats[i][FeatVector] = ix.vectorDot(s, d)
	}
}

// minPrefix is the shortest shared beginning that FeatNamePrefix counts.
const minPrefix = 4

// namePrefix adds share to FeatNamePrefix of each candidate whose name
// has a term that term begins or that begins term, but is not term.
func (ix *Index) namePrefix(s *scratch, feats [][NumFeatures]float64, top []uint32, term string, share float64) {
	if len(term) < minPrefix {
		return
	}
	for i, d := range top {
		hit := false
		s.a.run(ix.names[d], func(nt []byte) {
			n := string(nt)
			if hit || len(n) < minPrefix || n == term {
				return
			}
			hit = strings.HasPrefix(n, term) || strings.HasPrefix(term, n)
		})
		if hit {
			feats[i][FeatNamePrefix] += share
		}
	}
}

// rerank orders top by the linear model w over feats, best first, then
// by name and ID as compare does, and returns the scores by position.
func (ix *Index) rerank(s *scratch, w *Weights, top []uint32, feats [][NumFeatures]float64) []float64 {
	scores := s.rscore[:0]
	for i := range top {
		v := 0.0
		for f, x := range feats[i] {
			v += w[f] * x
		}
		scores = append(scores, v)
	}
	s.rscore = scores
	perm := s.perm[:0]
	for i := range top {
		perm = append(perm, i)
	}
	s.perm = perm
	slices.SortFunc(perm, func(x, y int) int {
		if c := cmp.Compare(scores[y], scores[x]); c != 0 {
			return c
		}
		dx, dy := top[x], top[y]
		if c := strings.Compare(ix.names[dx], ix.names[dy]); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(ix.ids[dx], ix.ids[dy]), cmp.Compare(dx, dy))
	})
	return scores
}

// intersect calls f(c, j) for each c with cands[c] == docs[j]; both are
// sorted. It either looks each candidate up in docs or walks docs,
// whichever reads less.
func intersect(docs, cands []uint32, f func(c, j int)) {
	if len(docs) == 0 || len(cands) == 0 {
		return
	}
	if len(cands)*bits.Len(uint(len(docs))) < len(docs) {
		lo := 0
		for c, d := range cands {
			j, ok := slices.BinarySearch(docs[lo:], d)
			lo += j
			if ok {
				f(c, lo)
			}
			if lo >= len(docs) {
				return
			}
		}
		return
	}
	c := 0
	for j, d := range docs {
		for c < len(cands) && cands[c] < d {
			c++
		}
		if c == len(cands) {
			return
		}
		if cands[c] == d {
			f(c, j)
		}
	}
}

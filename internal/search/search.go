// Package search ranks skills for a free-text request. It owns the
// inverted index and the BM25F scoring over a skill's name, tags (and
// trigger phrases), description, category and body, and knows nothing of
// catalogs, libraries on disk or MCP: the caller turns its skills into
// Docs, builds an Index once per catalog snapshot, and maps the IDs in the
// hits back to its skills.
//
// Text is analysed by Tokenize (Unicode-aware splitting and case folding,
// name-style compounds, stop words, light English stemming) on both sides.
// A query is answered from the postings of its terms alone; on top of
// BM25F it has an exact-name fast path, prefix matching of the last word
// as the user types it, and library and category filters. A second stage
// re-orders BM25F's best candidates by how close their meaning is to the
// query's, by word vectors trained at build time on the bundled
// catalog's descriptions (rerank.go, vecindex.go, gen_vectors.go).
package search

import (
	"cmp"
	"container/heap"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Doc is one searchable skill.
type Doc struct {
	ID          int      // caller's index; returned in hits
	Name        string   // frontmatter name, e.g. "pdf-forms"
	Library     string   // namespace, "" if none (filter)
	Category    string   // filter and a field
	Description string   // frontmatter description
	Tags        []string // tags + trigger-phrases
	Body        string   // SKILL.md body; only the first MaxBodyBytes are indexed
}

// Query is a search request.
type Query struct {
	// Text is the request in the user's words. Text that is empty, only
	// white space or only stop words finds nothing. Only the first
	// MaxQueryBytes are read.
	Text string
	// Library, when non-empty, keeps only skills of that library (exact
	// match).
	Library string
	// Category, when non-empty, keeps only skills of that category
	// (case-insensitive exact match).
	Category string
	// Limit is the maximum number of hits, clamped to [1, MaxLimit]; zero
	// means DefaultLimit.
	Limit int
}

// Hit is one search result.
type Hit struct {
	ID    int     // the Doc's ID
	Score float64 // higher is better; comparable within one result only
	// Matched names the fields in which a query term matched, in the
	// order "name", "tags", "description", "category", "body".
	Matched []string
}

// Limits of a query.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	// MaxQueryBytes bounds the text read from a query. A request is a
	// sentence or two; a caller that pastes a whole document into the
	// search tool gets its opening only.
	MaxQueryBytes = 4 << 10
	// maxQueryTerms bounds the distinct terms of a query, and with it the
	// postings one query may walk.
	maxQueryTerms = 64
)

// Prefix matching of the last word.
const (
	// minPrefixLen is the shortest word that is expanded: two letters
	// match too much of the dictionary to mean anything.
	minPrefixLen = 3
	// maxPrefixTerms bounds the expansion; the most frequent completions
	// are kept, since the word being typed is more likely a common one.
	maxPrefixTerms = 32
	// stemSlack is how many bytes the typed word may run past a stem
	// that completes it, and minStemLen the shortest such stem; the
	// stemmer seldom strips more than three letters, and short stems
	// would complete unrelated words ("cat" for "catalo").
	stemSlack  = 3
	minStemLen = 4
	// prefixWeight discounts a completion against a word typed in full:
	// "deplo" probably means "deploy", but the user has not said so yet.
	prefixWeight = 0.5
)

// Search returns the documents that best match q, best first: by score,
// then by Name, then by ID, so that equal scores always come out in the
// same order. A document whose name equals the whole query (comparing
// case-insensitively, with spaces, hyphens and underscores alike) is
// ranked above every other hit. Search returns nil when nothing matches,
// and always for an empty query.
func (ix *Index) Search(q Query) []Hit { return ix.search(q, true) }

// search is Search, with the pruning of documents that cannot reach the
// results optional so that tests can check that it changes nothing.
func (ix *Index) search(q Query, prune bool) []Hit {
	var hits []Hit
	ix.run(q, prune, func(s *scratch, exact, top []uint32, feats [][NumFeatures]float64) {
		hits = ix.hits(s, q.Limit, exact, top, feats)
	})
	return hits
}

// run scores q and calls fn with the documents whose name is the query
// (exact), the best of the others by BM25F, best first (top: as many as
// the limit, or rerankDepth when the second stage re-orders them), and
// their features when it does (nil when it does not). fn may use s until
// it returns. run does not call fn when nothing can match.
func (ix *Index) run(q Query, prune bool, fn func(s *scratch, exact, top []uint32, feats [][NumFeatures]float64)) {
	text := truncate(q.Text, MaxQueryBytes)
	if strings.TrimSpace(text) == "" || ix.n == 0 {
		return
	}
	limit := clampLimit(q.Limit)
	w := ix.rank.rerank()
	depth := limit
	if w != nil {
		depth = max(limit, rerankDepth)
	}
	f := filter{lib: -1, cat: -1}
	if q.Library != "" {
		i := slices.Index(ix.libs, q.Library)
		if i < 0 {
			return
		}
		f.lib = i
	}
	if q.Category != "" {
		i := slices.Index(ix.cats, foldString(strings.TrimSpace(q.Category)))
		if i < 0 {
			return
		}
		f.cat = i
	}

	s := ix.getScratch()
	defer ix.putScratch(s)
	qts := ix.plan(s, text)
	exact := ix.exactNames(text, f)
	// Exact names are returned whatever their score, so their score must
	// be complete, which pruning does not promise for non-candidates.
	prune = prune && len(exact) == 0
	pruned := false
	for _, qt := range qts {
		// Once the depth-th best score so far beats all that the
		// remaining terms could add up to, a document none of the terms
		// so far matched cannot make the results: the remaining terms
		// only need scoring for the candidates (MaxScore, exact).
		if prune && !pruned && len(s.cands) >= depth && s.kthScore(depth) > qt.rest {
			pruned = true
		}
		if pruned {
			ix.scoreCandidates(s, qt)
		} else {
			ix.scoreTerms(s, f, qt)
		}
	}

	h := &hitHeap{ix: ix, s: s, docs: s.heap[:0]}
	for _, d := range s.cands {
		if slices.Contains(exact, d) {
			continue
		}
		h.offer(d, depth)
	}
	top := h.sorted()
	slices.SortFunc(exact, func(x, y uint32) int { return ix.compare(s, x, y) })
	var feats [][NumFeatures]float64
	if w != nil {
		feats = ix.features(s, text, top)
	}
	s.heap = top
	fn(s, exact, top, feats)
}

// clampLimit returns the number of hits a query's Limit asks for.
func clampLimit(limit int) int {
	switch {
	case limit == 0:
		return DefaultLimit
	case limit < 1:
		return 1
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// hits returns the results: the exact names, then the best of top, by
// the second stage's scores when there are features, else by BM25F.
func (ix *Index) hits(s *scratch, limit int, exact, top []uint32, feats [][NumFeatures]float64) []Hit {
	limit = clampLimit(limit)
	var scores []float64
	var perm []int
	if feats != nil {
		scores, perm = ix.rerank(s, ix.rank.rerank(), top, feats)
	}
	score := func(i int) (uint32, float64) {
		if perm != nil {
			return top[perm[i]], scores[perm[i]]
		}
		return top[i], s.score[top[i]]
	}
	hits := make([]Hit, 0, min(limit, len(exact)+len(top)))
	if len(exact) > 0 {
		// Exact names come first with a score above every other hit's,
		// so that the list stays sorted by score.
		best := 0.0
		for i := range top {
			_, v := score(i)
			best = max(best, v)
		}
		for _, d := range exact[:min(len(exact), limit)] {
			if s.score[d] == 0 {
				s.cands = append(s.cands, d) // so that putScratch resets its mask
			}
			s.mask[d] |= 1 << fieldName
			hits = append(hits, ix.hit(s, d, best+1+s.score[d]))
		}
	}
	for i := 0; i < len(top) && len(hits) < limit; i++ {
		d, v := score(i)
		hits = append(hits, ix.hit(s, d, v))
	}
	if len(hits) == 0 {
		return nil
	}
	return hits
}

func (ix *Index) hit(s *scratch, d uint32, score float64) Hit {
	var matched []string
	for f := range numFields {
		if s.mask[d]&(1<<f) != 0 {
			matched = append(matched, fieldNames[f])
		}
	}
	return Hit{ID: ix.ids[d], Score: score, Matched: matched}
}

// filter holds a query's library and category, as indexes into Index.libs
// and Index.cats, or -1 for any.
type filter struct{ lib, cat int }

func (ix *Index) keep(f filter, d uint32) bool {
	return (f.lib < 0 || ix.libOf[d] == uint32(f.lib)) && (f.cat < 0 || ix.catOf[d] == uint32(f.cat))
}

// queryTerms analyses the query text into the numbers of its distinct
// terms that are in the dictionary, and the completions of its last word
// when the text does not end with a separator (the user may still be
// typing it).
func (ix *Index) queryTerms(s *scratch, text string) (terms, prefix []uint32) {
	terms = s.terms[:0]
	s.a.run(text, func(term []byte) {
		if len(terms) >= maxQueryTerms {
			return
		}
		if t, ok := ix.lookup(term); ok && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	})
	s.terms = terms
	a := &s.a
	if a.endsInSpace || a.lastIsStop || a.lastIsCJK || len(a.lastPart) < minPrefixLen || len(a.lastPart) > maxTermLen {
		return terms, nil
	}
	p := string(a.lastPart)
	lo, _ := slices.BinarySearch(ix.terms, p)
	hi := lo
	for hi < len(ix.terms) && strings.HasPrefix(ix.terms[hi], p) {
		hi++
	}
	prefix = s.prefix[:0]
	for t := lo; t < hi; t++ {
		if !slices.Contains(terms, uint32(t)) {
			prefix = append(prefix, uint32(t))
		}
	}
	// The dictionary holds stems, which can be shorter than the word being
	// typed: "cluste" and "deploym" are on their way to "cluster" and
	// "deployment", stemmed "clust" and "deploy". So a stem that the
	// typed word extends by at most stemSlack bytes also completes it.
	for k := max(minStemLen, len(p)-stemSlack); k < len(p); k++ {
		if t, ok := ix.lookup(a.lastPart[:k]); ok && !slices.Contains(terms, t) && !slices.Contains(prefix, t) {
			prefix = append(prefix, t)
		}
	}
	if len(prefix) > maxPrefixTerms {
		slices.SortStableFunc(prefix, func(x, y uint32) int { return cmp.Compare(ix.df[y], ix.df[x]) })
		prefix = prefix[:maxPrefixTerms]
	}
	s.prefix = prefix
	return terms, prefix
}

// lookup finds a term in the sorted dictionary.
func (ix *Index) lookup(term []byte) (uint32, bool) {
	t, ok := slices.BinarySearch(ix.terms, string(term))
	return uint32(t), ok
}

// queryTerm is one unit of scoring: a query term, or the completions of
// the last word taken together.
type queryTerm struct {
	terms  []uint32
	idf    float64
	weight float64
	// max bounds what the term can add to a score: its saturation
	// tf/(tf+k1) is below 1. rest is the sum of max over this term and
	// those scored after it.
	max, rest float64
}

// plan analyses the query into the terms to score, rarest first, so that
// the pruning in search can start as early as possible.
func (ix *Index) plan(s *scratch, text string) []queryTerm {
	terms, prefix := ix.queryTerms(s, text)
	qts := s.plan[:0]
	for i, t := range terms {
		qts = append(qts, ix.queryTerm(terms[i:i+1], float64(ix.df[t]), 1))
	}
	if len(prefix) > 0 {
		var df float64
		for _, t := range prefix {
			df += float64(ix.df[t])
		}
		// The completions act as one term: a doc gets credit once for
		// holding any of them. Their summed df bounds the union's from
		// above, which errs towards a lower weight.
		qts = append(qts, ix.queryTerm(prefix, min(df, float64(ix.n)), prefixWeight))
	}
	slices.SortStableFunc(qts, func(a, b queryTerm) int { return cmp.Compare(b.max, a.max) })
	rest := 0.0
	for i := len(qts) - 1; i >= 0; i-- {
		rest += qts[i].max
		qts[i].rest = rest
	}
	s.plan = qts
	return qts
}

func (ix *Index) queryTerm(terms []uint32, df, weight float64) queryTerm {
	idf := math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
	return queryTerm{terms: terms, idf: idf, weight: weight, max: max(weight*idf*(k1+1), minContribution)}
}

// minContribution is the least a matching term adds to a score. A term in
// every document has an idf near zero but still counts as a match; the
// floor keeps the document a candidate.
const minContribution = 1e-9

// scoreTerms adds the BM25F contribution of qt to every document that
// holds one of its terms in any field and passes the filter.
func (ix *Index) scoreTerms(s *scratch, f filter, qt queryTerm) {
	touched := s.touched[:0]
	for fi := range numFields {
		p := &ix.fields[fi]
		for _, t := range qt.terms {
			for i := p.off[t]; i < p.off[t+1]; i++ {
				d := p.docs[i]
				if !ix.keep(f, d) {
					continue
				}
				if s.acc[d] == 0 {
					touched = append(touched, d)
				}
				s.acc[d] += float32(p.tfs[i]) * p.norm[d]
				s.mask[d] |= 1 << fi
			}
		}
	}
	s.touched = touched
	for _, d := range touched {
		if s.score[d] == 0 {
			s.cands = append(s.cands, d)
		}
	}
	s.addTouched(qt)
}

// scoreCandidates adds the contribution of qt to the documents that are
// already candidates, and to no other. Per field and term it either looks
// each candidate up in the postings, or walks the postings, whichever
// reads less.
func (ix *Index) scoreCandidates(s *scratch, qt queryTerm) {
	touched := s.touched[:0]
	add := func(p *postings, fi int, d uint32, tf uint16) {
		if s.acc[d] == 0 {
			touched = append(touched, d)
		}
		s.acc[d] += float32(tf) * p.norm[d]
		s.mask[d] |= 1 << fi
	}
	for fi := range numFields {
		p := &ix.fields[fi]
		for _, t := range qt.terms {
			lo, hi := p.off[t], p.off[t+1]
			if hi == lo {
				continue
			}
			docs := p.docs[lo:hi]
			if len(s.cands)*bits.Len(uint(len(docs))) < len(docs) {
				for _, d := range s.cands {
					if i, ok := slices.BinarySearch(docs, d); ok {
						add(p, fi, d, p.tfs[lo+uint32(i)])
					}
				}
				continue
			}
			for i, d := range docs {
				if s.score[d] != 0 {
					add(p, fi, d, p.tfs[lo+uint32(i)])
				}
			}
		}
	}
	s.touched = touched
	s.addTouched(qt)
}

// addTouched turns the weighted term frequencies gathered for qt into
// score, and clears them.
func (s *scratch) addTouched(qt queryTerm) {
	for _, d := range s.touched {
		tf := float64(s.acc[d])
		s.acc[d] = 0
		s.score[d] += max(qt.weight*qt.idf*tf*(k1+1)/(tf+k1), minContribution)
	}
}

// kthScore returns the k-th highest score among the candidates, which
// must number at least k.
func (s *scratch) kthScore(k int) float64 {
	// A min-heap of the k best scores seen.
	h := s.kth[:0]
	for _, d := range s.cands {
		v := s.score[d]
		if len(h) < k {
			h = append(h, v)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		if v <= h[0] {
			continue
		}
		h[0] = v
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1] < h[c] {
				c++
			}
			if h[i] <= h[c] {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	s.kth = h
	return h[0]
}

// exactNames returns the documents passing f whose name key equals the
// query's.
func (ix *Index) exactNames(text string, f filter) []uint32 {
	key := nameKey(text)
	if key == "" {
		return nil
	}
	i, _ := slices.BinarySearch(ix.keys, key)
	var out []uint32
	for ; i < len(ix.keys) && ix.keys[i] == key; i++ {
		if d := ix.byName[i]; ix.keep(f, d) {
			out = append(out, d)
		}
	}
	return out
}

// compare orders documents best first: score, then name, then ID, then
// the document number, so that the order is total.
func (ix *Index) compare(s *scratch, x, y uint32) int {
	// Not cmp.Or: it would compare the names of every pair, and most
	// pairs differ in score.
	if c := cmp.Compare(s.score[y], s.score[x]); c != 0 {
		return c
	}
	if c := strings.Compare(ix.names[x], ix.names[y]); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(ix.ids[x], ix.ids[y]), cmp.Compare(x, y))
}

// scratch is the per-query working memory: dense per-document arrays,
// which are reset through the lists of documents touched, so that a query
// costs its postings and never the size of the index.
type scratch struct {
	acc     []float32 // weighted tf of the current term
	score   []float64
	mask    []uint8 // fields matched
	touched []uint32
	cands   []uint32 // docs with a nonzero score
	terms   []uint32
	prefix  []uint32
	plan    []queryTerm
	kth     []float64
	heap    []uint32
	a       analyzer

	// The second stage's working memory (rerank.go, vecindex.go).
	feats   [][NumFeatures]float64
	rscore  []float64
	perm    []int
	qvec    []float32 // the query's vector (queryVector)
	hasQVec bool
	qrows   []int32
}

func (ix *Index) getScratch() *scratch {
	if s, ok := ix.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{
		acc:   make([]float32, ix.n),
		score: make([]float64, ix.n),
		mask:  make([]uint8, ix.n),
	}
}

func (ix *Index) putScratch(s *scratch) {
	for _, d := range s.cands {
		s.score[d], s.mask[d] = 0, 0
	}
	s.cands = s.cands[:0]
	ix.scratch.Put(s)
}

// hitHeap keeps the best limit candidates, worst on top.
type hitHeap struct {
	ix   *Index
	s    *scratch
	docs []uint32
}

func (h *hitHeap) offer(d uint32, limit int) {
	if len(h.docs) < limit {
		// Not heap.Push, which would box d in an interface: an
		// allocation for every document taken.
		h.docs = append(h.docs, d)
		heap.Fix(h, len(h.docs)-1)
		return
	}
	if h.ix.compare(h.s, d, h.docs[0]) < 0 {
		h.docs[0] = d
		heap.Fix(h, 0)
	}
}

// sorted returns the kept documents, best first.
func (h *hitHeap) sorted() []uint32 {
	slices.SortFunc(h.docs, func(x, y uint32) int { return h.ix.compare(h.s, x, y) })
	return h.docs
}

func (h *hitHeap) Len() int           { return len(h.docs) }
func (h *hitHeap) Less(i, j int) bool { return h.ix.compare(h.s, h.docs[i], h.docs[j]) > 0 }
func (h *hitHeap) Swap(i, j int)      { h.docs[i], h.docs[j] = h.docs[j], h.docs[i] }
func (h *hitHeap) Push(x any)         { h.docs = append(h.docs, x.(uint32)) }
func (h *hitHeap) Pop() any {
	d := h.docs[len(h.docs)-1]
	h.docs = h.docs[:len(h.docs)-1]
	return d
}

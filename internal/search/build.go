package search

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxBodyBytes is how much of a body is indexed. The opening of a SKILL.md
// says what the skill is for; the rest is procedure, and indexing it would
// only grow the postings.
const MaxBodyBytes = 64 << 10

// field numbers, in the order Hit.Matched lists them.
const (
	fieldName = iota
	fieldTags
	fieldDescription
	fieldCategory
	fieldBody
	numFields
)

var fieldNames = [numFields]string{"name", "tags", "description", "category", "body"}

// BM25F parameters. They were fitted on the tuning half of the realistic
// set, testdata/searcheval (run cmd/skills-searcheval -set real), but kept
// round, so that they describe the fields rather than the set; the
// measured optimum is flat around them, and weights fitted more closely
// gained on the tuning half what they lost on the held-out one.
//
//   - Name and tags weigh 3. A skill's name is short and chosen by its
//     author, and tags and trigger phrases are written to be matched
//     against requests, so a query word in either is rarely an accident.
//     (The labelled queries avoid the words of the skills' names on
//     purpose, so the name weight is set by this argument, not measured.)
//   - The description, the skill's own "use when", weighs 2.
//   - The category weighs 1: one coarse word shared by many skills.
//   - The body weighs 0.1: it is procedure, and mentions much that the
//     skill is not about. At 0.5, the weight before the realistic set,
//     Hit@1 was 3 to 4 points lower on both halves; below 0.1 the tuning
//     half gains a little and the held-out half loses. (Weighing the
//     body's "when to use" sections as a field of their own, and query
//     expansion from WordNet, did not pay for themselves:
//     docs/decisions/2026-12-04-search-vocabulary-gap.md.)
//   - b is the length normalisation per field: none for the category,
//     little for the name, half for tags, the standard 0.75 for the
//     description and the body, where a long text should not outscore a
//     focused one. (The description's was 0.5; 0.75 gains a query or two
//     on each half.)
//   - k1 = 1.2 is the usual saturation: a second occurrence helps, a
//     tenth barely does.
const k1 = 1.2

var (
	fieldWeight = [numFields]float64{fieldName: 3, fieldTags: 3, fieldDescription: 2, fieldCategory: 1, fieldBody: 0.1}
	fieldB      = [numFields]float64{fieldName: 0.3, fieldTags: 0.5, fieldDescription: 0.75, fieldCategory: 0, fieldBody: 0.75}
	// priorWeight and priorB are the parameters before the realistic set
	// (the body at 0.5, the description's b at 0.5), which
	// Ranking.PriorWeights measures against.
	priorWeight = [numFields]float64{fieldName: 3, fieldTags: 3, fieldDescription: 2, fieldCategory: 1, fieldBody: 0.5}
	priorB      = [numFields]float64{fieldName: 0.3, fieldTags: 0.5, fieldDescription: 0.5, fieldCategory: 0, fieldBody: 0.75}
)

// Ranking selects the ranking, so that the current one can be measured
// against what it replaced (skills-searcheval -ablation); the zero value
// is the current ranking, which Build and Decode give.
type Ranking struct {
	// PriorWeights weighs the fields as before the realistic set
	// (3147e6f).
	PriorWeights bool
	// BM25FOnly ranks by BM25F alone, without the second stage.
	BM25FOnly bool
	// Rerank, when not nil, replaces the second stage's weights.
	Rerank *Weights
}

// rerank returns the second stage's weights, or nil when r ranks by
// BM25F alone.
func (r Ranking) rerank() *Weights {
	switch {
	case r.BM25FOnly:
		return nil
	case r.Rerank != nil:
		return r.Rerank
	}
	return &rerankWeights
}

// weights returns the field weights and length normalisations of r.
func (r Ranking) weights() (w, b *[numFields]float64) {
	if r.PriorWeights {
		return &priorWeight, &priorB
	}
	return &fieldWeight, &fieldB
}

// Index is an inverted index over a fixed set of documents, built once by
// Build. It is immutable and safe for concurrent use; a query allocates
// only its result and borrows per-query scratch space from a pool.
type Index struct {
	n     int
	ids   []int    // caller's IDs, by internal doc number
	names []string // frontmatter names, for tie-breaking

	// Filters: per doc, an index into libs/cats (folded for categories).
	libOf, catOf []uint32
	libs, cats   []string

	// Exact names: doc numbers sorted by nameKey(name), and those keys.
	byName []uint32
	keys   []string

	// Dictionary: sorted terms, with the number of documents holding each
	// in any field.
	terms []string
	df    []uint32

	fields [numFields]postings
	// docVec holds each document's vector (vecindex.go), dims bytes a
	// document; nil without word vectors.
	docVec []int8
	// lens holds each field's length in tokens per doc, which Update
	// needs to renormalise; nil in a decoded index.
	lens [numFields][]uint32

	rank Ranking

	scratch sync.Pool // *scratch
}

// postings is one field's inverted lists in compressed-row form: the
// postings of term t are docs[off[t]:off[t+1]] and tfs[off[t]:off[t+1]],
// sorted by doc. Two parallel slices take 6 bytes a posting where a slice
// of structs would take 8.
type postings struct {
	off  []uint32
	docs []uint32
	tfs  []uint16
	// norm[d] is w / (1 - b + b·len(d)/avglen): the field weight and the
	// length normalisation of doc d, folded into one factor on tf.
	norm []float32
}

// Build indexes docs. The docs slice and its strings may be reused by the
// caller afterwards; the index keeps only Name and the folded filters.
// Build runs in time linear in the text indexed (bodies are cut at
// MaxBodyBytes), analysing shards of the documents on up to workers
// goroutines (GOMAXPROCS if workers < 1) that it waits for. It needs about
// 10 bytes per (term, field, doc) posting while building, 6 afterwards. It
// panics if len(docs) does not fit in a uint32, which no catalog reaches.
func Build(docs []Doc, workers int) *Index { return BuildRanked(docs, workers, Ranking{}) }

// BuildRanked is Build with the ranking r; Build's is the zero Ranking.
func BuildRanked(docs []Doc, workers int, r Ranking) *Index {
	ix := newIndex(docs)
	ix.rank = r

	// Shards are contiguous runs of documents, so that concatenating
	// their postings keeps each list sorted by document.
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	nShards := min(workers, (len(docs)+minShardDocs-1)/minShardDocs)
	shards := make([]*shard, max(nShards, 1))
	var wg sync.WaitGroup
	for i := range shards {
		lo, hi := len(docs)*i/len(shards), len(docs)*(i+1)/len(shards)
		wg.Go(func() {
			shards[i] = newShard(docs[lo:hi])
		})
	}
	wg.Wait()
	merge(ix, shards)
	ix.indexNames(docs)
	ix.indexVectors()
	return ix
}

// newIndex returns an index of docs with its per-document arrays filled
// in, postings to come.
func newIndex(docs []Doc) *Index {
	if uint64(len(docs)) > math.MaxUint32 {
		panic("search: too many documents")
	}
	ix := &Index{
		n:     len(docs),
		ids:   make([]int, len(docs)),
		names: make([]string, len(docs)),
		libOf: make([]uint32, len(docs)),
		catOf: make([]uint32, len(docs)),
	}
	libIDs := map[string]uint32{}
	catIDs := map[string]uint32{}
	for d, doc := range docs {
		ix.ids[d] = doc.ID
		ix.names[d] = doc.Name
		ix.libOf[d] = intern(libIDs, &ix.libs, doc.Library)
		ix.catOf[d] = intern(catIDs, &ix.cats, foldString(strings.TrimSpace(doc.Category)))
	}
	return ix
}

// indexNames builds the exact-name lookup.
func (ix *Index) indexNames(docs []Doc) {
	ix.byName = make([]uint32, len(docs))
	ix.keys = make([]string, len(docs))
	for d, doc := range docs {
		ix.byName[d] = uint32(d)
		ix.keys[d] = nameKey(doc.Name)
	}
	slices.SortFunc(ix.byName, func(x, y uint32) int {
		return cmp.Or(strings.Compare(ix.keys[x], ix.keys[y]), cmp.Compare(x, y))
	})
	sorted := make([]string, len(docs))
	for i, d := range ix.byName {
		sorted[i] = ix.keys[d]
	}
	ix.keys = sorted
}

// minShardDocs is the smallest shard worth a goroutine: below it, merging
// the shards' dictionaries costs more than analysing in parallel saves.
const minShardDocs = 2048

func intern(ids map[string]uint32, list *[]string, s string) uint32 {
	id, ok := ids[s]
	if !ok {
		id = uint32(len(*list))
		ids[s] = id
		*list = append(*list, s)
	}
	return id
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// foldString case folds s (and nothing else), so that category filters
// compare case-insensitively.
func foldString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			b := make([]byte, 0, len(s))
			for _, r := range s {
				b = utf8.AppendRune(b, caseFold(r))
			}
			return string(b)
		}
	}
	return s
}

// nameKey is the form in which a query is compared with skill names for
// the exact-name fast path: case folded, with every run of spaces, hyphens
// and underscores turned into one hyphen, and none at either end. So
// "PDF forms", "pdf_forms" and "pdf-forms" all have the key "pdf-forms".
func nameKey(s string) string {
	if isNameKey(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	sep := false
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\u00a0' || r == '\u3000':
			sep = true
			continue
		case sep && len(b) > 0:
			b = append(b, '-')
		}
		sep = false
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b = append(b, byte(r))
		} else {
			b = utf8.AppendRune(b, caseFold(r))
		}
	}
	return string(b)
}

// isNameKey reports whether s is already its own name key, as valid skill
// names are, so that nameKey need not copy it.
func isNameKey(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// shard holds the postings of a run of documents, with its own
// dictionary. Terms get shard-local numbers in order of first appearance;
// merge renumbers them in sorted order, which the prefix search needs.
type shard struct {
	a      analyzer
	termID map[string]uint32
	terms  []string
	df     []uint32

	// Per field: for each doc, its (term, tf) pairs, in doc order.
	// docEnd[d] is the end of doc d's pairs in pterm/ptf.
	pterm  [numFields][]uint32
	ptf    [numFields][]uint16
	docEnd [numFields][]uint32
	length [numFields][]uint32 // tokens per doc, for the normalisation

	buf     []uint32 // term numbers of the current field
	docSeen []uint32 // term numbers of the current doc, all fields
}

func newShard(docs []Doc) *shard {
	sh := &shard{termID: make(map[string]uint32, 1024)}
	for f := range numFields {
		sh.docEnd[f] = make([]uint32, 0, len(docs))
		sh.length[f] = make([]uint32, 0, len(docs))
	}
	for _, doc := range docs {
		sh.addField(fieldName, doc.Name)
		sh.addField(fieldTags, doc.Tags...)
		sh.addField(fieldDescription, doc.Description)
		sh.addField(fieldCategory, doc.Category)
		sh.addField(fieldBody, truncate(doc.Body, MaxBodyBytes))
		sh.endDoc()
	}
	return sh
}

// addField analyses the texts of one field of the current document.
func (sh *shard) addField(f int, texts ...string) {
	sh.buf = sh.buf[:0]
	for _, s := range texts {
		sh.a.run(s, func(term []byte) {
			id, ok := sh.termID[string(term)]
			if !ok {
				id = uint32(len(sh.terms))
				t := string(term)
				sh.termID[t] = id
				sh.terms = append(sh.terms, t)
				sh.df = append(sh.df, 0)
			}
			sh.buf = append(sh.buf, id)
		})
	}
	sh.length[f] = append(sh.length[f], uint32(len(sh.buf)))
	slices.Sort(sh.buf)
	for i := 0; i < len(sh.buf); {
		j := i + 1
		for j < len(sh.buf) && sh.buf[j] == sh.buf[i] {
			j++
		}
		sh.pterm[f] = append(sh.pterm[f], sh.buf[i])
		sh.ptf[f] = append(sh.ptf[f], uint16(min(j-i, math.MaxUint16)))
		sh.docSeen = append(sh.docSeen, sh.buf[i])
		i = j
	}
	sh.docEnd[f] = append(sh.docEnd[f], uint32(len(sh.pterm[f])))
}

// endDoc counts the current document once for each distinct term it holds.
func (sh *shard) endDoc() {
	slices.Sort(sh.docSeen)
	for i, t := range sh.docSeen {
		if i == 0 || t != sh.docSeen[i-1] {
			sh.df[t]++
		}
	}
	sh.docSeen = sh.docSeen[:0]
}

// merge builds the sorted dictionary from the shards' and lays out each
// field's postings by term, shard after shard.
func merge(ix *Index, shards []*shard) {
	// The union of the dictionaries; remap[i] takes shard i's term
	// numbers to positions in ix.terms.
	global := make(map[string]uint32, len(shards[0].terms))
	for _, sh := range shards {
		for _, t := range sh.terms {
			if _, ok := global[t]; !ok {
				global[t] = uint32(len(ix.terms))
				ix.terms = append(ix.terms, t)
			}
		}
	}
	slices.Sort(ix.terms)
	for pos, t := range ix.terms {
		global[t] = uint32(pos)
	}
	ix.df = make([]uint32, len(ix.terms))
	remap := make([][]uint32, len(shards))
	for i, sh := range shards {
		remap[i] = make([]uint32, len(sh.terms))
		for id, t := range sh.terms {
			remap[i][id] = global[t]
			ix.df[global[t]] += sh.df[id]
		}
		sh.termID, sh.terms, sh.df = nil, nil, nil
	}
	global = nil

	for f := range numFields {
		p := &ix.fields[f]
		p.off = make([]uint32, len(ix.terms)+1)
		total := 0
		for i, sh := range shards {
			total += len(sh.pterm[f])
			for _, t := range sh.pterm[f] {
				p.off[remap[i][t]+1]++
			}
		}
		for t := range ix.terms {
			p.off[t+1] += p.off[t]
		}
		p.docs = make([]uint32, total)
		p.tfs = make([]uint16, total)
		next := slices.Clone(p.off[:len(ix.terms)])
		d := uint32(0)
		for i, sh := range shards {
			start := uint32(0)
			for _, end := range sh.docEnd[f] {
				for j := start; j < end; j++ {
					t := remap[i][sh.pterm[f][j]]
					p.docs[next[t]] = d
					p.tfs[next[t]] = sh.ptf[f][j]
					next[t]++
				}
				start = end
				d++
			}
			sh.pterm[f], sh.ptf[f] = nil, nil
		}

		ix.lens[f] = make([]uint32, 0, ix.n)
		for _, sh := range shards {
			ix.lens[f] = append(ix.lens[f], sh.length[f]...)
		}
		p.norm = norms(f, ix.lens[f], ix.rank)
	}
}

// norms returns field f's norm per doc from the docs' lengths.
func norms(f int, lens []uint32, r Ranking) []float32 {
	ws, bs := r.weights()
	w, b := ws[f], bs[f]
	var sum float64
	for _, l := range lens {
		sum += float64(l)
	}
	avg := 1.0
	if sum > 0 {
		avg = sum / float64(len(lens))
	}
	norm := make([]float32, 0, len(lens))
	for _, l := range lens {
		norm = append(norm, float32(w/(1-b+b*float64(l)/avg)))
	}
	return norm
}

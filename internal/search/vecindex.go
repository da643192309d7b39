package search

import (
	"math"
	"slices"
)

// shortFields are the fields of a skill written to say what it is for,
// from which its vector is made.
var shortFields = [...]int{fieldName, fieldTags, fieldDescription}

// indexVectors gives each document a vector: the sum of the word vectors
// of the distinct terms of its name, tags and description, each weighed
// by its idf, normalised and kept as int8 (dims bytes a document). It
// reads the embedded vectors once, in a merge of the two sorted term
// lists, and the short fields' postings once.
func (ix *Index) indexVectors() {
	v := &defaultVectors
	ix.docVec = nil
	if v.n == 0 || ix.n == 0 {
		return
	}
	dims := v.dims
	acc := make([]float32, ix.n*dims)
	last := make([]uint32, ix.n) // 1 + the last term added to each doc
	i := 0
	for t, term := range ix.terms {
		for i < v.n && v.term(i) < term {
			i++
		}
		if i == v.n {
			break
		}
		if v.term(i) != term {
			continue
		}
		w := float32(ix.idf(float64(ix.df[t])))
		vec := v.vector(i)
		for _, f := range shortFields {
			p := &ix.fields[f]
			for _, d := range p.docs[p.off[t]:p.off[t+1]] {
				if last[d] == uint32(t)+1 {
					continue
				}
				last[d] = uint32(t) + 1
				row := acc[int(d)*dims : int(d+1)*dims]
				for k := range row {
					row[k] += w * float32(int8(vec[k]))
				}
			}
		}
	}
	ix.docVec = make([]int8, ix.n*dims)
	for d := range ix.n {
		row := acc[d*dims : (d+1)*dims]
		n := norm(row)
		if n == 0 {
			continue
		}
		out := ix.docVec[d*dims : (d+1)*dims]
		for k, x := range row {
			out[k] = int8(math.Round(float64(x) / n * 127))
		}
	}
}

// idf is BM25's inverse document frequency of a term held by df
// documents.
func (ix *Index) idf(df float64) float64 {
	return math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
}

// queryVector sets s.qvec to the query's vector, normalised: the sum of
// the word vectors of its distinct terms, each weighed by its idf (the
// highest for a term no skill holds: the vectors relate it to others).
// s.hasQVec reports whether any term had a vector.
func (ix *Index) queryVector(s *scratch, text string) {
	v := &defaultVectors
	s.hasQVec = false
	if v.n == 0 || ix.docVec == nil {
		return
	}
	if cap(s.qvec) < v.dims {
		s.qvec = make([]float32, v.dims)
	}
	qv := s.qvec[:v.dims]
	clear(qv)
	seen := s.qrows[:0]
	s.a.run(text, func(term []byte) {
		r := v.find(string(term))
		if r < 0 || slices.Contains(seen, int32(r)) || len(seen) >= maxQueryTerms {
			return
		}
		seen = append(seen, int32(r))
		df := 0.0
		if t, ok := ix.lookup(term); ok {
			df = float64(ix.df[t])
		}
		v.addTo(qv, r, float32(ix.idf(df)))
	})
	s.qrows = seen
	n := norm(qv)
	if n == 0 {
		return
	}
	for k := range qv {
		qv[k] /= float32(n)
	}
	s.hasQVec = true
}

// vectorDot returns the cosine of the query's vector and document d's.
func (ix *Index) vectorDot(s *scratch, d uint32) float64 {
	dims := len(s.qvec)
	row := ix.docVec[int(d)*dims : int(d+1)*dims]
	var sum float32
	for k, x := range row {
		sum += s.qvec[k] * float32(x)
	}
	return float64(sum) / 127
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

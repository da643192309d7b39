package search

//go:generate go run gen_vectors.go

import (
	_ "embed"
	"strings"
)

// vectorsData is the word vectors of the second stage of ranking, which
// gen_vectors.go trains from WordNet and the bundled catalog's
// descriptions (it says how, and how the bytes are laid out). They are
// read where they lie in the binary: nothing is decoded at start-up or at
// the first search, and they take no heap.
//
//go:embed vectors.bin
var vectorsData string

// vectors reads a table of word vectors in place.
type vectors struct {
	data           string
	n, dims        int
	termOff, terms int // byte offsets of the term offsets and the term bytes
	vecs           int // of the vectors
}

const vectorsMagic = "skills-mcp vectors v1\n"

// defaultVectors is the embedded table; its zero value (a table that does
// not parse) holds no vectors.
var defaultVectors = openVectors(vectorsData)

// openVectors returns the table in data, or an empty one if data is not a
// whole table of this version (TestVectors checks the embedded one).
func openVectors(data string) vectors {
	h := len(vectorsMagic)
	if !strings.HasPrefix(data, vectorsMagic) || len(data) < h+8 {
		return vectors{}
	}
	v := vectors{data: data}
	n, dims := uint64(v.u32(h)), uint64(v.u32(h+4))
	v.termOff = h + 8
	if dims == 0 || dims > 1024 || uint64(v.termOff)+4*(n+1) > uint64(len(data)) {
		return vectors{}
	}
	v.n, v.dims = int(n), int(dims)
	v.terms = v.termOff + 4*(v.n+1)
	v.vecs = v.terms + int(v.u32(v.termOff+4*v.n))
	if v.vecs+v.n*v.dims != len(data) {
		return vectors{}
	}
	return v
}

func (v *vectors) u32(at int) uint32 {
	d := v.data[at : at+4]
	return uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16 | uint32(d[3])<<24
}

// term returns term number i.
func (v *vectors) term(i int) string {
	return v.data[v.terms+int(v.u32(v.termOff+4*i)) : v.terms+int(v.u32(v.termOff+4*i+4))]
}

// find returns the number of term t, or -1.
func (v *vectors) find(t string) int {
	lo, hi := 0, v.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v.term(m) < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < v.n && v.term(lo) == t {
		return lo
	}
	return -1
}

// vector returns the vector of term number i: dims int8 values, as bytes,
// of a unit vector scaled by 127.
func (v *vectors) vector(i int) string {
	return v.data[v.vecs+i*v.dims : v.vecs+(i+1)*v.dims]
}

// addTo adds w times the vector of term number i to acc.
func (v *vectors) addTo(acc []float32, i int, w float32) {
	vec := v.vector(i)
	for k := range acc {
		acc[k] += w * float32(int8(vec[k]))
	}
}

// dot returns the dot product of the vectors of terms i and j, in [-1, 1].
func (v *vectors) dot(i, j int) float32 {
	a, b := v.vector(i), v.vector(j)
	var s int32
	for k := range len(a) {
		s += int32(int8(a[k])) * int32(int8(b[k]))
	}
	return float32(s) / (127 * 127)
}

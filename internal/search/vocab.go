package search

//go:generate go run gen_vocab.go

import (
	_ "embed"
	"strings"
)

// vocabData is the related-term table of the second stage of ranking,
// generated from WordNet by gen_vocab.go (which says what is related and
// how the bytes are laid out). It is read where it lies in the binary:
// nothing is decoded at start-up or at the first search, and it takes no
// heap.
//
//go:embed vocab.bin
var vocabData string

// Kinds of relation in the table, as gen_vocab.go numbers them.
const (
	relClose = iota // synonyms and derivations
	relBroad        // one step more general or more specific
	relTopic        // the topic domain, or its members
	relGloss        // words of the definition
	numRel
)

// vocab reads a related-term table in place.
type vocab struct {
	data           string
	n              int
	termOff, terms int // byte offsets of the term offsets and the term bytes
	relOff, rels   int // of the related lists' offsets and the lists
}

const vocabMagic = "skills-mcp vocab v2\n"

// defaultVocab is the embedded table; its zero value (a table that does
// not parse) relates nothing.
var defaultVocab = openVocab(vocabData)

// openVocab returns the table in data, or an empty one if data is not a
// whole table of this version (TestVocab checks the embedded one). It
// reads the header and the ends of the offset arrays only.
func openVocab(data string) vocab {
	if !strings.HasPrefix(data, vocabMagic) || len(data) < len(vocabMagic)+4 {
		return vocab{}
	}
	v := vocab{data: data}
	at := len(vocabMagic)
	n := uint64(v.u32(at))
	v.termOff = at + 4
	if uint64(v.termOff)+4*(n+1) > uint64(len(data)) {
		return vocab{}
	}
	v.n = int(n)
	v.terms = v.termOff + 4*(v.n+1)
	v.relOff = v.terms + int(v.u32(v.termOff+4*v.n))
	if v.relOff+4*(v.n+1) > len(data) {
		return vocab{}
	}
	v.rels = v.relOff + 4*(v.n+1)
	if v.rels+4*int(v.u32(v.relOff+4*v.n)) != len(data) {
		return vocab{}
	}
	return v
}

func (v *vocab) u32(at int) uint32 {
	d := v.data[at : at+4]
	return uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16 | uint32(d[3])<<24
}

// term returns term number i.
func (v *vocab) term(i int) string {
	return v.data[v.terms+int(v.u32(v.termOff+4*i)) : v.terms+int(v.u32(v.termOff+4*i+4))]
}

// find returns the number of term t, or -1.
func (v *vocab) find(t string) int {
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

// related calls f with each term related to t and the kind of the
// relation, close relations first, then broad, topic and gloss.
func (v *vocab) related(t string, f func(term string, kind int)) {
	i := v.find(t)
	if i < 0 {
		return
	}
	for at := v.u32(v.relOff + 4*i); at < v.u32(v.relOff+4*i+4); at++ {
		e := v.u32(v.rels + 4*int(at))
		f(v.term(int(e>>2)), int(e&3))
	}
}

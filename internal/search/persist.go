package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/skills-mcp/skills-mcp/internal/binrec"
)

// FormatVersion names the encoding Encode writes and the analysis behind
// it. It changes whenever either does (the fields, tokenising, stemming,
// stop words, the weights folded into the norms), so that an index saved
// by another version is rebuilt rather than read. Callers that key saved
// indexes by their documents should include it in the key.
const FormatVersion = "skills-mcp search index v2"

// ErrDamaged is returned by Decode for data that is not a whole, consistent
// index of this FormatVersion.
var ErrDamaged = errors.New("search: saved index damaged or of another version")

// Docs returns the number of documents in the index.
func (ix *Index) Docs() int { return ix.n }

// IDsBelow reports whether every document ID in the index is in [0, n):
// a caller that maps IDs to a slice of n documents checks a decoded index
// with it before searching.
func (ix *Index) IDsBelow(n int) bool {
	for _, id := range ix.ids {
		if id < 0 || id >= n {
			return false
		}
	}
	return true
}

// Encode writes the index to w in a compact binary form that Decode reads
// back: the arrays as they are in memory, little-endian, and a CRC-32C of
// everything before it at the end.
func (ix *Index) Encode(w io.Writer) error {
	e := binrec.NewWriter(w)
	e.Str(FormatVersion)
	e.Uint(uint64(ix.n))
	for _, id := range ix.ids {
		e.Int(int64(id))
	}
	writeStrs(e, ix.names)
	writeStrs(e, ix.libs)
	writeU32s(e, ix.libOf)
	writeStrs(e, ix.cats)
	writeU32s(e, ix.catOf)
	writeU32s(e, ix.byName)
	writeStrs(e, ix.keys)
	writeStrs(e, ix.terms)
	writeU32s(e, ix.df)
	for f := range ix.fields {
		p := &ix.fields[f]
		writeU32s(e, p.off)
		writeU32s(e, p.docs)
		e.Uint(uint64(len(p.tfs)))
		for _, tf := range p.tfs {
			e.Buf = binary.LittleEndian.AppendUint16(e.Buf, tf)
			e.FlushOver(32 << 10)
		}
		e.Uint(uint64(len(p.norm)))
		for _, v := range p.norm {
			e.Buf = binary.LittleEndian.AppendUint32(e.Buf, math.Float32bits(v))
			e.FlushOver(32 << 10)
		}
	}
	return e.Close()
}

// writeStrs writes a count, the lengths, then the bytes of all strings at
// once, so that Decode allocates them as one string.
func writeStrs(e *binrec.Writer, list []string) {
	e.Uint(uint64(len(list)))
	total := 0
	for _, s := range list {
		e.Uint(uint64(len(s)))
		total += len(s)
	}
	e.Uint(uint64(total))
	for _, s := range list {
		e.Buf = append(e.Buf, s...)
		e.FlushOver(32 << 10)
	}
}

func writeU32s(e *binrec.Writer, list []uint32) {
	e.Uint(uint64(len(list)))
	for _, v := range list {
		e.Buf = binary.LittleEndian.AppendUint32(e.Buf, v)
		e.FlushOver(32 << 10)
	}
}

// Decode reads an index written by Encode. It checks the checksum and
// every invariant searching relies on (lengths agree, offsets ascend,
// document numbers are in range, dictionaries are sorted), so that data
// that is damaged, truncated or of another version is refused with
// ErrDamaged and never makes a search panic or loop. The index keeps no
// reference to data.
func Decode(data []byte) (*Index, error) {
	d, err := binrec.Open(data, ErrDamaged)
	if err != nil {
		return nil, err
	}
	if v := d.Str(); v != FormatVersion {
		return nil, ErrDamaged
	}
	n := d.Count(1)
	ix := &Index{n: n, ids: make([]int, n)}
	for i := range ix.ids {
		v := d.Int()
		if v != int64(int(v)) {
			d.Fail() // an ID this platform's int cannot hold
		}
		ix.ids[i] = int(v)
	}
	ix.names = readStrs(d)
	ix.libs = readStrs(d)
	ix.libOf = readU32s(d)
	ix.cats = readStrs(d)
	ix.catOf = readU32s(d)
	ix.byName = readU32s(d)
	ix.keys = readStrs(d)
	ix.terms = readStrs(d)
	ix.df = readU32s(d)
	for f := range ix.fields {
		p := &ix.fields[f]
		p.off = readU32s(d)
		p.docs = readU32s(d)
		p.tfs = make([]uint16, d.Count(2))
		for i := range p.tfs {
			p.tfs[i] = binary.LittleEndian.Uint16(d.Take(2))
		}
		p.norm = make([]float32, d.Count(4))
		for i := range p.norm {
			p.norm[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.Take(4)))
		}
	}
	if d.Err() != nil || d.Left() != 0 {
		return nil, ErrDamaged
	}
	if err := ix.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	ix.indexVectors()
	return ix, nil
}

// check verifies what searching indexes by or binary-searches.
func (ix *Index) check() error {
	n := ix.n
	if len(ix.names) != n || len(ix.libOf) != n || len(ix.catOf) != n || len(ix.byName) != n || len(ix.keys) != n {
		return errors.New("per-document arrays disagree")
	}
	if !slices.IsSorted(ix.keys) || !slices.IsSorted(ix.terms) {
		return errors.New("dictionary out of order")
	}
	for _, d := range ix.byName {
		if int(d) >= n {
			return errors.New("document number out of range")
		}
	}
	if len(ix.df) != len(ix.terms) {
		return errors.New("term arrays disagree")
	}
	for f := range ix.fields {
		p := &ix.fields[f]
		if len(p.off) != len(ix.terms)+1 || len(p.norm) != n || len(p.docs) != len(p.tfs) {
			return fmt.Errorf("field %s: arrays disagree", fieldNames[f])
		}
		if p.off[0] != 0 || int(p.off[len(p.off)-1]) != len(p.docs) || !slices.IsSorted(p.off) {
			return fmt.Errorf("field %s: offsets out of order", fieldNames[f])
		}
		for t := range ix.terms {
			docs := p.docs[p.off[t]:p.off[t+1]]
			for i, d := range docs {
				if int(d) >= n || (i > 0 && d <= docs[i-1]) {
					return fmt.Errorf("field %s: postings out of order", fieldNames[f])
				}
			}
		}
	}
	return nil
}

// readStrs reads strings written by writeStrs.
func readStrs(d *binrec.Reader) []string {
	lens := make([]int, d.Count(1))
	total := 0
	for i := range lens {
		lens[i] = d.Count(1)
		total += lens[i]
	}
	if t := d.Count(1); t != total {
		d.Fail()
		return make([]string, len(lens))
	}
	all := string(d.Take(total))
	out := make([]string, len(lens))
	for i, k := range lens {
		out[i], all = all[:k], all[k:]
	}
	return out
}

func readU32s(d *binrec.Reader) []uint32 {
	out := make([]uint32, d.Count(4))
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(d.Take(4))
	}
	return out
}

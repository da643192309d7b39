package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// FormatVersion names the encoding Encode writes and the analysis behind
// it. It changes whenever either does (the fields, tokenising, stemming,
// stop words, the weights folded into the norms), so that an index saved
// by another version is rebuilt rather than read. Callers that key saved
// indexes by their documents should include it in the key.
const FormatVersion = "skills-mcp search index v1"

// ErrDamaged is returned by Decode for data that is not a whole, consistent
// index of this FormatVersion.
var ErrDamaged = errors.New("search: saved index damaged or of another version")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

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
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	e := encoder{w: bw}
	e.str(FormatVersion)
	e.uint(uint64(ix.n))
	for _, id := range ix.ids {
		e.buf = binary.AppendVarint(e.buf, int64(id))
	}
	e.strs(ix.names)
	e.strs(ix.libs)
	e.u32s(ix.libOf)
	e.strs(ix.cats)
	e.u32s(ix.catOf)
	e.u32s(ix.byName)
	e.strs(ix.keys)
	e.strs(ix.terms)
	e.u32s(ix.df)
	for f := range ix.fields {
		p := &ix.fields[f]
		e.u32s(p.off)
		e.u32s(p.docs)
		e.uint(uint64(len(p.tfs)))
		for _, tf := range p.tfs {
			e.buf = binary.LittleEndian.AppendUint16(e.buf, tf)
		}
		e.uint(uint64(len(p.norm)))
		for _, v := range p.norm {
			e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(v))
		}
		e.flush()
	}
	e.flush()
	if e.err != nil {
		return e.err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// encoder buffers one array at a time before handing it to w.
type encoder struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (e *encoder) flush() {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.flush()
}

// strs writes a count, the lengths, then the bytes of all strings at once,
// so that Decode allocates them as one string.
func (e *encoder) strs(list []string) {
	e.uint(uint64(len(list)))
	total := 0
	for _, s := range list {
		e.uint(uint64(len(s)))
		total += len(s)
	}
	e.uint(uint64(total))
	e.flush()
	for _, s := range list {
		e.buf = append(e.buf, s...)
		if len(e.buf) >= 32<<10 {
			e.flush()
		}
	}
	e.flush()
}

func (e *encoder) u32s(list []uint32) {
	e.uint(uint64(len(list)))
	for _, v := range list {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
		if len(e.buf) >= 32<<10 {
			e.flush()
		}
	}
	e.flush()
}

// Decode reads an index written by Encode. It checks the checksum and
// every invariant searching relies on (lengths agree, offsets ascend,
// document numbers are in range, dictionaries are sorted), so that data
// that is damaged, truncated or of another version is refused with
// ErrDamaged and never makes a search panic or loop. The index keeps no
// reference to data.
func Decode(data []byte) (*Index, error) {
	if len(data) < 4 {
		return nil, ErrDamaged
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, ErrDamaged
	}
	d := decoder{data: body}
	if v := d.str(); v != FormatVersion {
		return nil, ErrDamaged
	}
	n := d.count(1)
	ix := &Index{n: n, ids: make([]int, n)}
	for i := range ix.ids {
		ix.ids[i] = d.int()
	}
	ix.names = d.strs()
	ix.libs = d.strs()
	ix.libOf = d.u32s()
	ix.cats = d.strs()
	ix.catOf = d.u32s()
	ix.byName = d.u32s()
	ix.keys = d.strs()
	ix.terms = d.strs()
	ix.df = d.u32s()
	for f := range ix.fields {
		p := &ix.fields[f]
		p.off = d.u32s()
		p.docs = d.u32s()
		p.tfs = make([]uint16, d.count(2))
		for i := range p.tfs {
			p.tfs[i] = binary.LittleEndian.Uint16(d.take(2))
		}
		p.norm = make([]float32, d.count(4))
		for i := range p.norm {
			p.norm[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.take(4)))
		}
	}
	if d.err != nil || len(d.data) != 0 {
		return nil, ErrDamaged
	}
	if err := ix.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
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

// decoder reads from data; the first error sticks and every later read
// returns zero values.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrDamaged
	}
	d.data = nil
}

func (d *decoder) int() int {
	v, k := binary.Varint(d.data)
	if k <= 0 || v != int64(int(v)) {
		d.fail()
		return 0
	}
	d.data = d.data[k:]
	return int(v)
}

func (d *decoder) uint() uint64 {
	v, k := binary.Uvarint(d.data)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[k:]
	return v
}

// count reads a length whose elements take at least size bytes each, and
// refuses one the remaining data cannot hold, so that a damaged length
// never allocates more than the data.
func (d *decoder) count(size int) int {
	v := d.uint()
	if v > uint64(len(d.data)/size) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) take(k int) []byte {
	if k > len(d.data) {
		d.fail()
		return make([]byte, k)
	}
	b := d.data[:k]
	d.data = d.data[k:]
	return b
}

func (d *decoder) str() string { return string(d.take(d.count(1))) }

func (d *decoder) strs() []string {
	lens := make([]int, d.count(1))
	total := 0
	for i := range lens {
		lens[i] = int(d.count(1))
		total += lens[i]
	}
	if t := d.count(1); t != total {
		d.fail()
		return make([]string, len(lens))
	}
	all := string(d.take(total))
	out := make([]string, len(lens))
	for i, k := range lens {
		out[i], all = all[:k], all[k:]
	}
	return out
}

func (d *decoder) u32s() []uint32 {
	out := make([]uint32, d.count(4))
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(d.take(4))
	}
	return out
}

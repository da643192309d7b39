// Package binrec holds what the binary records the server keeps in its
// cache folder (the digest cache's records, saved search indexes) share:
// unsigned and signed varints, length-prefixed bytes, and a CRC-32C of the
// whole record after it. A Writer buffers and checksums as it writes; a
// Reader works on a whole record in memory, and its first error sticks, so
// that a damaged or crafted record is refused without a panic and without
// allocating more than its own size allows.
package binrec

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"
)

var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Writer encodes a record: what is appended to Buf goes to the underlying
// writer at each Flush.
type Writer struct {
	// Buf is the part of the record not yet flushed; encoders may append
	// to it directly.
	Buf []byte

	w   *bufio.Writer
	crc uint32
	err error
}

// NewWriter returns a writer of a record to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), Buf: make([]byte, 0, 64<<10)}
}

// Uint appends v as a uvarint.
func (e *Writer) Uint(v uint64) { e.Buf = binary.AppendUvarint(e.Buf, v) }

// Int appends v as a varint.
func (e *Writer) Int(v int64) { e.Buf = binary.AppendVarint(e.Buf, v) }

// Str appends s with its length before it.
func (e *Writer) Str(s string) {
	e.Uint(uint64(len(s)))
	e.Buf = append(e.Buf, s...)
}

// Flush hands Buf to the underlying writer.
func (e *Writer) Flush() {
	if e.err == nil && len(e.Buf) > 0 {
		e.crc = crc32.Update(e.crc, crcTable(), e.Buf)
		_, e.err = e.w.Write(e.Buf)
	}
	e.Buf = e.Buf[:0]
}

// FlushOver flushes when Buf holds n bytes or more: encoders call it in
// their loops to bound what they hold.
func (e *Writer) FlushOver(n int) {
	if len(e.Buf) >= n {
		e.Flush()
	}
}

// Close flushes what is left, then writes the CRC-32C of the record. It
// returns the first error of any write.
func (e *Writer) Close() error {
	e.Flush()
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(binary.LittleEndian.AppendUint32(nil, e.crc)); err != nil {
		return err
	}
	return e.w.Flush()
}

// Reader decodes a record held in memory. Once a read fails, every later
// read returns zero values and Err reports the failure.
type Reader struct {
	data    []byte
	err     error
	damaged error
}

// Open checks the CRC-32C at the end of data and returns a reader of the
// record before it. Damaged, the error every failure reports, is returned
// when the checksum does not match.
func Open(data []byte, damaged error) (*Reader, error) {
	if len(data) < 4 {
		return nil, damaged
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable()) != sum {
		return nil, damaged
	}
	return &Reader{data: body, damaged: damaged}, nil
}

// Err returns the failure of the first read that failed, or nil.
func (d *Reader) Err() error { return d.err }

// Left returns how many bytes are left to read.
func (d *Reader) Left() int { return len(d.data) }

// Fail marks the record damaged: a decoder calls it when what it read
// breaks a rule of its own.
func (d *Reader) Fail() {
	if d.err == nil {
		d.err = d.damaged
	}
	d.data = nil
}

// Uint reads a uvarint.
func (d *Reader) Uint() uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

// Int reads a varint.
func (d *Reader) Int() int64 {
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

// Count reads a length of a list whose elements take at least size bytes
// each, and refuses one that what is left cannot hold, so that a damaged
// length never allocates more than a few times the record.
func (d *Reader) Count(size int) int {
	v := d.Uint()
	if v > uint64(d.Left()/size) {
		d.Fail()
		return 0
	}
	return int(v)
}

// Take returns the next k bytes, within the record. When fewer are left it
// fails and returns k zero bytes if k is at most 8 (a fixed-size number),
// else nil.
func (d *Reader) Take(k int) []byte {
	if k < 0 || k > len(d.data) {
		d.Fail()
		if k >= 0 && k <= 8 {
			return make([]byte, k)
		}
		return nil
	}
	b := d.data[:k:k]
	d.data = d.data[k:]
	return b
}

// Bytes reads bytes written by Writer.Str, within the record.
func (d *Reader) Bytes() []byte { return d.Take(d.Count(1)) }

// Str reads a string written by Writer.Str.
func (d *Reader) Str() string { return string(d.Bytes()) }

// Seal returns a copy of body followed by its CRC-32C, as a Writer ends a
// record: tests craft records that pass the checksum with it.
func Seal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, crcTable()))
}

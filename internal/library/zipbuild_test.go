package library

// Test archives. Good ones come from archive/zip's writer; hostile ones from
// rawArchive, which writes every byte itself so that a test can say exactly
// which field lies. Nothing hostile is stored on disk outside t.TempDir().

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// goodZip builds an archive with archive/zip's writer from name/content
// pairs; names ending in "/" are directories. Deflated entries use data
// descriptors, as the writer does.
func goodZip(t testing.TB, pairs ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(pairs); i += 2 {
		w, err := zw.Create(pairs[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, pairs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipWith builds an archive with archive/zip's writer, one header at a time,
// for tests that need a header field the plain Create cannot set.
func zipWith(t testing.TB, add func(zw *zip.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawEntry is one entry of a hand-built archive. The central directory
// fields and the local header fields are separate, so that either can lie.
type rawEntry struct {
	name      string
	localName string
	method    uint16
	flags     uint16
	crc       uint32
	csize     uint64
	usize     uint64
	localCRC  uint32
	localC    uint64
	localU    uint64
	data      []byte // the bytes after the local header, as stored
	external  uint32
	creator   uint16 // "version made by"; the high byte is the system (3 = Unix)
	zip64     bool   // sizes and offset in zip64 extra fields
	skipLocal bool   // no local header of its own: offset must be set
	offset    int64  // local header offset, when skipLocal
	diskStart uint16
}

// rawStored returns a stored entry whose every field tells the truth.
func rawStored(name string, content []byte) *rawEntry {
	c := crc32.ChecksumIEEE(content)
	n := uint64(len(content))
	return &rawEntry{name: name, localName: name, method: zip.Store, crc: c, csize: n, usize: n,
		localCRC: c, localC: n, localU: n, data: content, creator: 3 << 8, external: 0o100644 << 16}
}

// rawDeflated returns a deflated entry whose every field tells the truth.
func rawDeflated(name string, content []byte) *rawEntry {
	e := rawStored(name, content)
	e.method = zip.Deflate
	e.data = deflate(content)
	e.csize, e.localC = uint64(len(e.data)), uint64(len(e.data))
	return e
}

func deflate(content []byte) []byte {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(content)
	fw.Close()
	return buf.Bytes()
}

// localHeader returns the local header (and name and extra) of e.
func (e *rawEntry) localHeader() []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	var extra []byte
	c32, u32 := uint32(e.localC), uint32(e.localU)
	if e.zip64 {
		c32, u32 = 0xffffffff, 0xffffffff
		extra = binary.LittleEndian.AppendUint16(extra, zip64ExtraID)
		extra = binary.LittleEndian.AppendUint16(extra, 16)
		extra = binary.LittleEndian.AppendUint64(extra, e.localU)
		extra = binary.LittleEndian.AppendUint64(extra, e.localC)
	}
	w(uint32(sigLocal))
	w(uint16(20))
	w(e.flags)
	w(e.method)
	w(uint32(0)) // time, date
	w(e.localCRC)
	w(c32)
	w(u32)
	w(uint16(len(e.localName)))
	w(uint16(len(extra)))
	b.WriteString(e.localName)
	b.Write(extra)
	return b.Bytes()
}

// rawArchive is a hand-built archive.
type rawArchive struct {
	entries  []*rawEntry
	zip64End bool   // write a zip64 end record and locator
	count    int64  // declared entry count; -1 means the true count
	count64  uint64 // declared count in the zip64 end record; 0 means the true count
	comment  string
	prefix   []byte // bytes before the first entry
	trailer  []byte // bytes after the end record
	disk     uint16 // "number of this disk" in the end record
}

func newRaw(entries ...*rawEntry) *rawArchive { return &rawArchive{entries: entries, count: -1} }

func (a *rawArchive) bytes() []byte {
	var b bytes.Buffer
	b.Write(a.prefix)
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	offsets := make([]int64, len(a.entries))
	for i, e := range a.entries {
		if e.skipLocal {
			offsets[i] = e.offset
			continue
		}
		offsets[i] = int64(b.Len() - len(a.prefix))
		b.Write(e.localHeader())
		b.Write(e.data)
	}
	cdOff := int64(b.Len() - len(a.prefix))
	for i, e := range a.entries {
		var extra []byte
		c32, u32, off32 := uint32(e.csize), uint32(e.usize), uint32(offsets[i])
		if e.zip64 {
			c32, u32, off32 = 0xffffffff, 0xffffffff, 0xffffffff
			extra = binary.LittleEndian.AppendUint16(extra, zip64ExtraID)
			extra = binary.LittleEndian.AppendUint16(extra, 24)
			extra = binary.LittleEndian.AppendUint64(extra, e.usize)
			extra = binary.LittleEndian.AppendUint64(extra, e.csize)
			extra = binary.LittleEndian.AppendUint64(extra, uint64(offsets[i]))
		}
		w(uint32(sigCentral))
		w(e.creator | 45)
		w(uint16(20))
		w(e.flags)
		w(e.method)
		w(uint32(0)) // time, date
		w(e.crc)
		w(c32)
		w(u32)
		w(uint16(len(e.name)))
		w(uint16(len(extra)))
		w(uint16(0)) // comment
		w(e.diskStart)
		w(uint16(0)) // internal attributes
		w(e.external)
		w(off32)
		b.WriteString(e.name)
		b.Write(extra)
	}
	cdEnd := int64(b.Len() - len(a.prefix))
	cdSize := cdEnd - cdOff
	count := uint64(len(a.entries))
	if a.count >= 0 {
		count = uint64(a.count)
	}
	count16, size32, off32 := uint16(count), uint32(cdSize), uint32(cdOff)
	if a.zip64End {
		c64 := count
		if a.count64 != 0 {
			c64 = a.count64
		}
		w(uint32(sigEnd64))
		w(uint64(end64Len - 12))
		w(uint16(45))
		w(uint16(45))
		w(uint32(0))
		w(uint32(0))
		w(c64)
		w(c64)
		w(uint64(cdSize))
		w(uint64(cdOff))
		w(uint32(sigLoc64))
		w(uint32(0))
		w(uint64(cdEnd))
		w(uint32(1))
		count16, size32, off32 = 0xffff, 0xffffffff, 0xffffffff
	}
	w(uint32(sigEnd))
	w(a.disk)
	w(uint16(0))
	w(count16)
	w(count16)
	w(size32)
	w(off32)
	w(uint16(len(a.comment)))
	b.WriteString(a.comment)
	b.Write(a.trailer)
	return b.Bytes()
}

// messWith returns a copy of good changed by mess, like archive/zip's test
// helper of that name.
func messWith(good []byte, mess func(b []byte) []byte) []byte {
	return mess(bytes.Clone(good))
}

// writeZip stores an archive in a fresh temporary directory and returns its
// path.
func writeZip(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lib.zip")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

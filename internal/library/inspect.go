package library

import (
	"archive/zip"
	"bufio"
	"cmp"
	"encoding/binary"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Zip record signatures and fixed lengths (APPNOTE.TXT 4.3).
const (
	sigLocal   = 0x04034b50
	sigCentral = 0x02014b50
	sigEnd     = 0x06054b50
	sigEnd64   = 0x06064b50
	sigLoc64   = 0x07064b50

	localLen   = 30
	centralLen = 46
	endLen     = 22
	loc64Len   = 20
	end64Len   = 56

	max16 = 0xffff
	max32 = 0xffffffff

	zip64ExtraID = 0x0001
)

// Flag bits of the general purpose field.
const (
	flagEncrypted       = 1 << 0
	flagDataDescriptor  = 1 << 3
	flagStrongEncrypted = 1 << 6
	flagMaskedHeaders   = 1 << 13
)

// Name bounds: longer names cannot be created on common file systems, and a
// bound keeps hostile names from costing memory in maps and messages.
const (
	maxNameBytes    = 1024
	maxSegmentBytes = 255
	maxDepth        = MaxDepth
)

// entry is one central-directory record that passed inspection.
type entry struct {
	name      string // as stored, "/"-separated; directories end in "/"
	dir       bool
	method    uint16
	flags     uint16
	crc       uint32
	csize     uint64
	usize     uint64
	localOff  int64
	dataOff   int64
	externals uint32
	index     int // position in the central directory (and in zip.Reader.File)
}

// plan is the inspected table of contents of an archive: what extraction
// will create, every entry already checked against the limits and rules.
type plan struct {
	entries []entry
	files   []*entry // regular files, in archive order
	dirs    []string // every directory, explicit or implied, sorted, no "/"
	total   uint64   // declared inflated bytes of all files
}

// inspect parses the archive's end record and central directory itself
// (not through archive/zip, so that the two parses can be compared) and
// checks every rule that can be checked without inflating anything. It
// reads the central directory and the local headers, never entry data.
func inspect(r io.ReaderAt, size int64, lim Limits) (*plan, error) {
	end, err := readEnd(r, size, lim)
	if err != nil {
		return nil, err
	}
	// The count was bounded by readEnd, so this allocation is too.
	p := &plan{entries: make([]entry, 0, end.count)}
	br := bufio.NewReaderSize(io.NewSectionReader(r, end.cdOff, end.cdSize), 64<<10)
	for i := uint64(0); i < end.count; i++ {
		e, err := readCentral(br)
		if err != nil {
			return nil, err
		}
		e.index = len(p.entries)
		p.entries = append(p.entries, e)
	}
	if n, _ := br.Discard(1); n != 0 {
		return nil, archiveErr(ErrCorrupt, "the central directory holds more than the %d entries its end record declares", end.count)
	}
	for i := range p.entries {
		if err := checkEntry(r, &p.entries[i], end.cdOff, lim); err != nil {
			return nil, err
		}
	}
	if err := checkOverlap(p.entries); err != nil {
		return nil, err
	}
	if err := checkNames(p); err != nil {
		return nil, err
	}
	for i := range p.entries {
		e := &p.entries[i]
		if e.dir {
			continue
		}
		p.files = append(p.files, e)
		p.total += e.usize
		if p.total > uint64(lim.MaxTotalBytes) {
			return nil, entryErr(e.name, ErrTooLarge, "declared sizes add up to more than the archive limit of %d bytes", lim.MaxTotalBytes)
		}
	}
	return p, nil
}

// endRecord is what the end of central directory (zip64 or not) declares.
type endRecord struct {
	count  uint64
	cdOff  int64
	cdSize int64
}

// readEnd finds and checks the end of central directory record, and the
// zip64 end record when there is one. It requires the central directory to
// end exactly where the end records start: data prefixed to the archive or
// offsets that disagree are refused rather than guessed around.
func readEnd(r io.ReaderAt, size int64, lim Limits) (endRecord, error) {
	if size < endLen {
		return endRecord{}, archiveErr(ErrNotZip, "%d bytes is too small to be a zip archive", size)
	}
	tailLen := min(size, endLen+max16)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil {
		return endRecord{}, archiveErr(ErrCorrupt, "reading the end record: %v", err)
	}
	// The end record is the last signature whose comment runs exactly to
	// the end of the file; trailing bytes after a comment are refused.
	at := -1
	for i := len(tail) - endLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(tail[i:]) == sigEnd &&
			i+endLen+int(binary.LittleEndian.Uint16(tail[i+20:])) == len(tail) {
			at = i
			break
		}
	}
	if at < 0 {
		return endRecord{}, archiveErr(ErrNotZip, "no end-of-central-directory record (truncated, or not a zip)")
	}
	endOff := size - tailLen + int64(at)
	b := tail[at:]
	disk := binary.LittleEndian.Uint16(b[4:])
	cdDisk := binary.LittleEndian.Uint16(b[6:])
	countDisk := uint64(binary.LittleEndian.Uint16(b[8:]))
	rec := endRecord{
		count:  uint64(binary.LittleEndian.Uint16(b[10:])),
		cdSize: int64(binary.LittleEndian.Uint32(b[12:])),
		cdOff:  int64(binary.LittleEndian.Uint32(b[16:])),
	}
	cdEnd := endOff

	// A zip64 locator sits just before the end record.
	if endOff >= loc64Len {
		var loc [loc64Len]byte
		if _, err := r.ReadAt(loc[:], endOff-loc64Len); err != nil {
			return endRecord{}, archiveErr(ErrCorrupt, "reading the zip64 locator: %v", err)
		}
		if binary.LittleEndian.Uint32(loc[:]) == sigLoc64 {
			locOff := endOff - loc64Len
			if binary.LittleEndian.Uint32(loc[4:]) != 0 || binary.LittleEndian.Uint32(loc[16:]) != 1 {
				return endRecord{}, archiveErr(ErrCorrupt, "the archive spans several disks")
			}
			off64 := binary.LittleEndian.Uint64(loc[8:])
			if off64 > uint64(locOff) || uint64(locOff)-off64 < end64Len {
				return endRecord{}, archiveErr(ErrCorrupt, "the zip64 locator points outside the archive")
			}
			var e64 [end64Len]byte
			if _, err := r.ReadAt(e64[:], int64(off64)); err != nil {
				return endRecord{}, archiveErr(ErrCorrupt, "reading the zip64 end record: %v", err)
			}
			if binary.LittleEndian.Uint32(e64[:]) != sigEnd64 {
				return endRecord{}, archiveErr(ErrCorrupt, "no zip64 end record where the locator points")
			}
			if recLen := binary.LittleEndian.Uint64(e64[4:]); recLen != uint64(locOff)-off64-12 {
				return endRecord{}, archiveErr(ErrCorrupt, "the zip64 end record's length disagrees with its position")
			}
			disk64 := binary.LittleEndian.Uint32(e64[16:])
			cdDisk64 := binary.LittleEndian.Uint32(e64[20:])
			countDisk64 := binary.LittleEndian.Uint64(e64[24:])
			count64 := binary.LittleEndian.Uint64(e64[32:])
			size64 := binary.LittleEndian.Uint64(e64[40:])
			off64cd := binary.LittleEndian.Uint64(e64[48:])
			if disk64 != 0 || cdDisk64 != 0 || countDisk64 != count64 {
				return endRecord{}, archiveErr(ErrCorrupt, "the archive spans several disks")
			}
			// The 32-bit fields must either be saturated or agree: an
			// archive that means two different things to two readers is
			// refused.
			if (rec.count != max16 && rec.count != count64) ||
				(rec.cdSize != max32 && uint64(rec.cdSize) != size64) ||
				(rec.cdOff != max32 && uint64(rec.cdOff) != off64cd) {
				return endRecord{}, archiveErr(ErrCorrupt, "the zip64 end record disagrees with the end record")
			}
			if count64 > uint64(lim.MaxEntries) {
				return endRecord{}, archiveErr(ErrTooManyEntries, "%d entries declared, the limit is %d", count64, lim.MaxEntries)
			}
			if size64 > uint64(size) || off64cd > uint64(size) {
				return endRecord{}, archiveErr(ErrCorrupt, "the central directory lies outside the archive")
			}
			rec.count, rec.cdSize, rec.cdOff = count64, int64(size64), int64(off64cd)
			cdEnd = int64(off64)
			countDisk = countDisk64
			disk, cdDisk = 0, 0
		} else if rec.count == max16 || rec.cdSize == max32 || rec.cdOff == max32 {
			return endRecord{}, archiveErr(ErrCorrupt, "saturated end record without a zip64 end record")
		}
	}
	if disk != 0 || cdDisk != 0 || countDisk != rec.count {
		return endRecord{}, archiveErr(ErrCorrupt, "the archive spans several disks")
	}
	if rec.count > uint64(lim.MaxEntries) {
		return endRecord{}, archiveErr(ErrTooManyEntries, "%d entries declared, the limit is %d", rec.count, lim.MaxEntries)
	}
	if rec.cdOff+rec.cdSize != cdEnd {
		return endRecord{}, archiveErr(ErrCorrupt, "the central directory (offset %d, %d bytes) does not end where the end record starts (offset %d): truncated, prefixed or lying archive", rec.cdOff, rec.cdSize, cdEnd)
	}
	if uint64(rec.cdSize) < rec.count*centralLen {
		return endRecord{}, archiveErr(ErrCorrupt, "a %d-byte central directory cannot hold %d entries", rec.cdSize, rec.count)
	}
	return rec, nil
}

// readCentral reads one central directory header.
func readCentral(br *bufio.Reader) (entry, error) {
	var h [centralLen]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return entry{}, archiveErr(ErrCorrupt, "the central directory is shorter than its end record declares")
	}
	if binary.LittleEndian.Uint32(h[:]) != sigCentral {
		return entry{}, archiveErr(ErrCorrupt, "bad central directory header signature")
	}
	nameLen := int(binary.LittleEndian.Uint16(h[28:]))
	extraLen := int(binary.LittleEndian.Uint16(h[30:]))
	commentLen := int(binary.LittleEndian.Uint16(h[32:]))
	vary := make([]byte, nameLen+extraLen+commentLen)
	if _, err := io.ReadFull(br, vary); err != nil {
		return entry{}, archiveErr(ErrCorrupt, "the central directory is shorter than its end record declares")
	}
	e := entry{
		name:      string(vary[:nameLen]),
		flags:     binary.LittleEndian.Uint16(h[8:]),
		method:    binary.LittleEndian.Uint16(h[10:]),
		crc:       binary.LittleEndian.Uint32(h[16:]),
		csize:     uint64(binary.LittleEndian.Uint32(h[20:])),
		usize:     uint64(binary.LittleEndian.Uint32(h[24:])),
		externals: binary.LittleEndian.Uint32(h[38:]),
	}
	diskStart := uint64(binary.LittleEndian.Uint16(h[34:]))
	localOff := uint64(binary.LittleEndian.Uint32(h[42:]))
	e.dir = strings.HasSuffix(e.name, "/")

	// Saturated fields are replaced, in this order, from the zip64 extra
	// field (APPNOTE 4.5.3). Like archive/zip, a saturated uncompressed
	// size without one is taken literally (and then fails the size limit).
	needU, needC, needOff, needDisk := e.usize == max32, e.csize == max32, localOff == max32, diskStart == max16
	if z, ok := findExtra(vary[nameLen:nameLen+extraLen], zip64ExtraID); ok {
		take := func(need *bool, v *uint64, width int) bool {
			if !*need {
				return true
			}
			*need = false
			if len(z) < width {
				return false
			}
			if width == 8 {
				*v = binary.LittleEndian.Uint64(z)
			} else {
				*v = uint64(binary.LittleEndian.Uint32(z))
			}
			z = z[width:]
			return true
		}
		if !take(&needU, &e.usize, 8) || !take(&needC, &e.csize, 8) ||
			!take(&needOff, &localOff, 8) || !take(&needDisk, &diskStart, 4) {
			return entry{}, entryErr(e.name, ErrCorrupt, "zip64 extra field too short")
		}
	}
	if needC || needOff {
		return entry{}, entryErr(e.name, ErrCorrupt, "saturated size or offset without a zip64 extra field")
	}
	if diskStart != 0 {
		return entry{}, entryErr(e.name, ErrCorrupt, "the archive spans several disks")
	}
	if localOff > 1<<62 || e.csize > 1<<62 {
		return entry{}, entryErr(e.name, ErrCorrupt, "offset or size out of range")
	}
	e.localOff = int64(localOff)
	return e, nil
}

// findExtra returns the first extra field with the given tag, stopping (as
// archive/zip does) at a field whose length overflows the block.
func findExtra(extra []byte, tag uint16) ([]byte, bool) {
	for len(extra) >= 4 {
		t := binary.LittleEndian.Uint16(extra)
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return nil, false
		}
		if t == tag {
			return extra[:n], true
		}
		extra = extra[n:]
	}
	return nil, false
}

// checkEntry applies the per-entry rules, in the order a reader would hit
// the problems: the name, the kind of entry, encryption and method, the
// declared sizes, then the local header against the central directory.
func checkEntry(r io.ReaderAt, e *entry, cdOff int64, lim Limits) error {
	if reason := NameProblem(e.name); reason != "" {
		return entryErr(e.name, ErrInsecurePath, "%s", reason)
	}
	// The high 16 bits hold a Unix mode when the archiver wrote one. They
	// are checked whatever the creator system says, since some extractors
	// honour them regardless.
	switch mode := e.externals >> 16; mode & 0xf000 {
	case 0, 0x8000: // no mode, or a regular file
	case 0x4000:
		if !e.dir {
			return entryErr(e.name, ErrCorrupt, "directory mode on a name without a trailing slash")
		}
	case 0xa000:
		return entryErr(e.name, ErrLink, "symbolic link (mode %06o)", mode)
	default:
		return entryErr(e.name, ErrSpecialFile, "device, fifo or socket (mode %06o)", mode)
	}
	if e.externals&0x400 != 0 { // FILE_ATTRIBUTE_REPARSE_POINT
		return entryErr(e.name, ErrLink, "Windows reparse point")
	}
	if e.flags&(flagEncrypted|flagStrongEncrypted|flagMaskedHeaders) != 0 {
		return entryErr(e.name, ErrEncrypted, "general purpose flags %#04x", e.flags)
	}
	if e.method != zip.Store && e.method != zip.Deflate {
		return entryErr(e.name, ErrMethod, "method %d (only 0, Store, and 8, Deflate, are accepted)", e.method)
	}
	if e.dir {
		if e.usize != 0 {
			return entryErr(e.name, ErrCorrupt, "directory entry with %d bytes of content", e.usize)
		}
	} else {
		if e.usize > uint64(lim.MaxEntryBytes) {
			return entryErr(e.name, ErrTooLarge, "declared size %d bytes, the per-entry limit is %d", e.usize, lim.MaxEntryBytes)
		}
		if e.method == zip.Store && e.csize != e.usize {
			return entryErr(e.name, ErrCorrupt, "stored entry with compressed size %d but size %d", e.csize, e.usize)
		}
		if e.usize > ratioFloor && (e.csize == 0 || float64(e.usize)/float64(e.csize) > lim.MaxRatio) {
			return entryErr(e.name, ErrRatio, "declares %d bytes from %d compressed, over %g:1", e.usize, e.csize, lim.MaxRatio)
		}
	}
	return checkLocal(r, e, cdOff)
}

// checkLocal reads the entry's local header and refuses one that disagrees
// with the central directory: extractors that trust local headers would see
// a different archive from the one we checked.
func checkLocal(r io.ReaderAt, e *entry, cdOff int64) error {
	if e.localOff > cdOff-localLen {
		return entryErr(e.name, ErrCorrupt, "local header offset %d lies outside the entry data", e.localOff)
	}
	var h [localLen]byte
	if _, err := r.ReadAt(h[:], e.localOff); err != nil {
		return entryErr(e.name, ErrCorrupt, "reading the local header: %v", err)
	}
	if binary.LittleEndian.Uint32(h[:]) != sigLocal {
		return entryErr(e.name, ErrCorrupt, "no local header at offset %d", e.localOff)
	}
	flags := binary.LittleEndian.Uint16(h[6:])
	method := binary.LittleEndian.Uint16(h[8:])
	crc := binary.LittleEndian.Uint32(h[14:])
	csize := uint64(binary.LittleEndian.Uint32(h[18:]))
	usize := uint64(binary.LittleEndian.Uint32(h[22:]))
	nameLen := int64(binary.LittleEndian.Uint16(h[26:]))
	extraLen := int64(binary.LittleEndian.Uint16(h[28:]))
	e.dataOff = e.localOff + localLen + nameLen + extraLen
	if e.dataOff > cdOff || e.csize > uint64(cdOff-e.dataOff) {
		return entryErr(e.name, ErrCorrupt, "entry data (%d bytes at offset %d) runs past the end of the entries", e.csize, e.dataOff)
	}
	vary := make([]byte, nameLen+extraLen)
	if _, err := r.ReadAt(vary, e.localOff+localLen); err != nil {
		return entryErr(e.name, ErrCorrupt, "reading the local header: %v", err)
	}
	if local := string(vary[:nameLen]); local != e.name {
		return entryErr(e.name, ErrCorrupt, "the local header names it %q (lying central directory)", local)
	}
	if method != e.method || flags&(flagEncrypted|flagDataDescriptor) != e.flags&(flagEncrypted|flagDataDescriptor) {
		return entryErr(e.name, ErrCorrupt, "the local header's method or flags disagree with the central directory")
	}
	if flags&flagDataDescriptor != 0 {
		return nil // sizes and CRC follow the data; archive/zip checks the CRC there
	}
	if usize == max32 || csize == max32 {
		z, ok := findExtra(vary[nameLen:], zip64ExtraID)
		if usize == max32 && ok && len(z) >= 8 {
			usize, z = binary.LittleEndian.Uint64(z), z[8:]
		}
		if csize == max32 && ok && len(z) >= 8 {
			csize = binary.LittleEndian.Uint64(z)
		}
	}
	if crc != e.crc || csize != e.csize || usize != e.usize {
		return entryErr(e.name, ErrCorrupt, "the local header declares size %d (%d compressed, crc %08x), the central directory %d (%d, %08x): lying central directory", usize, csize, crc, e.usize, e.csize, e.crc)
	}
	return nil
}

// checkOverlap refuses entries whose header and data overlap another's:
// the "non-recursive zip bomb" points many central directory records at one
// highly compressed stream.
func checkOverlap(entries []entry) error {
	spans := make([]*entry, len(entries))
	for i := range entries {
		spans[i] = &entries[i]
	}
	slices.SortFunc(spans, func(a, b *entry) int { return cmp.Compare(a.localOff, b.localOff) })
	for i := 1; i < len(spans); i++ {
		prev, cur := spans[i-1], spans[i]
		if cur.localOff < prev.dataOff+int64(prev.csize) {
			return entryErr(cur.name, ErrCorrupt, "its data overlaps entry %q (overlapping entries, a zip bomb technique)", prev.name)
		}
	}
	return nil
}

// MaxDepth is the most path segments a name of an archive or package may
// have: as deep as the catalog walks.
const MaxDepth = 64

// NameProblem says why a slash-separated entry name (of an archive, or of a
// package read another way) is refused, or returns "". A trailing slash
// marks a folder entry.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "empty name"
	case len(name) > maxNameBytes:
		return "name longer than 1024 bytes"
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	case strings.IndexByte(name, 0) >= 0:
		return "NUL byte in name"
	case strings.IndexByte(name, '\\') >= 0:
		return "backslash in name (a separator on Windows)"
	case strings.IndexFunc(name, isControl) >= 0:
		return "control character in name"
	case name[0] == '/':
		return "absolute name"
	case len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z'):
		return "drive letter in name"
	}
	depth := 0
	for seg := range strings.SplitSeq(strings.TrimSuffix(name, "/"), "/") {
		depth++
		switch {
		case depth > maxDepth:
			return "more than 64 path segments"
		case seg == "..":
			return `".." segment (path traversal)`
		case seg == ".":
			return `"." segment`
		case seg == "":
			return "empty path segment"
		case len(seg) > maxSegmentBytes:
			return "path segment longer than 255 bytes"
		}
	}
	// On Windows this also refuses reserved names such as NUL and COM1.
	if !filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(name, "/"))) {
		return "not a local name on this system"
	}
	return ""
}

// isControl reports whether r is a control character or a bidirectional
// formatting character, which can make a name display as another.
func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// checkNames refuses duplicate names, names that collide under Unicode case
// folding (one file on macOS and Windows, two on Linux), and paths that are
// both a file and a directory. It also records every directory, explicit or
// implied, in p.dirs.
func checkNames(p *plan) error {
	type seen struct {
		exact    string
		dir      bool
		explicit bool
	}
	byFold := make(map[string]*seen, len(p.entries))
	add := func(owner, name string, dir, explicit bool) error {
		key := FoldName(name)
		s, ok := byFold[key]
		if !ok {
			byFold[key] = &seen{exact: name, dir: dir, explicit: explicit}
			if dir {
				p.dirs = append(p.dirs, name)
			}
			return nil
		}
		switch {
		case s.exact != name:
			return entryErr(owner, ErrDuplicate, "%q and %q differ only in letter case", s.exact, name)
		case s.dir != dir:
			return entryErr(owner, ErrDuplicate, "%q is both a file and a directory", name)
		case explicit && s.explicit:
			return entryErr(owner, ErrDuplicate, "%q appears twice", name)
		}
		s.explicit = s.explicit || explicit
		return nil
	}
	for i := range p.entries {
		e := &p.entries[i]
		clean := strings.TrimSuffix(e.name, "/")
		// Parents first, so that "a/b" then "a/b/c" reports the conflict on
		// the entry that creates it.
		for j := 0; j < len(clean); j++ {
			if clean[j] == '/' {
				if err := add(e.name, clean[:j], true, false); err != nil {
					return err
				}
			}
		}
		if err := add(e.name, clean, e.dir, true); err != nil {
			return err
		}
	}
	slices.Sort(p.dirs)
	return nil
}

// FoldName maps a name to a key shared by every name equal to it under
// Unicode simple case folding: two names of one archive or package with the
// same key would be one file on a case-insensitive file system.
func FoldName(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // the smallest rune of each ASCII letter's orbit
	}
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, s)
}

// crossCheck compares archive/zip's reading of the archive with ours. A
// disagreement means the archive is ambiguous, and ambiguity is refused.
func crossCheck(zr *zip.Reader, p *plan) error {
	if len(zr.File) != len(p.entries) {
		return archiveErr(ErrCorrupt, "archive/zip reads %d entries where the central directory has %d", len(zr.File), len(p.entries))
	}
	for i, f := range zr.File {
		e := &p.entries[i]
		if f.Name != e.name || f.Method != e.method || f.Flags != e.flags || f.CRC32 != e.crc ||
			f.CompressedSize64 != e.csize || f.UncompressedSize64 != e.usize {
			return entryErr(e.name, ErrCorrupt, "archive/zip reads this entry differently")
		}
		off, err := f.DataOffset()
		if err != nil || off != e.dataOff {
			return entryErr(e.name, ErrCorrupt, "archive/zip finds this entry's data elsewhere")
		}
	}
	return nil
}

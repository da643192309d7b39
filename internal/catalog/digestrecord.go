package catalog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// A digest cache record is one library's files, in a compact binary form
// read in one pass without reflection:
//
//	magic        digestCacheVersion, then '\n'
//	lint         string: the rule set the findings were computed with
//	count        uvarint
//	count files, by name:
//	  name       uvarint bytes shared with the previous name, then string
//	  identity   uvarint dev, ino; varint size, mtime, ctime, hashedAt
//	  digest     32 bytes
//	  flags      byte (flagText, ...)
//	  script     string interpreter, if flagScript
//	  findings   uvarint count, then rule, severity, path, line, column, message
//	  SKILL.md   if flagMD: frontmatter, problems, body offset, fields
//	count        uvarint
//	count folder listings (see listing), by name:
//	  name       as for files ("." for the root)
//	  identity   uvarint dev, ino; varint size, mtime, ctime, listedAt
//	  entries    uvarint count, then each entry's kind byte and name
//	crc          CRC-32C of all the above, 4 bytes little-endian
//
// Strings are a uvarint length and the bytes; lists of strings a uvarint
// count and the strings. Names are sorted, so that the shared prefix of
// consecutive names (their folders) is written once.

// Flags of a file's entry.
const (
	flagText = 1 << iota
	flagArchive
	flagLinted
	flagScript
	flagPEP723
	flagMD
	// SKILL.md fields.
	flagHasTier
	flagHasDev
	flagDisabled
)

var errRecordDamaged = errors.New("digest cache record damaged")

var recordCRC = crc32.MakeTable(crc32.Castagnoli)

// recordWriter encodes a record into a buffer flushed to w as it fills.
type recordWriter struct {
	w   io.Writer
	crc uint32
	buf []byte
	err error
}

func (e *recordWriter) flush() {
	if e.err == nil && len(e.buf) > 0 {
		e.crc = crc32.Update(e.crc, recordCRC, e.buf)
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *recordWriter) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *recordWriter) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *recordWriter) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}
func (e *recordWriter) strs(list []string) {
	e.uint(uint64(len(list)))
	for _, s := range list {
		e.str(s)
	}
}

// writeRecord writes the record of files, computed with the lint rule set
// fp, and of the listings of dirs, to w. Both are sorted by name.
func writeRecord(w io.Writer, fp string, files []*found, dirs []listedFolder) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &recordWriter{w: bw, buf: make([]byte, 0, 64<<10)}
	e.buf = append(e.buf, digestCacheVersion+"\n"...)
	e.str(fp)
	e.uint(uint64(len(files)))
	prev := ""
	for _, f := range files {
		e.name(prev, f.name)
		prev = f.name
		e.uint(f.stat.dev)
		e.uint(f.stat.ino)
		e.int(f.size)
		e.int(f.stat.mtimeNs)
		e.int(f.stat.ctimeNs)
		e.int(f.hashedAt)
		e.buf = append(e.buf, f.digest[:]...)
		var flags uint
		for _, b := range []struct {
			on   bool
			flag uint
		}{{f.text, flagText}, {f.archive, flagArchive}, {f.linted, flagLinted}, {f.script != nil, flagScript},
			{f.script != nil && f.script.PEP723, flagPEP723}, {f.md != nil, flagMD}} {
			if b.on {
				flags |= b.flag
			}
		}
		e.uint(uint64(flags))
		if f.script != nil {
			e.str(f.script.Interpreter)
		}
		e.uint(uint64(len(f.findings)))
		for _, fd := range f.findings {
			e.str(fd.Rule)
			e.int(int64(fd.Severity))
			e.str(fd.Path)
			e.int(int64(fd.Line))
			e.int(int64(fd.Column))
			e.str(fd.Message)
		}
		if m := f.md; m != nil {
			e.str(string(m.frontmatter))
			e.uint(uint64(len(m.problems)))
			for _, p := range m.problems {
				e.str(p.Rule)
				e.str(p.Field)
				e.str(p.Message)
				e.uint(uint64(boolFlag(p.Fatal, 1)))
			}
			e.int(int64(m.bodyOffset))
			e.str(m.name)
			e.str(m.description)
			e.str(m.category)
			e.strs(m.tags)
			e.strs(m.setup)
			e.strs(m.chains)
			e.str(m.stage)
			e.str(m.tier)
			e.str(m.devStatus)
			e.uint(uint64(boolFlag(m.hasTier, flagHasTier) | boolFlag(m.hasDev, flagHasDev) | boolFlag(m.disabled, flagDisabled)))
			e.strs(m.deps.Required)
			e.strs(m.deps.Optional)
		}
		if len(e.buf) >= 48<<10 {
			e.flush()
		}
	}
	e.uint(uint64(len(dirs)))
	prev = ""
	for _, d := range dirs {
		e.name(prev, d.dir)
		prev = d.dir
		l := d.l
		e.uint(l.dir.dev)
		e.uint(l.dir.ino)
		e.int(l.dir.size)
		e.int(l.dir.mtimeNs)
		e.int(l.dir.ctimeNs)
		e.int(l.listedAt)
		e.uint(uint64(len(l.names)))
		for i, name := range l.names {
			e.buf = append(e.buf, l.kinds[i])
			e.str(name)
		}
		if len(e.buf) >= 48<<10 {
			e.flush()
		}
	}
	e.flush()
	if e.err != nil {
		return e.err
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, e.crc)); err != nil {
		return err
	}
	return bw.Flush()
}

// name writes s, which follows prev in sorted order: the bytes they
// share, then the rest.
func (e *recordWriter) name(prev, s string) {
	shared := commonPrefix(prev, s)
	e.uint(uint64(shared))
	e.str(s[shared:])
}

func boolFlag(on bool, flag uint) uint {
	if on {
		return flag
	}
	return 0
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// recordReader decodes a record held in memory. Every length is checked
// against what is left, so a damaged record fails, never panics or
// allocates more than its own size.
type recordReader struct {
	data []byte
	err  error
}

func (d *recordReader) fail() {
	if d.err == nil {
		d.err = errRecordDamaged
	}
	d.data = nil
}

func (d *recordReader) uint() uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *recordReader) int() int64 {
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

// small reads an integer that must fit an int of the platform, such as a
// line number or an offset.
func (d *recordReader) small() int {
	v := d.int()
	if v < 0 || v > math.MaxInt32 {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *recordReader) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.data)) {
		d.fail()
		return nil
	}
	b := d.data[:n:n]
	d.data = d.data[n:]
	return b
}

func (d *recordReader) str() string { return string(d.bytes()) }

// name reads a name written by recordWriter.name after prev, into prev's
// buffer.
func (d *recordReader) name(prev []byte) []byte {
	shared := d.uint()
	if shared > uint64(len(prev)) {
		d.fail()
		return prev[:0]
	}
	return append(prev[:shared], d.bytes()...)
}

// Least encoded sizes of a record's elements, so that a damaged count
// never allocates more than a few times the record's own size.
const (
	minFileBytes    = 42 // name (2), identity (6), digest (32), flags, findings
	minFindingBytes = 6
	minProblemBytes = 4
	minFolderBytes  = 9 // name (2), identity (6), entries
	minEntryBytes   = 2 // kind, name
)

// count reads a list length whose elements take at least size bytes each.
func (d *recordReader) count(size int) int {
	n := d.uint()
	if n > uint64(len(d.data)/size) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *recordReader) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// readRecord decodes a record written by writeRecord with the lint rule
// set fp.
func readRecord(data []byte, fp string) (cachedLib, error) {
	magic := digestCacheVersion + "\n"
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return cachedLib{}, errors.New("digest cache record of another version")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, recordCRC) != sum {
		return cachedLib{}, errRecordDamaged
	}
	d := &recordReader{data: body[len(magic):]}
	if d.str() != fp {
		return cachedLib{}, errors.New("digest cache record of another lint rule set")
	}
	files, err := readFiles(d)
	if err != nil {
		return cachedLib{}, err
	}
	dirs, err := readListings(d)
	if err != nil {
		return cachedLib{}, err
	}
	if len(d.data) != 0 {
		return cachedLib{}, errRecordDamaged
	}
	return cachedLib{files: files, dirs: dirs}, nil
}

// readFiles reads the files of a record, keyed by name.
func readFiles(d *recordReader) (map[string]*found, error) {
	n := d.count(minFileBytes)
	if n > MaxDigestCacheFiles {
		return nil, errors.New("digest cache record too large")
	}
	out := make(map[string]*found, n)
	// Found entries are allocated together: they live as long as the scan
	// that reads the record.
	all := make([]found, n)
	// The names are kept in one string, cut after the loop: they are only
	// the map's keys.
	var names strings.Builder
	names.Grow(min(len(d.data), 64*n))
	var name []byte
	ends := make([]int, n)
	for i := range all {
		if name = d.name(name); d.err != nil {
			break
		}
		names.Write(name)
		ends[i] = names.Len()
		f := &all[i]
		f.stat = fileStat{ok: true, dev: d.uint(), ino: d.uint()}
		f.size = d.int()
		f.stat.size = f.size
		f.stat.mtimeNs, f.stat.ctimeNs, f.hashedAt = d.int(), d.int(), d.int()
		if len(d.data) < len(f.digest) {
			d.fail()
			break
		}
		d.data = d.data[copy(f.digest[:], d.data):]
		flags := d.uint()
		f.text, f.archive, f.linted = flags&flagText != 0, flags&flagArchive != 0, flags&flagLinted != 0
		if flags&flagScript != 0 {
			f.script = &skill.Script{Interpreter: internInterpreter(d.bytes()), PEP723: flags&flagPEP723 != 0}
		}
		if k := d.count(minFindingBytes); k > 0 {
			f.findings = make([]lint.Finding, k)
			for j := range f.findings {
				fd := &f.findings[j]
				fd.Rule = d.str()
				fd.Severity = lint.Severity(d.small())
				fd.Path = d.str()
				fd.Line, fd.Column = d.small(), d.small()
				fd.Message = d.str()
			}
		}
		if flags&flagMD != 0 {
			f.md = readSkillMD(d)
		}
		if d.err != nil {
			break
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	blob, start := names.String(), 0
	for i := range all {
		all[i].name = blob[start:ends[i]]
		start = ends[i]
		out[all[i].name] = &all[i]
	}
	return out, nil
}

// readListings reads the folder listings of a record, keyed by folder.
// Their names are taken from one string: the listings live as long as the
// scan that reads them.
func readListings(d *recordReader) (map[string]*listing, error) {
	n := d.count(minFolderBytes)
	out := make(map[string]*listing, n)
	var blob strings.Builder
	blob.Grow(len(d.data))
	type span struct{ start, end int }
	dirs := make([]span, n)
	all := make([]listing, n)
	var entryNames [][]span
	var name []byte
	for i := range all {
		if name = d.name(name); d.err != nil {
			break
		}
		dirs[i].start = blob.Len()
		blob.Write(name)
		dirs[i].end = blob.Len()
		l := &all[i]
		l.dir = fileStat{ok: true, dev: d.uint(), ino: d.uint()}
		l.dir.size, l.dir.mtimeNs, l.dir.ctimeNs, l.listedAt = d.int(), d.int(), d.int(), d.int()
		k := d.count(minEntryBytes)
		l.kinds = make([]byte, k)
		spans := make([]span, k)
		for j := range k {
			if len(d.data) == 0 {
				d.fail()
				break
			}
			l.kinds[j], d.data = d.data[0], d.data[1:]
			spans[j].start = blob.Len()
			blob.Write(d.bytes())
			spans[j].end = blob.Len()
		}
		entryNames = append(entryNames, spans)
		if d.err != nil {
			break
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	s := blob.String()
	for i := range all {
		l := &all[i]
		l.names = make([]string, len(entryNames[i]))
		for j, sp := range entryNames[i] {
			l.names[j] = s[sp.start:sp.end]
		}
		dir := s[dirs[i].start:dirs[i].end]
		if !cleanName(dir) || !validListing(l) {
			return nil, errRecordDamaged
		}
		out[dir] = l
	}
	return out, nil
}

func readSkillMD(d *recordReader) *skillMD {
	m := &skillMD{frontmatter: slices.Clone(d.bytes())}
	if k := d.count(minProblemBytes); k > 0 {
		m.problems = make([]skill.Problem, k)
		for j := range m.problems {
			p := &m.problems[j]
			p.Rule, p.Field, p.Message = d.str(), d.str(), d.str()
			p.Fatal = d.uint() != 0
		}
	}
	m.bodyOffset = d.small()
	m.name, m.description, m.category = d.str(), d.str(), d.str()
	m.tags, m.setup, m.chains = d.strs(), d.strs(), d.strs()
	m.stage, m.tier, m.devStatus = d.str(), d.str(), d.str()
	flags := d.uint()
	m.hasTier, m.hasDev, m.disabled = flags&flagHasTier != 0, flags&flagHasDev != 0, flags&flagDisabled != 0
	m.deps.Required, m.deps.Optional = d.strs(), d.strs()
	return m
}

// internInterpreter returns the interpreter name without allocating for
// the common ones.
func internInterpreter(b []byte) string {
	for _, s := range knownInterpreters {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

var knownInterpreters = []string{"python", "uv run", "bash", "sh", "node", "npx tsx", "zsh", "fish", "ruby", "perl", "php", "lua", "Rscript", "pwsh -File", "cmd /c"}

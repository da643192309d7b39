package catalog

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/binrec"
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
//	  script     string interpreter, if flagScript; then string binary
//	             format, if flagBinary
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
	// A file's flag again: the script is a compiled program.
	flagBinary
)

var errRecordDamaged = errors.New("digest cache record damaged")

// recordWriter writes a record: binrec's pieces, and the lists and
// prefix-compressed names of this format.
type recordWriter struct{ *binrec.Writer }

func (e recordWriter) strs(list []string) {
	e.Uint(uint64(len(list)))
	for _, s := range list {
		e.Str(s)
	}
}

// writeRecord writes the record of files, computed with the lint rule set
// fp, and of the folders of dirs at the positions order, to w. Both are
// sorted by name.
func writeRecord(w io.Writer, fp string, files []*found, dirs *folderTable, order []int) error {
	e := recordWriter{binrec.NewWriter(w)}
	e.Buf = append(e.Buf, digestCacheVersion+"\n"...)
	e.Str(fp)
	e.Uint(uint64(len(files)))
	prev := ""
	for _, f := range files {
		e.name(prev, f.name)
		prev = f.name
		e.Uint(f.stat.dev)
		e.Uint(f.stat.ino)
		e.Int(f.size)
		e.Int(f.stat.mtimeNs)
		e.Int(f.stat.ctimeNs)
		e.Int(f.hashedAt)
		e.Buf = append(e.Buf, f.digest[:]...)
		var flags uint
		for _, b := range []struct {
			on   bool
			flag uint
		}{{f.text, flagText}, {f.archive, flagArchive}, {f.linted, flagLinted}, {f.script != nil, flagScript},
			{f.script != nil && f.script.PEP723, flagPEP723}, {f.md != nil, flagMD},
			{f.script != nil && f.script.Binary != "", flagBinary}} {
			if b.on {
				flags |= b.flag
			}
		}
		e.Uint(uint64(flags))
		if f.script != nil {
			e.Str(f.script.Interpreter)
			if f.script.Binary != "" {
				e.Str(f.script.Binary)
			}
		}
		e.Uint(uint64(len(f.findings)))
		for _, fd := range f.findings {
			e.Str(fd.Rule)
			e.Int(int64(fd.Severity))
			e.Str(fd.Path)
			e.Int(int64(fd.Line))
			e.Int(int64(fd.Column))
			e.Str(fd.Message)
		}
		if m := f.md; m != nil {
			e.Str(string(m.frontmatter))
			e.Uint(uint64(len(m.problems)))
			for _, p := range m.problems {
				e.Str(p.Rule)
				e.Str(p.Field)
				e.Str(p.Message)
				e.Uint(uint64(boolFlag(p.Fatal, 1)))
			}
			e.Int(int64(m.bodyOffset))
			e.Str(m.name)
			e.Str(m.description)
			e.Str(m.category)
			e.strs(m.tags)
			e.strs(m.setup)
			e.strs(m.chains)
			e.Str(m.stage)
			e.Str(m.tier)
			e.Str(m.devStatus)
			e.Uint(uint64(boolFlag(m.hasTier, flagHasTier) | boolFlag(m.hasDev, flagHasDev) | boolFlag(m.disabled, flagDisabled)))
			e.strs(m.deps.Required)
			e.strs(m.deps.Optional)
		}
		e.FlushOver(48 << 10)
	}
	e.Uint(uint64(len(order)))
	prev = ""
	for _, i := range order {
		dir, r := dirs.dirs[i], &dirs.recs[i]
		e.name(prev, dir)
		prev = dir
		e.Uint(r.dev)
		e.Uint(r.ino)
		e.Int(r.size)
		e.Int(r.mtimeNs)
		e.Int(r.ctimeNs)
		e.Int(r.listedAt)
		lo, hi := dirs.entries(i)
		e.Uint(uint64(hi - lo))
		for j := lo; j < hi; j++ {
			e.Buf = append(e.Buf, dirs.kinds[j])
			e.Str(dirs.name(j))
		}
		e.FlushOver(48 << 10)
	}
	return e.Close()
}

// name writes s, which follows prev in sorted order: the bytes they
// share, then the rest.
func (e recordWriter) name(prev, s string) {
	shared := commonPrefix(prev, s)
	e.Uint(uint64(shared))
	e.Str(s[shared:])
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

// recordReader reads a record: binrec's pieces, and the lists and
// prefix-compressed names of this format.
type recordReader struct{ *binrec.Reader }

// small reads an integer that must fit an int of the platform, such as a
// line number or an offset.
func (d recordReader) small() int {
	v := d.Int()
	if v < 0 || v > math.MaxInt32 {
		d.Fail()
		return 0
	}
	return int(v)
}

// name reads a name written by recordWriter.name after prev, into prev's
// buffer.
func (d recordReader) name(prev []byte) []byte {
	shared := d.Uint()
	if shared > uint64(len(prev)) {
		d.Fail()
		return prev[:0]
	}
	return append(prev[:shared], d.Bytes()...)
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

func (d recordReader) strs() []string {
	n := d.Count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.Str()
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
	r, err := binrec.Open(data, errRecordDamaged)
	if err != nil {
		return cachedLib{}, err
	}
	d := recordReader{r}
	d.Take(len(magic))
	if d.Str() != fp {
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
	if d.Left() != 0 {
		return cachedLib{}, errRecordDamaged
	}
	return cachedLib{files: files, dirs: dirs}, nil
}

// readFiles reads the files of a record.
func readFiles(d recordReader) (*fileIndex, error) {
	n := d.Count(minFileBytes)
	if n > MaxDigestCacheFiles {
		return nil, errors.New("digest cache record too large")
	}
	// Found entries are allocated together: they live as long as the scan
	// that reads the record.
	all := make([]found, n)
	// The names are kept in one string, cut after the loop.
	var names strings.Builder
	names.Grow(min(d.Left(), 64*n))
	var name []byte
	ends := make([]int, n)
	for i := range all {
		if name = d.name(name); d.Err() != nil {
			break
		}
		names.Write(name)
		ends[i] = names.Len()
		f := &all[i]
		f.stat = fileStat{ok: true, dev: d.Uint(), ino: d.Uint()}
		f.size = d.Int()
		f.stat.size = f.size
		f.stat.mtimeNs, f.stat.ctimeNs, f.hashedAt = d.Int(), d.Int(), d.Int()
		copy(f.digest[:], d.Take(len(f.digest)))
		flags := d.Uint()
		f.text, f.archive, f.linted = flags&flagText != 0, flags&flagArchive != 0, flags&flagLinted != 0
		if flags&flagScript != 0 {
			f.script = &skill.Script{Interpreter: internInterpreter(d.Bytes()), PEP723: flags&flagPEP723 != 0}
			if flags&flagBinary != 0 {
				f.script.Binary = internInterpreter(d.Bytes())
			}
		}
		if k := d.Count(minFindingBytes); k > 0 {
			f.findings = make([]lint.Finding, k)
			for j := range f.findings {
				fd := &f.findings[j]
				fd.Rule = d.Str()
				fd.Severity = lint.Severity(d.small())
				fd.Path = d.Str()
				fd.Line, fd.Column = d.small(), d.small()
				fd.Message = d.Str()
			}
		}
		if flags&flagMD != 0 {
			f.md = readSkillMD(d)
		}
		if d.Err() != nil {
			break
		}
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	// The names outlive the scan in the files it reuses: kept in a string
	// of their size, not in the builder's guess at it.
	blob, start := strings.Clone(names.String()), 0
	list := make([]*found, n)
	for i := range all {
		all[i].name = blob[start:ends[i]]
		start = ends[i]
		list[i] = &all[i]
	}
	return newFileIndex(list), nil
}

// readListings reads the folder listings of a record. The table lives as
// long as the scan that reads it: the scan's own table copies what it
// keeps.
func readListings(d recordReader) (*folderTable, error) {
	n := d.Count(minFolderBytes)
	b := newTableBuilder(nil)
	b.t.dirs = make([]string, 0, n)
	b.t.recs = make([]folderRec, 0, n)
	b.names = make([]byte, 0, d.Left())
	// The folders' names are cut from one string after the loop.
	var dirNames []byte
	dirEnds := make([]int, 0, n)
	var name []byte
	for range n {
		if name = d.name(name); d.Err() != nil {
			break
		}
		dirNames = append(dirNames, name...)
		dirEnds = append(dirEnds, len(dirNames))
		id := fileStat{ok: true, dev: d.Uint(), ino: d.Uint()}
		id.size, id.mtimeNs, id.ctimeNs = d.Int(), d.Int(), d.Int()
		listedAt := d.Int()
		for range d.Count(minEntryBytes) {
			kind := d.Take(1)
			entry := d.Bytes()
			if d.Err() != nil {
				break
			}
			b.names = append(b.names, entry...)
			b.t.ends = append(b.t.ends, uint32(len(b.names)))
			b.t.kinds = append(b.t.kinds, kind[0])
		}
		b.t.recs = append(b.t.recs, newFolderRec(id, listedAt, len(b.t.ends)))
		if d.Err() != nil {
			break
		}
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	blob, start := string(dirNames), 0
	for _, end := range dirEnds {
		b.t.dirs = append(b.t.dirs, blob[start:end])
		start = end
	}
	t := b.build()
	if n > 0 && (t == nil || !t.valid()) {
		return nil, errRecordDamaged
	}
	return t, nil
}

func readSkillMD(d recordReader) *skillMD {
	m := &skillMD{frontmatter: slices.Clone(d.Bytes())}
	if k := d.Count(minProblemBytes); k > 0 {
		m.problems = make([]skill.Problem, k)
		for j := range m.problems {
			p := &m.problems[j]
			p.Rule, p.Field, p.Message = d.Str(), d.Str(), d.Str()
			p.Fatal = d.Uint() != 0
		}
	}
	m.bodyOffset = d.small()
	m.name, m.description, m.category = d.Str(), d.Str(), d.Str()
	m.tags, m.setup, m.chains = d.strs(), d.strs(), d.strs()
	m.stage, m.tier, m.devStatus = d.Str(), d.Str(), d.Str()
	flags := d.Uint()
	m.hasTier, m.hasDev, m.disabled = flags&flagHasTier != 0, flags&flagHasDev != 0, flags&flagDisabled != 0
	m.deps.Required, m.deps.Optional = d.strs(), d.strs()
	return m
}

// internInterpreter returns the interpreter name (or binary format)
// without allocating for the common ones.
func internInterpreter(b []byte) string {
	for _, s := range knownInterpreters {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

var knownInterpreters = []string{"python", "uv run", "bash", "sh", "node", "npx tsx", "zsh", "fish", "ruby", "perl", "php", "lua", "Rscript", "pwsh -File", "cmd /c",
	"", "ELF", "Mach-O", "PE", "WebAssembly"}

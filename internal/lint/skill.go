package lint

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// Skill-level checks: the SKILL.md rules, the SEP-2640 limits, archives and
// symlinks. `skills-mcp lint` runs them; the catalog makes its own serving
// decisions and may use them for its labels.

// SEP-2640 per-skill limits.
const (
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
)

// SkillMD checks the SKILL.md of a skill whose folder is named folder: the
// frontmatter must parse and pass skill.Validate (unknown fields reported at
// Info, fatal problems and compatibility's (F11) at Error, other non-fatal
// problems at Warning), and the
// name must equal folder (skipped when folder is ""). Findings have Path
// "SKILL.md". The risk rules are File's, not SkillMD's.
func SkillMD(folder string, data []byte) []Finding {
	c := collector{path: "SKILL.md"}
	doc, err := skill.Parse(data)
	if err != nil {
		line := 1
		var pe *skill.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			line = pe.Line
		}
		msg := strings.TrimPrefix(err.Error(), "skill: ")
		if errors.Is(err, skill.ErrNoFrontmatter) || errors.Is(err, skill.ErrUnterminated) {
			line = 1
		}
		c.add(Finding{Rule: RuleSkillFrontmatter, Severity: Error, Line: line, Column: 1, Message: msg, Excerpt: lineExcerpt(data, line)})
		return c.result()
	}
	lines := newFieldLines(data, doc.BodyOffset)
	for _, p := range skill.Validate(doc.Frontmatter, &skill.ValidateOptions{UnknownFields: true}) {
		rule := RuleSkillFrontmatter
		if p.Field == "name" {
			rule = RuleSkillName
		}
		sev := Warning
		switch {
		case p.Fatal:
			sev = Error
		case p.Rule == "F11":
			// The server serves such a skill, but the specification
			// forbids it (a string of 1 to 500 characters), and the
			// reference validator refuses it: an author fixes it.
			sev = Error
		case p.Rule == "F14":
			sev = Info
		}
		if c.full(rule, sev, false) {
			c.add(Finding{Rule: rule, Severity: sev}) // counted only
			continue
		}
		msg := p.Message
		if p.Field != "" {
			msg = p.Field + ": " + msg
		}
		line := lines.of(p.Field)
		c.add(Finding{Rule: rule, Severity: sev, Line: line, Column: 1, Message: "[" + p.Rule + "] " + msg, Excerpt: lines.excerpt(line)})
	}
	if name := doc.Frontmatter.Name(); folder != "" && name != "" && skill.CheckName(name) == nil && name != folder {
		line := lines.of("name")
		c.add(Finding{Rule: RuleSkillName, Severity: Error, Line: line, Column: 1,
			Message: fmt.Sprintf("[F8] name %q differs from its folder name %q; rename one so they match", name, folder),
			Excerpt: lines.excerpt(line)})
	}
	return c.result()
}

var reFieldKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^["']?([^\s:"'#]+)["']?\s*:`) })

// fieldLines places a frontmatter's problems on their lines. It reads the
// frontmatter's lines once: a frontmatter is untrusted, and one of 6,000
// unknown keys took 12 s when each problem searched from the top.
type fieldLines struct {
	data   []byte
	starts []int          // offset of each line of the frontmatter
	keys   map[string]int // top-level key → its first line (1-based)
}

// newFieldLines indexes the lines of data before fmEnd.
func newFieldLines(data []byte, fmEnd int) *fieldLines {
	l := &fieldLines{data: data, keys: map[string]int{}}
	end := min(fmEnd, len(data))
	for off := 0; off < end; {
		l.starts = append(l.starts, off)
		n := bytes.IndexByte(data[off:], '\n')
		if n < 0 {
			n = len(data) - off
		}
		if m := reFieldKey().FindSubmatch(data[off : off+n]); m != nil {
			if _, ok := l.keys[string(m[1])]; !ok {
				l.keys[string(m[1])] = len(l.starts)
			}
		}
		off += n + 1
	}
	return l
}

// of returns the line of the top-level key of field ("metadata.x" looks
// for "metadata"), or 1.
func (l *fieldLines) of(field string) int {
	key, _, _ := strings.Cut(field, ".")
	if line, ok := l.keys[key]; ok && key != "" {
		return line
	}
	return 1
}

// excerpt returns the excerpt of line n (1-based) of the frontmatter.
func (l *fieldLines) excerpt(n int) string {
	if n < 1 || n > len(l.starts) {
		return lineExcerpt(l.data, n)
	}
	line := l.data[l.starts[n-1]:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return excerpt(bytes.TrimSuffix(line, []byte("\r")), 0, 0, false)
}

// lineExcerpt returns the excerpt of a whole line (1-based).
func lineExcerpt(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	data = bytes.TrimSuffix(data, []byte("\r"))
	return excerpt(data, 0, 0, false)
}

// Limits checks a skill's file count and total size against the SEP-2640
// limits (MaxSkillFiles, MaxSkillBytes). Findings have Path ".".
func Limits(files int, size int64) []Finding {
	var out []Finding
	if files > MaxSkillFiles {
		out = append(out, Finding{Rule: RuleSkillLimits, Severity: Error, Path: ".",
			Message: fmt.Sprintf("%d files exceed the SEP-2640 limit of %d files per skill", files, MaxSkillFiles)})
	}
	if size > MaxSkillBytes {
		out = append(out, Finding{Rule: RuleSkillLimits, Severity: Error, Path: ".",
			Message: fmt.Sprintf("%.1f MiB exceed the SEP-2640 limit of 16 MiB per skill", float64(size)/(1<<20))})
	}
	return out
}

// Archive returns a skill-archive finding when the file at p (relative to
// the skill root) is an archive, by name or by content, as the catalog
// decides it (skill.SniffArchive): an office document or e-book is a zip
// but no archive. data is the whole file, since a document is told from an
// archive by its entries. It returns nil otherwise.
func Archive(p string, data []byte) *Finding {
	why, ok := skill.SniffArchive(p, data)
	if !ok {
		return nil
	}
	if !strings.HasPrefix(why, "named ") {
		why += " signature"
	}
	return &Finding{Rule: RuleSkillArchive, Severity: Error, Path: p,
		Message: fmt.Sprintf("archive inside the skill (%s); its content cannot be reviewed", why)}
}

// Symlink returns a symlink-escape finding when the symlink at p (relative
// to the skill root, slash-separated) points outside the skill: target (as
// returned by os.Readlink) is absolute, or climbs above the skill root once
// joined to the link's folder. It returns nil for a target inside the
// skill. Backslashes count as separators, as a Windows host reads them.
func Symlink(p, target string) *Finding {
	t := strings.ReplaceAll(target, `\`, "/")
	abs := strings.HasPrefix(t, "/") || len(t) >= 2 && t[1] == ':' || strings.HasPrefix(t, "~")
	joined := path.Join(path.Dir(p), t)
	if !abs && joined != ".." && !strings.HasPrefix(joined, "../") {
		return nil
	}
	return &Finding{Rule: RuleSymlinkEscape, Severity: Error, Path: p,
		Message: fmt.Sprintf("symlink to %q points outside the skill", escapeText(truncateRunes(target, 100)))}
}

// ArchivePath returns a zip-path finding when name, an entry name read from
// an archive, is unsafe to extract: absolute, with a drive letter or a
// backslash, or climbing out with "..". It returns nil for a safe name.
func ArchivePath(name string) *Finding {
	bad := name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) ||
		len(name) >= 2 && name[1] == ':' || name == ".." || strings.HasPrefix(name, "../") ||
		strings.Contains(name, "/../") || strings.HasSuffix(name, "/..")
	if !bad {
		return nil
	}
	return &Finding{Rule: RuleZipPath, Severity: Error, Path: escapeText(truncateRunes(name, 200)),
		Message: fmt.Sprintf("zip entry %q would be extracted outside the target folder", escapeText(truncateRunes(name, 100)))}
}

// RefusedZip is the finding for a zip the server refuses whole: entry is
// the offending entry name ("" when the problem is the archive's), reason
// the server's explanation, and badPath whether the entry's name is what
// is wrong (reported as zip-path, the rest as zip-refused).
func RefusedZip(entry, reason string, badPath bool) Finding {
	rule := RuleZipRefused
	if badPath {
		rule = RuleZipPath
	}
	msg := "the server refuses the whole zip, so none of its skills is served: " + escapeText(truncateRunes(reason, 300))
	if entry != "" {
		msg = fmt.Sprintf("entry %q: %s", escapeText(truncateRunes(entry, 100)), msg)
	}
	return Finding{Rule: rule, Severity: Error, Path: escapeText(truncateRunes(entry, 200)), Message: msg}
}

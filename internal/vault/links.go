package vault

import (
	"regexp"
	"strings"
	"sync"
)

// refRe finds, in one left-to-right pass, the references a step can make to
// a skill: a wiki link or embed (group 1 is "!" for an embed, group 2 the
// inside of the brackets), a {skills.root}/<name> path (group 3) and a
// <name>/scripts/ path (group 4). Go's regexp is linear, so a hostile body
// costs no more than its length.
var refRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(!?)\[\[([^\[\]\n]*)\]\]|\{skills\.root\}/([A-Za-z0-9._-]+)|([a-z0-9][a-z0-9-]*)/scripts/`)
})

// embedRe matches one embed; group 1 is the inside of the brackets.
var embedRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`!\[\[([^\[\]\n]*)\]\]`) })

// Embeds returns the targets of the ![[target]] and ![[target|alias]]
// embeds in body, in order of first appearance and without duplicates. A
// target is returned as written, without its alias or #heading part and
// without surrounding spaces. Embeds inside fenced code blocks are not
// embeds (Obsidian shows them as text) and are left out, as are empty
// targets such as ![[#heading]].
func Embeds(body string) []string {
	if !strings.Contains(body, "![[") {
		return []string{}
	}
	body = normalizeNewlines(body)
	out := []string{}
	seen := map[string]bool{}
	var f fence
	for line := range strings.Lines(body) {
		line = strings.TrimRight(line, "\r\n")
		if f.step(line) {
			continue
		}
		if !strings.Contains(line, "![[") {
			continue
		}
		for _, m := range embedRe().FindAllStringSubmatch(line, -1) {
			t := linkTarget(m[1])
			if t == "" || seen[t] {
				continue
			}
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// linkTarget returns the note or file a wiki link points to, given the
// text between its brackets: the part before "|" (the alias) and before "#"
// (a heading or block reference), trimmed. A backslash before the pipe, as
// written inside markdown tables, is dropped too.
func linkTarget(inner string) string {
	if i := strings.IndexByte(inner, '|'); i >= 0 {
		inner = inner[:i]
	}
	if i := strings.IndexByte(inner, '#'); i >= 0 {
		inner = inner[:i]
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(inner), `\`))
}

// skillMDFolder reports whether target names a SKILL.md file
// ("cro/SKILL.md", "skills/cro/SKILL", matched without regard to case) and
// returns the folder right before it, or "" if there is none.
func skillMDFolder(target string) (folder string, ok bool) {
	t := strings.TrimSuffix(target, "/")
	i := strings.LastIndexByte(t, '/')
	last := t[i+1:]
	if !strings.EqualFold(last, "SKILL.md") && !strings.EqualFold(last, "SKILL") {
		return "", false
	}
	if i < 0 {
		return "", true
	}
	dir := t[:i]
	return dir[strings.LastIndexByte(dir, '/')+1:], true
}

// linkedSkills appends to out the served skills that text refers to, in
// order of first reference, skipping the names in seen and adding those it
// appends. It recognises [[skill]], [[skill|alias]],
// [[skill/SKILL.md|alias]], [[path/skill/SKILL.md]], {skills.root}/skill/...
// and skill/scripts/...; embeds (![[...]]) and links to anything that is
// not a served skill are ignored. A caller can feed a step line by line,
// with the same seen set.
func linkedSkills(text string, served func(string) bool, seen map[string]bool, out []string) []string {
	if !mayLink(text) {
		return out
	}
	for _, m := range refRe().FindAllStringSubmatchIndex(text, -1) {
		var name string
		switch {
		case m[2] >= 0 && m[3] > m[2]: // "!": an embed, never a skill
			continue
		case m[4] >= 0:
			t := linkTarget(text[m[4]:m[5]])
			if folder, ok := skillMDFolder(t); ok {
				name = folder
			} else {
				name = t
			}
		case m[6] >= 0:
			name = text[m[6]:m[7]]
		case m[8] >= 0:
			// The name must start at a word boundary: in "xcro/scripts/"
			// the skill is not "cro".
			if s := m[8]; s > 0 && isNameByte(text[s-1]) {
				continue
			}
			name = text[m[8]:m[9]]
		}
		if name == "" || seen[name] || !served(name) {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// mayLink reports whether text can hold a reference linkedSkills looks
// for; most lines cannot, and this check is cheaper than the regexp.
func mayLink(text string) bool {
	return strings.Contains(text, "[[") || strings.Contains(text, "/scripts/") || strings.Contains(text, "{skills.root}/")
}

// isNameByte reports whether b can be part of a path segment, so that a
// match starting right after it does not start at a word boundary.
func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.'
}

// validSkillName reports whether s is a well-formed skill name: 1 to 64
// lowercase letters, digits and hyphens, not starting or ending with a
// hyphen and without two hyphens in a row.
func validSkillName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// fence tracks fenced code blocks (``` or ~~~, any indentation) while a
// document is read line by line.
type fence struct {
	ch byte // 0 outside a fence
	n  int  // length of the opening run
}

// step advances the tracker over line and reports whether the line belongs
// to a fenced block, its opening and closing lines included.
func (f *fence) step(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if f.ch != 0 {
		if n := runOf(t, f.ch); n >= f.n && strings.TrimSpace(t[n:]) == "" {
			f.ch = 0
		}
		return true
	}
	for _, ch := range []byte{'`', '~'} {
		n := runOf(t, ch)
		if n < 3 {
			continue
		}
		// A backtick fence's info string cannot hold a backtick; such a
		// line is inline code, not a fence.
		if ch == '`' && strings.IndexByte(t[n:], '`') >= 0 {
			return false
		}
		f.ch, f.n = ch, n
		return true
	}
	return false
}

// runOf returns how many times ch repeats at the start of s.
func runOf(s string, ch byte) int {
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	return n
}

// headingOf returns the level (1 to 6) and text of an ATX heading line, or
// level 0. Up to three spaces of indentation are allowed, "#" must be
// followed by a space or the end of the line (so "#tag" is a tag, not a
// heading), and closing hashes are dropped.
func headingOf(line string) (level int, text string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, ""
	}
	n := runOf(t, '#')
	if n == 0 || n > 6 {
		return 0, ""
	}
	rest := t[n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, ""
	}
	text = strings.TrimSpace(rest)
	if s := strings.TrimRight(text, "#"); s != text && (s == "" || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		text = strings.TrimSpace(s)
	}
	return n, text
}

// normalizeNewlines turns CRLF and lone CR line breaks (old Mac files, or a
// stray CR mid-line) into LF, so that no parsed field carries a CR.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

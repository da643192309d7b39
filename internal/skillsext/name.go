package skillsext

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Rules a file or folder name can break, as CheckName reports them in
// NameError.Rule. They are phrases, so that a caller can group withheld
// names by rule ("3 files whose name contains a backslash").
const (
	RuleEmpty     = "is empty"
	RuleDot       = `is "." or ".."`
	RuleSlash     = "contains a slash"
	RuleBackslash = "contains a backslash"
	RuleControl   = "contains a control character"
	RuleUTF8      = "is not valid UTF-8"
	RuleInvisible = "contains an invisible or bidirectional formatting character"
	RuleColon     = "contains a colon (a drive letter or a data stream on Windows)"
)

// NameError says why a name cannot be part of a skill:// URI.
type NameError struct {
	// Name is the name as given, possibly invalid UTF-8.
	Name string
	// Rule is one of the Rule constants.
	Rule string
	// Rune is the offending character, when Rule names one.
	Rune rune
}

// Error returns the name, quoted in ASCII so that the offending character
// shows as an escape rather than acting on a terminal, and the rule.
func (e *NameError) Error() string {
	name := e.Name
	if len(name) > 200 {
		name = name[:200] + "…"
	}
	msg := fmt.Sprintf("name %s %s", strconv.QuoteToASCII(name), e.Rule)
	if e.Rune != 0 || e.Rule == RuleControl {
		msg += fmt.Sprintf(" (%U)", e.Rune)
	}
	return msg
}

// CheckName reports whether name, one file or folder name, can be a segment
// of a skill:// URI that ParseURI accepts and that means the same name to
// every reader. It is the one rule both sides use: the catalog withholds a
// file or folder whose name breaks it, and ParseURI refuses a URI with a
// segment that breaks it, escaped or not, so that everything listed parses
// and everything refused is never listed.
//
// A name is refused when it is empty, "." or "..", holds a slash, a
// backslash (a separator on Windows), a colon (which names a drive or an
// alternate data stream on Windows: a client writing "notes.md:x" there
// writes a hidden stream of notes.md), a control character (C0, DEL or C1),
// a line or paragraph separator, or an invisible formatting character of
// Unicode category Cf (bidirectional overrides and isolates such as
// U+202E, zero-width spaces, the byte-order mark, tag characters), or is
// not valid UTF-8. Such names display as something they are not (a
// right-to-left override turns "evil\u202Etxt.sh" into "evilhs.txt"), or
// mean different files on different systems. The zero-width non-joiner and
// joiner (U+200C, U+200D) are allowed: Persian and Indic words, and emoji
// sequences, need them to be spelled at all.
//
// The result is nil or a *NameError.
func CheckName(name string) error {
	switch name {
	case "":
		return &NameError{Name: name, Rule: RuleEmpty}
	case ".", "..":
		return &NameError{Name: name, Rule: RuleDot}
	}
	if r, rule := badRune(name); rule != "" {
		return &NameError{Name: name, Rule: rule, Rune: r}
	}
	return nil
}

// badRune returns the first character of name that CheckName refuses, and
// the rule it breaks, or "" when there is none. ASCII takes one comparison
// a byte.
func badRune(name string) (rune, string) {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 || c == 0x7f:
				return rune(c), RuleControl
			case c == '\\':
				return 0, RuleBackslash
			case c == '/':
				return 0, RuleSlash
			case c == ':':
				return 0, RuleColon
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && n == 1 {
			return 0, RuleUTF8
		}
		i += n
		switch {
		case unicode.Is(unicode.Cc, r):
			return r, RuleControl
		case r == 0x200c || r == 0x200d:
			// Joiners spell words; see CheckName.
		case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
			return r, RuleInvisible
		}
	}
	return 0, ""
}

package skillsext

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// URI is a parsed skill:// URI: the part after "skill://" split into
// slash-separated segments. It does not know where the skill path ends and
// the file path begins; only a catalog does.
type URI struct {
	// Path is everything after "skill://", without a trailing slash, in
	// canonical form: percent-encoded as EscapePath encodes it.
	Path string
}

// MaxURILength bounds the URIs we parse; longer ones are refused before any
// work is done with them.
const MaxURILength = 4096

// ParseURI parses a skill:// URI. It refuses, with an error naming the
// problem: another scheme, an empty authority, userinfo or a port, a query or
// fragment, empty, "." or ".." segments, backslashes, NUL and other control
// characters, malformed percent-escapes and escapes of a slash, a backslash,
// a control character or a dot segment (an escape cannot smuggle a
// separator), invalid UTF-8 before or after decoding, a segment whose name
// CheckName refuses (invisible and bidirectional formatting characters
// among them), and URIs over MaxURILength. A trailing slash is refused too: directory URIs have none.
// The URI's Path is canonical: a file name with a space or a non-ASCII
// letter may come escaped or not, in either case of hex digits.
func ParseURI(s string) (URI, error) {
	if len(s) > MaxURILength {
		return URI{}, fmt.Errorf("URI is longer than %d bytes", MaxURILength)
	}
	rest, ok := strings.CutPrefix(s, Scheme+"://")
	if !ok {
		return URI{}, fmt.Errorf("%q is not a skill:// URI", s)
	}
	if !utf8.ValidString(rest) {
		return URI{}, errors.New("URI is not valid UTF-8")
	}
	if rest == "" {
		return URI{}, fmt.Errorf("%q has no skill path", s)
	}
	for _, r := range rest {
		switch {
		case r < 0x20 || r == 0x7f:
			return URI{}, fmt.Errorf("%q contains a control character", s)
		case r == '\\':
			return URI{}, fmt.Errorf("%q contains a backslash", s)
		case r == '?' || r == '#':
			return URI{}, fmt.Errorf("%q has a query or fragment", s)
		case r == '@':
			return URI{}, fmt.Errorf("%q contains userinfo or '@'", s)
		}
	}
	segs := strings.Split(rest, "/")
	if strings.Contains(segs[0], ":") {
		return URI{}, fmt.Errorf("%q has a port or ':' in its authority", s)
	}
	for i, seg := range segs {
		dec, err := unescape(seg)
		if err != nil {
			return URI{}, fmt.Errorf("%q: %v", s, err)
		}
		switch dec {
		case "":
			if i == len(segs)-1 {
				return URI{}, fmt.Errorf("%q ends with a slash", s)
			}
			return URI{}, fmt.Errorf("%q has an empty path segment", s)
		case ".", "..":
			return URI{}, fmt.Errorf("%q has a %q segment", s, seg)
		}
		// The rest of the name rule, on the decoded name: what the
		// catalog withholds is never reached by a URI either.
		if err := CheckName(dec); err != nil {
			return URI{}, fmt.Errorf("%q: %v", s, err)
		}
		segs[i] = dec
	}
	u := URI{Path: EscapePath(strings.Join(segs, "/"))}
	if len(u.String()) > MaxURILength {
		// Escaping grows a name up to three times: what parses must
		// parse again in its canonical form.
		return URI{}, fmt.Errorf("URI is longer than %d bytes once escaped", MaxURILength)
	}
	return u, nil
}

// EscapePath returns p, a slash-separated path of file or folder names, as
// the path of a skill:// URI: each byte other than the slashes and a path
// segment's unreserved and sub-delimiter characters (RFC 3986) is written
// %XX, with uppercase hex. ':' and '@' are escaped too, so that no segment
// reads as a port or userinfo. Names of letters, digits and "-._" come out
// unchanged.
func EscapePath(p string) string {
	n := 0
	for i := 0; i < len(p); i++ {
		if !pathByte[p[i]] {
			n++
		}
	}
	if n == 0 {
		return p
	}
	b := make([]byte, 0, len(p)+2*n)
	for i := 0; i < len(p); i++ {
		if c := p[i]; pathByte[c] {
			b = append(b, c)
		} else {
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return string(b)
}

// UnescapePath returns the names of the escaped path p (the path of a URI
// that ParseURI accepted, or part of one).
func UnescapePath(p string) (string, error) {
	if strings.IndexByte(p, '%') < 0 {
		return p, nil
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		dec, err := unescape(seg)
		if err != nil {
			return "", err
		}
		segs[i] = dec
	}
	return strings.Join(segs, "/"), nil
}

const upperHex = "0123456789ABCDEF"

// pathByte marks the bytes EscapePath keeps: unreserved, sub-delims and '/'.
var pathByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=/" {
		t[c] = true
	}
	return t
}()

// unescape decodes the %XX escapes of one segment. An escape must be
// whole and must not stand for a slash, a backslash or a control
// character; the result must be valid UTF-8.
func unescape(seg string) (string, error) {
	if strings.IndexByte(seg, '%') < 0 {
		return seg, nil
	}
	b := make([]byte, 0, len(seg))
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(seg) || unhex(seg[i+1]) < 0 || unhex(seg[i+2]) < 0 {
			return "", errors.New("malformed percent-escape")
		}
		d := byte(unhex(seg[i+1])<<4 | unhex(seg[i+2]))
		if d == '/' || d == '\\' || d < 0x20 || d == 0x7f {
			return "", fmt.Errorf("percent-escape %%%02X stands for a separator or control character", d)
		}
		b = append(b, d)
		i += 2
	}
	if !utf8.Valid(b) {
		return "", errors.New("percent-escapes do not decode to UTF-8")
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// String returns the URI in its canonical form.
func (u URI) String() string { return Scheme + "://" + u.Path }

// IsSkillFile reports whether the URI names a SKILL.md.
func (u URI) IsSkillFile() bool {
	return u.Path == SkillFile || strings.HasSuffix(u.Path, "/"+SkillFile)
}

// SkillPath returns the skill path of a SKILL.md URI (the URI path without
// "/SKILL.md"), or "" when the URI does not name a SKILL.md.
func (u URI) SkillPath() string {
	p, ok := strings.CutSuffix(u.Path, "/"+SkillFile)
	if !ok {
		return ""
	}
	return p
}

// SkillURI returns the SKILL.md URI of the skill at skillPath.
func SkillURI(skillPath string) string {
	return Scheme + "://" + EscapePath(skillPath) + "/" + SkillFile
}

// RootURI returns the directory URI of the skill root at skillPath.
func RootURI(skillPath string) string { return Scheme + "://" + EscapePath(skillPath) }

// FileURI returns the URI of the file at rel (slash-separated, relative to
// the skill root) in the skill at skillPath. Both are names, escaped here.
func FileURI(skillPath, rel string) string {
	if rel == "" || rel == "." {
		return RootURI(skillPath)
	}
	return Scheme + "://" + EscapePath(skillPath) + "/" + EscapePath(rel)
}

// Canonical returns the canonical form of uri (see ParseURI), or uri
// itself when it does not parse: lookups by URI use it, so that a client
// may send a name escaped or not.
func Canonical(uri string) string {
	u, err := ParseURI(uri)
	if err != nil {
		return uri
	}
	return u.String()
}

// RelPath returns the names of the path of uri below the directory URI
// root, unescaped ("refs/my notes.md" for skill://x/refs/my%20notes.md
// below skill://x), and whether uri is below root.
func RelPath(uri, root string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, root+"/")
	if !ok {
		return "", false
	}
	names, err := UnescapePath(rest)
	return names, err == nil
}

// Within reports whether uri names the skill root at skillPath or a
// resource inside it.
func Within(uri, skillPath string) bool {
	root := RootURI(skillPath)
	return uri == root || strings.HasPrefix(uri, root+"/")
}

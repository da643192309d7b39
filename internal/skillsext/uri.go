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
	// Path is everything after "skill://", without a trailing slash.
	Path string
}

// MaxURILength bounds the URIs we parse; longer ones are refused before any
// work is done with them.
const MaxURILength = 4096

// ParseURI parses a skill:// URI. It refuses, with an error naming the
// problem: another scheme, an empty authority, userinfo or a port, a query or
// fragment, empty, "." or ".." segments, backslashes, NUL and other control
// characters, percent-encoding (skill paths are plain names, so an escape can
// only be an attempt to smuggle a separator), invalid UTF-8, and URIs over
// MaxURILength. A trailing slash is refused too: directory URIs have none.
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
		case r == '%':
			return URI{}, fmt.Errorf("%q contains percent-encoding", s)
		case r == '@':
			return URI{}, fmt.Errorf("%q contains userinfo or '@'", s)
		}
	}
	segs := strings.Split(rest, "/")
	if strings.Contains(segs[0], ":") {
		return URI{}, fmt.Errorf("%q has a port or ':' in its authority", s)
	}
	for i, seg := range segs {
		switch seg {
		case "":
			if i == len(segs)-1 {
				return URI{}, fmt.Errorf("%q ends with a slash", s)
			}
			return URI{}, fmt.Errorf("%q has an empty path segment", s)
		case ".", "..":
			return URI{}, fmt.Errorf("%q has a %q segment", s, seg)
		}
	}
	return URI{Path: rest}, nil
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
	return Scheme + "://" + skillPath + "/" + SkillFile
}

// RootURI returns the directory URI of the skill root at skillPath.
func RootURI(skillPath string) string { return Scheme + "://" + skillPath }

// FileURI returns the URI of the file at rel (slash-separated, relative to
// the skill root) in the skill at skillPath.
func FileURI(skillPath, rel string) string {
	if rel == "" || rel == "." {
		return RootURI(skillPath)
	}
	return Scheme + "://" + skillPath + "/" + rel
}

// Within reports whether uri names the skill root at skillPath or a
// resource inside it.
func Within(uri, skillPath string) bool {
	root := RootURI(skillPath)
	return uri == root || strings.HasPrefix(uri, root+"/")
}

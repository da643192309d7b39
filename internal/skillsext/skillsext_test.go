package skillsext_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func TestParseURI(t *testing.T) {
	// Input → canonical path: names escaped as EscapePath escapes them,
	// whether they came escaped or not.
	good := map[string]string{
		"skill://git-workflow/SKILL.md":         "git-workflow/SKILL.md",
		"skill://acme/billing/refunds/SKILL.md": "acme/billing/refunds/SKILL.md",
		"skill://pdf/templates/regional/eu.md":  "pdf/templates/regional/eu.md",
		"skill://pdf":                           "pdf",
		"skill://.claude/skills/x/SKILL.md":     ".claude/skills/x/SKILL.md",
		"skill://ünïcode/SKILL.md":              "%C3%BCn%C3%AFcode/SKILL.md",
		"skill://%c3%bcn%C3%afcode/SKILL.md":    "%C3%BCn%C3%AFcode/SKILL.md",
		"skill://tool/refs/my notes.md":         "tool/refs/my%20notes.md",
		"skill://tool/refs/my%20notes.md":       "tool/refs/my%20notes.md",
		"skill://tool/refs/%41+b[1].md":         "tool/refs/A+b%5B1%5D.md",
		"skill://tool/refs/a%40b.md":            "tool/refs/a%40b.md",
		"skill://tool/refs/100%25.md":           "tool/refs/100%25.md",
		// Joiners spell words and emoji; they are not refused.
		"skill://tool/refs/\u0645\u06cc\u200c\u062e.md": "tool/refs/%D9%85%DB%8C%E2%80%8C%D8%AE.md",
		"skill://tool/refs/%E2%80%8D.md":                "tool/refs/%E2%80%8D.md",
	}
	for in, want := range good {
		u, err := skillsext.ParseURI(in)
		if err != nil || u.Path != want || u.String() != "skill://"+want {
			t.Errorf("ParseURI(%q) = %+v, %v; want path %q", in, u, err, want)
		}
	}
	bad := []string{
		"", "skill://", "skill:///x", "file:///etc/passwd", "https://x/SKILL.md", "skill:x/SKILL.md",
		"skill://a/../b/SKILL.md", "skill://a/./SKILL.md", "skill://a//SKILL.md", "skill://a/",
		"skill://a\\b/SKILL.md", "skill://a/b\x00/SKILL.md", "skill://a/b?x=1", "skill://a/b#frag",
		"skill://user@host/SKILL.md", "skill://host:80/SKILL.md", "skill://a/%2e%2e/SKILL.md",
		"skill://a/\xff/SKILL.md", "skill://" + strings.Repeat("a", skillsext.MaxURILength),
		// Escapes that would hide a separator, a control character or a dot
		// segment, malformed ones, and ones that do not decode to UTF-8.
		"skill://a/%2F/SKILL.md", "skill://a/b%2fc.md", "skill://a/%5C.md", "skill://a/%00.md",
		"skill://a/%0A.md", "skill://a/%2E/SKILL.md", "skill://a/%2E%2E/SKILL.md", "skill://a/%zz.md",
		"skill://a/%4", "skill://a/x%", "skill://a/%FF.md", "skill://a/%C3.md",
		// Names the catalog withholds (CheckName), raw or escaped: C1
		// controls, bidirectional overrides and isolates, zero-width
		// spaces, the byte-order mark, tag characters, line separators.
		"skill://a/b\u0085.md", "skill://a/%C2%85.md", "skill://a/evil\u202etxt.sh", "skill://a/evil%E2%80%AEtxt.sh",
		"skill://a/%E2%81%A6x", "skill://a\u200b/SKILL.md", "skill://a/%EF%BB%BFx.md", "skill://a/%F3%A0%80%81.md",
		"skill://a/x\u2028y", "skill://a/%C2%AD.md",
		// A colon, which names a drive or a data stream on Windows: the
		// one name rule of serving and pull.
		"skill://a/b%3Ac.md", "skill://tool/refs/a%40b%3Ac.md", "skill://a/C:/x.md",
		// Short enough as sent, too long once escaped.
		"skill://a/" + strings.Repeat(" ", 2000),
	}
	for _, in := range bad {
		if u, err := skillsext.ParseURI(in); err == nil {
			t.Errorf("ParseURI(%q) = %+v, want an error", in, u)
		}
	}
}

func TestSkillPath(t *testing.T) {
	u, _ := skillsext.ParseURI("skill://acme/billing/refunds/SKILL.md")
	if !u.IsSkillFile() || u.SkillPath() != "acme/billing/refunds" {
		t.Errorf("SkillPath = %q", u.SkillPath())
	}
	u, _ = skillsext.ParseURI("skill://acme/billing/refunds/notes.md")
	if u.IsSkillFile() || u.SkillPath() != "" {
		t.Errorf("non-SKILL.md URI treated as a skill: %q", u.SkillPath())
	}
	if !skillsext.Within("skill://a/b/c.md", "a/b") || skillsext.Within("skill://a/bc/d.md", "a/b") || !skillsext.Within("skill://a/b", "a/b") {
		t.Error("Within is wrong")
	}
	if got := skillsext.FileURI("a/b", "refs/x.md"); got != "skill://a/b/refs/x.md" {
		t.Errorf("FileURI = %s", got)
	}
	if got := skillsext.FileURI("My Tools/b", "refs/café notes.md"); got != "skill://My%20Tools/b/refs/caf%C3%A9%20notes.md" {
		t.Errorf("FileURI of names to escape = %s", got)
	}
}

func TestEscapePath(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name-1.2_x~":     "plain/name-1.2_x~",
		"sub-delims!$&'()*+,;=": "sub-delims!$&'()*+,;=",
		"a b/c:d@e%f[g]h?i#j":   "a%20b/c%3Ad%40e%25f%5Bg%5Dh%3Fi%23j",
		"ü":                     "%C3%BC",
	} {
		got := skillsext.EscapePath(in)
		if got != want {
			t.Errorf("EscapePath(%q) = %q, want %q", in, got, want)
		}
		if back, err := skillsext.UnescapePath(got); err != nil || back != in {
			t.Errorf("UnescapePath(%q) = %q, %v; want %q", got, back, err, in)
		}
	}
}

func TestCursor(t *testing.T) {
	for _, key := range []string{"skill://a/SKILL.md", "x", "ü/ß"} {
		got, err := skillsext.DecodeCursor(skillsext.EncodeCursor(key))
		if err != nil || got != key {
			t.Errorf("round trip %q = %q, %v", key, got, err)
		}
	}
	if k, err := skillsext.DecodeCursor(""); err != nil || k != "" {
		t.Errorf("empty cursor = %q, %v", k, err)
	}
	for _, c := range []string{"!!", "aGVsbG8", strings.Repeat("A", 20000), skillsext.EncodeCursor("")} {
		if _, err := skillsext.DecodeCursor(c); err == nil {
			t.Errorf("DecodeCursor(%.20q) accepted", c)
		}
	}
}

func TestResourcesJSON(t *testing.T) {
	if _, err := json.Marshal(skillsext.Skill{URI: "skill://a/SKILL.md", Frontmatter: json.RawMessage(`{}`)}); err == nil {
		t.Error("an entry without resources must not marshal")
	}
	b, _ := json.Marshal(skillsext.Resources{Dynamic: true})
	if string(b) != `"dynamic"` {
		t.Errorf("dynamic = %s", b)
	}
	for in, ok := range map[string]bool{`"dynamic"`: true, `[]`: true, `[{"uri":"u","digest":"d","size":1}]`: true, `null`: false, `"static"`: false, `{}`: false, `3`: false} {
		var r skillsext.Resources
		err := json.Unmarshal([]byte(in), &r)
		if (err == nil) != ok {
			t.Errorf("Unmarshal(%s) error = %v, want ok=%v", in, err, ok)
		}
		if in == "null" && (err == nil || !strings.Contains(err.Error(), "null")) {
			t.Errorf("Unmarshal(null) error = %v, want it to say null", err)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"skill://a/SKILL.md", "skill://a/b/../c", "skill://x:1/y", "skill://ü/%41", "skill:///", "skill://a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := skillsext.ParseURI(s)
		if err != nil {
			return
		}
		// What parses is canonical: parsing it again gives it back, and
		// it is the escaped form of its names.
		if again, err := skillsext.ParseURI(u.String()); err != nil || again != u {
			t.Fatalf("canonical form %q of %q parses to %+v, %v", u.String(), s, again, err)
		}
		names, err := skillsext.UnescapePath(u.Path)
		if err != nil || skillsext.EscapePath(names) != u.Path {
			t.Fatalf("path %q of %q is not the escape of its names %q (%v)", u.Path, s, names, err)
		}
		// The names never hold a dot segment, a separator or a control
		// character, escaped or not.
		for seg := range strings.SplitSeq(names, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted segment %q in %q", seg, s)
			}
		}
		for _, r := range names {
			if r == '\\' || r < 0x20 || r == 0x7f {
				t.Fatalf("accepted %q in the names of %q", r, s)
			}
		}
		for seg := range strings.SplitSeq(names, "/") {
			if err := skillsext.CheckName(seg); err != nil {
				t.Fatalf("accepted a segment the name rule refuses in %q: %v", s, err)
			}
		}
		if strings.ContainsAny(u.Path, "?#") {
			t.Fatalf("accepted a query or fragment in %q", s)
		}
	})
}

func TestCheckName(t *testing.T) {
	for name, rule := range map[string]string{
		"":              "is empty",
		".":             `is "." or ".."`,
		"..":            `is "." or ".."`,
		"a/b":           "contains a slash",
		`a\b`:           "contains a backslash",
		"a\x00b":        "contains a control character",
		"tab\there":     "contains a control character",
		"del\x7f":       "contains a control character",
		"c1\u0085":      "contains a control character",
		"bad\xff":       "is not valid UTF-8",
		"\xed\xa0\x80":  "is not valid UTF-8", // a surrogate
		"evil\u202etxt": "contains an invisible or bidirectional formatting character",
		"\u2066iso":     "contains an invisible or bidirectional formatting character",
		"zw\u200bsp":    "contains an invisible or bidirectional formatting character",
		"\ufeffbom":     "contains an invisible or bidirectional formatting character",
		"tag\U000e0001": "contains an invisible or bidirectional formatting character",
		"line\u2028sep": "contains an invisible or bidirectional formatting character",
		"soft\u00adhy":  "contains an invisible or bidirectional formatting character",
	} {
		err := skillsext.CheckName(name)
		var ne *skillsext.NameError
		if !errors.As(err, &ne) || ne.Rule != rule {
			t.Errorf("CheckName(%+q) = %v; want rule %q", name, err, rule)
			continue
		}
		if msg := err.Error(); !utf8.ValidString(msg) || strings.ContainsFunc(msg, func(r rune) bool { return r > unicode.MaxASCII || unicode.IsControl(r) }) {
			t.Errorf("CheckName(%+q) message %q is not plain ASCII", name, msg)
		}
	}
	for _, name := range []string{"SKILL.md", ".env", "my notes.md", "café.md", "\u0645\u06cc\u200c\u062e", "\U0001F468\u200d\U0001F469", "100%.md", "a+b[1]#2?.md", "日本語.txt"} {
		if err := skillsext.CheckName(name); err != nil {
			t.Errorf("CheckName(%+q) = %v; want nil", name, err)
		}
	}
}

// FuzzCheckName checks that the name rule and the URI grammar agree both
// ways: a name CheckName accepts is, escaped, a URI segment that ParseURI
// accepts and gives back unchanged; a name it refuses makes every URI that
// holds it, escaped or raw, one that ParseURI refuses.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a.md", "my notes.md", "café", "a\\b", "a\x01", "\u202e", "\xff", ".", "", "\u200d", "\u0085", "100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.Contains(name, "/") {
			return // a separator, never one name
		}
		uri := "skill://s/" + skillsext.EscapePath(name) + "/x.md"
		u, err := skillsext.ParseURI(uri)
		if skillsext.CheckName(name) != nil {
			if err == nil {
				t.Fatalf("CheckName refuses %+q but ParseURI accepts %s", name, uri)
			}
			if u, err := skillsext.ParseURI("skill://s/" + name + "/x.md"); err == nil {
				t.Fatalf("CheckName refuses %+q but ParseURI accepts it raw, as %s", name, u)
			}
			return
		}
		if len(uri) > skillsext.MaxURILength {
			return
		}
		if err != nil || u.String() != uri {
			t.Fatalf("CheckName accepts %+q but ParseURI(%s) = %v, %v", name, uri, u, err)
		}
	})
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(skillsext.EncodeCursor("skill://a/SKILL.md"))
	f.Add("")
	f.Add("####")
	f.Fuzz(func(t *testing.T, c string) {
		key, err := skillsext.DecodeCursor(c)
		if err == nil && c != "" && skillsext.EncodeCursor(key) != c {
			// Base64 has no unique encoding for trailing bits; accept only
			// cursors that decode to a key.
			if key == "" {
				t.Fatalf("non-empty cursor %q decoded to the empty key", c)
			}
		}
	})
}

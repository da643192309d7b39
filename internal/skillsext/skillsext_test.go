package skillsext_test

import (
	"encoding/json"
	"strings"
	"testing"

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
		"skill://tool/refs/a%40b%3Ac.md":        "tool/refs/a%40b%3Ac.md",
		"skill://tool/refs/100%25.md":           "tool/refs/100%25.md",
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
		if strings.ContainsAny(u.Path, "?#") {
			t.Fatalf("accepted a query or fragment in %q", s)
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

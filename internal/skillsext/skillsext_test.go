package skillsext_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func TestParseURI(t *testing.T) {
	good := map[string]string{
		"skill://git-workflow/SKILL.md":         "git-workflow/SKILL.md",
		"skill://acme/billing/refunds/SKILL.md": "acme/billing/refunds/SKILL.md",
		"skill://pdf/templates/regional/eu.md":  "pdf/templates/regional/eu.md",
		"skill://pdf":                           "pdf",
		"skill://.claude/skills/x/SKILL.md":     ".claude/skills/x/SKILL.md",
		"skill://ünïcode/SKILL.md":              "ünïcode/SKILL.md",
	}
	for in, want := range good {
		u, err := skillsext.ParseURI(in)
		if err != nil || u.Path != want || u.String() != in {
			t.Errorf("ParseURI(%q) = %+v, %v; want path %q", in, u, err, want)
		}
	}
	bad := []string{
		"", "skill://", "skill:///x", "file:///etc/passwd", "https://x/SKILL.md", "skill:x/SKILL.md",
		"skill://a/../b/SKILL.md", "skill://a/./SKILL.md", "skill://a//SKILL.md", "skill://a/",
		"skill://a\\b/SKILL.md", "skill://a/b\x00/SKILL.md", "skill://a/b?x=1", "skill://a/b#frag",
		"skill://user@host/SKILL.md", "skill://host:80/SKILL.md", "skill://a/%2e%2e/SKILL.md",
		"skill://a/\xff/SKILL.md", "skill://" + strings.Repeat("a", skillsext.MaxURILength),
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
		// What parses is canonical, and never escapes with dot segments.
		if u.String() != s {
			t.Fatalf("String() = %q for input %q", u.String(), s)
		}
		for seg := range strings.SplitSeq(u.Path, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted segment %q in %q", seg, s)
			}
		}
		if strings.ContainsAny(u.Path, "\\\x00?#%") {
			t.Fatalf("accepted a forbidden character in %q", s)
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

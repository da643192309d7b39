package pull

import (
	"encoding/json"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func TestCheckRel(t *testing.T) {
	good := []string{"SKILL.md", "references/a.md", "a b/ç.md", ".hidden", "x..y"}
	for _, rel := range good {
		if err := checkRel(rel); err != nil {
			t.Errorf("checkRel(%q) = %v", rel, err)
		}
	}
	bad := map[string]string{
		"":                  "empty path",
		"/etc/passwd":       "absolute path",
		"../x":              `".." segment`,
		"a/../../x":         `".." segment`,
		"./x":               `"." segment`,
		"a//b":              "empty segment",
		"a/":                "empty segment",
		`a\b`:               "backslash",
		"C:/x":              "colon",
		"c:x":               "colon",
		"a\x00b":            "control character",
		"a\nb":              "control character",
		"\xff":              "not valid UTF-8",
		".skills-pull-1/x":  "reserved prefix",
		"a/.skills-pull-zz": "reserved prefix",
	}
	for rel, want := range bad {
		err := checkRel(rel)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkRel(%q) = %v, want %q", rel, err, want)
		}
	}
}

func TestCheckRelNameRule(t *testing.T) {
	for rel, want := range map[string]string{
		"evil\u202etxt.sh": "invisible or bidirectional formatting character (U+202E)",
		"a/zw\u200b.md":    "invisible or bidirectional formatting character (U+200B)",
		"c1\u0085.md":      "control character (U+0085)",
	} {
		err := checkRel(rel)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkRel(%+q) = %v, want %q", rel, err, want)
		}
	}
}

// FuzzOneNameRule: pull accepts exactly the file names a server built on
// skillsext serves (CheckName), dot-names aside (a server withholds
// those, and pull never writes them): a name served is never one that
// then makes pull --all write nothing, as "a:b@c.md" did.
func FuzzOneNameRule(f *testing.F) {
	for _, s := range []string{"a:b@c.md", "notes.md", "C:", "x\u202e.md", "a\\b", "100%.md", "café", "\ufeff.md", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.Contains(name, "/") || strings.HasPrefix(name, ".") || len(name) > skillsext.MaxURILength/4 {
			return // several names, a dot-name, or one too long for a URI
		}
		served := skillsext.CheckName(name) == nil
		pulled := checkFileRel(name) == nil
		if served != pulled {
			t.Errorf("name %+q: served %v, pulled %v (%v; %v)", name, served, pulled, skillsext.CheckName(name), checkFileRel(name))
		}
	})
}

func TestCheckFileRel(t *testing.T) {
	for _, rel := range []string{"SKILL.md", "references/a.md", "x..y", "a/b.c/d"} {
		if err := checkFileRel(rel); err != nil {
			t.Errorf("checkFileRel(%q) = %v", rel, err)
		}
	}
	for rel, want := range map[string]string{
		".git/config":       `holds the dot-name ".git"`,
		"a/.git/hooks/x":    `holds the dot-name ".git"`,
		".envrc":            `holds the dot-name ".envrc"`,
		"refs/.hidden/a.md": `holds the dot-name ".hidden"`,
		".GIT/config":       `holds the dot-name ".GIT"`,
		"../x":              `".." segment`,
		"evil\u202etxt.sh":  "formatting character",
	} {
		err := checkFileRel(rel)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkFileRel(%+q) = %v, want %q", rel, err, want)
		}
	}
}

func TestCheckDir(t *testing.T) {
	for _, dir := range []string{"refunds", "finance/billing/refunds", ".claude/skills/x", "skill/.curated/x"} {
		if err := checkDir(dir); err != nil {
			t.Errorf("checkDir(%q) = %v", dir, err)
		}
	}
	for dir, want := range map[string]string{
		".git":         `the skill name ".git" begins with a dot`,
		"x/.hidden":    `the skill name ".hidden" begins with a dot`,
		".git/hooks/x": `goes through ".git"`,
		"a/.Git./x":    `goes through ".Git."`,
		"a/.svn/x":     `goes through ".svn"`,
		"a/_darcs/x":   `goes through "_darcs"`,
		"a/../x":       `".." segment`,
	} {
		err := checkDir(dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkDir(%q) = %v, want %q", dir, err, want)
		}
	}
}

func TestSplitURI(t *testing.T) {
	for uri, want := range map[string][2]string{
		"skill://a/b/SKILL.md":        {"skill", "a/b/SKILL.md"},
		"github://o/r/skill/SKILL.md": {"github", "o/r/skill/SKILL.md"},
	} {
		s, p, err := splitURI(uri)
		if err != nil || s != want[0] || p != want[1] {
			t.Errorf("splitURI(%q) = %q, %q, %v", uri, s, p, err)
		}
	}
	for _, uri := range []string{"skill:/x", "SKILL://x", "://x", "skill://x?y", "skill://x#y", "skill://u@x/y", "skill://x:1/y", "skill://x/%2e%2e/y", "github://o/../y"} {
		if _, _, err := splitURI(uri); err == nil {
			t.Errorf("splitURI(%q) accepted", uri)
		}
	}
}

func TestParseEntryOtherScheme(t *testing.T) {
	e := parseEntry(json.RawMessage(`{"uri":"github://o/r/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"d"},
		"resources":[{"uri":"github://o/r/refunds/SKILL.md","digest":"sha256:` + strings.Repeat("a", 64) + `","size":1}]}`))
	if e.Err != nil || e.Scheme != "github" || e.Path != "o/r/refunds" || e.Name != "refunds" || len(e.Files) != 1 || e.Files[0].Rel != "SKILL.md" {
		t.Errorf("entry = %+v", e)
	}
}

// A skill whose path or files need escapes in their URIs is written under
// the names they escape, whatever case the escapes' hex digits use; an
// escape cannot smuggle a separator into a name.
func TestParseEntryEscapedNames(t *testing.T) {
	digest := `"digest":"sha256:` + strings.Repeat("a", 64) + `","size":1`
	e := parseEntry(json.RawMessage(`{"uri":"skill://My%20Tools/tool/SKILL.md","frontmatter":{"name":"tool","description":"d"},
		"resources":[{"uri":"skill://My%20Tools/tool/SKILL.md",` + digest + `},{"uri":"skill://My%20Tools/tool/refs/caf%c3%a9%20notes.md",` + digest + `}]}`))
	if e.Err != nil || e.Path != "My Tools/tool" || e.Name != "tool" || len(e.Files) != 2 || e.Files[1].Rel != "refs/café notes.md" {
		t.Fatalf("entry = %+v", e)
	}
	if e.Files[1].URI != "skill://My%20Tools/tool/refs/caf%c3%a9%20notes.md" {
		t.Errorf("file URI %q is not the one listed, to be read back as listed", e.Files[1].URI)
	}
	for _, uri := range []string{"skill://My%20Tools/tool/refs%2Fx.md", "skill://My%20Tools/tool/%2E%2E/x.md", "skill://My%20Tools/other/x.md"} {
		e := parseEntry(json.RawMessage(`{"uri":"skill://My%20Tools/tool/SKILL.md","frontmatter":{"name":"tool","description":"d"},
			"resources":[{"uri":"skill://My%20Tools/tool/SKILL.md",` + digest + `},{"uri":"` + uri + `",` + digest + `}]}`))
		if e.Err == nil {
			t.Errorf("resource %s accepted: %+v", uri, e.Files)
		}
	}
}

func TestParseEntryRefusesDuplicateKeys(t *testing.T) {
	e := parseEntry(json.RawMessage(`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x","description":"safe","description":"evil"},"resources":"dynamic"}`))
	if e.Err == nil || !strings.Contains(e.Err.Error(), `key "description" appears twice`) {
		t.Errorf("err = %v", e.Err)
	}
}

func TestParseEntryDependencies(t *testing.T) {
	for _, key := range []string{"io.github.skills-mcp/dependencies", "io.modelcontextprotocol.skills/dependencies"} {
		e := parseEntry(json.RawMessage(`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":"dynamic",
			"_meta":{"` + key + `":{"required":["a","ns/b"],"optional":["c"]}}}`))
		if e.Err != nil || !slices.Equal(e.Required, []string{"a", "ns/b"}) || !slices.Equal(e.Optional, []string{"c"}) {
			t.Errorf("%s: entry = %+v, err %v", key, e, e.Err)
		}
	}
	e := parseEntry(json.RawMessage(`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":"dynamic",
		"_meta":{"io.github.skills-mcp/dependencies":{"required":["../../etc"]}}}`))
	if e.Err == nil {
		t.Error("a dependency with .. was accepted")
	}
}

func TestCheckFrontmatter(t *testing.T) {
	const md = "---\nname: x\ndescription: d\nversion: 1.0\nmetadata:\n  zeta: \"1\"\n  alpha: \"2\"\ntags: [a, b]\n---\nbody\n"
	ok := []string{
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`,
		// Key order carries no meaning, at the top or nested.
		`{"tags":["a","b"],"metadata":{"alpha":"2","zeta":"1"},"version":1.0,"description":"d","name":"x"}`,
		// Equivalent JSON spellings.
		`{"name":"\u0078","description":"d","version":1e0,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`,
	}
	for _, listed := range ok {
		if err := checkFrontmatter("skill://x/SKILL.md", json.RawMessage(listed), []byte(md)); err != nil {
			t.Errorf("%s: %v", listed, err)
		}
	}
	bad := map[string]string{
		`{"name":"x","description":"d","version":"1.0","metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`:          `field "version" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1"},"tags":["a","b"]}`:                          `field "metadata" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["b","a"]}`:              `field "tags" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"}}`:                               `field "tags" is in the file but not listed`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"],"extra":null}`: `field "extra" is listed but not in the file`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"],"name":"y"}`:   `appears twice`,
		`{"name":"x","description":"d","version":true,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`:           `field "version" differs`,
		`{"name":"x","description":null,"version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`:             `field "description" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2","beta":"3"},"tags":["a","b"]}`:   `field "metadata" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b",["c"]]}`:        `field "tags" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":{"0":"a","1":"b"}}`:      `field "tags" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":{"2":"2"}},"tags":["a","b"]}`:        `field "metadata" differs`,
		`{"name":"x","description":"d ","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`:             `field "description" differs`,
		`{"name":"x","description":"d","version":1.0000001,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]}`:      `field "version" differs`,
		`{"name":"x","description":"d","version":1,"metadata":{"zeta":"1","alpha":"2"},"tags":["a","b"]} trailing`:     `trailing data`,
		`["name"]`: `not a JSON object`,
	}
	for listed, want := range bad {
		err := checkFrontmatter("skill://x/SKILL.md", json.RawMessage(listed), []byte(md))
		var ve *VerifyError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  error %v\n  want %q", listed, err, want)
		}
	}
	if err := checkFrontmatter("skill://x/SKILL.md", json.RawMessage(`{"name":"x"}`), []byte("no frontmatter\n")); err == nil ||
		!strings.Contains(err.Error(), "has no readable frontmatter") {
		t.Errorf("file without frontmatter: %v", err)
	}
}

func TestDecodeObjectDepth(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	if _, err := decodeObject(json.RawMessage(deep)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("err = %v", err)
	}
}

func FuzzParseEntry(f *testing.F) {
	f.Add([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:` + strings.Repeat("0", 64) + `","size":3}]}`))
	f.Add([]byte(`{"uri":"skill://a/b/SKILL.md","frontmatter":{"name":"b"},"resources":"dynamic","_meta":{"io.github.skills-mcp/dependencies":{"required":["x"]}}}`))
	f.Add([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/../x","digest":"","size":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := parseEntry(json.RawMessage(data))
		if e.Err != nil {
			return
		}
		// Whatever is accepted must be safe to write.
		for _, keep := range []bool{false, true} {
			if p, err := newPlan(e, &PullOptions{KeepPath: keep, AllowDynamic: true, AllowOversize: true}); err == nil {
				if err := checkRel(p.dir); err != nil {
					t.Fatalf("accepted folder %q: %v", p.dir, err)
				}
			}
		}
		for _, f := range e.Files {
			if err := checkRel(f.Rel); err != nil {
				t.Fatalf("accepted file %q: %v", f.Rel, err)
			}
		}
	})
}

// FuzzCheckFileRel: a path checkFileRel accepts is local, clean, and made
// of names the URI grammar accepts and a server would serve; and so is a
// folder checkDir accepts, but for the dot-folders above a skill.
func FuzzCheckFileRel(f *testing.F) {
	for _, s := range []string{"SKILL.md", "a/b.md", ".git/config", "a/../b", `a\b`, "C:x", "a\u202eb", ".claude/skills/x", "x/.GIT./y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if checkFileRel(rel) == nil {
			if !filepath.IsLocal(rel) || path.Clean(rel) != rel {
				t.Fatalf("checkFileRel accepts %+q, which is not a clean local path", rel)
			}
			for seg := range strings.SplitSeq(rel, "/") {
				if strings.HasPrefix(seg, ".") || skillsext.CheckName(seg) != nil || isVCS(seg) {
					t.Fatalf("checkFileRel accepts %+q with the segment %+q", rel, seg)
				}
			}
		}
		if checkDir(rel) == nil {
			if !filepath.IsLocal(rel) || path.Clean(rel) != rel {
				t.Fatalf("checkDir accepts %+q, which is not a clean local path", rel)
			}
			for seg := range strings.SplitSeq(rel, "/") {
				if isVCS(seg) || skillsext.CheckName(seg) != nil {
					t.Fatalf("checkDir accepts %+q with the segment %+q", rel, seg)
				}
			}
			if strings.HasPrefix(path.Base(rel), ".") {
				t.Fatalf("checkDir accepts %+q, whose skill name begins with a dot", rel)
			}
		}
	})
}

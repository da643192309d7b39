package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// refEntry is a skills/list entry as encoding/json writes it: the reference
// the hand-written encoder must match byte for byte.
type refEntry struct {
	URI         string               `json:"uri"`
	Frontmatter json.RawMessage      `json:"frontmatter"`
	Resources   []skillsext.Resource `json:"resources"`
	Meta        *refMeta             `json:"_meta,omitempty"`
}

type refMeta struct {
	Dependencies *skill.Dependencies `json:"io.github.skills-mcp/dependencies,omitempty"`
	RiskFlags    []string            `json:"io.github.skills-mcp/risk-flags,omitempty"`
}

func refEncode(t *testing.T, sk *Skill) string {
	t.Helper()
	e := refEntry{URI: sk.URI, Frontmatter: sk.Frontmatter, Resources: []skillsext.Resource{}}
	for _, f := range sk.Files {
		e.Resources = append(e.Resources, skillsext.Resource{URI: f.URI, Digest: f.Digest.String(), Size: f.Size})
	}
	d := sk.Dependencies
	if flags := sk.RiskFlags(); len(d.Required)+len(d.Optional) > 0 || len(flags) > 0 {
		e.Meta = &refMeta{RiskFlags: flags}
		if len(d.Required)+len(d.Optional) > 0 {
			e.Meta.Dependencies = &d
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEncodeEntryMatchesEncodingJSON(t *testing.T) {
	digest := Digest{31: 42}
	// Every string that needs an escape, or that json.Marshal escapes
	// although JSON would not need it, takes the slow path.
	odd := []string{
		"plain", `quo"te`, `back\slash`, "tab\there", "nl\n", "a<b", "a>b", "a&b",
		"café", "line\u2028sep", "para\u2029sep", "bad\xffutf8", "del\x7f", "\x00", "~ !#$%'()*+,-./:;=?@[]^_`{|}",
	}
	for i, s := range odd {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			sk := &Skill{
				URI:         "skill://lib/" + s + "/SKILL.md",
				Frontmatter: json.RawMessage(`{"name":"x","description":"y"}`),
			}
			sk.Files = []*File{
				{URI: sk.URI, Digest: digest, Size: 12},
				{URI: "skill://lib/" + s + "/refs/" + s + ".md", Digest: digest, Size: 1 << 40},
			}
			if i%2 == 1 {
				sk.Dependencies = skill.Dependencies{Required: []string{s}, Optional: []string{}}
			}
			if i%3 == 1 {
				sk.Risks = []lint.Finding{{Rule: "pipe-to-shell", Severity: lint.Warning}, {Rule: "quiet", Severity: lint.Info}}
			}
			want := refEncode(t, sk)
			if got := string(sk.Entry()); got != want {
				t.Errorf("Entry:\n got %s\nwant %s", got, want)
			}
			prefix := []byte("[1,")
			if got := string(sk.AppendEntry(prefix)); got != "[1,"+want {
				t.Errorf("AppendEntry after a prefix:\n got %s\nwant [1,%s", got, want)
			}
		})
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "skill://a/SKILL.md", "é", "<", "\"", "\u2028", "\x1f", "\x7f", "\xc3"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

// BenchmarkEncodeEntry encodes the entry of a skill shaped like a generated
// one: five files, a short frontmatter.
func BenchmarkEncodeEntry(b *testing.B) {
	sk := &Skill{
		URI:         "skill://data-analysis/review-report/SKILL.md",
		Frontmatter: json.RawMessage(`{"name":"review-report","description":"Reviews report work for analysts, keeping the result readable and accurate. Use it when a customer reports a problem.","category":"data-analysis","tags":["review","report","pipeline"]}`),
	}
	for j, f := range []string{"SKILL.md", "references/checklist.md", "references/examples/image-example.md", "references/guide.md", "scripts/run.py"} {
		sk.Files = append(sk.Files, &File{URI: "skill://data-analysis/review-report/" + f, Digest: Digest{31: byte(j)}, Size: int64(1000 + j)})
	}
	b.ReportAllocs()
	for b.Loop() {
		sk.Entry()
	}
}

func TestDigestString(t *testing.T) {
	if got, want := (Digest{0: 0xab, 31: 42}).String(), "sha256:ab"+strings.Repeat("0", 60)+"2a"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

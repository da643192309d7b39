package skill_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// valid is a frontmatter with every Agent Skills field, all well formed.
const valid = `name: pdf-tools
description: Fill and merge PDF forms. Use when the user works with PDFs.
license: Apache-2.0
compatibility: Needs Python 3.11 and poppler.
metadata:
  version: "1.0"
  author: acme
allowed-tools: Read Grep`

// finding is the part of a Problem the table compares; messages are
// checked separately for shape.
type finding struct {
	Rule  string
	Field string
	Fatal bool
}

func (f finding) String() string {
	return fmt.Sprintf("%s %s fatal=%v", f.Rule, f.Field, f.Fatal)
}

func findings(ps []skill.Problem) []finding {
	var out []finding
	for _, p := range ps {
		out = append(out, finding{p.Rule, p.Field, p.Fatal})
	}
	return out
}

// base returns a valid name and description followed by extra lines.
func base(extra string) string {
	return "name: a-skill\ndescription: Does a thing. Use it when needed.\n" + extra
}

func TestValidate(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name    string
		yaml    string
		unknown bool // ValidateOptions.UnknownFields
		want    []finding
	}{
		{name: "all fields valid", yaml: valid, unknown: true},
		{name: "minimal valid", yaml: base("")},

		// F3: name required, a non-empty string.
		{name: "F3 name missing", yaml: "description: d", want: []finding{{"F3", "name", true}}},
		{name: "F3 name empty", yaml: "name: \"\"\ndescription: d", want: []finding{{"F3", "name", true}}},
		{name: "F3 name null", yaml: "name:\ndescription: d", want: []finding{{"F3", "name", true}}},
		{name: "F3 name number", yaml: "name: 123\ndescription: d", want: []finding{{"F3", "name", true}}},
		{name: "F3 name list", yaml: "name: [a]\ndescription: d", want: []finding{{"F3", "name", true}}},
		{name: "F3 quoted number name passes", yaml: "name: \"123\"\ndescription: d"},

		// F4: 1–64 characters.
		{name: "F4 64 characters", yaml: "name: " + long(64) + "\ndescription: d"},
		{name: "F4 65 characters", yaml: "name: " + long(65) + "\ndescription: d", want: []finding{{"F4", "name", true}}},

		// F5: lowercase ASCII letters, digits and "-".
		{name: "F5 uppercase", yaml: "name: Foo\ndescription: d", want: []finding{{"F5", "name", true}}},
		{name: "F5 underscore", yaml: "name: a_b\ndescription: d", want: []finding{{"F5", "name", true}}},
		{name: "F5 unicode", yaml: "name: café\ndescription: d", want: []finding{{"F5", "name", true}}},
		{name: "F5 digits pass", yaml: "name: 3d-tools2\ndescription: d"},

		// F6: no leading or trailing "-".
		{name: "F6 leading hyphen", yaml: "name: -a\ndescription: d", want: []finding{{"F6", "name", true}}},
		{name: "F6 trailing hyphen", yaml: "name: a-\ndescription: d", want: []finding{{"F6", "name", true}}},

		// F7: no "--".
		{name: "F7 double hyphen", yaml: "name: a--b\ndescription: d", want: []finding{{"F7", "name", true}}},
		{name: "F6 and F7 together", yaml: "name: -a--b\ndescription: d", want: []finding{{"F6", "name", true}, {"F7", "name", true}}},

		// F9: description required, 1–1024 characters, not blank.
		{name: "F9 description missing", yaml: "name: a", want: []finding{{"F9", "description", true}}},
		{name: "F9 description null", yaml: "name: a\ndescription:", want: []finding{{"F9", "description", true}}},
		{name: "F9 description blank", yaml: "name: a\ndescription: \"  \\t \"", want: []finding{{"F9", "description", true}}},
		{name: "F9 description number", yaml: "name: a\ndescription: 42", want: []finding{{"F9", "description", true}}},
		{name: "F9 description mapping", yaml: "name: a\ndescription: {a: b}", want: []finding{{"F9", "description", true}}},
		{name: "F9 1024 characters", yaml: "name: a\ndescription: " + long(1024)},
		{name: "F9 1024 runes", yaml: "name: a\ndescription: " + strings.Repeat("é", 1024)},
		{name: "F9 1025 characters", yaml: "name: a\ndescription: " + long(1025), want: []finding{{"F9", "description", true}}},
		{name: "F3 and F9 on empty mapping", yaml: "{}", want: []finding{{"F3", "name", true}, {"F9", "description", true}}},

		// F10: license is a string.
		{name: "F10 license string", yaml: base("license: MIT")},
		{name: "F10 license list", yaml: base("license: [MIT, Apache-2.0]"), want: []finding{{"F10", "license", false}}},

		// F11: compatibility is a string of 1–500 characters.
		{name: "F11 500 characters", yaml: base("compatibility: " + long(500))},
		{name: "F11 501 characters", yaml: base("compatibility: " + long(501)), want: []finding{{"F11", "compatibility", false}}},
		{name: "F11 empty", yaml: base("compatibility: \"\""), want: []finding{{"F11", "compatibility", false}}},
		{name: "F11 mapping", yaml: base("compatibility: {python: \"3.11\"}"), want: []finding{{"F11", "compatibility", false}}},

		// F12: metadata maps string keys to string values.
		{name: "F12 string map", yaml: base("metadata: {a: \"1\", b: two}")},
		{name: "F12 list", yaml: base("metadata: [a, b]"), want: []finding{{"F12", "metadata", false}}},
		{name: "F12 scalar", yaml: base("metadata: text"), want: []finding{{"F12", "metadata", false}}},
		{name: "F12 empty", yaml: base("metadata:"), want: []finding{{"F12", "metadata", false}}},
		{name: "F12 nested value", yaml: base("metadata:\n  a:\n    b: c"), want: []finding{{"F12", "metadata.a", false}}},
		{name: "F12 tagged value", yaml: base("metadata: {a: !!int \"1\"}"), want: []finding{{"F12", "metadata.a", false}}},
		{name: "F12 reserved prefix", yaml: base("metadata:\n  io.modelcontextprotocol/x: y"), want: []finding{{"F12", "metadata.io.modelcontextprotocol/x", false}}},
		{name: "F12 other prefix passes", yaml: base("metadata:\n  io.modelcontextprotocol.skills/x: y\n  com.acme/x: y")},

		// F13: allowed-tools is a space-separated string.
		{name: "F13 string", yaml: base("allowed-tools: Bash(git:*) Read")},
		{name: "F13 list", yaml: base("allowed-tools: [Read, Grep]"), want: []finding{{"F13", "allowed-tools", false}}},

		// F14: unknown fields, only when asked.
		{name: "F14 not asked", yaml: base("model: opus\nuser-invocable: true")},
		{name: "F14 asked", yaml: base("model: opus\nuser-invocable: true"), unknown: true, want: []finding{{"F14", "model", false}, {"F14", "user-invocable", false}}},

		// F15: ambiguous scalars where a string is expected.
		{name: "F15 metadata number", yaml: base("metadata:\n  version: 1.0"), want: []finding{{"F15", "metadata.version", false}}},
		{name: "F15 metadata bool", yaml: base("metadata:\n  beta: true"), want: []finding{{"F15", "metadata.beta", false}}},
		{name: "F15 metadata null", yaml: base("metadata:\n  owner:"), want: []finding{{"F15", "metadata.owner", false}}},
		{name: "F15 metadata yes passes", yaml: base("metadata:\n  beta: yes\n  date: 2024-01-02")},
		{name: "F15 metadata key", yaml: base("metadata:\n  1: one"), want: []finding{{"F15", "metadata.1", false}}},
		{name: "F15 license number", yaml: base("license: 2.0"), want: []finding{{"F15", "license", false}}},
		{name: "F15 compatibility bool", yaml: base("compatibility: false"), want: []finding{{"F15", "compatibility", false}}},
		{name: "F15 allowed-tools null", yaml: base("allowed-tools:"), want: []finding{{"F15", "allowed-tools", false}}},
		{name: "F15 top-level key", yaml: base("true: x"), want: []finding{{"F15", "true", false}}},
		{name: "F15 top-level key unknown too", yaml: base("1: x"), unknown: true, want: []finding{{"F15", "1", false}, {"F14", "1", false}}},
		{name: "F15 aliased number", yaml: base("v: &v 1.0\nlicense: *v"), want: []finding{{"F15", "license", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, tt.yaml)
			ps := skill.Validate(f, &skill.ValidateOptions{UnknownFields: tt.unknown})
			if got := findings(ps); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Validate() =\n  %v\nwant\n  %v", got, tt.want)
			}
			checkMessages(t, ps)
		})
	}
}

// checkMessages checks that each message is a lowercase sentence.
func checkMessages(t *testing.T, ps []skill.Problem) {
	t.Helper()
	for _, p := range ps {
		r, _ := utf8.DecodeRuneInString(p.Message)
		if p.Message == "" || unicode.IsUpper(r) || strings.HasSuffix(p.Message, ".") {
			t.Errorf("%s %s: message %q is not a lowercase phrase", p.Rule, p.Field, p.Message)
		}
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		yaml string
		want string // the first problem's message
	}{
		{"name: Foo\ndescription: d", `name "Foo" must be lowercase letters, digits and "-" (try "foo")`},
		{"name: My Skill\ndescription: d", `name "My Skill" must be lowercase letters, digits and "-" (try "my-skill")`},
		{"name: café\ndescription: d", `name "café" must be lowercase letters, digits and "-"`},
		{"name: 123\ndescription: d", `name is 123, which YAML reads as a number, not a string; quote it: "123"`},
		{base("metadata:\n  version: 1.0"), `metadata.version is 1.0, which YAML reads as a number, not a string; quote it: "1.0"`},
		{base("license: [MIT]"), `license must be a string naming the license, e.g. license: Apache-2.0 (found a list)`},
	}
	for _, tt := range tests {
		ps := skill.Validate(mustParse(t, tt.yaml), nil)
		if len(ps) == 0 {
			t.Errorf("%q: no problems", tt.yaml)
			continue
		}
		if ps[0].Message != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.yaml, ps[0].Message, tt.want)
		}
	}
}

func TestValidateBOM(t *testing.T) {
	doc, err := skill.Parse([]byte("\xef\xbb\xbf---\nname: a\ndescription: d\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	ps := skill.Validate(doc.Frontmatter, nil)
	want := []finding{{"F2", "", false}}
	if got := findings(ps); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Validate() = %v, want %v", got, want)
	}
	checkMessages(t, ps)
}

func TestValidateNil(t *testing.T) {
	want := []finding{{"F3", "name", true}, {"F9", "description", true}}
	if got := findings(skill.Validate(nil, nil)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Validate(nil, nil) = %v, want %v", got, want)
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string // substring; "" means valid
	}{
		{"a", ""},
		{"0", ""},
		{"code-review", ""},
		{"a1-b2-c3", ""},
		{strings.Repeat("a", 64), ""},
		{strings.Repeat("a", 63) + "-", "start or end"},
		{strings.Repeat("a", 65), "65 characters"},
		{"", "empty"},
		{"-", "start or end"},
		{"-a", "start or end"},
		{"a-", "start or end"},
		{"a--b", `contain "--"`},
		{"A", "lowercase"},
		{"codeReview", "lowercase"},
		{"a_b", "lowercase"},
		{"a b", "lowercase"},
		{"a.b", "lowercase"},
		{"a/b", "lowercase"},
		{"ａ", "lowercase"},  // fullwidth a
		{"ß", "lowercase"},  // lowercase, but not ASCII
		{"é", "lowercase"},  // lowercase, but not ASCII
		{"١٢", "lowercase"}, // Arabic-Indic digits
		{"\xff", "lowercase"},
		{strings.Repeat("é", 64), "lowercase"},
	}
	for _, tt := range tests {
		err := skill.CheckName(tt.name)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckName(%q) = %v, want nil", tt.name, err)
		case tt.wantErr != "" && err == nil:
			t.Errorf("CheckName(%q) = nil, want an error about %q", tt.name, tt.wantErr)
		case err != nil && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("CheckName(%q) = %v, want an error about %q", tt.name, err, tt.wantErr)
		}
	}
}

// TestCheckNameMatchesValidate checks that CheckName and Validate agree.
func TestCheckNameMatchesValidate(t *testing.T) {
	for _, name := range []string{"Foo", "-a", "a--b", strings.Repeat("b", 70)} {
		f := mustParse(t, fmt.Sprintf("name: %q\ndescription: d", name))
		ps := skill.Validate(f, nil)
		err := skill.CheckName(name)
		if len(ps) == 0 || err == nil || ps[0].Message != err.Error() {
			t.Errorf("name %q: Validate %v, CheckName %v", name, ps, err)
		}
	}
}

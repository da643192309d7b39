package skill_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// mustParse parses a SKILL.md whose frontmatter is yaml.
func mustParse(t testing.TB, yaml string) *skill.Frontmatter {
	t.Helper()
	doc, err := skill.Parse([]byte("---\n" + yaml + "\n---\nbody\n"))
	if err != nil {
		t.Fatalf("Parse(%q): %v", yaml, err)
	}
	return doc.Frontmatter
}

// TestScalarJSON checks that each value renders as JSON.stringify renders
// what the JavaScript "yaml" library (YAML 1.2 core schema) parses.
func TestScalarJSON(t *testing.T) {
	tests := []struct {
		name string
		yaml string // the value of field v
		want string // Field("v")
	}{
		// Null.
		{"tilde", "~", `null`},
		{"null", "null", `null`},
		{"Null", "Null", `null`},
		{"NULL", "NULL", `null`},
		{"empty", "", `null`},
		{"odd-case null is a string", "nULL", `"nULL"`},
		// Booleans: YAML 1.1 words are strings in 1.2.
		{"true", "true", `true`},
		{"True", "True", `true`},
		{"TRUE", "TRUE", `true`},
		{"false", "false", `false`},
		{"False", "False", `false`},
		{"FALSE", "FALSE", `false`},
		{"odd-case true is a string", "tRUE", `"tRUE"`},
		{"yes", "yes", `"yes"`},
		{"no", "no", `"no"`},
		{"on", "on", `"on"`},
		{"off", "Off", `"Off"`},
		{"y", "y", `"y"`},
		// Integers.
		{"int", "42", `42`},
		{"plus int", "+12", `12`},
		{"negative int", "-7", `-7`},
		{"negative zero", "-0", `0`},
		{"leading zeros are decimal", "010", `10`},
		{"octal", "0o17", `15`},
		{"hex", "0x1F", `31`},
		{"hex lowercase", "0xff", `255`},
		{"hex prefix is lowercase only", "0X1F", `"0X1F"`},
		{"binary is a string", "0b101", `"0b101"`},
		{"underscores are a string", "1_000", `"1_000"`},
		{"signed hex is a string", "-0x1F", `"-0x1F"`},
		{"sexagesimal is a string", "12:30", `"12:30"`},
		{"beyond 2^53 rounds", "9007199254740993", `9007199254740992`},
		{"twenty digits", "12345678901234567890", `12345678901234567000`},
		{"huge int is infinite", "1" + strings.Repeat("0", 400), `null`},
		{"big hex", "0x10000000000000001", `18446744073709552000`},
		// Floats.
		{"one point zero", "1.0", `1`},
		{"trailing zero", "1.50", `1.5`},
		{"trailing dot", "1.", `1`},
		{"leading dot", ".5", `0.5`},
		{"negative leading dot", "-.5", `-0.5`},
		{"exponent", "1e3", `1000`},
		{"upper exponent", "1E3", `1000`},
		{"signed exponent", "2.5e-3", `0.0025`},
		{"dot exponent", "1.e2", `100`},
		{"avogadro", "6.02e23", `6.02e+23`},
		{"1e20 is written out", "1e20", `100000000000000000000`},
		{"1e21 uses an exponent", "1e21", `1e+21`},
		{"micro", "0.000001", `0.000001`},
		{"below micro", "0.0000001", `1e-7`},
		{"small with digits", "1.25e-8", `1.25e-8`},
		{"negative zero float", "-0.0", `0`},
		{"overflow", "1e400", `null`},
		{"inf", ".inf", `null`},
		{"Inf", "+.Inf", `null`},
		{"minus INF", "-.INF", `null`},
		{"nan", ".nan", `null`},
		{"NaN", ".NaN", `null`},
		{"NAN", ".NAN", `null`},
		{"odd-case nan is a string", ".Nan", `".Nan"`},
		{"signed nan is a string", "-.nan", `"-.nan"`},
		{"version triple", "1.2.3", `"1.2.3"`},
		// Timestamps are strings in the 1.2 core schema.
		{"date", "2024-01-02", `"2024-01-02"`},
		{"datetime", "2001-12-14t21:59:43.10-05:00", `"2001-12-14t21:59:43.10-05:00"`},
		// Quoted and block scalars are strings.
		{"double quoted number", `"1.0"`, `"1.0"`},
		{"single quoted number", `'1.0'`, `"1.0"`},
		{"quoted true", `"true"`, `"true"`},
		{"quoted null", `'~'`, `"~"`},
		{"quoted empty", `""`, `""`},
		{"literal", "|\n  a\n  b\n", `"a\nb\n"`},
		{"literal strip", "|-\n  a\n  b\n", `"a\nb"`},
		{"literal keep", "|+\n  a\n", `"a\n\n"`}, // mustParse adds a blank line
		{"folded", ">\n  a\n  b\n", `"a b\n"`},
		{"folded keep", ">+\n  a\n  b\n", `"a b\n\n"`},
		{"folded strip", ">-\n  a\n  b\n", `"a b"`},
		{"block number", "|-\n  1.0\n", `"1.0"`},
		{"multi-line plain", "one\n  two", `"one two"`},
		// Explicit tags.
		{"str tag", "!!str 123", `"123"`},
		{"str tag on true", "!!str true", `"true"`},
		{"int tag on quoted", `!!int "12"`, `12`},
		{"float tag on float", "!!float 1.5", `1.5`},
		{"float tag on int is a string", "!!float 1", `"1"`},
		{"int tag on float is a string", "!!int 1.0", `"1.0"`},
		{"int tag on hex", "!!int 0x1F", `31`},
		{"int tag on text is a string", "!!int abc", `"abc"`},
		{"bool tag on yes is a string", "!!bool yes", `"yes"`},
		{"null tag on text is a string", "!!null x", `"x"`},
		{"empty str tag", "!!str", `""`},
		{"empty int tag is a string", "!!int", `""`},
		{"map tag", "!!map {b: 1}", `{"b":1}`},
		{"seq tag", "!!seq [1]", `[1]`},
		{"bool tag", `!!bool "false"`, `false`},
		{"null tag", `!!null ""`, `null`},
		{"verbatim str tag", "!<tag:yaml.org,2002:str> 5", `"5"`},
		{"local tag is a string", "!thing 12", `"12"`},
		// Escaping.
		{"escapes", `"tab\there \"q\" back\\slash\nnl\r\b\f"`, `"tab\there \"q\" back\\slash\nnl\r\b\f"`},
		{"control", `"\x01\x1f\0"`, `"\u0001\u001f\u0000"`},
		{"del is not escaped", `"\x7f"`, "\"\x7f\""},
		{"unicode", `"é ☃ 🎉"`, `"é ☃ 🎉"`},
		{"line separator is raw", `"\u2028"`, "\"\u2028\""},
		{"html is not escaped", `"<a>&"`, `"<a>&"`},
		// Collections keep source order.
		{"flow sequence", `[1, "a", yes, ~, 1.0]`, `[1,"a","yes",null,1]`},
		{"flow mapping", "{b: 1, a: 2}", `{"b":1,"a":2}`},
		{"block sequence", "\n  - x\n  - 2", `["x",2]`},
		{"empty sequence", "[]", `[]`},
		{"empty mapping", "{}", `{}`},
		{"nested order", "\n  z: {y: 1, x: 2}\n  a: [{c: 3, b: 4}]", `{"z":{"y":1,"x":2},"a":[{"c":3,"b":4}]}`},
		// Keys become their JavaScript string form.
		{"non-string keys", "{1.0: a, true: b, ~: c, 0x10: d, 1e21: e, .inf: f, -.inf: g, .nan: h}", `{"1":"a","true":"b","":"c","16":"d","1e+21":"e","Infinity":"f","-Infinity":"g","NaN":"h"}`},
		{"quoted key", `{"1.0": a}`, `{"1.0":"a"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, "v: "+tt.yaml)
			got, ok := f.Field("v")
			if !ok {
				t.Fatal("Field(v) missing")
			}
			if string(got) != tt.want {
				t.Errorf("v: %s\n got %s\nwant %s", tt.yaml, got, tt.want)
			}
			if whole := string(f.JSON()); whole != `{"v":`+tt.want+`}` {
				t.Errorf("JSON() = %s, want the field inside {\"v\":...}", whole)
			}
		})
	}
}

func TestAliasesAndMergeKeys(t *testing.T) {
	f := mustParse(t, "base: &b {x: 1}\nword: &w hello\nv: {<<: *b, y: 2}\ncopy: *w\n*w : keyed")
	want := `{"base":{"x":1},"word":"hello","v":{"<<":{"x":1},"y":2},"copy":"hello","hello":"keyed"}`
	if got := string(f.JSON()); got != want {
		t.Errorf("JSON() = %s\nwant     %s", got, want)
	}
	if s, ok := f.String("copy"); !ok || s != "hello" {
		t.Errorf(`String("copy") = %q, %v; want "hello", true`, s, ok)
	}
}

func TestKeyOrder(t *testing.T) {
	f := mustParse(t, "name: a\nmetadata:\n  z: \"1\"\n  a: \"2\"\n  m: \"3\"\ndescription: d\nallowed-tools: x")
	if got, want := f.Keys(), []string{"name", "metadata", "description", "allowed-tools"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	want := `{"name":"a","metadata":{"z":"1","a":"2","m":"3"},"description":"d","allowed-tools":"x"}`
	if got := string(f.JSON()); got != want {
		t.Errorf("JSON() = %s\nwant     %s", got, want)
	}
	if got, _ := f.Field("metadata"); string(got) != `{"z":"1","a":"2","m":"3"}` {
		t.Errorf("Field(metadata) = %s", got)
	}
}

func TestReturnedSlicesAreCopies(t *testing.T) {
	f := mustParse(t, "name: a")
	f.JSON()[2] = 'X'
	f.Keys()[0] = "X"
	field, _ := f.Field("name")
	field[1] = 'X'
	if got := string(f.JSON()); got != `{"name":"a"}` {
		t.Errorf("JSON() = %s after modifying returned slices", got)
	}
}

func TestAccessors(t *testing.T) {
	f := mustParse(t, `name: code-review
description: >-
  Review code.
quoted: "x"
number: 1.0
boolean: yes
flag: true
off: False
quoted-flag: "true"
nothing:
tools-list: [Read, Grep]
tools-comma: "Read, Grep,  , Bash"
tools-one: Read
tools-blank: "  "
tools-mixed: [Read, 1]
tools-empty: []
metadata: {version: "1.0", author: me, 1: one}
metadata-bad: {version: 1.0}
metadata-nested: {a: {b: c}}
metadata-empty: {}
alias: &a aliased
copy: *a`)

	strs := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{"name", "code-review", true},
		{"description", "Review code.", true},
		{"quoted", "x", true},
		{"number", "", false},
		{"boolean", "yes", true},
		{"flag", "", false},
		{"nothing", "", false},
		{"tools-list", "", false},
		{"metadata", "", false},
		{"copy", "aliased", true},
		{"missing", "", false},
	}
	for _, tt := range strs {
		if got, ok := f.String(tt.key); got != tt.want || ok != tt.wantOK {
			t.Errorf("String(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}
	if got := f.Name(); got != "code-review" {
		t.Errorf("Name() = %q", got)
	}
	if got := f.Description(); got != "Review code." {
		t.Errorf("Description() = %q", got)
	}

	lists := []struct {
		key  string
		want []string
	}{
		{"tools-list", []string{"Read", "Grep"}},
		{"tools-comma", []string{"Read", "Grep", "Bash"}},
		{"tools-one", []string{"Read"}},
		{"tools-blank", nil},
		{"tools-mixed", nil},
		{"tools-empty", []string{}},
		{"number", nil},
		{"metadata", nil},
		{"nothing", nil},
		{"missing", nil},
	}
	for _, tt := range lists {
		if got := f.StringList(tt.key); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("StringList(%q) = %#v, want %#v", tt.key, got, tt.want)
		}
	}

	bools := []struct {
		key          string
		want, wantOK bool
	}{
		{"flag", true, true},
		{"off", false, true},
		{"quoted-flag", false, false},
		{"boolean", false, false},
		{"number", false, false},
		{"missing", false, false},
	}
	for _, tt := range bools {
		if got, ok := f.Bool(tt.key); got != tt.want || ok != tt.wantOK {
			t.Errorf("Bool(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}

	maps := []struct {
		key    string
		want   map[string]string
		wantOK bool
	}{
		{"metadata", map[string]string{"version": "1.0", "author": "me", "1": "one"}, true},
		{"metadata-empty", map[string]string{}, true},
		{"metadata-bad", nil, false},
		{"metadata-nested", nil, false},
		{"tools-list", nil, false},
		{"name", nil, false},
		{"missing", nil, false},
	}
	for _, tt := range maps {
		if got, ok := f.StringMap(tt.key); !reflect.DeepEqual(got, tt.want) || ok != tt.wantOK {
			t.Errorf("StringMap(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}

	if _, ok := f.Field("missing"); ok {
		t.Error(`Field("missing") reported present`)
	}
	if got, ok := f.Field("nothing"); !ok || string(got) != "null" {
		t.Errorf(`Field("nothing") = %s, %v; want null, true`, got, ok)
	}
}

func TestNilFrontmatter(t *testing.T) {
	var f *skill.Frontmatter
	if f.Keys() != nil || string(f.JSON()) != "{}" || f.Name() != "" || f.StringList("x") != nil {
		t.Error("nil Frontmatter accessors do not return zero values")
	}
	if _, ok := f.Field("x"); ok {
		t.Error("nil Frontmatter has a field")
	}
	if _, ok := f.StringMap("x"); ok {
		t.Error("nil Frontmatter has a map")
	}
	if _, ok := f.Bool("x"); ok {
		t.Error("nil Frontmatter has a bool")
	}
}

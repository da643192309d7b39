package skill_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// codeReview is the known-answer vector from the MCP docs (sep2640.md §4.3).
const codeReview = "---\nname: code-review\ndescription: Review code using the team's checklist.\n---\n\n# Code review\n\nRead `references/checklist.md`, then review the diff.\n"

func TestParseGolden(t *testing.T) {
	data := []byte(codeReview)
	if len(data) != 149 {
		t.Fatalf("vector is %d bytes, want 149", len(data))
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != "d2489d6c182e8df9c178563ff9f2eac7998a0c1bb1278c52a7fd5306e4259160" {
		t.Fatalf("vector digest %s does not match the docs", got)
	}
	doc, err := skill.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"code-review","description":"Review code using the team's checklist."}`
	if got := string(doc.Frontmatter.JSON()); got != want {
		t.Errorf("JSON() = %s\nwant     %s", got, want)
	}
	if doc.BodyOffset != 79 || !strings.HasPrefix(string(data[doc.BodyOffset:]), "\n# Code review") {
		t.Errorf("BodyOffset = %d, body starts %q", doc.BodyOffset, data[doc.BodyOffset:])
	}
	if got := doc.Frontmatter.Name(); got != "code-review" {
		t.Errorf("Name() = %q", got)
	}
	if got := doc.Frontmatter.Description(); got != "Review code using the team's checklist." {
		t.Errorf("Description() = %q", got)
	}
	if ps := skill.Validate(doc.Frontmatter, &skill.ValidateOptions{UnknownFields: true}); len(ps) != 0 {
		t.Errorf("Validate() = %v, want none", ps)
	}
}

func TestParseSplit(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		wantJSON   string
		wantBody   string // data[BodyOffset:]
		wantKeys   []string
		wantOffset int // checked when non-zero
	}{
		{
			name:     "lf",
			data:     "---\nname: a\n---\nbody\n",
			wantJSON: `{"name":"a"}`,
			wantBody: "body\n",
			wantKeys: []string{"name"},
		},
		{
			name:     "crlf and bom",
			data:     "\xef\xbb\xbf---\r\nname: a\r\ndescription: |\r\n  line one\r\n  line two\r\n---\r\n# Body\r\n",
			wantJSON: `{"name":"a","description":"line one\nline two\n"}`,
			wantBody: "# Body\r\n",
			wantKeys: []string{"name", "description"},
		},
		{
			name:     "trailing blanks on delimiters",
			data:     "---  \t\nname: a\n--- \r\nbody",
			wantJSON: `{"name":"a"}`,
			wantBody: "body",
			wantKeys: []string{"name"},
		},
		{
			name:       "closing line without newline",
			data:       "---\nname: a\n---",
			wantJSON:   `{"name":"a"}`,
			wantKeys:   []string{"name"},
			wantOffset: len("---\nname: a\n---"),
		},
		{
			name:       "closing line with blanks and no newline",
			data:       "---\nname: a\n---  ",
			wantJSON:   `{"name":"a"}`,
			wantKeys:   []string{"name"},
			wantOffset: len("---\nname: a\n---  "),
		},
		{
			name:     "dots are not a terminator inside a block scalar",
			data:     "---\nname: a\ndescription: |\n  ...\n  x\n---\nbody",
			wantJSON: `{"name":"a","description":"...\nx\n"}`,
			wantBody: "body",
			wantKeys: []string{"name", "description"},
		},
		{
			name:     "body with more delimiters",
			data:     "---\nname: a\n---\n---\nnot: frontmatter\n---\n",
			wantJSON: `{"name":"a"}`,
			wantBody: "---\nnot: frontmatter\n---\n",
			wantKeys: []string{"name"},
		},
		{
			name:     "empty mapping",
			data:     "---\n{}\n---\n",
			wantJSON: `{}`,
			wantKeys: []string{},
		},
		{
			name:     "comments and blank lines",
			data:     "---\n# leading comment\n\nname: a # trailing\n\n---\n",
			wantJSON: `{"name":"a"}`,
			wantKeys: []string{"name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			orig := bytes.Clone(data)
			doc, err := skill.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, orig) {
				t.Error("Parse modified its input")
			}
			if got := string(doc.Frontmatter.JSON()); got != tt.wantJSON {
				t.Errorf("JSON() = %s, want %s", got, tt.wantJSON)
			}
			if got := string(data[doc.BodyOffset:]); got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
			if tt.wantOffset != 0 && doc.BodyOffset != tt.wantOffset {
				t.Errorf("BodyOffset = %d, want %d", doc.BodyOffset, tt.wantOffset)
			}
			if got := doc.Frontmatter.Keys(); fmt.Sprint(got) != fmt.Sprint(tt.wantKeys) {
				t.Errorf("Keys() = %q, want %q", got, tt.wantKeys)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want error
	}{
		{"empty file", "", skill.ErrNoFrontmatter},
		{"no frontmatter", "# Title\n", skill.ErrNoFrontmatter},
		{"leading blank line", "\n---\nname: a\n---\n", skill.ErrNoFrontmatter},
		{"indented opener", " ---\nname: a\n---\n", skill.ErrNoFrontmatter},
		{"four dashes", "----\nname: a\n---\n", skill.ErrNoFrontmatter},
		{"content on opener", "--- name: a\n---\n", skill.ErrNoFrontmatter},
		{"bom only", "\xef\xbb\xbf", skill.ErrNoFrontmatter},
		{"opener only", "---", skill.ErrUnterminated},
		{"opener and newline", "---\n", skill.ErrUnterminated},
		{"no closing line", "---\nname: a\n", skill.ErrUnterminated},
		{"dots do not close", "---\nname: a\n...\n", skill.ErrUnterminated},
		{"indented closer", "---\nname: a\n ---\n", skill.ErrUnterminated},
		{"empty frontmatter", "---\n---\n", skill.ErrNotMapping},
		{"blank frontmatter", "---\n\n  \n---\n", skill.ErrNotMapping},
		{"only comments", "---\n# nothing\n---\n", skill.ErrNotMapping},
		{"sequence", "---\n- a\n- b\n---\n", skill.ErrNotMapping},
		{"scalar", "---\njust text\n---\n", skill.ErrNotMapping},
		{"null", "---\n~\n---\n", skill.ErrNotMapping},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := skill.Parse([]byte(tt.data))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse() = %v, %v; want %v", doc, err, tt.want)
			}
			if doc != nil {
				t.Errorf("Parse() returned a document with an error")
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	// frontmatter returns a frontmatter block of exactly n bytes.
	frontmatter := func(n int) string {
		return "x: " + strings.Repeat("a", n-4) + "\n"
	}
	at := "---\n" + frontmatter(skill.MaxFrontmatterBytes) + "---\nbody"
	if _, err := skill.Parse([]byte(at)); err != nil {
		t.Errorf("frontmatter of exactly MaxFrontmatterBytes: %v", err)
	}
	over := "---\n" + frontmatter(skill.MaxFrontmatterBytes+1) + "---\nbody"
	if _, err := skill.Parse([]byte(over)); !errors.Is(err, skill.ErrTooLarge) {
		t.Errorf("frontmatter one byte over: err = %v, want ErrTooLarge", err)
	}
	unterminated := "---\n" + strings.Repeat("x: y\n", skill.MaxFrontmatterBytes)
	if _, err := skill.Parse([]byte(unterminated)); !errors.Is(err, skill.ErrTooLarge) {
		t.Errorf("huge unterminated frontmatter: err = %v, want ErrTooLarge", err)
	}
}

func TestParseYAMLErrors(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string // between the --- lines
		wantLine int    // line in the file; 0: do not check
		wantMsg  string // substring of the message
		yamlErr  bool   // the error wraps the YAML library's error
	}{
		{"unclosed flow", "name: a\ndescription: [\n", 0, "", true},
		{"tab indentation", "name: a\nmetadata:\n\tx: y\n", 0, "", true},
		{"unknown anchor", "name: *nope\n", 0, "anchor", true},
		{"duplicate key", "name: a\ndescription: b\nname: c\n", 4, "duplicate key \"name\"", false},
		{"duplicate nested key", "metadata:\n  a: x\n  a: y\n", 4, "duplicate key \"a\"", false},
		{"keys equal as strings", "metadata:\n  1: x\n  \"1\": y\n", 4, "duplicate key \"1\"", false},
		{"collection key", "? [a, b]\n: c\n", 2, "mapping keys", false},
		{"timestamp tag", "name: a\nn: !!timestamp 2024-01-02\n", 3, "!!timestamp", false},
		{"binary tag", "n: !!binary aGk=\n", 2, "!!binary", false},
		{"set tag", "n: !!set {a, b}\n", 2, "!!set", false},
		{"omap tag on a key", "? !!omap [a: 1]\n: x\n", 2, "!!omap", false},
		{"explicit merge tag", "n: !!merge <<\n", 2, "!!merge", false},
		{"recursive alias", "name: a\nloop: &x [1, *x]\n", 3, "contains it", false},
		{"second document", "name: a\n...\nother: b\n", 0, "single YAML document", true},
		{"explicit second document", "name: a\n...\n--- x\n", 0, "single YAML document", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := skill.Parse([]byte("---\n" + tt.yaml + "---\nbody\n"))
			var pe *skill.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse() error = %v, want a *ParseError", err)
			}
			if tt.wantLine != 0 && pe.Line != tt.wantLine {
				t.Errorf("Line = %d, want %d (%v)", pe.Line, tt.wantLine, err)
			}
			if !strings.Contains(pe.Msg, tt.wantMsg) {
				t.Errorf("Msg = %q, want it to contain %q", pe.Msg, tt.wantMsg)
			}
			if (pe.Err != nil) != tt.yamlErr || (errors.Unwrap(err) != nil) != tt.yamlErr {
				t.Errorf("Err = %v, want YAML error: %v", pe.Err, tt.yamlErr)
			}
			if !strings.HasPrefix(err.Error(), "skill: frontmatter") {
				t.Errorf("Error() = %q, want the package prefix", err)
			}
		})
	}
}

func TestParseYAMLErrorLine(t *testing.T) {
	// The YAML library counts lines from the start of the frontmatter, from
	// 0 or 1 depending on the error; ParseError counts from the file's start.
	tests := []struct {
		yaml string
		line int
	}{
		{"name: a\ndescription: {x\n", 3},         // parser error
		{"name: a\ndescription: b\n- x\n", 4},     // parser error
		{"name: a\ndescription: \"\\q\"\n", 3},    // scanner error
		{"name: a\ndescription: b\nc: d: e\n", 4}, // scanner error
		{"name: a\nmetadata:\n\t- x\n", 4},        // scanner error
		{"name: a\ndescription: !x!y z\n", 3},     // parser error
		{"name: a\n  description: b\n", 3},        // scanner error
	}
	for _, tt := range tests {
		_, err := skill.Parse([]byte("---\n" + tt.yaml + "---\n"))
		var pe *skill.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want *ParseError", tt.yaml, err)
			continue
		}
		if pe.Line != tt.line {
			t.Errorf("%q: Line = %d, want %d (%v)", tt.yaml, pe.Line, tt.line, err)
		}
		if strings.Contains(pe.Msg, "line") {
			t.Errorf("%q: Msg = %q still carries the YAML library's line", tt.yaml, pe.Msg)
		}
	}
}

func TestParseNesting(t *testing.T) {
	nested := func(depth int) string {
		return "---\nv: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n---\n"
	}
	// The top-level mapping is the first of the 64 levels.
	if _, err := skill.Parse([]byte(nested(63))); err != nil {
		t.Errorf("64 levels: %v", err)
	}
	_, err := skill.Parse([]byte(nested(64)))
	var pe *skill.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "deeper") {
		t.Errorf("65 levels: err = %v, want a nesting *ParseError", err)
	}
	// Very deep input must fail cleanly too, not exhaust the stack.
	if _, err := skill.Parse([]byte(nested(20000))); err == nil {
		t.Error("20000 levels parsed")
	}
}

// checkBounded runs Parse on data, expects a *ParseError mentioning want,
// and checks that the attempt allocated little: an alias bomb must be
// refused before it expands.
func checkBounded(t *testing.T, data []byte, want string) {
	t.Helper()
	if len(data) > skill.MaxFrontmatterBytes {
		t.Fatalf("bomb is %d bytes; it must fit the frontmatter bound", len(data))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := skill.Parse(data)
	runtime.ReadMemStats(&after)
	var pe *skill.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, want) {
		t.Fatalf("Parse() error = %v, want a *ParseError about %q", err, want)
	}
	const limit = 64 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
		t.Errorf("Parse allocated %d bytes, want at most %d", alloc, limit)
	}
}

func TestParseAliasBomb(t *testing.T) {
	t.Run("billion laughs", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("---\nname: lol\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
		for i := 1; i < 10; i++ {
			fmt.Fprintf(&b, "a%d: &a%d [", i, i)
			for j := range 10 {
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "*a%d", i-1)
			}
			b.WriteString("]\n")
		}
		b.WriteString("---\n")
		checkBounded(t, []byte(b.String()), "aliases expand")
	})
	t.Run("long string repeated", func(t *testing.T) {
		// Few alias nodes, but each expands to 30 KB.
		data := "---\ns: &s \"" + strings.Repeat("x", 30000) + "\"\nl: [" +
			strings.Repeat("*s,", 5000) + "*s]\n---\n"
		checkBounded(t, []byte(data), "bytes of JSON")
	})
	t.Run("modest aliases are fine", func(t *testing.T) {
		data := "---\nname: a\nbase: &b {x: 1, y: [a, b]}\nuse: *b\nmore: [*b, *b]\n---\n"
		doc, err := skill.Parse([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"name":"a","base":{"x":1,"y":["a","b"]},"use":{"x":1,"y":["a","b"]},"more":[{"x":1,"y":["a","b"]},{"x":1,"y":["a","b"]}]}`
		if got := string(doc.Frontmatter.JSON()); got != want {
			t.Errorf("JSON() = %s\nwant     %s", got, want)
		}
	})
}

// TestParseConcurrent reads one Frontmatter from many goroutines; run with
// -race it checks that the accessors only read.
func TestParseConcurrent(t *testing.T) {
	doc, err := skill.Parse([]byte("---\nname: a\nmetadata: {b: \"1\"}\nallowed-tools: [Read]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := doc.Frontmatter
	done := make(chan bool)
	for range 4 {
		go func() {
			defer func() { done <- true }()
			_ = f.JSON()
			_ = f.Keys()
			_, _ = f.Field("metadata")
			_, _ = f.StringMap("metadata")
			_ = f.StringList("allowed-tools")
			_ = skill.Validate(f, nil)
		}()
	}
	for range 4 {
		<-done
	}
}

package skill_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestTestdata parses every testdata/*.md file and compares what Parse and
// Validate report with testdata/<name>.golden. Run with -update to rewrite
// the golden files, then review the diff.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".md")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(data)
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got), *update, "update")
		})
	}
}

// describe renders what the package makes of a SKILL.md as golden text.
func describe(data []byte) string {
	var b strings.Builder
	doc, err := skill.Parse(data)
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "json: %s\n", doc.Frontmatter.JSON())
	fmt.Fprintf(&b, "body: %q\n", head(data[doc.BodyOffset:], 40))
	for _, p := range skill.Validate(doc.Frontmatter, &skill.ValidateOptions{UnknownFields: true}) {
		fatal := ""
		if p.Fatal {
			fatal = " fatal"
		}
		fmt.Fprintf(&b, "problem: %s %s%s: %s\n", p.Rule, p.Field, fatal, p.Message)
	}
	return b.String()
}

// head returns up to n bytes from the start of b.
func head(b []byte, n int) string {
	return string(b[:min(n, len(b))])
}

// FuzzParse checks that Parse never panics, and that what it accepts renders
// as valid JSON whose top-level keys are Keys, in order.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		codeReview,
		"---\nname: a\ndescription: b\n---\n",
		"\xef\xbb\xbf---\r\nname: a\r\n---\r\n",
		"---\nv: [1.0, 010, 0x1F, .inf, ~, yes, 2024-01-02, \"q\", !!str 1]\n---\n",
		"---\nm: {z: 1, a: {y: 2, b: 3}}\nl: |-\n  x\nf: >+\n  y\n\n---\n",
		"---\na: &a [x, y]\nb: [*a, *a]\n*a : c\n---\n",
		"---\n{1: a, true: b, ~: c, 1e21: d}\n---\n",
		"---\na: 1\n...\n---\n",
		"---\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		doc, err := skill.Parse(data)
		if !bytes.Equal(data, orig) {
			t.Fatal("Parse modified its input")
		}
		if err != nil {
			var pe *skill.ParseError
			if !errors.As(err, &pe) && !errors.Is(err, skill.ErrNoFrontmatter) && !errors.Is(err, skill.ErrUnterminated) &&
				!errors.Is(err, skill.ErrTooLarge) && !errors.Is(err, skill.ErrNotMapping) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if doc.BodyOffset < 0 || doc.BodyOffset > len(data) {
			t.Fatalf("BodyOffset %d outside [0, %d]", doc.BodyOffset, len(data))
		}
		fm := doc.Frontmatter
		js := fm.JSON()
		if !json.Valid(js) {
			t.Fatalf("JSON() is not valid JSON: %s", js)
		}
		keys, err := topLevelKeys(js)
		if err != nil {
			t.Fatalf("reading keys of %s: %v", js, err)
		}
		if got := fm.Keys(); !slices.Equal(got, keys) {
			t.Fatalf("Keys() = %q, JSON keys = %q", got, keys)
		}
		for _, k := range keys {
			field, ok := fm.Field(k)
			if !ok || !json.Valid(field) {
				t.Fatalf("Field(%q) = %s, %v", k, field, ok)
			}
			fm.String(k)
			fm.StringList(k)
			fm.StringMap(k)
			fm.Bool(k)
		}
		for _, p := range skill.Validate(fm, &skill.ValidateOptions{UnknownFields: true}) {
			if p.Rule == "" || p.Message == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		_ = skill.CheckName(fm.Name())
	})
}

// topLevelKeys returns the keys of a JSON object in order.
func topLevelKeys(js []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %v %v", tok, err)
	}
	keys := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("key %v is not a string", tok)
		}
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the object")
	}
	return keys, nil
}

// Package skill parses and validates the Agent Skills SKILL.md format.
//
// A SKILL.md file starts with a YAML frontmatter block between two "---"
// lines, followed by a Markdown body. [Parse] splits the file and parses the
// frontmatter into a [Frontmatter], which keeps the authored keys in source
// order and renders them as JSON the way a YAML 1.2 core-schema parser would
// (see [Frontmatter.JSON]). [Validate] checks a parsed frontmatter against
// the Agent Skills rules and returns [Problem] values; [CheckName] checks a
// name on its own.
//
// The package works on bytes only: it reads no files and never modifies the
// data it is given.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// MaxFrontmatterBytes bounds the frontmatter block we parse (64 KiB); a larger one is an error.
const MaxFrontmatterBytes = 64 << 10

// Errors returned by [Parse]. Match them with [errors.Is].
var (
	// ErrNoFrontmatter means the file does not start with a "---" line.
	ErrNoFrontmatter = errors.New("skill: SKILL.md must start with a --- line opening the frontmatter")
	// ErrUnterminated means no "---" line closes the frontmatter.
	ErrUnterminated = errors.New("skill: frontmatter has no closing --- line")
	// ErrTooLarge means the frontmatter is larger than [MaxFrontmatterBytes].
	ErrTooLarge = errors.New("skill: frontmatter is larger than 64 KiB")
	// ErrNotMapping means the frontmatter is empty or is not a YAML mapping.
	ErrNotMapping = errors.New("skill: frontmatter must be a YAML mapping of fields")
)

// ParseError reports frontmatter that is not valid YAML, or that this
// package refuses to render (duplicate keys, nesting deeper than 64 levels,
// alias expansion over budget, a value that does not match its explicit tag).
type ParseError struct {
	// Line is the 1-based line in the SKILL.md file, or 0 when unknown.
	Line int
	// Msg says what is wrong, without the line.
	Msg string
	// Err is the YAML library's error, or nil when this package found the problem.
	Err error
}

// Error returns "skill: frontmatter line N: msg", or "skill: frontmatter: msg" without a line.
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("skill: frontmatter line %d: %s", e.Line, e.Msg)
	}
	return "skill: frontmatter: " + e.Msg
}

// Unwrap returns the YAML library's error, if any.
func (e *ParseError) Unwrap() error { return e.Err }

// Document is a parsed SKILL.md.
type Document struct {
	// Frontmatter is the parsed frontmatter; never nil in a Document returned by Parse.
	Frontmatter *Frontmatter
	// BodyOffset is the byte offset in the original data where the body starts
	// (after the closing --- line). It equals len(data) when the closing line
	// is the last line and has no newline.
	BodyOffset int
}

// utf8BOM is the byte order mark some editors put at the start of a file.
const utf8BOM = "\xef\xbb\xbf"

// Parse splits data into frontmatter and body and parses the frontmatter.
//
// The first line must be "---" (after an optional UTF-8 BOM), and the
// frontmatter ends at the next line that is exactly "---". Trailing spaces,
// tabs and "\r" are allowed on both lines; "..." does not end the
// frontmatter. Parse tolerates a leading BOM and CRLF line endings for
// parsing; it never modifies data. A BOM is reported by [Validate] as an F2
// problem, because other Agent Skills readers reject it.
//
// Errors: [ErrNoFrontmatter] (data does not start with a --- line),
// [ErrUnterminated] (no closing --- line), [ErrTooLarge] (no closing line
// within [MaxFrontmatterBytes]), [ErrNotMapping] (frontmatter empty or not a
// YAML mapping), or a [*ParseError] for YAML the package cannot parse or
// render. Parse is safe for concurrent use.
func Parse(data []byte) (*Document, error) {
	yamlSrc, bodyOffset, bom, err := split(data)
	if err != nil {
		return nil, err
	}
	root, err := decodeYAML(yamlSrc)
	if err != nil {
		return nil, err
	}
	fm, err := newFrontmatter(root)
	if err != nil {
		return nil, err
	}
	fm.bom = bom
	return &Document{Frontmatter: fm, BodyOffset: bodyOffset}, nil
}

// split finds the frontmatter block in data. It returns the YAML between the
// two --- lines and the offset of the body.
func split(data []byte) (yamlSrc []byte, bodyOffset int, bom bool, err error) {
	start := 0
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		start = len(utf8BOM)
		bom = true
	}
	line, next := nextLine(data, start)
	if !isDelimiter(line) {
		return nil, 0, bom, ErrNoFrontmatter
	}
	if next < 0 {
		return nil, 0, bom, ErrUnterminated
	}
	fmStart := next
	for pos := fmStart; pos >= 0; {
		// A huge file with no closing line is not read to the end: past the
		// bound it is too large whether or not a closing line follows.
		if pos-fmStart > MaxFrontmatterBytes {
			return nil, 0, bom, ErrTooLarge
		}
		line, next := nextLine(data, pos)
		if isDelimiter(line) {
			if next < 0 {
				next = len(data)
			}
			return data[fmStart:pos], next, bom, nil
		}
		pos = next
	}
	if len(data)-fmStart > MaxFrontmatterBytes {
		return nil, 0, bom, ErrTooLarge
	}
	return nil, 0, bom, ErrUnterminated
}

// nextLine returns the line starting at pos, without its "\n", and the
// position of the following line, or -1 when the line is the last one.
func nextLine(data []byte, pos int) (line []byte, next int) {
	i := bytes.IndexByte(data[pos:], '\n')
	if i < 0 {
		return data[pos:], -1
	}
	return data[pos : pos+i], pos + i + 1
}

// isDelimiter reports whether line is "---" with optional trailing blanks.
func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// yamlLineRE matches the line prefix of the YAML library's error messages.
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// decodeYAML parses src as a single YAML document whose root is a mapping.
func decodeYAML(src []byte) (root *yaml.Node, err error) {
	// The YAML library is hostile-input tested, but a panic on some input
	// must still not take the server down: turn it into a parse error.
	defer func() {
		if p := recover(); p != nil {
			root, err = nil, &ParseError{Msg: fmt.Sprintf("the YAML parser failed: %v", p)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrNotMapping
		}
		return nil, yamlError(err)
	}
	// Whatever follows a "..." line is another document, or an error; the
	// JavaScript library refuses both, and so do we.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		pe := &ParseError{Line: extra.Line + lineOffset, Err: err}
		if err != nil {
			pe.Line = yamlError(err).Line
		}
		pe.Msg = "frontmatter must hold a single YAML document; remove the \"...\" line and what follows it"
		return nil, pe
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, ErrNotMapping
	}
	return doc.Content[0], nil
}

// lineOffset converts a line in the frontmatter YAML to a line in the file:
// the YAML starts after the opening --- line.
const lineOffset = 1

// parserProblems are the YAML library's parser (not scanner) messages. It
// reports their lines counting from 0 and its scanner's counting from 1.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError converts an error from the YAML library into a *ParseError,
// moving its line number to file coordinates.
func yamlError(err error) *ParseError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pe := &ParseError{Msg: msg, Err: err}
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			pe.Msg = m[2]
			if parserProblems[pe.Msg] {
				n++
			}
			pe.Line = n + lineOffset
		}
	}
	return pe
}

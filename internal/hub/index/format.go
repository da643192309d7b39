package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// SchemaVersion is the catalog format version this package reads and
// writes.
const SchemaVersion = 1

// Default limits of a catalog document. The bundled snapshot is about a
// megabyte for some fourteen hundred items; the limits leave two orders of
// magnitude for growth and still bound what a hostile server can make the
// hub hold.
const (
	MaxBytes = 64 << 20
	MaxItems = 100_000
)

// Limits of the fields of an item.
const (
	maxIDBytes           = 256
	maxTextBytes         = 256 // author, category, license
	maxDescriptionChars  = 1024
	maxRequirementsBytes = 1024
	maxPathBytes         = 1024
	maxURLBytes          = 2048
)

// Snapshot is a parsed and validated catalog document.
type Snapshot struct {
	SchemaVersion int       `json:"schema_version"`
	GeneratedAt   time.Time `json:"generated_at,omitzero"`
	Sources       []Source  `json:"sources,omitempty"`
	Items         []Item    `json:"items"`
}

// Source is one repository a catalog document was built from.
type Source struct {
	Repository string `json:"repository"`
	Commit     string `json:"commit,omitempty"`
}

// Item is one installable skill package. The package documentation
// describes each field.
type Item struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Author       string `json:"author,omitempty"`
	Category     string `json:"category,omitempty"`
	Repository   string `json:"repository"`
	Path         string `json:"path,omitempty"`
	Commit       string `json:"commit,omitempty"`
	License      string `json:"license,omitempty"`
	Requirements string `json:"requirements,omitempty"`
	FileCount    int64  `json:"file_count,omitempty"`
	Size         int64  `json:"size,omitempty"`
	TreeDigest   string `json:"tree_digest,omitempty"`
}

// Limits bounds a catalog document. A nil *Limits, or a zero field, means
// the default ([MaxBytes], [MaxItems]).
type Limits struct {
	MaxBytes int64
	MaxItems int
}

func (l *Limits) bytes() int64 {
	if l == nil || l.MaxBytes <= 0 {
		return MaxBytes
	}
	return l.MaxBytes
}

func (l *Limits) items() int {
	if l == nil || l.MaxItems <= 0 {
		return MaxItems
	}
	return l.MaxItems
}

// ErrTooLarge is returned (wrapped) for a document over its byte limit.
var ErrTooLarge = errors.New("catalog document too large")

// ItemError is an invalid item: its position in items (from 0), its id if
// it has one, and what is wrong.
type ItemError struct {
	Index int
	ID    string
	Err   error
}

func (e *ItemError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("catalog item %d: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("catalog item %d (id %q): %v", e.Index, e.ID, e.Err)
}

// Unwrap returns what is wrong with the item.
func (e *ItemError) Unwrap() error { return e.Err }

// Parse reads and validates one catalog document from r. It reads at most
// lim's byte limit plus one byte, and stops at the first item past the item
// limit, so a hostile document costs at most the limits. It returns the
// document only if the whole of it is valid; see the package documentation
// for the rules.
func Parse(r io.Reader, lim *Limits) (*Snapshot, error) {
	lr := &limitReader{r: r, n: lim.bytes()}
	p := &parser{dec: json.NewDecoder(lr), maxItems: lim.items()}
	snap, err := p.document()
	if lr.over {
		return nil, fmt.Errorf("%w: over the limit of %d bytes", ErrTooLarge, lim.bytes())
	}
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// limitReader reads at most n bytes from r, then fails, remembering that
// it did, so that the parser's error (often a truncated token) can be
// replaced by the real cause.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One byte more tells a document of exactly n bytes from a longer one.
		var one [1]byte
		k, err := l.r.Read(one[:])
		if k > 0 {
			l.over = true
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

type parser struct {
	dec      *json.Decoder
	maxItems int
}

// document parses the top-level object token by token, so that items are
// decoded and counted one at a time.
func (p *parser) document() (*Snapshot, error) {
	if err := p.delim('{', "a catalog document must be a JSON object"); err != nil {
		return nil, err
	}
	snap := &Snapshot{}
	seen := map[string]bool{}
	var itemErr error // the first invalid item, reported once the version is known
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("catalog document: %q is given twice", key)
		}
		seen[key] = true
		switch key {
		case "schema_version":
			var v json.RawMessage
			if err := p.dec.Decode(&v); err != nil {
				return nil, syntaxError(err)
			}
			if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
				return nil, fmt.Errorf("catalog document: schema_version must be a number, not %s", truncateText(string(v), 20))
			}
			if string(v) != "1" {
				return nil, fmt.Errorf("catalog document: schema_version %s is not supported; this hub reads version %d (a newer hub may read it)", truncateText(string(v), 20), SchemaVersion)
			}
			snap.SchemaVersion = SchemaVersion
		case "generated_at":
			if err := p.dec.Decode(&snap.GeneratedAt); err != nil {
				return nil, fmt.Errorf("catalog document: generated_at must be an RFC 3339 time: %w", syntaxError(err))
			}
		case "sources":
			if err := p.dec.Decode(&snap.Sources); err != nil {
				return nil, fmt.Errorf("catalog document: sources must be a list of {repository, commit}: %w", syntaxError(err))
			}
			for i, s := range snap.Sources {
				if err := checkRepository(s.Repository); err != nil {
					return nil, fmt.Errorf("catalog document: source %d: %w", i, err)
				}
				if err := checkCommit(s.Commit); err != nil {
					return nil, fmt.Errorf("catalog document: source %d (%s): %w", i, s.Repository, err)
				}
			}
		case "items":
			items, err := p.items()
			if err != nil {
				return nil, err
			}
			snap.Items = items
			itemErr = validateItems(items)
		default:
			// A field a newer builder added within version 1.
			var skip json.RawMessage
			if err := p.dec.Decode(&skip); err != nil {
				return nil, syntaxError(err)
			}
		}
	}
	if err := p.delim('}', "the catalog document does not end where it should"); err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		if err == nil {
			return nil, errors.New("catalog document: data after the closing brace")
		}
		return nil, syntaxError(err)
	}
	switch {
	case snap.SchemaVersion == 0:
		return nil, fmt.Errorf("catalog document: schema_version is missing; this hub reads version %d", SchemaVersion)
	case !seen["items"]:
		return nil, errors.New("catalog document: items is missing")
	case itemErr != nil:
		return nil, itemErr
	}
	return snap, nil
}

// items decodes the items array one item at a time.
func (p *parser) items() ([]Item, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok != json.Delim('[') {
		if tok == nil {
			return nil, errors.New("catalog document: items is null; give a list, even an empty one")
		}
		return nil, errors.New("catalog document: items must be a list")
	}
	items := []Item{}
	for p.dec.More() {
		if len(items) == p.maxItems {
			return nil, fmt.Errorf("catalog document: more than %d items", p.maxItems)
		}
		var it Item
		if err := p.dec.Decode(&it); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				where := "the item"
				if te.Field != "" {
					where = te.Field
				}
				return nil, &ItemError{Index: len(items), Err: fmt.Errorf("%s must be a JSON %s, not %s", where, jsonKind(te.Type.Kind().String()), te.Value)}
			}
			return nil, &ItemError{Index: len(items), Err: syntaxError(err)}
		}
		items = append(items, it)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	return items, nil
}

func (p *parser) delim(want json.Delim, msg string) error {
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF {
			return errors.New("catalog document: empty")
		}
		return syntaxError(err)
	}
	if tok != want {
		return errors.New("catalog document: " + msg)
	}
	return nil
}

// syntaxError words a decoder error; the limit reader's error is reported
// by Parse instead.
func syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("catalog document: invalid JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		return errors.New("catalog document: invalid JSON: it ends in the middle")
	}
	return fmt.Errorf("catalog document: %w", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "int64", "int":
		return "integer"
	case "struct":
		return "object"
	}
	return goKind
}

// validateItems checks every item and that ids are unique, returning the
// first problem in document order.
func validateItems(items []Item) error {
	first := make(map[string]int, len(items))
	for i := range items {
		it := &items[i]
		if err := it.validate(); err != nil {
			return &ItemError{Index: i, ID: truncateText(it.ID, 80), Err: err}
		}
		if j, dup := first[it.ID]; dup {
			return &ItemError{Index: i, ID: it.ID, Err: fmt.Errorf("the id is already used by item %d; ids must be unique", j)}
		}
		first[it.ID] = i
	}
	return nil
}

// validate checks one item's fields.
func (it *Item) validate() error {
	switch {
	case it.ID == "":
		return errors.New("id is missing")
	case len(it.ID) > maxIDBytes:
		return fmt.Errorf("id is %d bytes; the limit is %d", len(it.ID), maxIDBytes)
	case strings.IndexFunc(it.ID, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return errors.New("id must be printable ASCII without spaces")
	}
	if it.Name == "" {
		return errors.New("name is missing")
	}
	if err := skill.CheckName(it.Name); err != nil {
		return fmt.Errorf("name %q: %v", truncateText(it.Name, 80), err)
	}
	if strings.TrimSpace(it.Description) == "" {
		return errors.New("description is missing or blank")
	}
	if n := utf8.RuneCountInString(it.Description); n > maxDescriptionChars {
		return fmt.Errorf("description is %d characters; the limit is %d", n, maxDescriptionChars)
	}
	if it.Repository == "" {
		return errors.New("repository is missing; every item needs the repository it installs from")
	}
	if err := checkRepository(it.Repository); err != nil {
		return err
	}
	if err := checkPath(it.Path); err != nil {
		return err
	}
	if err := checkCommit(it.Commit); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"author", it.Author}, {"category", it.Category}, {"license", it.License}} {
		if len(f.v) > maxTextBytes {
			return fmt.Errorf("%s is %d bytes; the limit is %d", f.name, len(f.v), maxTextBytes)
		}
		if strings.ContainsFunc(f.v, isControl) {
			return fmt.Errorf("%s contains a control character", f.name)
		}
	}
	if len(it.Requirements) > maxRequirementsBytes {
		return fmt.Errorf("requirements is %d bytes; the limit is %d", len(it.Requirements), maxRequirementsBytes)
	}
	if it.FileCount < 0 || it.Size < 0 {
		return errors.New("file_count and size must not be negative")
	}
	if it.TreeDigest != "" {
		hex, ok := strings.CutPrefix(it.TreeDigest, "sha256:")
		if !ok || !isHex(hex, 64) {
			return fmt.Errorf("tree_digest %q must be \"sha256:\" and 64 lowercase hex digits", truncateText(it.TreeDigest, 80))
		}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// checkRepository accepts an absolute URL a git client can read: https,
// http, ssh or git with a host, or file with a path. Credentials are
// refused: a catalog is public, and a URL with a secret in it would end in
// logs and in every installed version's origin.
func checkRepository(s string) error {
	if s == "" {
		return errors.New("repository is missing")
	}
	if len(s) > maxURLBytes {
		return fmt.Errorf("repository URL is %d bytes; the limit is %d", len(s), maxURLBytes)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("repository %q is not a URL", truncateText(s, 80))
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return fmt.Errorf("repository %q has no host", truncateText(s, 80))
		}
	case "file":
		if u.Path == "" {
			return fmt.Errorf("repository %q has no path", truncateText(s, 80))
		}
	default:
		return fmt.Errorf("repository %q must be an absolute https, http, ssh, git or file URL", truncateText(s, 80))
	}
	if _, hasPassword := u.User.Password(); hasPassword || (u.User != nil && u.Scheme != "ssh") {
		return errors.New("repository URL carries credentials; a catalog lists public URLs only")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("repository %q must not have a query or fragment", truncateText(s, 80))
	}
	return nil
}

// checkPath accepts a relative slash-separated folder without "." or ".."
// elements, or "" for the repository root.
func checkPath(p string) error {
	if p == "" {
		return nil
	}
	if len(p) > maxPathBytes {
		return fmt.Errorf("path is %d bytes; the limit is %d", len(p), maxPathBytes)
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || strings.ContainsFunc(p, isControl) {
		return fmt.Errorf("path %q must be relative, slash-separated and without control characters", truncateText(p, 80))
	}
	for elem := range strings.SplitSeq(p, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return fmt.Errorf("path %q must not have empty, \".\" or \"..\" elements", truncateText(p, 80))
		}
	}
	return nil
}

func checkCommit(c string) error {
	if c != "" && !isHex(c, 40) && !isHex(c, 64) {
		return fmt.Errorf("commit %q must be 40 or 64 lowercase hex digits", truncateText(c, 80))
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// truncateText cuts s to at most n bytes on a character boundary, for
// quoting untrusted text in messages.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Marshal encodes snap as a catalog document: indented, items in their
// order, ending with a newline. It does not validate snap; Parse does.
func Marshal(snap *Snapshot) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(snap); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

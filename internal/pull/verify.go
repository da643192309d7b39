package pull

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// VerifyError is a verification failure: what the server sent contradicts
// what it listed. The pull is refused and nothing is written.
type VerifyError struct {
	// URI is the file or skill that failed.
	URI string
	// Reason says what differs.
	Reason string
}

// Error returns "verification failed for <uri>: <reason>".
func (e *VerifyError) Error() string {
	return fmt.Sprintf("verification failed for %s: %s", e.URI, e.Reason)
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// checkContent checks bytes read for f against the listed size and digest
// (SEP-2640 H10). A wrong length alone is a failure.
func checkContent(f File, data []byte) error {
	if int64(len(data)) != f.Size {
		return &VerifyError{URI: f.URI, Reason: fmt.Sprintf("size mismatch: listed %d bytes, read %d", f.Size, len(data))}
	}
	if d := digestOf(data); d != f.Digest {
		return &VerifyError{URI: f.URI, Reason: fmt.Sprintf("digest mismatch: listed %s, read %s", f.Digest, d)}
	}
	return nil
}

// checkFrontmatter parses the frontmatter of a fetched SKILL.md and compares
// it field by field with the frontmatter the entry listed (SEP-2640 H12).
//
// The comparison is JSON equivalence per top-level key: both sides must
// have the same top-level keys, and each value must be equal once decoded,
// with numbers compared as IEEE doubles (so 1.0 equals 1, as in
// JavaScript) and object keys compared as sets at every depth. The file is
// rendered as the YAML 1.2 core schema reads it ([skill.Frontmatter.JSON]).
// The official conformance suite compares JSON.stringify of each top-level
// value, which is also sensitive to the order of keys inside nested
// objects; we deliberately are not, because a server that re-encodes
// frontmatter through sorted maps (Go's encoding/json does) reorders keys
// without changing a single value, and order carries no meaning. Every
// value, type and key is still compared exactly; duplicate keys in the
// entry are refused when the entry is parsed.
func checkFrontmatter(uri string, listed json.RawMessage, data []byte) error {
	doc, err := skill.Parse(data)
	if err != nil {
		return &VerifyError{URI: uri, Reason: fmt.Sprintf("the fetched SKILL.md has no readable frontmatter: %v", err)}
	}
	want, err := decodeObject(listed)
	if err != nil {
		return &VerifyError{URI: uri, Reason: fmt.Sprintf("listed frontmatter: %v", err)}
	}
	fm := doc.Frontmatter
	var diffs []string
	fileKeys := fm.Keys()
	inFile := make(map[string]bool, len(fileKeys))
	for _, k := range fileKeys {
		inFile[k] = true
	}
	for _, k := range want.keys {
		if !inFile[k] {
			diffs = append(diffs, fmt.Sprintf("field %q is listed but not in the file", k))
			continue
		}
		raw, _ := fm.Field(k)
		got, err := decodeJSON(raw)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("field %q cannot be rendered: %v", k, err))
			continue
		}
		if !equalJSON(want.values[k], got) {
			diffs = append(diffs, fmt.Sprintf("field %q differs: listed %s, file has %s", k, show(want.values[k]), truncate(string(raw), 120)))
		}
	}
	for _, k := range fileKeys {
		if _, ok := want.values[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("field %q is in the file but not listed", k))
		}
	}
	if len(diffs) > 0 {
		return &VerifyError{URI: uri, Reason: "frontmatter differs from the listing: " + strings.Join(diffs, "; ")}
	}
	return nil
}

// decodeJSON decodes one JSON value the way decodeObject does.
func decodeJSON(raw []byte) (any, error) {
	obj, err := decodeObject(json.RawMessage(`{"v":` + string(raw) + `}`))
	if err != nil {
		return nil, err
	}
	return obj.values["v"], nil
}

// equalJSON compares two decoded values; see checkFrontmatter.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		af, err1 := strconv.ParseFloat(string(a), 64)
		bf, err2 := strconv.ParseFloat(string(bn), 64)
		if err1 != nil || err2 != nil {
			return a == bn
		}
		return af == bf
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bl[i]) {
				return false
			}
		}
		return true
	case *object:
		bo, ok := b.(*object)
		if !ok || len(a.values) != len(bo.values) {
			return false
		}
		for k, v := range a.values {
			w, ok := bo.values[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// show renders a decoded value for an error message, shortened.
func show(v any) string {
	b, err := json.Marshal(plain(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 120)
}

func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.values))
		for k, x := range v.values {
			m[k] = plain(x)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = plain(x)
		}
		return out
	}
	return v
}

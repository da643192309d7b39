package skill

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Frontmatter is the ordered top-level mapping of a SKILL.md frontmatter.
//
// Values are typed by the YAML 1.2 core schema: an unquoted 1.0 is a
// number, yes and 2024-01-02 are strings. A Frontmatter is immutable and
// safe for concurrent use; the slices and maps its methods return are the
// caller's to keep or modify.
type Frontmatter struct {
	keys   []string       // top-level keys in source order
	index  map[string]int // key → position in keys
	kNodes []*yaml.Node   // key nodes, parallel to keys
	vNodes []*yaml.Node   // value nodes with aliases followed, parallel to keys
	fields [][]byte       // JSON of each value, parallel to keys
	json   []byte         // the whole mapping as JSON
	bom    bool           // the file started with a UTF-8 BOM
}

// newFrontmatter renders the top-level mapping root. Each field is rendered
// on its own so that Field needs no re-parsing, and so that JSON is the
// fields joined in source order.
func newFrontmatter(root *yaml.Node) (*Frontmatter, error) {
	if len(root.Content)%2 != 0 {
		return nil, fail(root, "mapping has a key without a value")
	}
	n := len(root.Content) / 2
	f := &Frontmatter{
		keys:   make([]string, 0, n),
		index:  make(map[string]int, n),
		kNodes: make([]*yaml.Node, 0, n),
		vNodes: make([]*yaml.Node, 0, n),
		fields: make([][]byte, 0, n),
	}
	r := &renderer{path: []*yaml.Node{root}}
	seen := make(map[string]bool, n)
	out := []byte{'{'}
	for i := 0; i < len(root.Content); i += 2 {
		kn, vn := root.Content[i], root.Content[i+1]
		k, err := r.key(kn, seen)
		if err != nil {
			return nil, err
		}
		r.buf = r.buf[:0]
		if err := r.value(vn, 1); err != nil {
			return nil, err
		}
		field := bytes.Clone(r.buf)
		if len(out)+len(field) > maxJSONBytes {
			return nil, fail(vn, "frontmatter expands to more than %d bytes of JSON; remove the anchors and aliases", maxJSONBytes)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, k)
		out = append(out, ':')
		out = append(out, field...)

		f.index[k] = len(f.keys)
		f.keys = append(f.keys, k)
		f.kNodes = append(f.kNodes, kn)
		f.vNodes = append(f.vNodes, deref(vn))
		f.fields = append(f.fields, field)
	}
	f.json = append(out, '}')
	return f, nil
}

// deref follows an alias to its anchored node. Anchors never point at
// aliases, so one step is enough.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// node returns the value node for key, or nil.
func (f *Frontmatter) node(key string) *yaml.Node {
	if f == nil {
		return nil
	}
	i, ok := f.index[key]
	if !ok {
		return nil
	}
	return f.vNodes[i]
}

// scalarOf resolves n when it is a scalar.
func scalarOf(n *yaml.Node) (scalar, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return scalar{}, false
	}
	return resolveScalar(n), true
}

// stringOf returns the value of n when it resolves to a string.
func stringOf(n *yaml.Node) (string, bool) {
	s, ok := scalarOf(n)
	if !ok || s.kind != kindString {
		return "", false
	}
	return s.str, true
}

// Keys returns the top-level keys in source order.
func (f *Frontmatter) Keys() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.keys...)
}

// JSON returns the mapping rendered as compact JSON with no trailing
// newline. Keys keep their source order at every nesting level. Values are
// what the JavaScript "yaml" library (YAML 1.2 core schema) would produce,
// rendered as JSON.stringify would: 1.0 is 1, 0x1F is 31, .inf is null, a
// date is a string. Non-string keys become their JavaScript string form
// (null becomes ""), aliases are expanded, and a merge key "<<" is kept as
// an ordinary key, since YAML 1.2 has no merge keys.
func (f *Frontmatter) JSON() []byte {
	if f == nil {
		return []byte("{}")
	}
	return bytes.Clone(f.json)
}

// Field returns the JSON of one top-level value, rendered as by JSON, and
// reports whether key is present.
func (f *Frontmatter) Field(key string) ([]byte, bool) {
	if f == nil {
		return nil, false
	}
	i, ok := f.index[key]
	if !ok {
		return nil, false
	}
	return bytes.Clone(f.fields[i]), true
}

// String returns the value of key when it is a YAML string scalar after
// resolution: quoted, block, !!str-tagged, or plain text that is not a
// null, boolean or number. It reports false otherwise.
func (f *Frontmatter) String(key string) (string, bool) {
	return stringOf(f.node(key))
}

// Name returns the "name" field when it is a string, or "".
func (f *Frontmatter) Name() string {
	s, _ := f.String("name")
	return s
}

// Description returns the "description" field when it is a string, or "".
func (f *Frontmatter) Description() string {
	s, _ := f.String("description")
	return s
}

// StringList returns key as a list of strings. A sequence of strings is
// returned as is (an empty sequence gives an empty, non-nil list). A string
// is split at commas, each item trimmed and empty items dropped, so a string
// without commas gives a one-item list and a blank string gives nil. It
// returns nil for anything else, including a sequence holding a non-string.
func (f *Frontmatter) StringList(key string) []string {
	n := f.node(key)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		list := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			s, ok := stringOf(c)
			if !ok {
				return nil
			}
			list = append(list, s)
		}
		return list
	case yaml.ScalarNode:
		s, ok := stringOf(n)
		if !ok {
			return nil
		}
		var list []string
		for item := range strings.SplitSeq(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return list
	}
	return nil
}

// Bool returns the value of key when it is a boolean (true/True/TRUE,
// false/False/FALSE or an explicit !!bool), and reports whether it was.
func (f *Frontmatter) Bool(key string) (bool, bool) {
	s, ok := scalarOf(f.node(key))
	if !ok || s.kind != kindBool {
		return false, false
	}
	return s.b, true
}

// StringMap returns key as a map when it is a mapping whose values are all
// strings, such as metadata. Keys are in their JSON string form. It reports
// false when the value is missing, not a mapping, or has a non-string value.
func (f *Frontmatter) StringMap(key string) (map[string]string, bool) {
	n := f.node(key)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, ok := scalarOf(n.Content[i])
		if !ok {
			return nil, false
		}
		v, ok := stringOf(n.Content[i+1])
		if !ok {
			return nil, false
		}
		m[keyString(k)] = v
	}
	return m, true
}

// Package mcpschema validates JSON-RPC messages against the MCP JSON schema
// of a protocol revision: the published schemas of 2025-06-18, 2025-11-25
// and 2026-07-28 (vendored under schema/, with their licence), and for the
// results of the Skills extension (SEP-2640), which the core schema does
// not define, a small schema of ours (skills.json).
//
// A message is validated as what it is: a request or notification against
// the definition of its method, an error against the error response, and a
// result against the result of the method of the request it answers (a
// Stream remembers which). Each Violation names that method and the JSON
// pointer of the offending value in the message.
//
// The validator, github.com/google/jsonschema-go, stops at the first error
// and says neither where in the message it is nor anything of formats. So
// this package finds the place itself: it walks the schema alongside the
// message from where the validator failed, down to the deepest value the
// validator refuses. A message therefore gets the first structural error
// the validator meets, not every one. The formats the schemas use (uri,
// uri-template, byte) are checked in the same walk, on the values the
// schema gives a format and only in the branches of an anyOf or oneOf the
// value matches. Nothing is compiled before a revision is first used.
package mcpschema

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed schema/*.json skills.json
var files embed.FS

// revisions are the protocol revisions with a vendored schema, oldest first.
var revisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// Revisions returns the protocol revisions this package can validate.
func Revisions() []string { return slices.Clone(revisions) }

// ErrUnknownRevision is returned by For for a revision without a schema.
var ErrUnknownRevision = errors.New("mcpschema: no schema for this protocol revision")

// Schema URLs given to the validator. They name no network location:
// nothing is ever loaded from outside the embedded files.
const (
	coreURL   = "mcp://core/schema.json"
	skillsURL = "mcp://sep-2640/schema.json"
	rootURL   = "mcp://validate/root.json"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

// Extension methods whose results the core schema does not define, and
// the definitions of skills.json that describe them.
const (
	methodListSkills    = "skills/list"
	methodGetSkill      = "skills/get"
	methodReadDirectory = "resources/directory/read"
)

var extensionResults = map[string]struct {
	def string
	// cacheable results also extend the core CacheableResult, on the
	// revisions that define it (2026-07-28 on).
	cacheable bool
}{
	methodListSkills:    {"ListSkillsResult", true},
	methodGetSkill:      {"GetSkillResult", true},
	methodReadDirectory: {"ReadResourceDirectoryResult", false},
}

// A Schema validates the messages of one protocol revision. It is safe for
// concurrent use.
type Schema struct {
	revision string
	defsKey  string // "$defs" (2020-12) or "definitions" (draft-07)
	defs     map[string]bool
	// byMethod maps a method to the definition of its request or
	// notification, and results to the definition of its result.
	byMethod map[string]string
	results  map[string]string

	core, ext *jsonschema.Schema // the documents at coreURL and skillsURL

	mu sync.Mutex
	// resolved holds, by schema location, a validator for the schema
	// there, made when first needed.
	resolved map[string]*jsonschema.Resolved
}

// loaders load each revision's schema once, when it is first asked for.
var loaders = func() map[string]func() (*Schema, error) {
	m := make(map[string]func() (*Schema, error), len(revisions))
	for _, rev := range revisions {
		m[rev] = sync.OnceValues(func() (*Schema, error) { return load(rev) })
	}
	return m
}()

// For returns the schema of protocol revision rev, loading it on first use.
func For(rev string) (*Schema, error) {
	l, ok := loaders[rev]
	if !ok {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownRevision, rev, strings.Join(revisions, ", "))
	}
	return l()
}

// Revision returns the protocol revision of s.
func (s *Schema) Revision() string { return s.revision }

func load(rev string) (*Schema, error) {
	core, err := readDoc("schema/"+rev+".json", nil)
	if err != nil {
		return nil, err
	}
	defs, defsKey := core.Defs, "$defs"
	var rewrite func([]byte) []byte
	if core.Definitions != nil {
		// A draft-07 core keeps its definitions under another name.
		defs, defsKey = core.Definitions, "definitions"
		rewrite = func(data []byte) []byte {
			return []byte(strings.ReplaceAll(string(data), coreURL+"#/$defs/", coreURL+"#/definitions/"))
		}
	}
	ext, err := readDoc("skills.json", rewrite)
	if err != nil {
		return nil, err
	}
	s := &Schema{revision: rev, defsKey: defsKey, core: core, ext: ext,
		resolved: map[string]*jsonschema.Resolved{},
		defs:     map[string]bool{}, byMethod: map[string]string{}, results: map[string]string{}}
	for name, def := range defs {
		s.defs[name] = true
		method := def.Properties["method"]
		if method == nil || method.Const == nil {
			continue
		}
		m, ok := (*method.Const).(string)
		if !ok {
			continue
		}
		s.byMethod[m] = name
		if base, ok := strings.CutSuffix(name, "Request"); ok {
			if _, has := defs[base+"Result"]; has {
				s.results[m] = base + "Result"
			}
		}
	}
	if len(s.byMethod) == 0 {
		return nil, fmt.Errorf("mcpschema: %s: the schema defines no methods", rev)
	}
	return s, nil
}

func readDoc(name string, rewrite func([]byte) []byte) (*jsonschema.Schema, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("mcpschema: %v", err)
	}
	if rewrite != nil {
		data = rewrite(data)
	}
	var doc jsonschema.Schema
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mcpschema: %s: %v", name, err)
	}
	return &doc, nil
}

// loadDoc gives the validator the embedded documents and refuses every
// other: validation never reaches the network or the file system.
func (s *Schema) loadDoc(u *url.URL) (*jsonschema.Schema, error) {
	switch u.String() {
	case coreURL:
		return s.core, nil
	case skillsURL:
		return s.ext, nil
	}
	return nil, fmt.Errorf("mcpschema: %s is not an embedded schema", u)
}

// A node is a schema and where it is: its document and its JSON pointer
// there.
type node struct {
	doc, ptr string
	s        *jsonschema.Schema
}

func (n node) child(s *jsonschema.Schema, tokens ...string) node {
	ptr := n.ptr
	for _, t := range tokens {
		ptr += "/" + escape(t)
	}
	return node{n.doc, ptr, s}
}

// definition returns the node of definition def of the core schema, or of
// skills.json when ext is set.
func (s *Schema) definition(def string, ext bool) (node, bool) {
	if ext {
		d, ok := s.ext.Defs[def]
		return node{skillsURL, "/$defs/" + escape(def), d}, ok && d != nil
	}
	d, ok := s.core.Defs[def]
	if s.defsKey == "definitions" {
		d, ok = s.core.Definitions[def]
	}
	return node{coreURL, "/" + s.defsKey + "/" + escape(def), d}, ok && d != nil
}

// target returns the node a $ref in document doc names, if it names a
// definition (the only references these schemas hold).
func (s *Schema) target(ref, doc string) (node, bool) {
	d, frag, _ := strings.Cut(ref, "#")
	if d == "" {
		d = doc
	}
	var defs map[string]*jsonschema.Schema
	key, name := "", ""
	if n, ok := strings.CutPrefix(frag, "/$defs/"); ok {
		key, name = "$defs", n
	} else if n, ok := strings.CutPrefix(frag, "/definitions/"); ok {
		key, name = "definitions", n
	} else {
		return node{}, false
	}
	var root *jsonschema.Schema
	switch d {
	case coreURL:
		root = s.core
	case skillsURL:
		root = s.ext
	default:
		return node{}, false
	}
	defs = root.Defs
	if key == "definitions" {
		defs = root.Definitions
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	t, ok := defs[name]
	return node{d, "/" + key + "/" + escape(name), t}, ok && t != nil
}

// validate validates v against the schema at n with a validator made on
// first use for that location: a root that refers to it, resolved with the
// embedded documents. Definitions of skills.json are validated as 2020-12,
// what that file is written in, whatever the core's draft.
func (s *Schema) validate(n node, v any) error {
	loc := n.doc + "#" + n.ptr
	s.mu.Lock()
	rs, ok := s.resolved[loc]
	if !ok {
		draft := draft2020
		if n.doc == coreURL && s.core.Schema != "" {
			draft = s.core.Schema
		}
		root := &jsonschema.Schema{Schema: draft, Ref: loc}
		var err error
		rs, err = root.Resolve(&jsonschema.ResolveOptions{BaseURI: rootURL, Loader: s.loadDoc})
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("mcpschema: %s: resolving %s: %v", s.revision, n.ptr, err)
		}
		s.resolved[loc] = rs
	}
	s.mu.Unlock()
	return rs.Validate(v)
}

// A Violation is one value of a message that its revision's schema
// refuses.
type Violation struct {
	// Method is the method of the request or notification, or of the
	// request a response answers ("" if unknown).
	Method string
	// URI is the params.uri of that request, if a Stream saw one (the file
	// of a resources/read, the skill of a skills/get).
	URI string
	// Pointer is the JSON pointer (RFC 6901) of the value in the message,
	// "" for the whole message.
	Pointer string
	// Definition is the schema definition the value was validated against.
	Definition string
	// Message says what is wrong.
	Message string
}

func (v Violation) String() string {
	method := v.Method
	if method == "" {
		method = "message"
	}
	if v.URI != "" {
		method += " " + v.URI
	}
	ptr := v.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return fmt.Sprintf("%s: %s: %s (%s)", method, ptr, v.Message, v.Definition)
}

// Validate validates one JSON-RPC message. For a response, method is the
// method of the request it answers; "" validates only the envelope. A
// batch (a JSON array) is refused: none of these revisions has batches.
// Of the structural errors in one definition, the first the validator
// meets is reported; every format error is.
func (s *Schema) Validate(msg []byte, method string) []Violation {
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		return []Violation{{Method: method, Message: "not JSON: " + err.Error()}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if _, isBatch := v.([]any); isBatch {
			return []Violation{{Method: method, Message: "a JSON-RPC batch; revision " + s.revision + " has none"}}
		}
		return []Violation{{Method: method, Message: "not a JSON-RPC message object"}}
	}
	var out []Violation
	check := func(def string, ext bool, value any, prefix string) {
		out = append(out, s.check(def, ext, value, prefix, method)...)
	}
	_, hasMethod := obj["method"]
	_, hasError := obj["error"]
	_, hasResult := obj["result"]
	switch {
	case hasMethod:
		m, _ := obj["method"].(string)
		method = m
		def, ok := s.byMethod[m]
		_, isRequest := obj["id"]
		if !ok || strings.HasSuffix(def, "Request") != isRequest {
			def = "JSONRPCNotification"
			if isRequest {
				def = "JSONRPCRequest"
			}
		}
		check(def, false, v, "")
	case hasError:
		check(s.first("JSONRPCErrorResponse", "JSONRPCError"), false, v, "")
	case hasResult:
		check(s.first("JSONRPCResultResponse", "JSONRPCResponse"), false, v, "")
		result := obj["result"]
		m, _ := result.(map[string]any)
		if rt, _ := m["resultType"].(string); rt == "input_required" && s.defs["InputRequiredResult"] {
			check("InputRequiredResult", false, result, "/result")
			break
		}
		if def, ok := s.results[method]; ok {
			check(def, false, result, "/result")
		} else if e, ok := extensionResults[method]; ok {
			check(e.def, true, result, "/result")
			if e.cacheable && s.defs["CacheableResult"] {
				check("CacheableResult", false, result, "/result")
			}
		}
	default:
		out = append(out, Violation{Method: method, Message: "neither a request, a notification nor a response"})
	}
	return dedupe(out)
}

// first returns the first of names the schema defines (the envelopes were
// renamed between revisions), or the last.
func (s *Schema) first(names ...string) string {
	for _, n := range names {
		if s.defs[n] {
			return n
		}
	}
	return names[len(names)-1]
}

// A leaf is one thing wrong, at a pointer into the validated value.
type leaf struct{ ptr, msg string }

// check validates value against def and returns what is wrong, one
// violation per place, with prefix before each pointer.
func (s *Schema) check(def string, ext bool, value any, prefix, method string) []Violation {
	n, ok := s.definition(def, ext)
	if !ok {
		return []Violation{{Method: method, Pointer: prefix, Definition: def,
			Message: fmt.Sprintf("mcpschema: %s: no definition %s", s.revision, def)}}
	}
	leaves := s.visit(n, value, prefix, s.validate(n, value), 0)
	// Group the leaves by where they are: the branches of an anyOf (text or
	// blob) fail at the same place, and together say what would do.
	byPtr := map[string][]string{}
	var order []string
	for _, l := range leaves {
		if _, ok := byPtr[l.ptr]; !ok {
			order = append(order, l.ptr)
		}
		if !slices.Contains(byPtr[l.ptr], l.msg) {
			byPtr[l.ptr] = append(byPtr[l.ptr], l.msg)
		}
	}
	out := make([]Violation, 0, len(order))
	for _, ptr := range order {
		out = append(out, Violation{Method: method, Pointer: ptr, Definition: def, Message: strings.Join(byPtr[ptr], "; or ")})
	}
	return out
}

// maxDepth bounds the walk of a schema that refers to itself without
// going deeper into the value.
const maxDepth = 256

// visit walks the schema at n alongside v, the value at ptr, and returns
// what is wrong there. failed is the validator's verdict on v at n: if it
// is nil, only formats can be wrong; otherwise the walk goes down to the
// deepest value the validator refuses, and reports its error there.
func (s *Schema) visit(n node, v any, ptr string, failed error, depth int) []leaf {
	if n.s == nil || depth > maxDepth {
		return nil
	}
	var out []leaf
	located := false // failed is explained by a leaf below
	// sub visits a schema that applies to v itself or to a member of it.
	sub := func(c node, cv any, cptr string) {
		var err error
		if failed != nil {
			err = s.validate(c, cv)
		}
		ls := s.visit(c, cv, cptr, err, depth+1)
		if err != nil && len(ls) > 0 {
			located = true
		}
		out = append(out, ls...)
	}
	if f, ok := formats[n.s.Format]; ok {
		if str, isStr := v.(string); isStr {
			if err := f(str); err != nil {
				out = append(out, leaf{ptr, "format " + n.s.Format + ": " + err.Error()})
			}
		}
	}
	if n.s.Ref != "" {
		if t, ok := s.target(n.s.Ref, n.doc); ok {
			sub(t, v, ptr)
		}
	}
	for i, c := range n.s.AllOf {
		sub(n.child(c, "allOf", fmt.Sprint(i)), v, ptr)
	}
	if len(n.s.AnyOf) > 0 {
		ls, ok := s.branches(n, "anyOf", n.s.AnyOf, v, ptr, depth)
		located = located || ok
		out = append(out, ls...)
	}
	if len(n.s.OneOf) > 0 {
		ls, ok := s.branches(n, "oneOf", n.s.OneOf, v, ptr, depth)
		located = located || ok
		out = append(out, ls...)
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if c, ok := n.s.Properties[k]; ok {
				sub(n.child(c, "properties", k), v[k], ptr+"/"+escape(k))
			} else if a := n.s.AdditionalProperties; a != nil && !isFalse(a) && len(n.s.PatternProperties) == 0 {
				sub(n.child(a, "additionalProperties"), v[k], ptr+"/"+escape(k))
			}
		}
	case []any:
		prefix := n.s.PrefixItems
		key := "prefixItems"
		if n.s.ItemsArray != nil {
			prefix, key = n.s.ItemsArray, "items"
		}
		for i, item := range v {
			iptr := ptr + "/" + fmt.Sprint(i)
			switch {
			case i < len(prefix):
				sub(n.child(prefix[i], key, fmt.Sprint(i)), item, iptr)
			case n.s.Items != nil:
				sub(n.child(n.s.Items, "items"), item, iptr)
			}
		}
	}
	if failed != nil && !located {
		out = append(out, leaf{ptr, message(failed)})
	}
	return out
}

// branches visits the branches of an anyOf or oneOf. If v matches some,
// only their formats can be wrong, and are if they are wrong in every
// branch v matches (those of the first are reported). If v matches none,
// the branches whose first failure is deepest say what is wrong (a blob
// that is not base64, not a missing text); branches that fail equally
// deep are all reported, as alternatives. located reports leaves that
// explain a failure.
func (s *Schema) branches(n node, key string, bs []*jsonschema.Schema, v any, ptr string, depth int) (out []leaf, located bool) {
	var matched [][]leaf
	var failed []node
	var errs []error
	for i, b := range bs {
		c := n.child(b, key, fmt.Sprint(i))
		if err := s.validate(c, v); err != nil {
			failed, errs = append(failed, c), append(errs, err)
			continue
		}
		ls := s.visit(c, v, ptr, nil, depth+1)
		if len(ls) == 0 {
			return nil, false
		}
		matched = append(matched, ls)
	}
	if len(matched) > 0 {
		return matched[0], false // a oneOf matched twice is its parent's to report
	}
	most := -1
	for i, c := range failed {
		ls := s.visit(c, v, ptr, errs[i], depth+1)
		d := maxDepth
		for _, l := range ls {
			d = min(d, strings.Count(l.ptr, "/"))
		}
		switch {
		case d > most:
			out, most = ls, d
		case d == most:
			out = append(out, ls...)
		}
	}
	return out, len(out) > 0
}

// formats are the formats the schemas use, which the validator ignores.
var formats = map[string]func(string) error{
	"uri":          validateURI,
	"uri-template": validateURITemplate,
	"byte":         validateBase64,
}

// isFalse reports whether a is the schema false, which the validator
// reports at the object that has the member it refuses.
func isFalse(a *jsonschema.Schema) bool {
	return a.Not != nil && a.Not.Type == "" && a.Not.Types == nil && a.Not.Ref == "" && len(a.Not.Properties) == 0
}

// message is what the validator says is wrong, without the schemas it
// went through on the way and cut to a line.
func message(err error) string {
	m, _, _ := strings.Cut(err.Error(), "\n")
	for strings.HasPrefix(m, "validating ") {
		i := strings.Index(m, ": ")
		if i < 0 {
			break
		}
		m = m[i+2:]
	}
	if len(m) > 300 {
		m = m[:300] + "..."
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escape encodes one JSON pointer token.
func escape(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// dedupe drops repeated violations (the envelope and the method's result
// definition may both refuse a value).
func dedupe(vs []Violation) []Violation {
	seen := map[[2]string]bool{}
	out := vs[:0]
	for _, v := range vs {
		k := [2]string{v.Pointer, v.Message}
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// validateURI is the "uri" format as RFC 3986 defines a URI, as strict as
// the validators real clients use: a scheme, then only unreserved and
// reserved characters and well-formed percent escapes (no spaces, no
// non-ASCII, no backslashes). The validator's own check accepts whatever
// Go's url.Parse does, which is far more.
func validateURI(s string) error {
	colon := strings.IndexByte(s, ':')
	if colon < 1 || !isAlpha(s[0]) {
		return errors.New("not an absolute URI: no scheme")
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return fmt.Errorf("the scheme holds %q", c)
		}
	}
	for i := colon + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c), isDigit(c), strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Errorf("a bad percent escape at byte %d", i)
			}
			i += 2
		default:
			return fmt.Errorf("%q at byte %d must be percent-encoded", c, i)
		}
	}
	return nil
}

// validateURITemplate is the "uri-template" format as RFC 6570 defines a
// template: literals of URI characters (or percent escapes), and
// expressions of an optional operator and comma-separated variable names,
// each with an optional prefix length or explode modifier. The validator's
// own check parses the template as a URL, which refuses an expression in
// the host ("skill://{+path}", a valid template).
func validateURITemplate(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Errorf("an expression opened at byte %d is not closed", i)
			}
			if err := validateExpression(s[i+1 : i+end]); err != nil {
				return fmt.Errorf("the expression at byte %d: %v", i, err)
			}
			i += end
		case c == '}':
			return fmt.Errorf("a '}' at byte %d closes no expression", i)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Errorf("a bad percent escape at byte %d", i)
			}
			i += 2
		case c <= ' ' || c == 0x7f || strings.IndexByte("\"'<>\\^`|", c) >= 0:
			return fmt.Errorf("%q at byte %d may not appear in a template", c, i)
		}
	}
	return nil
}

// validateExpression checks the inside of one template expression.
func validateExpression(e string) error {
	if e != "" && strings.IndexByte("+#./;?&=,!@|", e[0]) >= 0 {
		e = e[1:]
	}
	if e == "" {
		return errors.New("no variable")
	}
	for spec := range strings.SplitSeq(e, ",") {
		name := spec
		if i := strings.IndexByte(spec, ':'); i >= 0 {
			name = spec[:i]
			n := spec[i+1:]
			if n == "" || len(n) > 4 || strings.TrimLeft(n, "0123456789") != "" || n[0] == '0' {
				return fmt.Errorf("the prefix length of %q is not 1 to 9999", spec)
			}
		} else {
			name = strings.TrimSuffix(spec, "*")
		}
		if name == "" {
			return errors.New("an empty variable name")
		}
		for j := 0; j < len(name); j++ {
			if c := name[j]; !isAlpha(c) && !isDigit(c) && c != '_' && c != '.' && c != '%' {
				return fmt.Errorf("%q in a variable name", c)
			}
		}
	}
	return nil
}

// validateBase64 is the OpenAPI "byte" format the schemas give blobs:
// standard base64 with padding.
func validateBase64(s string) error {
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return errors.New("not standard base64")
	}
	return nil
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

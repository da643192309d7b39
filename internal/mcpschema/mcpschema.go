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
package mcpschema

import (
	"bytes"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed schema/*.json skills.json
var files embed.FS

// revisions are the protocol revisions with a vendored schema, oldest first.
var revisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// Revisions returns the protocol revisions this package can validate.
func Revisions() []string { return slices.Clone(revisions) }

// ErrUnknownRevision is returned by For for a revision without a schema.
var ErrUnknownRevision = errors.New("mcpschema: no schema for this protocol revision")

// Schema URLs inside a revision's compiler. They name no network location:
// nothing is ever loaded from outside the embedded files.
const (
	coreURL   = "mcp://core/schema.json"
	skillsURL = "mcp://sep-2640/schema.json"
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

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

var (
	schemasMu sync.Mutex
	schemas   = map[string]*Schema{}
)

// For returns the schema of protocol revision rev, loading it on first use.
func For(rev string) (*Schema, error) {
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s, ok := schemas[rev]; ok {
		return s, nil
	}
	if !slices.Contains(revisions, rev) {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownRevision, rev, strings.Join(revisions, ", "))
	}
	s, err := load(rev)
	if err != nil {
		return nil, err
	}
	schemas[rev] = s
	return s, nil
}

// Revision returns the protocol revision of s.
func (s *Schema) Revision() string { return s.revision }

func load(rev string) (*Schema, error) {
	core, err := readDoc("schema/" + rev + ".json")
	if err != nil {
		return nil, err
	}
	data, err := files.ReadFile("skills.json")
	if err != nil {
		return nil, fmt.Errorf("mcpschema: %v", err)
	}
	top, _ := core.(map[string]any)
	defsKey := "$defs"
	if _, ok := top["definitions"]; ok {
		// A draft-07 core keeps its definitions under another name.
		defsKey = "definitions"
		data = bytes.ReplaceAll(data, []byte(coreURL+"#/$defs/"), []byte(coreURL+"#/definitions/"))
	}
	ext, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("mcpschema: skills.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "uri", Validate: validateURI})
	c.RegisterFormat(&jsonschema.Format{Name: "byte", Validate: validateBase64})
	c.RegisterFormat(&jsonschema.Format{Name: "uri-template", Validate: validateURITemplate})
	c.UseLoader(noLoader{})
	if err := c.AddResource(coreURL, core); err != nil {
		return nil, fmt.Errorf("mcpschema: %s: %v", rev, err)
	}
	if err := c.AddResource(skillsURL, ext); err != nil {
		return nil, fmt.Errorf("mcpschema: skills.json: %v", err)
	}
	s := &Schema{revision: rev, defsKey: defsKey, compiler: c, compiled: map[string]*jsonschema.Schema{},
		defs: map[string]bool{}, byMethod: map[string]string{}, results: map[string]string{}}
	defs, _ := top[defsKey].(map[string]any)
	for name, d := range defs {
		s.defs[name] = true
		def, _ := d.(map[string]any)
		props, _ := def["properties"].(map[string]any)
		method, _ := props["method"].(map[string]any)
		m, ok := method["const"].(string)
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

func readDoc(name string) (any, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("mcpschema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("mcpschema: %s: %v", name, err)
	}
	return doc, nil
}

// noLoader refuses every schema not added to the compiler: validation
// never reaches the network or the file system.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("mcpschema: %s is not an embedded schema", url)
}

// compile returns the compiled definition def of the core schema, or of
// skills.json when ext is set.
func (s *Schema) compile(def string, ext bool) (*jsonschema.Schema, error) {
	loc := coreURL + "#/" + s.defsKey + "/" + def
	if ext {
		loc = skillsURL + "#/$defs/" + def
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[loc]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("mcpschema: %s: compiling %s: %v", s.revision, def, err)
	}
	s.compiled[loc] = sch
	return sch, nil
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
func (s *Schema) Validate(msg []byte, method string) []Violation {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(msg))
	if err != nil {
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

var printer = message.NewPrinter(language.English)

// check validates value against def and returns the leaf errors, one per
// instance location, with prefix before each pointer.
func (s *Schema) check(def string, ext bool, value any, prefix, method string) []Violation {
	sch, err := s.compile(def, ext)
	if err != nil {
		return []Violation{{Method: method, Pointer: prefix, Definition: def, Message: err.Error()}}
	}
	err = sch.Validate(value)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return []Violation{{Method: method, Pointer: prefix, Definition: def, Message: err.Error()}}
	}
	// Group the leaves by where they are: the branches of an anyOf (text or
	// blob) fail at the same place, and together say what would do.
	byPtr := map[string][]string{}
	var order []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range bestBranches(e) {
				walk(c)
			}
			return
		}
		ptr := prefix + pointer(e.InstanceLocation)
		msg := e.ErrorKind.LocalizedString(printer)
		if _, ok := byPtr[ptr]; !ok {
			order = append(order, ptr)
		}
		if !slices.Contains(byPtr[ptr], msg) {
			byPtr[ptr] = append(byPtr[ptr], msg)
		}
	}
	walk(ve)
	out := make([]Violation, 0, len(order))
	for _, ptr := range order {
		out = append(out, Violation{Method: method, Pointer: ptr, Definition: def, Message: strings.Join(byPtr[ptr], "; or ")})
	}
	return out
}

// bestBranches returns the causes of e to report. Of the failed branches
// of an anyOf or oneOf, those whose first failure is deepest say what is
// wrong (a blob that is not base64, not a missing text); branches that
// failed at the same depth are all reported, as alternatives.
func bestBranches(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
	case *kind.OneOf:
		if k.Subschemas != nil {
			return e.Causes // more than one matched: nothing to choose
		}
	default:
		return e.Causes
	}
	var best []*jsonschema.ValidationError
	most := -1
	for _, c := range e.Causes {
		switch d := depth(c); {
		case d > most:
			best, most = []*jsonschema.ValidationError{c}, d
		case d == most:
			best = append(best, c)
		}
	}
	return best
}

// depth is the shortest instance location of e's leaves: how far into the
// value a branch got before anything failed.
func depth(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return len(e.InstanceLocation)
	}
	d := depth(e.Causes[0])
	for _, c := range e.Causes[1:] {
		d = min(d, depth(c))
	}
	return d
}

// pointer encodes an instance location as a JSON pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
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
func validateURI(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
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
func validateURITemplate(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
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
func validateBase64(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return errors.New("not standard base64")
	}
	return nil
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Malformed strings inside a well-formed request. No client means to send a
// NUL in a URI or an escape character in a cursor, and they do harm: the
// go-sdk quotes an unknown resource's URI with Go syntax into the error's
// data, which for a control character or an unprintable rune is not JSON,
// so the SDK cannot encode its own answer (stdio ends the session, HTTP
// answers an empty 200). paramsMiddleware refuses such strings before any
// handler sees them, and repairs error data that is not JSON whatever its
// origin.

// paramsMiddleware refuses, with -32602, a request whose params hold a
// string a client never means to send (see checkParams), and makes sure
// every error the handlers return has JSON data. The handshake is left
// alone: a client with an odd name in its clientInfo still connects, and
// nothing in initialize is echoed back.
func (s *server) paramsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" && !strings.HasPrefix(method, "notifications/") {
			if err := checkParams(req.GetParams()); err != nil {
				s.log.DebugContext(ctx, "request refused: malformed string", "method", method, "err", err)
				return nil, err
			}
		}
		res, err := next(ctx, method, req)
		return res, jsonErrorData(err)
	}
}

// identKeys are the members whose strings name something (a URI, a cursor,
// a skill, tool or prompt, a filter): they are held to the stricter rule.
var identKeys = map[string]bool{
	"uri": true, "cursor": true, "name": true, "path": true,
	"skill": true, "playbook": true, "library": true, "category": true,
}

// checkParams returns a -32602 error naming the first string in params (a
// member name or a value, at any depth) that holds:
//
//   - a control character (C0 other than tab, newline and carriage return,
//     DEL, C1), or an escape of one;
//   - a lone surrogate escape, or invalid UTF-8;
//   - in a name (a member name, or the value of a member in identKeys) also
//     tab, newline and carriage return, U+FFFD (what invalid UTF-8 and lone
//     surrogates decode to) and invisible formatting characters (bidi
//     controls, zero-width characters, tags).
//
// The message names the member and the offending character, never the
// string itself. params is encoded again to be read: the SDK has decoded
// the typed fields already (a lone surrogate there is U+FFFD by now), while
// raw members such as tools/call arguments keep their escapes.
func checkParams(params any) error {
	data, err := json.Marshal(params)
	if err != nil {
		return nil // not ours to judge: the handler reports it
	}
	w := newWalker(data)
	if msg := w.value(); msg != "" {
		return skillsext.InvalidParams("", "%s", msg)
	}
	return nil
}

// cleanParams reports whether raw, a request's params as sent (valid
// JSON), holds no string checkParams refuses. The front ends use it to
// leave such a request to the SDK path, which answers the error.
func cleanParams(raw []byte) bool {
	w := newWalker(raw)
	return w.value() == ""
}

// walker scans JSON (valid, as json.Marshal writes it or a decoder
// accepted it) for strings that checkParams refuses. It runs on every
// request, so a clean one costs only its two buffers: path, the member
// being scanned ("_meta.x[2].uri"), and key, the member name being read,
// grow and shrink with the walk and become strings only for a message.
type walker struct {
	data  []byte
	i     int
	depth int
	path  []byte
	key   []byte
}

// newWalker returns a walker of data whose buffers hold the paths and
// names of ordinary params without growing.
func newWalker(data []byte) walker {
	return walker{data: data, path: make([]byte, 0, 128), key: make([]byte, 0, 64)}
}

// maxParamDepth bounds the nesting walked; json.Marshal refuses deeper
// values long before this anyway.
const maxParamDepth = 10000

// value scans the value at w.i, the member at w.path, and returns a
// problem or "".
func (w *walker) value() string {
	w.space()
	if w.i >= len(w.data) {
		return ""
	}
	switch w.data[w.i] {
	case '{':
		return w.object()
	case '[':
		return w.array()
	case '"':
		return w.str(identKeys[string(lastKey(w.path))], false)
	default:
		for w.i < len(w.data) && !strings.ContainsRune(",]} \t\r\n", rune(w.data[w.i])) {
			w.i++
		}
		return ""
	}
}

func (w *walker) object() string {
	if w.depth++; w.depth > maxParamDepth {
		return "params are nested too deeply"
	}
	w.i++ // {
	for {
		w.space()
		if w.i >= len(w.data) || w.data[w.i] == '}' {
			w.i++
			w.depth--
			return ""
		}
		if w.data[w.i] == ',' {
			w.i++
			continue
		}
		if msg := w.str(true, true); msg != "" {
			return msg
		}
		w.space()
		w.i++ // :
		parent := len(w.path)
		w.path = joinKey(w.path, w.key)
		msg := w.value()
		w.path = w.path[:parent]
		if msg != "" {
			return msg
		}
	}
}

func (w *walker) array() string {
	if w.depth++; w.depth > maxParamDepth {
		return "params are nested too deeply"
	}
	w.i++ // [
	for n := 0; ; n++ {
		w.space()
		if w.i >= len(w.data) || w.data[w.i] == ']' {
			w.i++
			w.depth--
			return ""
		}
		if w.data[w.i] == ',' {
			w.i++
		}
		parent := len(w.path)
		w.path = append(strconv.AppendInt(append(w.path, '['), int64(n), 10), ']')
		msg := w.value()
		w.path = w.path[:parent]
		if msg != "" {
			return msg
		}
	}
}

func (w *walker) space() {
	for w.i < len(w.data) && strings.IndexByte(" \t\r\n", w.data[w.i]) >= 0 {
		w.i++
	}
}

// str scans the string at w.i (its opening quote), the value of the member
// at w.path or, if member, a member name below it, and returns the problem
// of its first refused character, if any. A member name's first 64 ASCII
// characters (enough to name it in a message) are left in w.key.
func (w *walker) str(ident, member bool) string {
	w.i++ // "
	start := w.i
	if member {
		w.key = w.key[:0]
	}
	for w.i < len(w.data) {
		c := w.data[w.i]
		if c == '"' {
			w.i++
			return ""
		}
		off := w.i - start
		var r rune
		if c == '\\' {
			var ok bool
			r, ok = w.escape()
			if !ok {
				return fmt.Sprintf("params.%s holds a lone UTF-16 surrogate escape at byte %d of its value; send valid Unicode text", w.where(member), off)
			}
		} else {
			var n int
			r, n = utf8.DecodeRune(w.data[w.i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Sprintf("params.%s holds invalid UTF-8 at byte %d; send valid Unicode text", w.where(member), off)
			}
			w.i += n
		}
		if what := refused(r, ident); what != "" {
			return fmt.Sprintf("params.%s holds %s (U+%04X) at byte %d of its value; %s", w.where(member), what, r, off, fix(ident))
		}
		if member && r < utf8.RuneSelf && len(w.key) < 64 {
			w.key = append(w.key, byte(r))
		}
	}
	return ""
}

// where names the string being scanned in a message: the member at w.path,
// or a member name below it.
func (w *walker) where(member bool) string {
	if member {
		return string(joinKey(w.path, []byte("<member name>")))
	}
	return string(w.path)
}

// escape decodes the escape at w.i and moves past it; ok is false for a
// lone surrogate.
func (w *walker) escape() (r rune, ok bool) {
	if w.i+1 >= len(w.data) {
		w.i = len(w.data)
		return 0, true
	}
	c := w.data[w.i+1]
	if c != 'u' {
		w.i += 2
		switch c {
		case 'n':
			return '\n', true
		case 't':
			return '\t', true
		case 'r':
			return '\r', true
		case 'b':
			return '\b', true
		case 'f':
			return '\f', true
		}
		return rune(c), true
	}
	r = w.hex4(w.i + 2)
	w.i += 6
	if !utf16IsSurrogate(r) {
		return r, true
	}
	if r >= 0xdc00 {
		return r, false // a low surrogate first
	}
	if w.i+1 < len(w.data) && w.data[w.i] == '\\' && w.data[w.i+1] == 'u' {
		if lo := w.hex4(w.i + 2); lo >= 0xdc00 && lo <= 0xdfff {
			w.i += 6
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), true
		}
	}
	return r, false
}

// hex4 decodes the four hex digits at i, or returns -1.
func (w *walker) hex4(i int) rune {
	if i+4 > len(w.data) {
		return -1
	}
	n, err := strconv.ParseUint(string(w.data[i:i+4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

func utf16IsSurrogate(r rune) bool { return 0xd800 <= r && r <= 0xdfff }

// refused returns what r is if a string may not hold it, or "".
func refused(r rune, ident bool) string {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		if ident {
			return "a tab or line break"
		}
		return ""
	case r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f):
		return "a control character"
	case !ident, r < utf8.RuneSelf: // no other ASCII character is refused
		return ""
	case r == utf8.RuneError:
		return "the replacement character (what invalid UTF-8 and lone surrogates decode to)"
	case unicode.Is(unicode.Cf, r):
		return "an invisible formatting character"
	}
	return ""
}

func fix(ident bool) string {
	if ident {
		return "send the name or URI exactly as the server listed it (a URI carries other characters percent-encoded)"
	}
	return "remove it"
}

// joinKey appends key to path as a member of it.
func joinKey(path, key []byte) []byte {
	if len(path) > 0 {
		path = append(path, '.')
	}
	return append(path, key...)
}

// lastKey returns the member name path ends with.
func lastKey(path []byte) []byte {
	if i := bytes.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := bytes.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}

// jsonErrorData returns err with its data replaced by valid JSON when err
// is a JSON-RPC error whose data is not: the go-sdk's not-found error for a
// resource writes the URI with Go quoting (`{"uri":"a\x00"}`), which the SDK
// then fails to encode, ending a stdio session. The URI is recovered from
// the Go quoting when it can be; otherwise the data is dropped.
func jsonErrorData(err error) error {
	we, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || len(we.Data) == 0 || json.Valid(we.Data) {
		return err
	}
	fixed := &jsonrpc.Error{Code: we.Code, Message: we.Message}
	if q, ok := strings.CutPrefix(string(we.Data), `{"uri":`); ok {
		if q, ok = strings.CutSuffix(q, "}"); ok {
			if uri, err := strconv.Unquote(q); err == nil {
				fixed.Data, _ = json.Marshal(map[string]string{"uri": uri})
			}
		}
	}
	return fixed
}

package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// What the stdio and HTTP front ends share: which requests they may take,
// and the results they write in place of the SDK's.

// methodReadResource is the base protocol's read; only the HTTP front end
// answers it.
const methodReadResource = "resources/read"

// fastRequest is a skills/list, skills/get or resources/read request a
// front end may answer: one JSON-RPC request object with exactly the members jsonrpc
// "2.0", id, method and (optionally) params; a plain id (an integer, or a
// string of printable ASCII without quotes or backslashes) that the SDK
// would echo byte for byte; params with only cursor (list) or uri (get, read) as
// a string, and _meta, an object. Keys are matched exactly, unknown ones and
// invalid UTF-8 refused, so no case-insensitive or lenient decoding could
// read it differently.
type fastRequest struct {
	id     []byte
	method string
	arg    string // cursor or uri
	// meta is params._meta; protocolMeta reports whether it holds keys of
	// the per-request protocol (io.modelcontextprotocol/...).
	meta         map[string]json.RawMessage
	protocolMeta bool
}

func parseFastRequest(line []byte) (fastRequest, bool) {
	if !bytes.Contains(line, []byte(`"skills/`)) && !bytes.Contains(line, []byte(`"`+methodReadResource+`"`)) {
		return fastRequest{}, false // not worth decoding: another method
	}
	var top map[string]json.RawMessage
	if !utf8.Valid(line) || json.Unmarshal(line, &top) != nil {
		return fastRequest{}, false // decoders differ on invalid UTF-8
	}
	var req fastRequest
	for k, v := range top {
		switch k {
		case "jsonrpc":
			if string(v) != `"2.0"` {
				return req, false
			}
		case "id":
			if !plainID(v) {
				return req, false
			}
			req.id = v
		case "method":
			if json.Unmarshal(v, &req.method) != nil {
				return req, false
			}
		case "params":
		default:
			return req, false
		}
	}
	if _, ok := top["jsonrpc"]; !ok || req.id == nil {
		return req, false
	}
	var argName string
	switch req.method {
	case skillsext.MethodList:
		argName = "cursor"
	case skillsext.MethodGet, methodReadResource:
		argName = "uri"
	default:
		return req, false
	}
	params, ok := top["params"]
	if !ok {
		return req, req.method == skillsext.MethodList
	}
	var members map[string]json.RawMessage
	if bytes.Equal(params, []byte("null")) || json.Unmarshal(params, &members) != nil {
		return req, false
	}
	if !cleanParams(params) {
		return req, false // the SDK path refuses it (paramsMiddleware)
	}
	for k, v := range members {
		switch k {
		case argName:
			if json.Unmarshal(v, &req.arg) != nil {
				return req, false
			}
		case "_meta":
			if bytes.Equal(v, []byte("null")) || json.Unmarshal(v, &req.meta) != nil {
				return req, false
			}
			for mk := range req.meta {
				req.protocolMeta = req.protocolMeta || strings.HasPrefix(mk, "io.modelcontextprotocol/")
			}
		default:
			return req, false
		}
	}
	return req, true
}

// plainID reports whether id is an integer in canonical form or a string of
// printable ASCII without quotes or backslashes: ids the SDK writes back as
// they came.
func plainID(id []byte) bool {
	if len(id) >= 2 && id[0] == '"' && id[len(id)-1] == '"' {
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(id) && n > -1<<53 && n < 1<<53
}

// appendFastResult appends the result of req as the SDK would encode it,
// or reports false if the request fails (the SDK then answers with the
// error). meta, if not empty, is the result's _meta, encoded.
func (s *server) appendFastResult(b []byte, req fastRequest, version string, meta []byte) ([]byte, bool) {
	b = append(b, '{')
	if len(meta) > 0 {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	switch req.method {
	case skillsext.MethodList:
		key, err := skillsext.DecodeCursor(req.arg)
		if err != nil {
			return b, false
		}
		b = append(b, `"resultType":"complete","skills":`...)
		var next string
		b, next = appendPage(b, s.store.Snapshot().Skills(), key, s.opts.PageSize)
		if next != "" {
			b = append(b, `,"nextCursor":"`...)
			b = append(b, next...)
			b = append(b, '"')
		} else {
			s.markListed()
		}
	case skillsext.MethodGet:
		sk, err := s.lookupSkill(req.arg)
		if err != nil {
			return b, false
		}
		b = append(b, `"resultType":"complete","skill":`...)
		b = sk.AppendEntry(b)
	}
	if skillsext.UsesCacheFields(version) {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, int64(s.ttlMs()), 10)
		b = append(b, `,"cacheScope":"`...)
		b = append(b, s.cacheScope()...)
		b = append(b, '"')
	}
	return append(b, '}'), true
}

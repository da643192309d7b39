package httpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// Observer hears what [Handler] does, for metrics. Its methods are called
// on the request's goroutine, so they must be quick and safe for
// concurrent use. Package metrics implements it.
type Observer interface {
	// Request is called once for each request to /mcp, when its handler
	// has returned, refused requests included.
	Request(RequestInfo)
	// RateLimited is called for each request refused with 429 by a rate
	// limit; key is "address", "token" or "project", the bucket that was
	// empty.
	RateLimited(key string)
	// SizeLimited is called for each request or connection refused because
	// it exceeds a bound on sizes or load, or its client's share; limit
	// names the bound, one of [Limits].
	SizeLimited(limit string)
}

// Limits named to [Observer.SizeLimited].
const (
	// LimitRequestBody: a body over [Options.MaxBodyBytes] (413).
	LimitRequestBody = "request_body"
	// LimitBatch: a JSON-RPC batch (400).
	LimitBatch = "batch"
	// LimitConcurrency: [Options.MaxConcurrent] requests in flight (503).
	LimitConcurrency = "concurrency"
	// LimitBodyBudget: too many bytes of bodies being read at once (503).
	LimitBodyBudget = "body_budget"
	// LimitResponse: an answer over [Options.MaxResponseBytes].
	LimitResponse = "response"
	// LimitConnections: a connection past [Options.MaxConns] (503).
	LimitConnections = "connections"
	// LimitStreams: an event stream past [Options.MaxStreams] (503).
	LimitStreams = "streams"

	// The shares of one client address (429; a connection, 503): its
	// connections, event streams, requests in flight and body bytes.
	LimitAddressConns    = "address_connections"
	LimitAddressStreams  = "address_streams"
	LimitAddressRequests = "address_requests"
	LimitAddressBody     = "address_body"
	// The shares of one bearer token (429).
	LimitTokenStreams  = "token_streams"
	LimitTokenRequests = "token_requests"
	LimitTokenBody     = "token_body"
)

// Limits lists every Limit constant, for an observer that sets up its
// series in advance.
var Limits = []string{LimitRequestBody, LimitBatch, LimitConcurrency, LimitBodyBudget, LimitResponse, LimitConnections, LimitStreams,
	LimitAddressConns, LimitAddressStreams, LimitAddressRequests, LimitAddressBody, LimitTokenStreams, LimitTokenRequests, LimitTokenBody}

// RateKeys lists the keys of [Observer.RateLimited].
var RateKeys = []string{rateKeyAddress, rateKeyToken, rateKeyProject}

// RequestInfo describes one answered request to /mcp.
type RequestInfo struct {
	// Method is the JSON-RPC method its body named, as sent, or "" when the
	// body was not read, was no JSON-RPC request or named none within its
	// first maxMethodScan bytes. It is the client's string: an observer
	// must not use it as a label without bounding the set of values.
	Method string
	// Batch is set when the body was a JSON array (a batch).
	Batch bool
	// Status is the HTTP status of the answer.
	Status int
	// Elapsed is the time from the request's arrival at the handler to the
	// handler's return.
	Elapsed time.Duration
}

// maxMethodScan is how much of a body is kept to find its method: a method
// comes before large params in every client we know, and a body whose
// method is further in is counted without one.
const maxMethodScan = 4 << 10

// observe reports each request to g.obs. It keeps the first bytes of the
// body as the handlers after it read them, so that it costs no read of its
// own, and finds the method in them once the answer is written.
func (g *Guard) observe(next http.Handler) http.Handler {
	if _, ok := g.obs.(nopObserver); ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// One allocation for both wrappers and the usual head of a body.
		o := &observed{statusWriter: statusWriter{ResponseWriter: w}}
		if r.Body != nil && r.Body != http.NoBody {
			o.headReader = headReader{ReadCloser: r.Body, head: o.buf[:0]}
			r.Body = &o.headReader
		}
		next.ServeHTTP(&o.statusWriter, r)
		info := RequestInfo{Status: o.status, Elapsed: time.Since(start)}
		if info.Status == 0 {
			info.Status = http.StatusOK // what net/http sends for a handler that wrote nothing
		}
		info.Method, info.Batch = jsonrpcMethod(o.head)
		g.obs.Request(info)
	})
}

// observed is what observe keeps of one request.
type observed struct {
	statusWriter
	headReader
	buf [512]byte
}

// headReader keeps the first maxMethodScan bytes read through it.
type headReader struct {
	io.ReadCloser
	head []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	if room := maxMethodScan - len(h.head); room > 0 && n > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// statusWriter records the status a handler answers with. It keeps the
// writer's other abilities reachable: Flush directly (event streams) and
// the rest through Unwrap, which http.ResponseController follows.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code // 1xx are interim answers
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// jsonrpcMethod returns the method of the JSON-RPC message that b begins
// (b may be cut short), or batch when b begins a JSON array. It reads only
// the top level of an object: other members' values are skipped, never
// decoded. When the object names "method" more than once, the last one b
// holds wins, as with encoding/json. It returns "" for anything else: it
// is a best effort for counting, not a validator, and never fails.
func jsonrpcMethod(b []byte) (method string, batch bool) {
	i := skipSpace(b, 0)
	if i < len(b) && b[i] == '[' {
		return "", true
	}
	if i >= len(b) || b[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return method, false // '}', or not an object member
		}
		end := skipString(b, i)
		if end < 0 {
			return method, false
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return method, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return method, false
		}
		vend := skipValue(b, i)
		if vend < 0 {
			return method, false
		}
		if isMethodKey(key) {
			if b[i] == '"' {
				method = unquote(b[i:vend])
			} else {
				method = ""
			}
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return method, false
		}
		i++
	}
}

// isMethodKey reports whether the string token key is "method".
func isMethodKey(key []byte) bool {
	return string(key) == `"method"` || (bytes.IndexByte(key, '\\') >= 0 && unquote(key) == "method")
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]
// (a '"'), or -1 if b ends first.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value that starts at b[i], or
// -1 if b ends first. Objects and arrays are skipped by counting brackets
// outside strings; a number or literal ends at the next delimiter.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return -1
}

// unquote decodes a JSON string token, quotes included; "" if it is not
// one. Only a string with escapes is handed to encoding/json.
func unquote(tok []byte) string {
	if len(tok) < 2 {
		return ""
	}
	inner := tok[1 : len(tok)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(inner)
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return ""
	}
	return s
}

// requestID returns the raw value of the top-level "id" member of the
// JSON-RPC message b (nil if it has none, or b is no object), read as
// jsonrpcMethod reads "method".
func requestID(b []byte) []byte {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	var id []byte
	for i++; ; i++ {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return id
		}
		end := skipString(b, i)
		if end < 0 {
			return id
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return id
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return id
		}
		vend := skipValue(b, i)
		if vend < 0 {
			return id
		}
		if string(key) == `"id"` {
			id = b[i:vend]
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return id
		}
	}
}

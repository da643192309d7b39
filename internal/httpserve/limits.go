package httpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Resource limits: what one request, or many, may cost the server.

const (
	// DefaultMaxConcurrent bounds the requests handled at once; more get
	// 503 with Retry-After. A request over stateless HTTP takes well under
	// a millisecond of CPU, so this many in flight already means a queue a
	// client is better told about than made to wait in.
	DefaultMaxConcurrent = 64

	// DefaultMaxResponseBytes bounds one answer (16 MiB): a file at the
	// default --max-file-bytes of 8 MiB, base64-encoded, fits with room.
	DefaultMaxResponseBytes = 16 << 20

	// DefaultMaxConns bounds the open connections (see LimitListener).
	DefaultMaxConns = 256

	// writeTimeout bounds the time to answer a request, from the end of its
	// headers to the last byte written, so that a client that never reads
	// its answer is cut off. Event streams are exempt; each of their
	// writes gets this long instead (see serveStream).
	writeTimeout = 60 * time.Second

	// readTimeout bounds the time to read a whole request, body included,
	// so that a client dripping its body a byte at a time is cut off.
	readTimeout = 30 * time.Second

	// retryAfter is the Retry-After of a 503, in seconds.
	retryAfter = "1"
)

// budget counts bytes held by request bodies being read or served, so that
// many large bodies at once cannot take the memory of the process.
type budget struct {
	used  atomic.Int64
	limit int64
}

func (b *budget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *budget) give(n int64) { b.used.Add(-n) }

// isBatch reports whether a JSON-RPC body is a batch (an array).
func isBatch(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '['
}

// isStream reports whether r opens an event stream that stays open
// (subscriptions/listen, which the per-request protocol requires to name
// itself in Mcp-Method).
func isStream(r *http.Request) bool {
	return r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// admit runs next for a request whose body is read: within MaxConcurrent
// requests in flight (event streams are not counted: they are bounded by
// the connections they hold), with its answer bounded by MaxResponseBytes.
func (g *guard) admit(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	if isStream(r) {
		g.serveStream(w, r, next)
		return
	}
	select {
	case g.slots <- struct{}{}:
		defer func() { <-g.slots }()
	default:
		g.obs.SizeLimited(LimitConcurrency)
		w.Header().Set("Retry-After", retryAfter)
		g.reject(w, r, http.StatusServiceUnavailable,
			fmt.Sprintf("server busy: %d requests in flight; retry in a second", cap(g.slots)))
		return
	}
	cw := &capWriter{ResponseWriter: w, g: g, r: r, body: body}
	next.ServeHTTP(cw, r)
	cw.finish()
}

// serveStream serves an event stream: no deadline for the whole response
// (it lasts as long as the client listens), but one for each write, so a
// client that stops reading is still cut off. (The read deadline needs no
// clearing: net/http clears it itself once the body is read.)
func (g *guard) serveStream(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	next.ServeHTTP(&streamWriter{ResponseWriter: w, rc: rc}, r)
}

// streamWriter sets a write deadline before each write of an event stream.
type streamWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	return s.ResponseWriter.Write(p)
}

func (s *streamWriter) Flush() {
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	s.rc.Flush()
}

func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// capWriter bounds an answer to MaxResponseBytes. It holds the status
// until the first write, so that an answer over the bound, written whole
// in one call as the SDK and the front ends write theirs, is replaced by
// a JSON-RPC error for the request. An answer written in pieces that
// crosses the bound later is cut off: its connection is closed.
type capWriter struct {
	http.ResponseWriter
	g      *guard
	r      *http.Request
	body   []byte
	status int   // held status; 0 before WriteHeader
	sent   bool  // the header is written
	n      int64 // body bytes written
	over   bool  // cut off
}

func (c *capWriter) WriteHeader(status int) {
	if c.sent || c.over {
		return
	}
	if status < 200 {
		c.ResponseWriter.WriteHeader(status) // informational: passes through
		return
	}
	c.status = status
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.over {
		return 0, errResponseTooLarge
	}
	if c.n+int64(len(p)) > c.g.maxResponse {
		c.over = true
		c.g.obs.SizeLimited(LimitResponse)
		if !c.sent {
			c.tooLarge(c.n + int64(len(p)))
		} else {
			// Too late for an error: end the connection, so the client
			// sees a cut answer rather than a complete-looking one.
			http.NewResponseController(c.ResponseWriter).SetWriteDeadline(time.Unix(1, 0))
		}
		return 0, errResponseTooLarge
	}
	c.sendHeader()
	c.n += int64(len(p))
	return c.ResponseWriter.Write(p)
}

func (c *capWriter) Flush() {
	if c.over {
		return
	}
	c.sendHeader()
	http.NewResponseController(c.ResponseWriter).Flush()
}

func (c *capWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// finish writes a held status the handler never followed with a body.
func (c *capWriter) finish() {
	if !c.over {
		c.sendHeader()
	}
}

func (c *capWriter) sendHeader() {
	if c.sent {
		return
	}
	c.sent = true
	if c.status != 0 {
		c.ResponseWriter.WriteHeader(c.status)
	}
}

var errResponseTooLarge = fmt.Errorf("httpserve: response over the size limit")

// tooLarge answers, in place of an answer of size bytes, a JSON-RPC error
// for the request's id (null if it has none that can be read).
func (c *capWriter) tooLarge(size int64) {
	c.sent = true
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(c.body, &req) == nil && len(req.ID) > 0 {
		id = req.ID
	}
	msg := fmt.Sprintf("the answer to this request is over %d bytes (at least %d), more than this server sends for one request; ask for less (a smaller page, or one file at a time)",
		c.g.maxResponse, size)
	c.g.log.WarnContext(c.r.Context(), "answer over the response limit", "limit", c.g.maxResponse, "size", size, "addr", c.r.RemoteAddr)
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{errorCode, msg}})
	h := c.ResponseWriter.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(data)+1))
	c.ResponseWriter.WriteHeader(http.StatusOK) // an error of the request, not of HTTP
	c.ResponseWriter.Write(append(data, '\n'))
}

// LimitListener returns a listener that keeps at most n connections of ln
// open (DefaultMaxConns if n <= 0): a connection accepted past the limit
// is answered 503, with Retry-After and a JSON-RPC error body, and closed.
// Without a bound, a flood of idle connections costs a goroutine and
// buffers each until its read timeout. obs, if not nil, hears of each
// connection refused (SizeLimited with [LimitConnections]).
func LimitListener(ln net.Listener, n int, obs Observer) net.Listener {
	if n <= 0 {
		n = DefaultMaxConns
	}
	if obs == nil {
		obs = nopObserver{}
	}
	return &limitListener{Listener: ln, max: int64(n), obs: obs}
}

type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	obs  Observer
}

// busyAnswer is what a connection past the limit reads before it closes.
var busyAnswer = func() []byte {
	body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"server busy: too many open connections; retry in a second, and reuse a connection"}}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: " + retryAfter +
		"\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.obs.SizeLimited(LimitConnections)
		// Answered and closed here, without a goroutine: the write fits in
		// the socket buffer of a new connection, and the deadline bounds it
		// if it does not.
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write(busyAnswer)
		c.Close()
	}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

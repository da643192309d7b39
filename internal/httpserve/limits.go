package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
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

	// DefaultWriteTimeout bounds one write of an answer (see
	// [Options.WriteTimeout]): a client on a slow link takes a 64 KiB
	// piece within it many times over; one that stopped reading is cut
	// after it, not after the whole answer's 60 s.
	DefaultWriteTimeout = 10 * time.Second

	// DefaultStreamLifetime bounds an event stream (see
	// [Options.StreamLifetime]): a fleet of 2,000 agents reconnects about
	// twice a second, and no stream holds its share for good.
	DefaultStreamLifetime = 30 * time.Minute

	// DefaultKeepAlive is the silence after which an event stream hears a
	// comment (see [Options.KeepAlive]): under the idle timeouts of the
	// usual proxies (60 s and more).
	DefaultKeepAlive = 25 * time.Second

	// answerTimeout bounds the time to answer a request, from the end of
	// its headers to the last byte written. Event streams are exempt:
	// they have their lifetime.
	answerTimeout = 60 * time.Second

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

// isStream reports whether r opens an event stream that stays open: a
// subscriptions/listen (which the per-request protocol requires to name
// itself in Mcp-Method) or a GET that accepts text/event-stream (a
// session's stream, before 2026-07-28).
func isStream(r *http.Request) bool {
	if r.Method == http.MethodGet {
		for _, v := range r.Header.Values("Accept") {
			if strings.Contains(v, "text/event-stream") {
				return true
			}
		}
		return false
	}
	return r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// admit runs next for an MCP request whose body is read: an event stream
// within MaxStreams and its client's stream share (see serveStream), any
// other request within MaxConcurrent and its client's share of requests in
// flight, with its answer bounded by MaxResponseBytes.
func (g *Guard) admit(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	if isStream(r) {
		g.serveStream(w, r, next)
		return
	}
	c, ok := g.takeRequest(w, r)
	if !ok {
		return
	}
	defer g.giveRequest(c)
	cw := &capWriter{ResponseWriter: w, g: g, r: r, body: body}
	next.ServeHTTP(cw, r)
	cw.finish()
}

// admitPlain runs next for a request that is not to an MCP endpoint (an
// API, a page, /metrics) within MaxConcurrent and its client's share of
// requests in flight.
func (g *Guard) admitPlain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := g.takeRequest(w, r)
		if !ok {
			return
		}
		defer g.giveRequest(c)
		next.ServeHTTP(w, r)
	})
}

// takeRequest takes a slot of the requests in flight and one of the
// client's share, or answers the refusal (429 past the share, 503 past
// MaxConcurrent) and reports false. The request's client gives them back
// with giveRequest.
func (g *Guard) takeRequest(w http.ResponseWriter, r *http.Request) (*client, bool) {
	c := clientOf(r)
	if over := g.held.take(c, shareRequests, 1, &g.shares); over != "" {
		g.refuseShare(w, r, c, shareRequests, over)
		return nil, false
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.held.give(c, shareRequests, 1)
		g.obs.SizeLimited(LimitConcurrency)
		w.Header().Set("Retry-After", retryAfter)
		g.reject(w, r, http.StatusServiceUnavailable,
			fmt.Sprintf("server busy: %d requests in flight; retry in a second", cap(g.slots)))
		return nil, false
	}
	return c, true
}

// giveRequest gives back what takeRequest took for c.
func (g *Guard) giveRequest(c *client) {
	<-g.slots
	g.held.give(c, shareRequests, 1)
}

// capWriter bounds an answer to MaxResponseBytes. It holds the status
// until the first write, so that an answer over the bound, written whole
// in one call as the SDK and the front ends write theirs, is replaced by
// a JSON-RPC error for the request. An answer written in pieces that
// crosses the bound later is cut off: its connection is closed.
type capWriter struct {
	http.ResponseWriter
	g      *Guard
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
	if !c.sent {
		// An answer written in pieces announces its length first: one
		// over the bound is refused before its first byte.
		if n, err := strconv.ParseInt(c.Header().Get("Content-Length"), 10, 64); err == nil && n > c.g.maxResponse {
			c.over = true
			c.g.obs.SizeLimited(LimitResponse)
			c.Header().Del("Content-Length")
			c.tooLarge(n)
			return 0, errResponseTooLarge
		}
	}
	if c.n+int64(len(p)) > c.g.maxResponse {
		c.over = true
		c.g.obs.SizeLimited(LimitResponse)
		if !c.sent {
			c.tooLarge(c.n + int64(len(p)))
		} else {
			// Too late for an error: end the connection, so the client
			// sees a cut answer rather than a complete-looking one.
			cutOff(c.ResponseWriter)
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

var errResponseTooLarge = errors.New("response over the size limit")

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

// Listener returns ln with the guard's bounds on connections: at most
// MaxConns open at once, and Shares.AddressConns from one client address.
// A connection past either is answered 503, with Retry-After and a
// JSON-RPC error body, and closed; the refusal is counted (SizeLimited
// with [LimitConnections] or [LimitAddressConns]) and, past a share,
// logged once a minute per address. Without a bound, a flood of idle
// connections costs a goroutine and buffers each until its read timeout.
//
// It warns when the process may not open that many files: past its limit
// on open files, accepting fails for everyone alike.
func (g *Guard) Listener(ln net.Listener) net.Listener {
	if limit, ok := openFileLimit(); ok && limit < uint64(g.maxConns)+fdMargin {
		g.log.Warn("the limit on open files is below the connections the server may hold: raise it (ulimit -n, LimitNOFILE=) or lower --max-conns",
			"openFiles", limit, "maxConns", g.maxConns)
	}
	return &limitListener{Listener: ln, g: g, max: int64(g.maxConns)}
}

// fdMargin is the files a server holds besides its connections: its
// libraries, cache, logs and database.
const fdMargin = 256

type limitListener struct {
	net.Listener
	g    *Guard
	max  int64
	open atomic.Int64
}

// busyAnswer is what a connection past the global bound reads before it
// closes; shareAnswer what one past its address's share reads.
var (
	busyAnswer  = refusalAnswer("server busy: too many open connections; retry in a second, and reuse a connection")
	shareAnswer = refusalAnswer("too many connections open from this client address; close some, or reuse a connection, and retry")
)

func refusalAnswer(msg string) []byte {
	body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"` + msg + `"}}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: " + retryAfter +
		"\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &client{addr: addressKey(conn.RemoteAddr().String())}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.g.obs.SizeLimited(LimitConnections)
			refuseConn(conn, busyAnswer)
			continue
		}
		if over := l.g.held.take(c, shareConns, 1, &l.g.shares); over != "" {
			l.open.Add(-1)
			l.g.obs.SizeLimited(LimitAddressConns)
			l.g.noteRefusal(context.Background(), over, addressName(c.addr), shareWords[shareConns], int64(l.g.shares.AddressConns))
			refuseConn(conn, shareAnswer)
			continue
		}
		return &limitConn{Conn: conn, l: l, c: c}, nil
	}
}

// refuseConn answers a refused connection and closes it, without a
// goroutine: the write fits in the socket buffer of a new connection, and
// the deadline bounds it if it does not.
func refuseConn(conn net.Conn, answer []byte) {
	conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	conn.Write(answer)
	conn.Close()
}

type limitConn struct {
	net.Conn
	l    *limitListener
	c    *client
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.g.held.give(c.c, shareConns, 1)
	})
	return err
}

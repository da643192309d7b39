package check

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
)

// maxWireViolations bounds the schema violations one connection keeps; the
// recorder shows fewer still.
const maxWireViolations = 1000

// maxValidatedBytes bounds the messages the tap validates, the default
// limit of one message over HTTP and stdio: validating costs about a
// microsecond per node, so a larger message (which only a transport without
// a byte bound lets through, and which the listing checks refuse or cap on
// their own) would spend the request's time on the schema, not the server.
const maxValidatedBytes = 1 << 20

// wireTap validates every message the server sends on one connection
// against the MCP JSON schema of the negotiated revision (wire-schema). The
// checks of this package read only the fields they test; real clients
// validate whole results, and refuse a read whose content has neither
// text nor blob, which no other check would notice.
type wireTap struct {
	stream *mcpschema.Stream

	mu      sync.Mutex
	checked int // messages validated
	invalid int // of which with violations
	found   []mcpschema.Violation
	dropped int
	large   int // messages over maxValidatedBytes, not validated
}

// Sent implements mcpclient.Tap.
func (w *wireTap) Sent(msg []byte) { w.stream.Sent(msg) }

// Received implements mcpclient.Tap.
func (w *wireTap) Received(msg []byte) {
	if len(msg) > maxValidatedBytes {
		w.stream.Skipped(msg)
		w.mu.Lock()
		w.large++
		w.mu.Unlock()
		return
	}
	vs := w.stream.Received(msg)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checked++
	if len(vs) > 0 {
		w.invalid++
	}
	for _, v := range vs {
		if len(w.found) >= maxWireViolations {
			w.dropped++
			continue
		}
		w.found = append(w.found, v)
	}
}

// tapTransport returns the transport to connect with, observed by a
// wireTap at revision v, or reports as a SKIP why the messages are not
// validated. The transports of this package (HTTP, Command) are observed
// byte for byte; others through their connection, except the SDK's
// Streamable HTTP client, whose connection cannot be wrapped without
// losing the protocol headers the SDK sets on it.
func (c *checker) tapTransport(t mcp.Transport, v string) (mcp.Transport, *wireTap) {
	st, err := mcpschema.NewStream(v)
	if err != nil {
		c.rec.add(Skip, "wire-schema", v, "", "no MCP schema for revision %s is built in (%s); messages are not validated", v, revisionList())
		return t, nil
	}
	w := &wireTap{stream: st}
	switch tt := t.(type) {
	case metered:
		tt.Meter.Tap = w
		return t, w
	case *mcp.StreamableClientTransport:
		c.rec.add(Skip, "wire-schema", v, "", "messages over a Streamable HTTP transport not built by check.HTTP are not validated")
		return t, nil
	default:
		return tappedTransport{t, w}, w
	}
}

func revisionList() string {
	var s string
	for i, r := range mcpschema.Revisions() {
		if i > 0 {
			s += ", "
		}
		s += r
	}
	return "known: " + s
}

// wireResults records what the tap of s found: a FAIL per violation,
// naming the method and the JSON pointer, and a pass per valid message.
func (c *checker) wireResults(s *session) {
	w := s.wire
	if w == nil {
		return
	}
	if u := w.stream.Unsupported(); u != "" {
		c.rec.add(Skip, "wire-schema", s.version, "", "the server negotiated %s, which has no built-in MCP schema (%s); its messages are not validated", u, revisionList())
		return
	}
	w.mu.Lock()
	found, valid, dropped, large := w.found, w.checked-w.invalid, w.dropped, w.large
	w.found, w.checked, w.invalid, w.dropped, w.large = nil, 0, 0, 0, 0
	w.mu.Unlock()
	if large > 0 {
		c.rec.add(Skip, "wire-schema", s.version, "", "%d messages over %d bytes were not validated", large, maxValidatedBytes)
	}
	for _, v := range found {
		c.rec.add(Fail, "wire-schema", s.version, subjectOf(v.Method, v.URI), "%s: %s (schema %s, %s)", pointerOf(v.Pointer), v.Message, w.stream.Revision(), v.Definition)
	}
	if dropped > 0 {
		c.rec.add(Fail, "wire-schema", s.version, "", "%d more schema violations were not kept", dropped)
	}
	for range valid {
		c.rec.ok("wire-schema", s.version)
	}
}

func subjectOf(method, uri string) string {
	switch {
	case method == "":
		return "a message"
	case uri != "":
		return method + " " + uri
	}
	return method
}

func pointerOf(p string) string {
	if p == "" {
		return "/ (the whole message)"
	}
	return p
}

// tappedTransport shows a wireTap the messages of its connections,
// encoded again from what the SDK decoded.
type tappedTransport struct {
	mcp.Transport
	tap *wireTap
}

func (t tappedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tappedConn{Connection: conn, tap: t.tap}, nil
}

type tappedConn struct {
	mcp.Connection
	tap *wireTap
}

func (c *tappedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if data, err := jsonrpc.EncodeMessage(msg); err == nil {
			c.tap.Received(data)
		}
	}
	return msg, err
}

func (c *tappedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if data, err := jsonrpc.EncodeMessage(msg); err == nil {
		c.tap.Sent(data)
	}
	return c.Connection.Write(ctx, msg)
}

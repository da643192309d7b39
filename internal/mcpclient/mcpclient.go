// Package mcpclient holds the client transports that skills-mcp's clients
// (pull and check) use to reach servers they do not control: Streamable
// HTTP and a spawned command over stdio, each bounding what one message may
// weigh, counting the bytes received and remembering why it cut a
// connection, which the SDK reports only as a missing answer.
package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Meter counts the bytes a transport receives and keeps the first reason it
// cut a connection. It is safe for concurrent use.
type Meter struct {
	received atomic.Int64
	cause    atomic.Pointer[string]
	// Tap, if set before the transport connects, sees every message.
	Tap Tap
}

// A Tap sees the messages of a connection as they are on the wire: each
// request body or line the client sends, and each response body, event or
// line it receives, one JSON-RPC message (or batch) per call, in order per
// direction. The checker validates them against the protocol's schema.
// Its methods may be called concurrently and must not keep msg.
type Tap interface {
	Sent(msg []byte)
	Received(msg []byte)
}

func (m *Meter) tap() Tap {
	if m == nil {
		return nil
	}
	return m.Tap
}

// Received returns the bytes received so far.
func (m *Meter) Received() int64 { return m.received.Load() }

// Cause returns why a transport cut a connection, or "".
func (m *Meter) Cause() string {
	if p := m.cause.Load(); p != nil {
		return *p
	}
	return ""
}

func (m *Meter) cut(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	m.cause.CompareAndSwap(nil, &msg)
	return errors.New(msg)
}

// unexpected records, as the cause, an answer to an MCP POST that no MCP
// endpoint gives: an error status or a body that is neither JSON nor an
// event stream. The SDK reports only the status text ("Not Implemented");
// the cause says which server answered what, and the likely reason.
func (m *Meter) unexpected(u *url.URL, resp *http.Response) {
	if m == nil {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode == http.StatusAccepted ||
		resp.StatusCode/100 == 2 && (mt == "application/json" || mt == "text/event-stream")
	if ok {
		return
	}
	what := resp.Status
	if mt != "" {
		what += " (" + mt + ")"
	}
	hint := ""
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint = ": does it need a token (--token-env or --header)?"
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed ||
		resp.StatusCode == http.StatusNotImplemented || resp.StatusCode/100 == 2:
		hint = ": is it an MCP endpoint (Streamable HTTP, such as …/mcp)?"
	}
	msg := fmt.Sprintf("the server at %s answered %s to an MCP POST%s", u.Redacted(), what, hint)
	m.cause.CompareAndSwap(nil, &msg)
}

// unreachable records, as the cause, a POST that reached no server: the
// SDK's chain of wrapped errors names the transport, not the fix.
func (m *Meter) unreachable(u *url.URL, err error) {
	if m == nil {
		return
	}
	why := err.Error()
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		why = op.Err.Error()
		var sys *os.SyscallError
		if errors.As(op.Err, &sys) {
			why = sys.Err.Error()
		}
	}
	msg := fmt.Sprintf("the server at %s cannot be reached (%s): is it running, and are the host and port right?", u.Redacted(), why)
	m.cause.CompareAndSwap(nil, &msg)
}

// NewHTTPTransport returns a Streamable HTTP transport to endpoint. It adds
// header to requests for the endpoint's own origin only (never to a host a
// redirect points at), fails a response body over maxBytes, and counts what
// it receives in m. It asks for no server-initiated stream and does not
// retry: a dropped connection is reported, not hidden.
func NewHTTPTransport(endpoint string, header http.Header, maxBytes int64, m *Meter) (*mcp.StreamableClientTransport, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("server URL: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host[:port]/path or https://…", endpoint)
	}
	var base http.RoundTripper = http.DefaultTransport
	if t, ok := base.(*http.Transport); ok {
		base = t.Clone()
	}
	return &mcp.StreamableClientTransport{
		Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: &roundTripper{
			base: base, scheme: u.Scheme, host: u.Host, header: header.Clone(), max: maxBytes, meter: m,
		}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
		MaxEventSize:         int(maxBytes),
	}, nil
}

// roundTripper adds the configured headers and bounds responses.
type roundTripper struct {
	base         http.RoundTripper
	scheme, host string
	header       http.Header
	max          int64
	meter        *Meter
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// The headers carry credentials: they go to the configured origin only.
	if len(t.header) > 0 && req.URL.Scheme == t.scheme && req.URL.Host == t.host {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	tap := t.meter.tap()
	if tap != nil && req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, t.max))
			body.Close()
			tap.Sent(data)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		if req.Method == http.MethodPost && req.Context().Err() == nil {
			t.meter.unreachable(req.URL, err)
		}
		return nil, err
	}
	if req.Method == http.MethodPost {
		t.meter.unexpected(req.URL, resp)
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, t.meter.cut("the server sent a response of %d bytes, over the %d-byte limit of one message", resp.ContentLength, t.max)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max, meter: t.meter}
	if tap != nil && resp.StatusCode/100 == 2 {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch mt {
		case "application/json":
			resp.Body = &tapBody{rc: resp.Body, tap: tap}
		case "text/event-stream":
			resp.Body = &tapBody{rc: resp.Body, tap: tap, events: true}
		}
	}
	return resp, nil
}

// tapBody passes a response body on and hands its messages to a tap: the
// whole body of a JSON response, or the data of each event of a stream.
type tapBody struct {
	rc     io.ReadCloser
	tap    Tap
	events bool
	buf    []byte // the JSON body, or the stream's unfinished line
	data   []byte // the data lines of the event being read
	done   bool
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if b.done {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if b.events {
		b.lines()
	}
	if err != nil {
		b.flush()
	}
	return n, err
}

// lines handles the complete lines of an event stream: data lines are
// gathered, and a blank line ends the event.
func (b *tapBody) lines() {
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(b.buf[:i], []byte("\r"))
		switch {
		case len(line) == 0:
			b.event()
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if b.data != nil {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, d...)
			if b.data == nil {
				b.data = []byte{}
			}
		}
		b.buf = b.buf[i+1:]
	}
}

func (b *tapBody) event() {
	if len(bytes.TrimSpace(b.data)) > 0 {
		b.tap.Received(b.data)
	}
	b.data = nil
}

// flush hands over what is left once, at the end of the body or on close.
func (b *tapBody) flush() {
	if b.done {
		return
	}
	b.done = true
	if b.events {
		b.event()
	} else if len(bytes.TrimSpace(b.buf)) > 0 {
		b.tap.Received(b.buf)
	}
	b.buf, b.data = nil, nil
}

func (b *tapBody) Close() error {
	b.flush()
	return b.rc.Close()
}

// limitedBody fails a read past max bytes and counts what it passes on.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
	meter     *Meter
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an over-long body from one that ends here.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, b.meter.cut("the server sent a response over the %d-byte limit of one message", b.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	b.meter.received.Add(int64(n))
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// DefaultStopAfter is how long closing a CommandTransport connection waits
// for the server to exit after its stdin closes, and again after SIGTERM,
// before killing it.
const DefaultStopAfter = 5 * time.Second

// CommandTransport runs a server command and speaks to it over its stdin
// and stdout. Closing the connection follows the stdio shutdown sequence of
// the MCP specification: close stdin, wait, SIGTERM, wait, SIGKILL.
type CommandTransport struct {
	Argv   []string
	Env    []string  // the server's environment; nil means this process's
	Stderr io.Writer // the server's stderr
	// MaxMessageBytes bounds one message (one line); a longer one cuts the
	// connection, and Meter says why.
	MaxMessageBytes int
	Meter           *Meter
	// StopAfter is each wait of the shutdown; zero means DefaultStopAfter.
	StopAfter time.Duration
}

// Connect implements mcp.Transport.
func (t *CommandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if len(t.Argv) == 0 {
		return nil, errors.New("no server command")
	}
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.Env = t.Env
	cmd.Stderr = t.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server command: %w", err)
	}
	stop := t.StopAfter
	if stop <= 0 {
		stop = DefaultStopAfter
	}
	p := &process{cmd: cmd, stdin: stdin, stop: stop, done: make(chan struct{}), tap: t.Meter.tap()}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return (&mcp.IOTransport{
		Reader:        &lineReader{r: stdout, max: t.MaxMessageBytes, meter: t.Meter, tap: t.Meter.tap()},
		Writer:        p,
		MaxLineLength: t.MaxMessageBytes,
	}).Connect(ctx)
}

// lineReader counts what the server sends and notes a line over max: the
// SDK then drops the connection without saying why.
type lineReader struct {
	r     io.Reader
	max   int
	run   int // bytes since the last newline
	meter *Meter
	once  sync.Once
	tap   Tap
	line  []byte // the line being read, for the tap
}

func (g *lineReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.meter.received.Add(int64(n))
	for chunk := p[:n]; len(chunk) > 0; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			g.run += len(chunk)
			g.keep(chunk)
			break
		}
		g.run += i
		g.over()
		g.run = 0
		g.keep(chunk[:i])
		g.emit()
		chunk = chunk[i+1:]
	}
	g.over()
	if err != nil {
		g.emit()
	}
	return n, err
}

// keep gathers the line for the tap, as long as it is within the bound
// (a longer one cuts the connection).
func (g *lineReader) keep(b []byte) {
	if g.tap != nil && (g.max <= 0 || len(g.line)+len(b) <= g.max) {
		g.line = append(g.line, b...)
	}
}

func (g *lineReader) emit() {
	if g.tap != nil && len(bytes.TrimSpace(g.line)) > 0 {
		g.tap.Received(g.line)
	}
	g.line = g.line[:0]
}

func (g *lineReader) over() {
	if g.max > 0 && g.run >= g.max {
		g.once.Do(func() { g.meter.cut("the server sent a message over the %d-byte limit of one message", g.max) })
	}
}

// Close is a no-op: the connection ends by closing stdin (process.Close),
// and cmd.Wait closes stdout once the child has exited.
func (g *lineReader) Close() error { return nil }

// process is the write side of a child server.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	stop  time.Duration
	done  chan struct{}
	err   error
	once  sync.Once
	tap   Tap
}

func (p *process) Write(b []byte) (int, error) {
	if p.tap != nil {
		p.tap.Sent(b)
	}
	return p.stdin.Write(b)
}

func (p *process) Close() error {
	var err error
	p.once.Do(func() {
		p.stdin.Close()
		wait := func() bool {
			select {
			case <-p.done:
				return true
			case <-time.After(p.stop):
				return false
			}
		}
		if wait() {
			err = exitErr(p.err)
			return
		}
		if p.cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
			return
		}
		p.cmd.Process.Kill()
		<-p.done
	})
	return err
}

// exitErr drops the errors a server that exits on closed stdin may give.
func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

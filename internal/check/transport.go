package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cut remembers why a bounded transport cut a connection, since the SDK
// reports that only as a missing answer or a closed connection.
type cut struct{ cause atomic.Pointer[string] }

func (c *cut) set(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	c.cause.CompareAndSwap(nil, &msg)
	return errors.New(msg)
}

// Cause implements causer.
func (c *cut) Cause() string {
	if p := c.cause.Load(); p != nil {
		return *p
	}
	return ""
}

// HTTP returns a Dialer for the Streamable HTTP endpoint at endpoint. Every
// response body is bounded to maxBytes (DefaultMaxMessageBytes if zero).
func HTTP(endpoint string, maxBytes int64) (Dialer, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("server URL: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host[:port]/path or https://…", endpoint)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return func(context.Context) (mcp.Transport, error) {
		t := &httpTransport{}
		t.StreamableClientTransport = mcp.StreamableClientTransport{
			Endpoint: endpoint,
			HTTPClient: &http.Client{Transport: &boundedRoundTripper{
				base: http.DefaultTransport, max: maxBytes, cut: &t.cut,
			}},
			// The checker needs no server-initiated messages, and a
			// dropped connection is a finding, not something to hide by
			// reconnecting.
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
			MaxEventSize:         int(maxBytes),
		}
		return t, nil
	}, nil
}

// httpTransport is a Streamable HTTP client transport that says why it cut
// a response.
type httpTransport struct {
	mcp.StreamableClientTransport
	cut
}

// boundedRoundTripper bounds response bodies.
type boundedRoundTripper struct {
	base http.RoundTripper
	max  int64
	cut  *cut
}

func (t *boundedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, t.cut.set("the server sent a response of %d bytes, over the %d-byte limit of one message", resp.ContentLength, t.max)
	}
	resp.Body = &boundedBody{rc: resp.Body, left: t.max, max: t.max, cut: t.cut}
	return resp, nil
}

// boundedBody fails a read past max bytes.
type boundedBody struct {
	rc        io.ReadCloser
	left, max int64
	cut       *cut
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, b.cut.set("the server sent a response over the %d-byte limit of one message", b.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// Command returns a Dialer that starts argv for each connection and speaks
// to it over its stdin and stdout. The server's stderr goes to stderr.
// A line longer than maxBytes (DefaultMaxMessageBytes if zero) cuts the
// connection.
func Command(argv []string, stderr io.Writer, maxBytes int64) Dialer {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return func(context.Context) (mcp.Transport, error) {
		if len(argv) == 0 {
			return nil, errors.New("no server command")
		}
		return &commandTransport{argv: argv, stderr: stderr, max: int(maxBytes)}, nil
	}
}

// commandTransport runs a server command over stdio.
type commandTransport struct {
	argv   []string
	stderr io.Writer
	max    int
	cut
}

// stopAfter is how long closing waits for the server to exit after its
// stdin closes, and again after SIGTERM, before killing it.
const stopAfter = 2 * time.Second

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := exec.Command(t.argv[0], t.argv[1:]...)
	cmd.Stderr = t.stderr
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
	p := &child{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return (&mcp.IOTransport{
		Reader:        &lineGuard{r: stdout, max: t.max, cut: &t.cut},
		Writer:        p,
		MaxLineLength: t.max,
	}).Connect(ctx)
}

// lineGuard notes when the server sends a line over the limit: the SDK
// then drops the connection without saying why.
type lineGuard struct {
	r    io.Reader
	max  int
	run  int // bytes since the last newline
	cut  *cut
	once sync.Once
}

func (g *lineGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	for chunk := p[:n]; len(chunk) > 0; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			g.run += len(chunk)
			break
		}
		g.run += i
		g.over()
		g.run = 0
		chunk = chunk[i+1:]
	}
	g.over()
	return n, err
}

func (g *lineGuard) over() {
	if g.run >= g.max {
		g.once.Do(func() { g.cut.set("the server sent a message over the %d-byte limit of one message", g.max) })
	}
}

// Close is a no-op: the connection ends by closing stdin, and the pipe
// closes when the child exits.
func (g *lineGuard) Close() error { return nil }

// child is the write side of a server process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	once  sync.Once
}

func (c *child) Write(b []byte) (int, error) { return c.stdin.Write(b) }

// Close closes stdin, waits for the child, then signals it: the stdio
// shutdown sequence of the MCP specification, with short waits, since a
// server under test may ignore all of it.
func (c *child) Close() error {
	c.once.Do(func() {
		c.stdin.Close()
		wait := func() bool {
			select {
			case <-c.done:
				return true
			case <-time.After(stopAfter):
				return false
			}
		}
		if wait() {
			return
		}
		if c.cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
			return
		}
		c.cmd.Process.Kill()
		<-c.done
	})
	return nil
}

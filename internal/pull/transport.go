package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// meter counts the bytes a transport receives and remembers why it cut a
// response short, since the SDK reports such a cut only as a missing answer.
type meter struct {
	wire     atomic.Int64
	overflow atomic.Pointer[string]
}

func (m *meter) over(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	m.overflow.Store(&msg)
	return errors.New(msg)
}

// newHTTPTransport returns a Streamable HTTP transport to endpoint that
// adds header to requests for the endpoint's origin only, bounds every
// response body to maxBytes and counts the bytes received.
func newHTTPTransport(endpoint string, header http.Header, maxBytes int64, m *meter) (mcp.Transport, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("server URL: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host[:port]/path or https://…", endpoint)
	}
	if u.User != nil {
		return nil, errors.New("server URL: credentials in the URL are not supported; use a header")
	}
	var base http.RoundTripper = http.DefaultTransport
	if t, ok := base.(*http.Transport); ok {
		base = t.Clone()
	}
	hc := &http.Client{Transport: &roundTripper{
		base:     base,
		scheme:   u.Scheme,
		host:     u.Host,
		header:   header.Clone(),
		maxBytes: maxBytes,
		meter:    m,
	}}
	return &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: hc,
		// A pull needs no server-initiated messages.
		DisableStandaloneSSE: true,
		// A dropped connection fails the pull at once; a rerun with --sync
		// costs one listing, so retrying inside the transport buys little
		// and hides a flaky server.
		MaxRetries: -1,
		// Events are bounded by the body limit below.
		MaxEventSize: int(maxBytes),
	}, nil
}

// roundTripper adds the configured headers and bounds responses.
type roundTripper struct {
	base         http.RoundTripper
	scheme, host string
	header       http.Header
	maxBytes     int64
	meter        *meter
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// The headers carry credentials: they go to the configured origin only,
	// never to a host a redirect points at.
	if len(t.header) > 0 && req.URL.Scheme == t.scheme && req.URL.Host == t.host {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.maxBytes {
		resp.Body.Close()
		return nil, t.meter.over("the server's response is %d bytes, over the %d-byte limit", resp.ContentLength, t.maxBytes)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.maxBytes, max: t.maxBytes, meter: t.meter}
	return resp, nil
}

// limitedBody fails a read past max bytes and counts what it passes on.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
	meter     *meter
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an over-long body from one that ends here.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, b.meter.over("the server's response is over the %d-byte limit", b.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	b.meter.wire.Add(int64(n))
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// commandTransport runs a server command and speaks to it over its stdin
// and stdout, counting the bytes it receives. Closing the connection closes
// the child's stdin, then waits for it to exit, then signals it.
type commandTransport struct {
	argv    []string
	stderr  io.Writer
	maxLine int
	meter   *meter
}

// terminateAfter is how long Close waits for the child to exit after its
// stdin is closed (and again after SIGTERM) before escalating.
const terminateAfter = 5 * time.Second

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
	p := &process{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return (&mcp.IOTransport{
		Reader:        &countingReader{r: stdout, wire: &t.meter.wire},
		Writer:        p,
		MaxLineLength: t.maxLine,
	}).Connect(ctx)
}

type countingReader struct {
	r    io.Reader
	wire *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.wire.Add(int64(n))
	return n, err
}

// Close is a no-op: the connection ends by closing stdin (process.Close),
// and cmd.Wait closes stdout once the child has exited.
func (c *countingReader) Close() error { return nil }

// process is the write side of a child server.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	err   error
	once  sync.Once
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes stdin and waits for the child: the stdio shutdown sequence of
// the MCP specification (close stdin, wait, SIGTERM, wait, SIGKILL).
func (p *process) Close() error {
	var err error
	p.once.Do(func() {
		p.stdin.Close()
		wait := func() bool {
			select {
			case <-p.done:
				return true
			case <-time.After(terminateAfter):
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

package httpserve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The streams' and the writes' deadlines, tested in synctest bubbles: the
// connections are net.Pipe pairs (whose deadlines run on the bubble's
// clock), served by a real http.Server, so that an hour of a stream's life
// passes in a moment and no test waits on the wall clock.

// pipeListener hands out the server ends of net.Pipe pairs, each with a
// remote address of the test's choosing.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3939} }

// dial connects from remote (an "ip:port") and returns the client's end.
func (l *pipeListener) dial(t *testing.T, remote string) net.Conn {
	t.Helper()
	server, client := net.Pipe()
	ap, err := net.ResolveTCPAddr("tcp", remote)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case l.conns <- &remoteConn{Conn: server, remote: ap}:
	case <-l.done:
		t.Fatal("the listener is closed")
	}
	return client
}

type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c *remoteConn) RemoteAddr() net.Addr { return c.remote }

// serveGuard serves h behind a guard of opts on a pipe listener, through
// Serve (so that parked streams end at shutdown), until the returned stop
// is called; stop returns Serve's error.
func serveGuard(t *testing.T, opts *Options, h http.Handler) (*Guard, *pipeListener, func() error) {
	t.Helper()
	g := NewGuard(opts)
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, g.Listener(ln), g.Handler(h), nil) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { stop() })
	return g, ln, stop
}

// listen sends a listen request on conn and returns the reader of the
// answer, its status line read.
func listen(t *testing.T, conn net.Conn) (*bufio.Reader, string) {
	t.Helper()
	go io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Method: subscriptions/listen\r\nContent-Length: 2\r\n\r\n{}")
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the status: %v", err)
	}
	return br, strings.TrimSpace(line)
}

// readChunk reads the header lines (once), then one chunk of a chunked
// body; "" at the body's last chunk.
func readChunk(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a chunk: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, ":") {
			continue // the blank line after the header, or a header
		}
		var n int
		if _, err := fmt.Sscanf(line, "%x", &n); err != nil {
			t.Fatalf("chunk size %q: %v", line, err)
		}
		if n == 0 {
			br.ReadString('\n')
			return ""
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatalf("reading a chunk of %d: %v", n, err)
		}
		return string(data[:n])
	}
}

// parking is a handler that parks every stream with the event "first",
// and reports each stream's send and end.
type parking struct {
	sends chan func([]byte) bool
	ended atomic.Int32
}

func (p *parking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	var parker StreamParker
	for u := w; u != nil; {
		if sp, ok := u.(StreamParker); ok {
			parker = sp
			break
		}
		uw, ok := u.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		u = uw.Unwrap()
	}
	if parker == nil {
		http.Error(w, "no parker", http.StatusTeapot)
		return
	}
	send, ok := parker.ParkEventStream([]byte("data: first\n\n"), func() { p.ended.Add(1) })
	if !ok {
		http.Error(w, "not parked", http.StatusTeapot)
		return
	}
	p.sends <- send
}

// TestParkedStream: a parked stream gets its first event and later ones,
// a keep-alive comment after each silence, and ends as a complete answer
// at its lifetime, giving back its shares; its client then reconnects.
func TestParkedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &parking{sends: make(chan func([]byte) bool, 1)}
		g, ln, stop := serveGuard(t, &Options{StreamLifetime: time.Hour, KeepAlive: 25 * time.Second}, p)
		conn := ln.dial(t, "192.0.2.7:1000")
		defer conn.Close()
		br, st := listen(t, conn)
		if st != "HTTP/1.1 200 OK" {
			t.Fatalf("status %q", st)
		}
		// Read before the handler hands over its send: net.Pipe has no
		// buffer, so the first event's write waits for this read.
		if got := readChunk(t, br); got != "data: first\n\n" {
			t.Fatalf("first event %q", got)
		}
		send := <-p.sends
		if !send([]byte("data: second\n\n")) {
			t.Fatal("send on a live stream reported it ended")
		}
		if got := readChunk(t, br); got != "data: second\n\n" {
			t.Fatalf("second event %q", got)
		}
		start := time.Now()
		if got := readChunk(t, br); got != keepAliveComment {
			t.Fatalf("after a silence: %q", got)
		}
		if idle := time.Since(start); idle != 25*time.Second {
			t.Errorf("the keep-alive came after %s of silence, want 25s", idle)
		}
		if n := g.streams.Load(); n != 1 {
			t.Errorf("%d streams counted while one is parked", n)
		}
		// Read keep-alives until the last chunk: the lifetime's end.
		for {
			got := readChunk(t, br)
			if got == "" {
				break
			}
			if got != keepAliveComment {
				t.Fatalf("unexpected chunk %q", got)
			}
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("after the last chunk: %v, want the connection closed", err)
		}
		synctest.Wait()
		if p.ended.Load() != 1 || send([]byte("x")) {
			t.Errorf("ended %d times; send after the end: accepted", p.ended.Load())
		}
		if n := g.streams.Load(); n != 0 {
			t.Errorf("%d streams counted after the only one ended", n)
		}
		if a, tk := g.held.clients(); a != 0 || tk != 0 {
			t.Errorf("shares held after the end: %d addresses, %d tokens", a, tk)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestParkedStreamCutWhenUnread: a parked stream whose client stops
// reading is cut at the first write that cannot complete within the write
// timeout, and its shares are given back.
func TestParkedStreamCutWhenUnread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &parking{sends: make(chan func([]byte) bool, 1)}
		g, ln, stop := serveGuard(t, &Options{WriteTimeout: 10 * time.Second, KeepAlive: -1}, p)
		conn := ln.dial(t, "192.0.2.7:1000")
		defer conn.Close()
		br, _ := listen(t, conn)
		readChunk(t, br)
		send := <-p.sends
		// From now on the client reads nothing; net.Pipe has no buffer,
		// so the next write stalls at once.
		start := time.Now()
		send([]byte("data: unread\n\n"))
		for p.ended.Load() == 0 {
			time.Sleep(time.Second) // the bubble's clock: until the cut
		}
		if took := time.Since(start); took > 11*time.Second {
			t.Errorf("cut after %s, want within the write timeout of 10s", took)
		}
		if n := g.streams.Load(); n != 0 {
			t.Errorf("%d streams counted after the cut", n)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestParkedStreamClientLeaves: a client that closes its end ends its
// parked stream at once, not at the next write.
func TestParkedStreamClientLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &parking{sends: make(chan func([]byte) bool, 1)}
		g, ln, stop := serveGuard(t, &Options{KeepAlive: -1, StreamLifetime: -1}, p)
		conn := ln.dial(t, "192.0.2.7:1000")
		br, _ := listen(t, conn)
		readChunk(t, br)
		<-p.sends
		conn.Close()
		synctest.Wait()
		if p.ended.Load() != 1 || g.streams.Load() != 0 {
			t.Errorf("after the client left: ended %d, streams %d", p.ended.Load(), g.streams.Load())
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestParkedStreamShutdown: Serve ends its parked streams as complete
// answers when it shuts down, and returns with none left.
func TestParkedStreamShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &parking{sends: make(chan func([]byte) bool, 1)}
		_, ln, stop := serveGuard(t, &Options{KeepAlive: -1, StreamLifetime: -1}, p)
		conn := ln.dial(t, "192.0.2.7:1000")
		defer conn.Close()
		br, _ := listen(t, conn)
		readChunk(t, br)
		<-p.sends
		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		if got := readChunk(t, br); got != "" {
			t.Errorf("at shutdown: %q, want the last chunk", got)
		}
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if p.ended.Load() != 1 {
			t.Errorf("ended %d times", p.ended.Load())
		}
	})
}

// waiting is a stream handler that writes one event and waits for its
// context, counting the keep-alives it sees nothing of.
type waiting struct{ returned chan time.Time }

func (h waiting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: first\n\n")
	http.NewResponseController(w).Flush()
	<-r.Context().Done()
	h.returned <- time.Now()
}

// TestStreamLifetimeAndKeepAlive: a stream served by a waiting handler
// (one that does not park) hears keep-alives between its events and ends
// at its lifetime: the handler's context ends then.
func TestStreamLifetimeAndKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := waiting{returned: make(chan time.Time, 1)}
		_, ln, stop := serveGuard(t, &Options{StreamLifetime: 2 * time.Minute, KeepAlive: 25 * time.Second}, h)
		conn := ln.dial(t, "192.0.2.7:1000")
		defer conn.Close()
		start := time.Now()
		br, _ := listen(t, conn)
		var chunks []string
		for {
			c := readChunk(t, br)
			if c == "" {
				break
			}
			chunks = append(chunks, c)
		}
		ended := <-h.returned
		if got := ended.Sub(start); got != 2*time.Minute {
			t.Errorf("the handler's context ended after %s, want the lifetime of 2m", got)
		}
		want := []string{"data: first\n\n", keepAliveComment, keepAliveComment, keepAliveComment, keepAliveComment}
		if strings.Join(chunks, "|") != strings.Join(want, "|") {
			t.Errorf("chunks %q, want %q", chunks, want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// writer is a handler that writes n bytes in one Write and reports how
// that went.
type writer struct {
	n    int
	done chan error
}

func (h writer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	_, err := w.Write(make([]byte, h.n))
	h.done <- err
}

// TestStalledWriteCut: an answer whose client reads slowly but steadily
// is written whole, though it takes longer than the write timeout; one
// whose client stops reading is cut at the first piece not taken within
// the write timeout, not after the whole answer's 60 s.
func TestStalledWriteCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := writer{n: 256 << 10, done: make(chan error, 1)}
		_, ln, stop := serveGuard(t, &Options{WriteTimeout: 10 * time.Second}, h)

		// 16 KiB a second: each piece of 64 KiB within the write timeout
		// (however the reads fall across the pieces), the whole answer in
		// about 16 s.
		conn := ln.dial(t, "192.0.2.7:1000")
		start := time.Now()
		go io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}")
		go func() {
			buf := make([]byte, 16<<10)
			for {
				if _, err := io.ReadFull(conn, buf); err != nil {
					return
				}
				time.Sleep(time.Second) // the slow reader's pace
			}
		}()
		if err := <-h.done; err != nil {
			t.Errorf("a slow, steady reader: the write failed after %s: %v", time.Since(start), err)
		}
		if took := time.Since(start); took <= 10*time.Second {
			t.Errorf("the slow read took %s, not over the write timeout: the test shows nothing", took)
		}
		conn.Close()

		// A client that reads nothing: cut after the write timeout.
		conn = ln.dial(t, "192.0.2.8:1000")
		defer conn.Close()
		start = time.Now()
		go io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}")
		err := <-h.done
		var ne net.Error
		if took := time.Since(start); !errors.As(err, &ne) || !ne.Timeout() || took != 10*time.Second {
			t.Errorf("a client that reads nothing: the write ended after %s with %v; want a timeout after 10s", took, err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

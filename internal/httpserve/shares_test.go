package httpserve_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// held is a backend whose requests (and streams) wait until release is
// closed, telling entered about each.
type held struct {
	entered chan struct{}
	release chan struct{}
}

func newHeld() *held { return &held{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (b *held) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	b.entered <- struct{}{}
	<-b.release
}

// call serves one request to /mcp on h from remote, with the given
// headers, and returns the recorded answer.
func call(h http.Handler, remote string, headers map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Host = "localhost"
	r.RemoteAddr = remote
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// hold starts n requests from remote that the backend holds, and waits
// until they are in.
func hold(t *testing.T, h http.Handler, b *held, wg *sync.WaitGroup, n int, remote string, headers map[string]string) {
	t.Helper()
	for range n {
		wg.Go(func() { call(h, remote, headers, `{}`) })
	}
	for range n {
		select {
		case <-b.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("a held request did not reach the backend")
		}
	}
}

func wantShareRefusal(t *testing.T, w *httptest.ResponseRecorder, what string) {
	t.Helper()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), what) {
		t.Errorf("got %d Retry-After %q %s, want 429 with Retry-After naming %q", w.Code, w.Header().Get("Retry-After"), w.Body, what)
	}
}

// TestAddressShareOfRequests: one address reaches its share of requests in
// flight and no further (429); another address is served meanwhile, and
// the share is whole again once the requests end.
func TestAddressShareOfRequests(t *testing.T) {
	seen := &recorder{}
	b := newHeld()
	h := httpserve.Handler(b, &httpserve.Options{Observer: seen, Shares: httpserve.Shares{AddressRequests: 2}})
	var wg sync.WaitGroup
	hold(t, h, b, &wg, 2, "192.0.2.1:1000", nil)
	wantShareRefusal(t, call(h, "192.0.2.1:1001", nil, `{}`), "requests in flight from this client address")
	hold(t, h, b, &wg, 2, "192.0.2.2:1000", nil) // another client
	close(b.release)
	wg.Wait()
	if got := seen.sizes(); len(got) != 1 || got[0] != httpserve.LimitAddressRequests {
		t.Errorf("refusals %v, want [%s]", got, httpserve.LimitAddressRequests)
	}
	b2 := newHeld()
	h2 := httpserve.Handler(b2, &httpserve.Options{Shares: httpserve.Shares{AddressRequests: 1}})
	hold(t, h2, b2, &wg, 1, "[2001:db8:1:2::1]:1", nil)
	// The same /64: the same client.
	wantShareRefusal(t, call(h2, "[2001:db8:1:2::ffff]:1", nil, `{}`), "this client address")
	close(b2.release)
	wg.Wait()
}

// TestTokenShareOfRequests: one bearer token reaches its share from any
// number of addresses.
func TestTokenShareOfRequests(t *testing.T) {
	b := newHeld()
	h := httpserve.Handler(b, &httpserve.Options{Tokens: []string{"tok", "other"}, Shares: httpserve.Shares{TokenRequests: 2}})
	auth := map[string]string{"Authorization": "Bearer tok"}
	var wg sync.WaitGroup
	hold(t, h, b, &wg, 1, "192.0.2.1:1", auth)
	hold(t, h, b, &wg, 1, "192.0.2.2:1", auth)
	wantShareRefusal(t, call(h, "192.0.2.3:1", auth, `{}`), "this bearer token")
	hold(t, h, b, &wg, 1, "192.0.2.3:1", map[string]string{"Authorization": "Bearer other"})
	close(b.release)
	wg.Wait()
}

// TestStreamShares: an address reaches its share of event streams (429);
// past the global cap every client gets 503; streams take no share of the
// requests in flight.
func TestStreamShares(t *testing.T) {
	seen := &recorder{}
	b := newHeld()
	h := httpserve.Handler(b, &httpserve.Options{Observer: seen, MaxStreams: 3, Shares: httpserve.Shares{AddressStreams: 2, AddressRequests: 1}})
	listen := map[string]string{"Mcp-Method": "subscriptions/listen"}
	var wg sync.WaitGroup
	hold(t, h, b, &wg, 2, "192.0.2.1:1", listen)
	wantShareRefusal(t, call(h, "192.0.2.1:2", listen, `{}`), "event streams open from this client address")
	// A GET stream of a session counts too.
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Host, r.RemoteAddr = "localhost", "192.0.2.1:3"
	r.Header.Set("Accept", "text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	wantShareRefusal(t, w, "event streams")
	// Its requests still pass.
	hold(t, h, b, &wg, 1, "192.0.2.1:4", nil)
	hold(t, h, b, &wg, 1, "192.0.2.2:1", listen)
	if w := call(h, "192.0.2.3:1", listen, `{}`); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "3 event streams open") {
		t.Errorf("past MaxStreams: %d %s, want 503", w.Code, w.Body)
	}
	close(b.release)
	wg.Wait()
	want := []string{httpserve.LimitAddressStreams, httpserve.LimitAddressStreams, httpserve.LimitStreams}
	if got := seen.sizes(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("refusals %v, want %v", got, want)
	}
}

// TestBodyShare: bodies being read count against their address's share:
// one address sending large bodies slowly reaches its share (429), while
// another's bodies are read.
func TestBodyShare(t *testing.T) {
	h := httpserve.Handler(&backend{}, &httpserve.Options{MaxBodyBytes: 1 << 20, Shares: httpserve.Shares{AddressBodyBytes: 1<<20 + 64<<10}})
	// Most of a body at the limit, and the request waits for the rest
	// (the write returns once the server has read it).
	held, heldW := io.Pipe()
	var wg sync.WaitGroup
	wg.Go(func() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(held))
		r.Host, r.RemoteAddr, r.ContentLength = "localhost", "192.0.2.1:1", -1
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
	if _, err := heldW.Write(bytes.Repeat([]byte("x"), 1<<20-100)); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.Write(bytes.Repeat([]byte("y"), 200<<10))
		pw.Close()
	}()
	r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(pr))
	r.Host, r.RemoteAddr, r.ContentLength = "localhost", "192.0.2.1:2", -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	wantShareRefusal(t, w, "bytes of request bodies being read from this client address")
	if w := call(h, "192.0.2.2:1", nil, strings.Repeat("z", 200<<10)); w.Code != 200 {
		t.Errorf("another address's body: %d %s", w.Code, w.Body)
	}
	heldW.Close()
	wg.Wait()
	if w := call(h, "192.0.2.1:3", nil, strings.Repeat("z", 200<<10)); w.Code != 200 {
		t.Errorf("after its bodies ended: %d %s", w.Code, w.Body)
	}
}

// TestListenerShares: one address reaches its share of connections, and
// the connection past it is answered 503 and closed, while another
// address connects.
func TestListenerShares(t *testing.T) {
	seen := &recorder{}
	var logs bytes.Buffer
	g := httpserve.NewGuard(&httpserve.Options{Observer: seen, Shares: httpserve.Shares{AddressConns: 2},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g.Handler(&backend{})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(g.Listener(ln)) }()
	defer func() { srv.Close(); <-done }()
	dial := func(ip byte) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, ip)}}
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	served := func(c net.Conn) int {
		fmt.Fprintf(c, "GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 2 {
		if code := served(dial(1)); code != 200 {
			t.Fatalf("a connection within the share: %d", code)
		}
	}
	third := dial(1)
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("the connection past the share got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "this client address") {
		t.Errorf("past the share: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if code := served(dial(2)); code != 200 {
		t.Errorf("another address: %d", code)
	}
	if got := seen.sizes(); len(got) != 1 || got[0] != httpserve.LimitAddressConns {
		t.Errorf("refusals %v", got)
	}
	if !strings.Contains(logs.String(), "client=127.0.0.1") || !strings.Contains(logs.String(), "connections open") {
		t.Errorf("the refusal's log: %s", logs.String())
	}
}

// TestShareRefusalLoggedOncePerMinute: an offender's refusals are logged
// once, then at most once a minute with the count since.
func TestShareRefusalLoggedOncePerMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		b := newHeld()
		h := httpserve.Handler(b, &httpserve.Options{Shares: httpserve.Shares{AddressRequests: 1},
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		var wg sync.WaitGroup
		wg.Go(func() { call(h, "192.0.2.1:1", nil, `{}`) })
		<-b.entered
		for range 10 {
			call(h, "192.0.2.1:2", nil, `{}`)
			time.Sleep(5 * time.Second)
		}
		if n := strings.Count(logs.String(), "over its share"); n != 1 {
			t.Errorf("%d lines in 50 s, want 1:\n%s", n, logs.String())
		}
		for range 3 {
			call(h, "192.0.2.1:2", nil, `{}`)
			time.Sleep(5 * time.Second)
		}
		if n := strings.Count(logs.String(), "over its share"); n != 2 || !strings.Contains(logs.String(), "refusedSinceLastLine=12") {
			t.Errorf("after a minute: %d lines, want 2, the second counting 12:\n%s", n, logs.String())
		}
		close(b.release)
		wg.Wait()
	})
}

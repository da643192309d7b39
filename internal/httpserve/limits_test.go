package httpserve_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// sizes returns the limits rec heard of.
func (r *recorder) sizes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.size...)
}

func TestBatchRefused(t *testing.T) {
	seen := &recorder{}
	srv, b := newServer(t, &httpserve.Options{Observer: seen})
	for _, body := range []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, " \r\n\t[]"} {
		resp := send(t, srv, request{body: strings.NewReader(body), length: int64(len(body))})
		if resp.status != http.StatusBadRequest {
			t.Errorf("%q: status %d, want 400", body, resp.status)
		}
		var got struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal([]byte(resp.body), &got) != nil || got.Error.Code != -32600 || !strings.Contains(resp.body, "batches are not supported") {
			t.Errorf("%q: body %s, want a -32600 error naming batches", body, resp.body)
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("a batch reached the backend %d times", n)
	}
	if got := seen.sizes(); len(got) != 2 || got[0] != httpserve.LimitBatch {
		t.Errorf("refusals %v, want two %q", got, httpserve.LimitBatch)
	}
	// A body that merely holds brackets is one message.
	resp := send(t, srv, request{body: strings.NewReader(`{"a":[1]}`), length: 9})
	if resp.status != http.StatusOK {
		t.Errorf("an object body got %d", resp.status)
	}
}

func TestMalformedJSONRefused(t *testing.T) {
	srv, b := newServer(t, nil)
	for _, body := range []string{`{"uri":"a\x41"}`, "{\"a\":\"\x01\"}", `{"a":`} {
		resp := send(t, srv, request{body: strings.NewReader(body), length: int64(len(body)), headers: map[string]string{"Content-Type": "application/json"}})
		var got struct {
			Error struct{ Code int } `json:"error"`
		}
		if resp.status != 400 || json.Unmarshal([]byte(resp.body), &got) != nil || got.Error.Code != -32700 {
			t.Errorf("%q: %d %s, want 400 and a -32700 error", body, resp.status, resp.body)
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("malformed JSON reached the backend %d times", n)
	}
}

// blocking is a backend whose requests wait until release is closed,
// telling entered about each.
type blocking struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	b.entered <- struct{}{}
	<-b.release
	io.WriteString(w, "done")
}

func TestConcurrencyLimit(t *testing.T) {
	seen := &recorder{}
	b := &blocking{entered: make(chan struct{}, 10), release: make(chan struct{})}
	// One address sends them all: its share of requests is not what is
	// under test.
	srv := httptest.NewServer(httpserve.Handler(b, &httpserve.Options{MaxConcurrent: 2, Observer: seen, Shares: httpserve.Shares{AddressRequests: -1}}))
	t.Cleanup(srv.Close)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(b.release)
	for range 2 {
		wg.Go(func() {
			if status, err := post(srv, nil); err != nil || status != http.StatusOK {
				t.Errorf("an admitted request got %d %v", status, err)
			}
		})
	}
	for range 2 {
		select {
		case <-b.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the first two requests did not reach the backend")
		}
	}
	resp := send(t, srv, request{body: strings.NewReader(`{}`), length: 2})
	if resp.status != http.StatusServiceUnavailable || resp.header.Get("Retry-After") == "" {
		t.Fatalf("third request: %d Retry-After %q, want 503 with Retry-After", resp.status, resp.header.Get("Retry-After"))
	}
	if msg := errorMessage(t, resp); !strings.Contains(msg, "2 requests in flight") {
		t.Errorf("message %q", msg)
	}
	// An event stream is not counted.
	wg.Go(func() { post(srv, map[string]string{"Mcp-Method": "subscriptions/listen"}) })
	select {
	case <-b.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a listen was refused for the requests in flight")
	}
	if got := seen.sizes(); len(got) != 1 || got[0] != httpserve.LimitConcurrency {
		t.Errorf("refusals %v, want [%s]", got, httpserve.LimitConcurrency)
	}
}

// post sends {} to srv's /mcp from any goroutine and returns the status.
func post(srv *httptest.Server, headers map[string]string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
	if err != nil {
		return 0, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// writer is a backend that answers with the given pieces.
type writer struct {
	status int
	pieces []string
	err    chan error
}

func (wr *writer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(wr.status)
	var err error
	for _, p := range wr.pieces {
		if _, err = io.WriteString(w, p); err != nil {
			break
		}
	}
	wr.err <- err
}

func TestResponseLimit(t *testing.T) {
	run := func(t *testing.T, wr *writer, body string) response {
		seen := &recorder{}
		wr.err = make(chan error, 1)
		srv := httptest.NewServer(httpserve.Handler(wr, &httpserve.Options{MaxResponseBytes: 100, Observer: seen}))
		t.Cleanup(srv.Close)
		resp := send(t, srv, request{body: strings.NewReader(body), length: int64(len(body))})
		err := <-wr.err
		if over := len(strings.Join(wr.pieces, "")) > 100; over != (err != nil) {
			t.Errorf("backend write error %v for an answer over the limit: %v", err, over)
		}
		if over := len(strings.Join(wr.pieces, "")) > 100; over != (len(seen.sizes()) == 1 && seen.sizes()[0] == httpserve.LimitResponse) {
			t.Errorf("the observer heard %v for an answer over the limit: %v", seen.sizes(), over)
		}
		return resp
	}
	t.Run("at limit", func(t *testing.T) {
		resp := run(t, &writer{status: 200, pieces: []string{strings.Repeat("x", 100)}}, `{"id":1}`)
		if resp.status != 200 || len(resp.body) != 100 {
			t.Errorf("got %d with %d bytes", resp.status, len(resp.body))
		}
	})
	t.Run("status kept", func(t *testing.T) {
		resp := run(t, &writer{status: 202}, `{}`)
		if resp.status != 202 {
			t.Errorf("got %d, want 202", resp.status)
		}
	})
	t.Run("over in one write", func(t *testing.T) {
		resp := run(t, &writer{status: 200, pieces: []string{strings.Repeat("x", 101)}}, `{"jsonrpc":"2.0","id":"req-7","method":"skills/list"}`)
		var got struct {
			ID    string `json:"id"`
			Error struct {
				Code    int
				Message string
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(resp.body), &got); err != nil || resp.status != 200 || got.ID != "req-7" ||
			got.Error.Code != -32000 || !strings.Contains(got.Error.Message, "over 100 bytes") {
			t.Errorf("got %d %s, want 200 and an error for id req-7 naming the limit", resp.status, resp.body)
		}
	})
	t.Run("over in pieces", func(t *testing.T) {
		wr := &writer{status: 200, pieces: []string{strings.Repeat("x", 60), strings.Repeat("y", 60)}, err: make(chan error, 1)}
		srv := httptest.NewServer(httpserve.Handler(wr, &httpserve.Options{MaxResponseBytes: 100}))
		t.Cleanup(srv.Close)
		resp, err := srv.Client().Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil {
				t.Errorf("a cut answer read as complete: %q", body)
			}
		}
		if err := <-wr.err; err == nil {
			t.Error("the backend's write past the limit succeeded")
		}
	})
}

func TestSlowBodyTimesOut(t *testing.T) {
	srv := httptest.NewUnstartedServer(httpserve.Handler(&backend{}, nil))
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "not received within") {
		t.Errorf("got %d %s, want 408", resp.StatusCode, body)
	}
}

func TestLimitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := &recorder{}
	g := httpserve.NewGuard(&httpserve.Options{MaxConns: 1, Observer: seen})
	lim := g.Listener(ln)
	srv := &http.Server{Handler: g.Handler(&backend{})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lim) }()
	t.Cleanup(func() { srv.Close(); <-done })

	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// The first connection is served, and kept open.
	io.WriteString(first, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	r1 := bufio.NewReader(first)
	if resp, err := http.ReadResponse(r1, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first connection: %v %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	second, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil {
		t.Fatalf("second connection got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !json.Valid(body) {
		t.Errorf("second connection: %d %q %s, want 503 with Retry-After and a JSON body", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if got := seen.sizes(); len(got) != 1 || got[0] != httpserve.LimitConnections {
		t.Errorf("refusals %v", got)
	}
	// Once the first closes, a new connection is served.
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err == nil && resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection served after the first closed")
		}
		time.Sleep(10 * time.Millisecond) // polling for the server to see the close
	}
}

// ticker is a backend that streams n events, one every gap.
type ticker struct {
	n   int
	gap time.Duration
}

func (tk ticker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for i := range tk.n {
		if _, err := io.WriteString(w, "data: tick\n\n"); err != nil {
			return
		}
		http.NewResponseController(w).Flush()
		if i < tk.n-1 {
			time.Sleep(tk.gap) // the pace of the stream under test
		}
	}
}

// TestStreamOutlivesTimeouts: an event stream (subscriptions/listen) is
// not cut by the server's read and write timeouts.
func TestStreamOutlivesTimeouts(t *testing.T) {
	srv := httptest.NewUnstartedServer(httpserve.Handler(ticker{n: 6, gap: 100 * time.Millisecond}, nil))
	srv.Config.ReadTimeout = 150 * time.Millisecond
	srv.Config.WriteTimeout = 150 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	ticks := func(header map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return strings.Count(string(data), "tick")
	}
	if n := ticks(map[string]string{"Mcp-Method": "subscriptions/listen"}); n != 6 {
		t.Errorf("the stream delivered %d of 6 events", n)
	}
}

// slow is a backend that answers after d, or reports its context ending.
type slow struct{ d time.Duration }

func (s slow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	select {
	case <-time.After(s.d): // the handler's own work, under test
		io.WriteString(w, "done")
	case <-r.Context().Done():
		http.Error(w, "cancelled", http.StatusServiceUnavailable)
	}
}

// TestReadTimeoutSparesTheHandler: the read timeout bounds reading the
// request, not the handler: a request read in time may take longer, and
// its context is not cancelled when the read deadline passes.
func TestReadTimeoutSparesTheHandler(t *testing.T) {
	srv := httptest.NewUnstartedServer(httpserve.Handler(slow{d: 500 * time.Millisecond}, nil))
	srv.Config.ReadTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	resp := send(t, srv, request{body: strings.NewReader(`{}`), length: 2})
	if resp.status != 200 || resp.body != "done" {
		t.Errorf("got %d %q, want the handler's answer", resp.status, resp.body)
	}
}

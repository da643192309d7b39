package httpserve_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// fakeClock is a clock that moves only when told; safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rateClient sends requests straight to a handler from a chosen address.
type rateClient struct {
	t testing.TB
	h http.Handler
}

func (c rateClient) do(method, path, remote, token string) *httptest.ResponseRecorder {
	c.t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	}
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, path, body)
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.Host = "localhost"
	req.RemoteAddr = remote
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, req)
	return w
}

// TestRateLimitAddress empties one address's bucket: the next request gets
// 429 with Retry-After and a JSON-RPC error, another address is still
// served, /healthz is never limited, and a token's worth of time later
// the address is served again.
func TestRateLimitAddress(t *testing.T) {
	clk := newFakeClock()
	b := &backend{}
	c := rateClient{t, httpserve.HandlerWithClock(b, &httpserve.Options{AddressRate: 5, RateBurst: time.Second}, clk.now)}
	const a, other = "192.0.2.1:1000", "192.0.2.2:1000"
	for i := range 5 {
		if w := c.do(http.MethodPost, "/mcp", a, ""); w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200: %s", i+1, w.Code, w.Body)
		}
	}
	w := c.do(http.MethodPost, "/mcp", a, "")
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("request 6 of a burst of 5: status %d, want 429", w.Code)
	}
	if got := w.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want \"1\" (a token at 5 per second, rounded up to a second)", got)
	}
	var rpc struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &rpc); err != nil || rpc.JSONRPC != "2.0" || rpc.Error.Code != -32000 {
		t.Errorf("429 body is not a JSON-RPC error: %s (%v)", w.Body, err)
	}
	if !strings.Contains(rpc.Error.Message, "retry after 1 s") || !strings.Contains(rpc.Error.Message, "5 per second") {
		t.Errorf("message %q does not say the limit and when to retry", rpc.Error.Message)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if n := b.calls.Load(); n != 5 {
		t.Errorf("backend saw %d requests, want 5", n)
	}
	if w := c.do(http.MethodPost, "/mcp", other, ""); w.Code != http.StatusOK {
		t.Errorf("another address: status %d, want 200", w.Code)
	}
	for i := range 100 {
		if w := c.do(http.MethodGet, "/healthz", a, ""); w.Code != http.StatusOK {
			t.Fatalf("/healthz request %d from a limited address: status %d, want 200", i+1, w.Code)
		}
	}
	clk.advance(200 * time.Millisecond)
	if w := c.do(http.MethodPost, "/mcp", a, ""); w.Code != http.StatusOK {
		t.Errorf("a token's time later: status %d, want 200", w.Code)
	}
}

// TestRateLimitToken checks that each token has a bucket of its own, shared
// by every address that uses it.
func TestRateLimitToken(t *testing.T) {
	clk := newFakeClock()
	c := rateClient{t, httpserve.HandlerWithClock(&backend{}, &httpserve.Options{
		Tokens: []string{"tok-a", "tok-b"}, TokenRate: 3, AddressRate: -1, RateBurst: time.Second,
	}, clk.now)}
	for i := range 3 {
		// tok-a from three addresses: one bucket.
		if w := c.do(http.MethodPost, "/mcp", "192.0.2."+string(rune('1'+i))+":1", "tok-a"); w.Code != http.StatusOK {
			t.Fatalf("tok-a request %d: status %d, want 200", i+1, w.Code)
		}
	}
	if w := c.do(http.MethodPost, "/mcp", "192.0.2.9:1", "tok-a"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("tok-a from a fourth address: status %d, want 429", w.Code)
	} else if !strings.Contains(w.Body.String(), "bearer token") {
		t.Errorf("429 body does not name the token as the limit: %s", w.Body)
	}
	if w := c.do(http.MethodPost, "/mcp", "192.0.2.1:1", "tok-b"); w.Code != http.StatusOK {
		t.Errorf("tok-b after tok-a's bucket ran dry: status %d, want 200", w.Code)
	}
	// A wrong token is refused by the check, not counted against a bucket
	// of its own.
	if w := c.do(http.MethodPost, "/mcp", "192.0.2.1:1", "tok-x"); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", w.Code)
	}
}

// TestRateLimitTokenGuessing checks that the address limit runs before the
// token check, so that guessing tokens is limited too.
func TestRateLimitTokenGuessing(t *testing.T) {
	c := rateClient{t, httpserve.HandlerWithClock(&backend{}, &httpserve.Options{
		Tokens: []string{"secret"}, AddressRate: 2, RateBurst: time.Second,
	}, newFakeClock().now)}
	for range 2 {
		if w := c.do(http.MethodPost, "/mcp", "192.0.2.1:1", "guess"); w.Code != http.StatusUnauthorized {
			t.Fatalf("guess: status %d, want 401", w.Code)
		}
	}
	if w := c.do(http.MethodPost, "/mcp", "192.0.2.1:1", "guess"); w.Code != http.StatusTooManyRequests {
		t.Errorf("third guess: status %d, want 429", w.Code)
	}
}

// TestRateLimitLogsOnce checks that an offender is logged once, not per
// request, and that the log names a token only by a digest prefix.
func TestRateLimitLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	clk := newFakeClock()
	const token = "very-secret-token"
	c := rateClient{t, httpserve.HandlerWithClock(&backend{}, &httpserve.Options{
		Tokens: []string{token}, TokenRate: 1, AddressRate: -1, RateBurst: time.Second, Logger: log,
	}, clk.now)}
	refused := 0
	for range 200 {
		if c.do(http.MethodPost, "/mcp", "192.0.2.1:1", token).Code == http.StatusTooManyRequests {
			refused++
		}
		clk.advance(time.Millisecond)
	}
	if refused < 190 {
		t.Fatalf("only %d of 200 requests refused at 1 per second", refused)
	}
	out := logs.String()
	if n := strings.Count(out, "rate limit exceeded"); n != 1 {
		t.Errorf("%d refusals logged %d lines, want 1:\n%s", refused, n, out)
	}
	if strings.Contains(out, token) {
		t.Errorf("log holds the token:\n%s", out)
	}
	// printf %s very-secret-token | sha256sum | cut -c1-8
	if !strings.Contains(out, "token=sha256:01cadf39") {
		t.Errorf("log does not name the token by its digest:\n%s", out)
	}
	clk.advance(time.Minute)
	c.do(http.MethodPost, "/mcp", "192.0.2.1:1", token)
	c.do(http.MethodPost, "/mcp", "192.0.2.1:1", token)
	if n := strings.Count(logs.String(), "rate limit exceeded"); n != 2 {
		t.Errorf("a minute later: %d lines, want 2", n)
	}
}

// TestMetricsRoute checks that /metrics is served behind the token check
// and the rate limit, like /mcp, and only for GET.
func TestMetricsRoute(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("m 1\n")) })
	h := httpserve.HandlerWithClock(&backend{}, &httpserve.Options{
		Tokens: []string{"tok"}, Metrics: metrics, AddressRate: 3, RateBurst: time.Second,
	}, newFakeClock().now)
	c := rateClient{t, h}
	if w := c.do(http.MethodGet, "/metrics", "192.0.2.1:1", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: status %d, want 401", w.Code)
	}
	if w := c.do(http.MethodGet, "/metrics", "192.0.2.1:1", "tok"); w.Code != http.StatusOK || w.Body.String() != "m 1\n" {
		t.Errorf("/metrics with the token: status %d, body %q", w.Code, w.Body)
	}
	c.do(http.MethodGet, "/metrics", "192.0.2.1:1", "tok")
	if w := c.do(http.MethodGet, "/metrics", "192.0.2.1:1", "tok"); w.Code != http.StatusTooManyRequests {
		t.Errorf("/metrics past the address limit: status %d, want 429", w.Code)
	}
	if w := c.do(http.MethodPost, "/metrics", "192.0.2.2:1", "tok"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: status %d, want 405", w.Code)
	}
	noMetrics := rateClient{t, httpserve.Handler(&backend{}, nil)}
	if w := noMetrics.do(http.MethodGet, "/metrics", "192.0.2.1:1", ""); w.Code != http.StatusNotFound {
		t.Errorf("/metrics without Options.Metrics: status %d, want 404", w.Code)
	}
}

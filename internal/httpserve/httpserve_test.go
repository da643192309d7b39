package httpserve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// backend stands in for the SDK's handler: it reads the whole body and
// answers 200 "got N bytes", counting the requests that reach it.
type backend struct {
	calls atomic.Int32
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "backend read: "+err.Error(), http.StatusTeapot)
		return
	}
	fmt.Fprintf(w, "got %d bytes", len(body))
}

// newServer starts a loopback test server running Handler(backend, opts).
func newServer(t testing.TB, opts *httpserve.Options) (*httptest.Server, *backend) {
	t.Helper()
	b := &backend{}
	srv := httptest.NewServer(httpserve.Handler(b, opts))
	t.Cleanup(srv.Close)
	return srv, b
}

// request describes one request to send; zero fields mean defaults.
type request struct {
	method  string // default POST
	path    string // default /mcp
	host    string // default the server's own 127.0.0.1:port
	headers map[string]string
	body    io.Reader
	length  int64 // Content-Length; -1 for chunked
}

type response struct {
	status int
	header http.Header
	body   string
}

func send(t testing.TB, srv *httptest.Server, rq request) response {
	t.Helper()
	if rq.method == "" {
		rq.method = http.MethodPost
	}
	if rq.path == "" {
		rq.path = "/mcp"
	}
	req, err := http.NewRequest(rq.method, srv.URL+rq.path, rq.body)
	if err != nil {
		t.Fatal(err)
	}
	if rq.host != "" {
		req.Host = rq.host
	}
	if rq.body != nil {
		req.ContentLength = rq.length
	}
	for k, v := range rq.headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

// errorMessage checks that body is a JSON-RPC error in the documented shape
// and returns its message.
func errorMessage(t testing.TB, resp response) string {
	t.Helper()
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      *json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(resp.body), &got); err != nil {
		t.Fatalf("error body %q is not JSON: %v", resp.body, err)
	}
	if got.JSONRPC != "2.0" || got.ID != nil || got.Error.Code != -32000 || got.Error.Message == "" {
		t.Errorf("error body = %s, want jsonrpc 2.0, id null, code -32000 and a message", resp.body)
	}
	if !strings.Contains(resp.body, `"id":null`) {
		t.Errorf("error body = %s, want an explicit \"id\":null", resp.body)
	}
	return got.Error.Message
}

// wantRefused checks that resp has the status and a JSON-RPC error whose
// message contains fragment, and that the backend was never called.
func wantRefused(t testing.TB, resp response, b *backend, status int, fragment string) {
	t.Helper()
	if resp.status != status {
		t.Errorf("status = %d, want %d (body %s)", resp.status, status, resp.body)
	}
	if msg := errorMessage(t, resp); !strings.Contains(msg, fragment) {
		t.Errorf("message = %q, want it to contain %q", msg, fragment)
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("backend called %d times for a refused request", n)
	}
}

func wantPassed(t testing.TB, resp response, b *backend, wantBody string) {
	t.Helper()
	if resp.status != http.StatusOK || resp.body != wantBody {
		t.Errorf("got %d %q, want 200 %q", resp.status, resp.body, wantBody)
	}
	if n := b.calls.Load(); n != 1 {
		t.Errorf("backend called %d times, want 1", n)
	}
}

func TestHost(t *testing.T) {
	allow := &httpserve.Options{AllowedHosts: []string{"mcp.example.com", " Other.Example:8443 ", "[fd00::7]", "*"}}
	tests := []struct {
		name    string
		opts    *httpserve.Options
		host    string
		allowed bool
		message string // when refused, a fragment of the message
	}{
		{"own address", nil, "", true, ""},
		{"127.0.0.1 without port", nil, "127.0.0.1", true, ""},
		{"other 127/8 address", nil, "127.9.8.7:1234", true, ""},
		{"localhost", nil, "localhost", true, ""},
		{"localhost any port", nil, "localhost:5173", true, ""},
		{"localhost uppercase", nil, "LocalHost:3939", true, ""},
		{"localhost fully qualified", nil, "localhost.:3939", true, ""},
		{"ipv6 loopback", nil, "[::1]:3939", true, ""},
		{"ipv6 loopback without port", nil, "[::1]", true, ""},
		{"ipv6 loopback long form", nil, "[0:0:0:0:0:0:0:1]:3939", true, ""},
		{"ipv4-mapped loopback", nil, "[::ffff:127.0.0.1]:3939", true, ""},
		{"foreign name", nil, "evil.example", false, `host "evil.example" is not allowed; add it to SKILLS_ALLOWED_HOSTS`},
		{"foreign name with port", nil, "evil.example:3939", false, `host "evil.example" is not allowed`},
		{"localhost as subdomain", nil, "localhost.evil.example", false, "not allowed"},
		{"subdomain of localhost", nil, "evil.localhost", false, "not allowed"},
		{"LAN address", nil, "192.168.1.20:3939", false, "not allowed"},
		{"ipv6 non-loopback", nil, "[fd00::7]:3939", false, "not allowed"},
		{"allowed name", allow, "mcp.example.com", true, ""},
		{"allowed name any port", allow, "mcp.example.com:9999", true, ""},
		{"allowed name case-insensitive", allow, "MCP.Example.COM:3939", true, ""},
		{"allowed name with port", allow, "other.example:8443", true, ""},
		{"allowed name wrong port", allow, "other.example:8444", false, "add other.example:8444 or other.example"},
		{"allowed name default port", allow, "other.example", false, "not allowed on port 80"},
		{"allowed ipv6", allow, "[fd00::7]:3939", true, ""},
		{"loopback still allowed", allow, "localhost:3939", true, ""},
		{"wildcard entry is ignored", allow, "evil.example", false, "not allowed"},
		{"wildcard host header", allow, "*", false, "not allowed"},
		{"unlisted subdomain", allow, "x.mcp.example.com", false, "not allowed"},
		{"malformed port", nil, "localhost:abc", false, "malformed"},
		{"out of range port", nil, "localhost:70000", false, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, b := newServer(t, tt.opts)
			resp := send(t, srv, request{host: tt.host})
			if tt.allowed {
				wantPassed(t, resp, b, "got 0 bytes")
				return
			}
			status := http.StatusForbidden
			if tt.message == "malformed" {
				status = http.StatusBadRequest
			}
			wantRefused(t, resp, b, status, tt.message)
		})
	}
}

// TestHostAppliesEverywhere checks that the Host guard covers every path
// but the probes, so a rebinding page learns nothing from them.
func TestHostAppliesEverywhere(t *testing.T) {
	srv, b := newServer(t, nil)
	for _, path := range []string{"/", "/nope", "/metrics"} {
		resp := send(t, srv, request{method: http.MethodGet, path: path, host: "evil.example"})
		wantRefused(t, resp, b, http.StatusForbidden, `host "evil.example" is not allowed`)
	}
}

// TestMissingHost sends an HTTP/1.0 request, the only kind that may omit
// Host, over a raw connection.
func TestMissingHost(t *testing.T) {
	srv, b := newServer(t, nil)
	resp := rawRequest(t, srv, "GET /mcp HTTP/1.0\r\n\r\n")
	wantRefused(t, resp, b, http.StatusBadRequest, "missing Host header")
}

// rawRequest writes req verbatim to the server and reads one response.
func rawRequest(t testing.TB, srv *httptest.Server, req string) response {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response body: %v", err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

func TestOrigin(t *testing.T) {
	allow := &httpserve.Options{AllowedHosts: []string{"app.example.com", "other.example:8443"}}
	tests := []struct {
		name    string
		opts    *httpserve.Options
		origin  string
		allowed bool
	}{
		{"absent", nil, "", true},
		{"localhost", nil, "http://localhost:5173", true},
		{"127.0.0.1", nil, "http://127.0.0.1", true},
		{"ipv6 loopback", nil, "http://[::1]:3939", true},
		{"uppercase localhost", nil, "HTTP://LOCALHOST:3000", true},
		{"foreign", nil, "https://evil.example", false},
		{"foreign with loopback-looking name", nil, "http://127.0.0.1.evil.example", false},
		{"opaque null origin", nil, "null", false},
		{"garbage", nil, "::::", false},
		{"no host", nil, "file://", false},
		{"allowed name", allow, "https://app.example.com", true},
		{"allowed name case-insensitive", allow, "https://APP.example.com:8080", true},
		{"allowed name and port", allow, "https://other.example:8443", true},
		{"allowed name default https port", allow, "https://other.example", false},
		{"allowed name other port", allow, "http://other.example:8080", false},
		{"foreign with allowlist", allow, "https://evil.example", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, b := newServer(t, tt.opts)
			headers := map[string]string{}
			if tt.origin != "" {
				headers["Origin"] = tt.origin
			}
			resp := send(t, srv, request{headers: headers})
			if tt.allowed {
				wantPassed(t, resp, b, "got 0 bytes")
				return
			}
			wantRefused(t, resp, b, http.StatusForbidden,
				fmt.Sprintf("origin %q is not allowed; add its host to SKILLS_ALLOWED_HOSTS", tt.origin))
		})
	}
}

func TestToken(t *testing.T) {
	twoTokens := &httpserve.Options{Tokens: []string{"first-token", "second-token-is-longer"}}
	tests := []struct {
		name          string
		opts          *httpserve.Options
		authorization string
		allowed       bool
		message       string
	}{
		{"none configured, none sent", nil, "", true, ""},
		{"none configured, one sent", nil, "Bearer whatever", true, ""},
		{"missing", twoTokens, "", false, "missing bearer token"},
		{"empty bearer", twoTokens, "Bearer ", false, "missing bearer token"},
		{"wrong", twoTokens, "Bearer first-tokeN", false, "bearer token is not valid"},
		{"prefix of a token", twoTokens, "Bearer first", false, "bearer token is not valid"},
		{"token plus extra", twoTokens, "Bearer first-token2", false, "bearer token is not valid"},
		{"basic scheme", twoTokens, "Basic Zmlyc3QtdG9rZW4=", false, "not Bearer"},
		{"token without scheme", twoTokens, "first-token", false, "not Bearer"},
		{"first token", twoTokens, "Bearer first-token", true, ""},
		{"second token", twoTokens, "Bearer second-token-is-longer", true, ""},
		{"scheme case-insensitive", twoTokens, "bearer first-token", true, ""},
		{"empty configured token never matches", &httpserve.Options{Tokens: []string{""}}, "Bearer ", false, "missing bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, b := newServer(t, tt.opts)
			headers := map[string]string{}
			if tt.authorization != "" {
				headers["Authorization"] = tt.authorization
			}
			resp := send(t, srv, request{headers: headers})
			if tt.allowed {
				wantPassed(t, resp, b, "got 0 bytes")
				return
			}
			wantRefused(t, resp, b, http.StatusUnauthorized, tt.message)
			if got, want := resp.header.Get("WWW-Authenticate"), `Bearer realm="skills-mcp"`; got != want {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
		})
	}
}

// TestRefusalLogsNoToken checks that refusals are logged at Debug with a
// reason and that neither a sent nor a configured token reaches the log.
func TestRefusalLogsNoToken(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, _ := newServer(t, &httpserve.Options{Tokens: []string{"configured-secret"}, Logger: logger})
	send(t, srv, request{headers: map[string]string{"Authorization": "Bearer sent-secret"}})
	send(t, srv, request{host: "evil.example"})

	out := logs.String()
	for _, want := range []string{"level=DEBUG", "status=401", "bearer token is not valid", "status=403", "evil.example"} {
		if !strings.Contains(out, want) {
			t.Errorf("log does not contain %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"configured-secret", "sent-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains token %q:\n%s", secret, out)
		}
	}
}

// TestGuardOrder checks that a request failing several checks is refused by
// the outermost: Host, then Origin, then token, then body size. Reading a
// large body before authenticating would let anyone make the server do the
// work.
func TestGuardOrder(t *testing.T) {
	opts := &httpserve.Options{Tokens: []string{"tok"}, MaxBodyBytes: 4}
	big := "0123456789"
	tests := []struct {
		name   string
		rq     request
		status int
	}{
		{"host first", request{host: "evil.example", headers: map[string]string{"Origin": "https://evil.example"}, body: strings.NewReader(big), length: 10}, http.StatusForbidden},
		{"origin before token", request{headers: map[string]string{"Origin": "https://evil.example"}, body: strings.NewReader(big), length: 10}, http.StatusForbidden},
		{"token before body", request{body: strings.NewReader(big), length: 10}, http.StatusUnauthorized},
		{"body last", request{headers: map[string]string{"Authorization": "Bearer tok"}, body: strings.NewReader(big), length: 10}, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, b := newServer(t, opts)
			resp := send(t, srv, tt.rq)
			wantRefused(t, resp, b, tt.status, "")
		})
	}
}

// hiddenLength hides a reader's length from net/http so the body is sent
// chunked.
type hiddenLength struct{ io.Reader }

func TestBodyLimit(t *testing.T) {
	opts := &httpserve.Options{MaxBodyBytes: 16}
	tests := []struct {
		name   string
		size   int
		length int64 // -1 sends the body chunked
		status int
	}{
		{"at limit", 16, 16, http.StatusOK},
		{"over limit by length", 17, 17, http.StatusRequestEntityTooLarge},
		{"far over limit by length", 4096, 4096, http.StatusRequestEntityTooLarge},
		{"chunked under limit", 15, -1, http.StatusOK},
		{"chunked at limit", 16, -1, http.StatusOK},
		{"chunked over limit", 17, -1, http.StatusRequestEntityTooLarge},
		{"chunked far over limit", 1000, -1, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the over-limit cases wait out net/http's close delay
			srv, b := newServer(t, opts)
			body := hiddenLength{strings.NewReader(strings.Repeat("x", tt.size))}
			resp := send(t, srv, request{body: body, length: tt.length})
			if tt.status == http.StatusOK {
				wantPassed(t, resp, b, fmt.Sprintf("got %d bytes", tt.size))
				return
			}
			wantRefused(t, resp, b, tt.status, "the limit is 16 bytes")
		})
	}
}

// TestDefaultBodyLimit announces a body one byte over DefaultMaxBodyBytes
// over a raw connection; the refusal must come before any of it is sent.
func TestDefaultBodyLimit(t *testing.T) {
	t.Parallel()
	srv, b := newServer(t, nil)
	resp := rawRequest(t, srv, fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n",
		httpserve.DefaultMaxBodyBytes+1))
	wantRefused(t, resp, b, http.StatusRequestEntityTooLarge, fmt.Sprintf("the limit is %d bytes", httpserve.DefaultMaxBodyBytes))
}

// TestProbes: /livez, /readyz and /healthz answer for any Host, with no
// token and whatever the limits, and say nothing but the state.
func TestProbes(t *testing.T) {
	var state atomic.Value
	state.Store("loading")
	srv, b := newServer(t, &httpserve.Options{
		Tokens:      []string{"tok"},
		AddressRate: 0.001, RateBurst: time.Millisecond, // one request, then 429
		Ready: func(ctx context.Context) string {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the readiness check has no deadline")
			}
			return state.Load().(string)
		},
	})
	probe := func(path, host string) response {
		return send(t, srv, request{method: http.MethodGet, path: path, host: host})
	}
	for range 3 { // past the address rate
		for _, host := range []string{"", "10.1.2.3:3939", "evil.example"} {
			if r := probe("/livez", host); r.status != 200 || strings.TrimSpace(r.body) != `{"status":"ok"}` {
				t.Errorf("/livez with Host %q: %d %q", host, r.status, r.body)
			}
			for _, path := range []string{"/readyz", "/healthz"} {
				r := probe(path, host)
				if r.status != http.StatusServiceUnavailable || strings.TrimSpace(r.body) != `{"status":"loading"}` {
					t.Errorf("%s while loading, Host %q: %d %q", path, host, r.status, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q", path, ct)
				}
			}
		}
	}
	state.Store("")
	for _, path := range []string{"/readyz", "/healthz"} {
		if r := probe(path, ""); r.status != 200 || strings.TrimSpace(r.body) != `{"status":"ok"}` {
			t.Errorf("%s when ready: %d %q", path, r.status, r.body)
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("backend called %d times for probes", n)
	}
	t.Run("wrong method", func(t *testing.T) {
		resp := send(t, srv, request{method: http.MethodPost, path: "/healthz"})
		wantRefused(t, resp, b, http.StatusMethodNotAllowed, "use GET")
		if got := resp.header.Get("Allow"); got != "GET, HEAD" {
			t.Errorf("Allow = %q, want %q", got, "GET, HEAD")
		}
	})
	t.Run("default ready", func(t *testing.T) {
		srv, _ := newServer(t, nil)
		if r := send(t, srv, request{method: http.MethodGet, path: "/readyz"}); r.status != 200 {
			t.Errorf("/readyz without Ready: %d %q", r.status, r.body)
		}
	})
}

func TestNotFound(t *testing.T) {
	for _, path := range []string{"/", "/nope", "/mcp/", "/mcp/extra", "/MCP", "/healthz/x"} {
		t.Run(path, func(t *testing.T) {
			srv, b := newServer(t, nil)
			resp := send(t, srv, request{method: http.MethodGet, path: path})
			wantRefused(t, resp, b, http.StatusNotFound, "the MCP endpoint is /mcp")
		})
	}
}

// TestAllMethodsReachMCP checks that /mcp passes every method through: the
// SDK decides which it serves.
func TestAllMethodsReachMCP(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodOptions} {
		t.Run(method, func(t *testing.T) {
			srv, b := newServer(t, nil)
			wantPassed(t, send(t, srv, request{method: method}), b, "got 0 bytes")
		})
	}
}

// Package httpserve hardens and serves the Streamable HTTP endpoint.
//
// It knows little of MCP itself: the caller builds the SDK's handler and
// passes it to [Handler], which puts it at /mcp behind these guards, in
// this order:
//
//   - Host: the Host header must name a loopback host (localhost,
//     127.0.0.0/8, ::1) or one listed in [Options.AllowedHosts]. This is what
//     defeats DNS rebinding, where a web page's own host name is re-pointed
//     at 127.0.0.1 so that the browser talks to a local server.
//   - Origin: a browser request from a page whose origin is not an allowed
//     host is refused.
//   - Bearer token: when [Options.Tokens] is set, each request must carry
//     one of them.
//   - Rate: a token bucket per client address (before the token check)
//     and one per bearer token (after it); past either a request gets 429
//     with Retry-After. See [Options.AddressRate].
//   - Body size: bodies over [Options.MaxBodyBytes] get 413 before the MCP
//     handler sees them; a JSON body that does not parse, and a JSON-RPC
//     batch, get 400.
//   - Limits: at most [Options.MaxConcurrent] requests are handled at once
//     (503 with Retry-After past it), and an answer is bounded by
//     [Options.MaxResponseBytes].
//
// /healthz is never rate limited, so that probes keep seeing a server
// that refuses a flood. [Options.Observer] hears of requests and refusals
// (package metrics counts them), and [Options.Metrics] is served at
// /metrics behind the same guards as /mcp.
//
// [Serve] runs the handler on a listener, with read and write timeouts,
// and shuts down gracefully when its context ends; [LimitListener] bounds
// the connections open at once; [ParseAddr] and [CheckBind] validate the
// --http address before anything listens.
//
// Every refusal is an HTTP error status with a JSON-RPC error body whose
// message says what to fix, so a client that only shows the message still
// tells its user something useful.
package httpserve

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// DefaultAddr is where --http listens when given no address.
const DefaultAddr = "127.0.0.1:3939"

// DefaultMaxBodyBytes bounds a request body (4 MiB); larger bodies get 413.
const DefaultMaxBodyBytes = 4 << 20

// Options configures [Handler]. A nil *Options means defaults.
type Options struct {
	// AllowedHosts are extra host names accepted in the Host and Origin
	// headers, besides the loopback names (localhost, 127.0.0.0/8, ::1),
	// which are always accepted. An entry is "name" or "name:port"
	// ("[v6addr]:port" for IPv6), compared case-insensitively; an entry
	// without a port matches any port, and one with a port matches only that
	// port (an absent port counts as 80 or 443, by scheme).
	//
	// The wildcard "*" is not supported: list each name clients use. A
	// wildcard would switch off the DNS-rebinding defence entirely, so
	// [Handler] ignores such entries and [CheckBind] reports them.
	// If empty, only loopback names are accepted.
	AllowedHosts []string

	// Tokens are the accepted bearer tokens. If empty, requests to /mcp need
	// no authentication. An empty string in the list never matches.
	Tokens []string

	// MaxBodyBytes bounds request bodies. If zero or negative, defaults to
	// [DefaultMaxBodyBytes].
	MaxBodyBytes int64

	// MaxConcurrent bounds the /mcp requests handled at once; past it a
	// request gets 503 with Retry-After. Event streams
	// (subscriptions/listen) are not counted: each holds a connection,
	// which LimitListener bounds. If zero or negative, defaults to
	// [DefaultMaxConcurrent].
	MaxConcurrent int

	// MaxResponseBytes bounds the answer to one request; an answer over it
	// is replaced by a JSON-RPC error for the request, naming the limit.
	// Event streams are not bounded in total. If zero or negative,
	// defaults to [DefaultMaxResponseBytes].
	MaxResponseBytes int64

	// Health, if non-nil, returns the value served as JSON by GET /healthz,
	// for example {"status":"ok","skills":N}. If nil, /healthz answers
	// {"status":"ok"}. It is called once per request and must be safe for
	// concurrent use.
	Health func() any

	// Ready, if non-nil, reports whether the server is ready to serve; while
	// it is not, /healthz answers 503 Service Unavailable (with the Health
	// value), so that a load balancer waits for the catalog.
	Ready func() bool

	// AddressRate bounds the requests per second to /mcp and /metrics from
	// one client address (an IPv4 address, or the /64 of an IPv6 one), as a
	// token bucket that holds RateBurst's worth of requests. The address is
	// the connection's peer: X-Forwarded-For is never trusted. If zero,
	// defaults to [DefaultAddressRate]; if negative, there is no limit.
	AddressRate float64

	// TokenRate bounds the requests per second made with one bearer token,
	// from any address, as AddressRate does; it applies only when Tokens
	// are set. If zero, defaults to [DefaultTokenRate]; if negative, there
	// is no limit.
	TokenRate float64

	// RateBurst is how many seconds' worth of requests a client may send
	// at once above its rate. If zero or negative, defaults to
	// [DefaultRateBurst].
	RateBurst time.Duration

	// Metrics, if non-nil, is served at GET /metrics behind the same
	// guards as /mcp (Host, Origin, bearer token, rate limits).
	Metrics http.Handler

	// WellKnown, if non-nil, is served at /.well-known/ behind the same
	// guards as /metrics (Host, Origin, bearer token, rate limits): the
	// Agent Skills well-known index (package wellknown), for installers
	// that do not speak MCP.
	WellKnown http.Handler

	// UI, if non-nil, is served at every path the routes above do not take
	// (/, /assets/..., the browser's pages), behind the Host check and the
	// address rate limit only: it answers HTML, and authenticates and
	// checks the origin of requests itself (package web). If nil, those
	// paths get 404.
	UI http.Handler

	// Observer, if non-nil, hears of every request to /mcp and every
	// refusal by a rate or size limit.
	Observer Observer

	// Logger receives a Debug record for every refused request, with the
	// reason (never a token), a Warn record for each AllowedHosts entry
	// Handler ignores, and a Warn record when a client goes over a rate
	// limit (once a minute per client; a token is named by a prefix of its
	// SHA-256). If nil, do not log.
	Logger *slog.Logger
}

// Handler returns the complete HTTP handler for the server:
//
//	/mcp          mcpHandler, all methods (the SDK answers 405 itself for the
//	              ones it does not serve), behind the Host, Origin, bearer
//	              token, rate and body-size guards described in the package
//	              doc
//	GET /metrics  opts.Metrics, if set, behind the same guards but the body
//	              size
//	/.well-known/ opts.WellKnown, if set, behind the same guards as
//	              /metrics
//	GET /healthz  JSON health; Host check only, never rate limited
//	anything else opts.UI behind the Host check and the address rate
//	              limit, if set; else 404
//
// /healthz needs no token so that liveness probes, which cannot be given
// secrets easily, keep working; it reveals nothing beyond what Health
// returns. The Host check still applies, so a rebinding web page cannot
// probe it; a probe that connects by IP (a Kubernetes httpGet probe sends
// the pod IP) must send "Host: localhost" or a listed name.
//
// Refusals: a missing Host header gets 400; a disallowed Host or Origin gets
// 403; a missing or wrong token gets 401 with
// `WWW-Authenticate: Bearer realm="skills-mcp"`; a body over the limit gets
// 413, whether it announces its length or streams chunks; a client over a
// rate limit gets 429 with Retry-After (whole seconds); a body not read
// within the read timeout 408; an application/json body that is not JSON
// 400 (code -32700); a batch 400 (code -32600); a request past
// MaxConcurrent, or while too many large bodies are being read, 503 with
// `Retry-After: 1`. Every error body is
// {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"..."}}. An
// answer over MaxResponseBytes is replaced by a JSON-RPC error (code
// -32000) for the request's id, with status 200.
//
// The returned handler is safe for concurrent use. It copies what it needs
// from opts, so later changes to opts have no effect.
func Handler(mcpHandler http.Handler, opts *Options) http.Handler {
	return handler(mcpHandler, opts, time.Now)
}

// handler is Handler with the clock of the rate limits.
func handler(mcpHandler http.Handler, opts *Options, now func() time.Time) http.Handler {
	g := newGuard(opts, now)
	mux := http.NewServeMux()
	// The address limit comes first, so that floods and token guessing
	// cost the least; the token limit after the token check, so that only
	// valid tokens get a bucket.
	protect := func(h http.Handler) http.Handler {
		return g.limitAddress(g.checkOrigin(g.checkToken(g.limitToken(h))))
	}
	mux.Handle("/mcp", g.observe(protect(g.limitBody(mcpHandler))))
	if opts != nil && opts.Metrics != nil {
		mux.Handle("GET /metrics", protect(opts.Metrics))
		mux.HandleFunc("/metrics", g.serveMethodNotAllowed)
	}
	if opts != nil && opts.WellKnown != nil {
		mux.Handle("/.well-known/", protect(opts.WellKnown))
	}
	mux.HandleFunc("GET /healthz", g.serveHealth)
	mux.HandleFunc("/healthz", g.serveMethodNotAllowed)
	if opts != nil && opts.UI != nil {
		mux.Handle("/", g.limitAddress(opts.UI))
	} else {
		mux.HandleFunc("/", g.serveNotFound)
	}
	return g.checkHost(mux)
}

// serveHealth answers GET (and HEAD) /healthz.
func (g *guard) serveHealth(w http.ResponseWriter, r *http.Request) {
	var v any = struct {
		Status string `json:"status"`
	}{"ok"}
	if g.health != nil {
		v = g.health()
	}
	data, err := json.Marshal(v)
	if err != nil {
		g.reject(w, r, http.StatusInternalServerError, fmt.Sprintf("health report cannot be encoded as JSON: %v", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if g.ready != nil && !g.ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(append(data, '\n'))
}

// serveMethodNotAllowed answers /healthz and /metrics for methods other
// than GET and HEAD.
func (g *guard) serveMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	g.reject(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s; use GET", quoteTrunc(r.Method), r.URL.Path))
}

// serveNotFound answers every path that has no route.
func (g *guard) serveNotFound(w http.ResponseWriter, r *http.Request) {
	g.reject(w, r, http.StatusNotFound, fmt.Sprintf("no endpoint at %s; the MCP endpoint is /mcp", quoteTrunc(r.URL.Path)))
}

// errorCode is the JSON-RPC code of every refusal: the implementation-defined
// server error, since none of the reserved codes means "HTTP-level refusal".
const errorCode = -32000

// writeError writes a JSON-RPC error body with the given HTTP status.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	// A struct rather than a map keeps the fields in the conventional order.
	body := struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", nil, rpcError{code, msg}}
	data, err := json.Marshal(body)
	if err != nil {
		// Unreachable: every field is a string or an int.
		http.Error(w, msg, status)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// maxQuoted bounds how much of a client-supplied value an error message
// repeats, so a hostile header cannot inflate every refusal.
const maxQuoted = 128

// quoteTrunc quotes a client-supplied value for an error message, cut to
// maxQuoted bytes.
func quoteTrunc(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q...", s[:maxQuoted])
	}
	return fmt.Sprintf("%q", s)
}

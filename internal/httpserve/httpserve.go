// Package httpserve is the HTTP layer of skills-mcp: one guard stack that
// both `serve --http` and `hub serve` put before their handlers, so that
// no client takes the server away from the others.
//
// It knows little of MCP itself. [NewGuard] builds a [Guard] from
// [Options]; [Guard.Handler] serves the SDK's handler at /mcp (serve's
// routes) and [Guard.Wrap] puts a whole site behind the same guards (the
// hub's); [Guard.Listener] bounds the connections; [Serve] runs the
// result. The guards, in the order a request meets them:
//
//   - Probes: /livez, /readyz and /healthz (an alias of /readyz) are
//     answered first, for any Host, with no token and no limit, revealing
//     nothing but the state (see [Options.Ready]).
//   - Connections: at most [Options.MaxConns] open at once, and
//     [Shares.AddressConns] from one client address; past either a
//     connection is answered 503 with Retry-After and closed.
//   - Deadlines: a request must arrive within 30 s (its headers within
//     10); each write of an answer must complete within
//     [Options.WriteTimeout], and a whole answer within 60 s, so a client
//     that stops reading is cut at its first stalled write.
//   - Host: the Host header must name a loopback host (localhost,
//     127.0.0.0/8, ::1) or one listed in [Options.AllowedHosts]. This is what
//     defeats DNS rebinding, where a web page's own host name is re-pointed
//     at 127.0.0.1 so that the browser talks to a local server.
//   - Origin: a browser request from a page whose origin is not an allowed
//     host is refused.
//   - Rate: a token bucket per client address (before any token check),
//     one per bearer token and one per project (after it); past any a
//     request gets 429 with Retry-After. See [Options.AddressRate].
//   - Bearer token: when [Options.Tokens] is set, each request to /mcp and
//     /metrics must carry one of them.
//   - Body size: bodies over [Options.MaxBodyBytes] get 413 before the MCP
//     handler sees them; a JSON body that does not parse, and a JSON-RPC
//     batch, get 400. The bytes of bodies being read are bounded in all
//     and per client ([Shares]).
//   - Shares: what one client (an address, an IPv6 /64, or a bearer
//     token) may hold at once (requests in flight, event streams, body
//     bytes) is bounded well below the global caps ([Options.MaxConcurrent],
//     [Options.MaxStreams]); past its share a request gets 429 with
//     Retry-After, past a global cap 503.
//   - Streams: an event stream (subscriptions/listen, or a GET of
//     text/event-stream) lives at most [Options.StreamLifetime], hears a
//     keep-alive comment when idle, and is cut at the first write its
//     client does not take within [Options.WriteTimeout]. A handler may
//     park its stream (see [StreamParker]): the guard then holds the
//     connection without the handler's goroutine.
//
// Every refusal is an HTTP error status with a JSON-RPC error body whose
// message says what to fix, so a client that only shows the message still
// tells its user something useful; each offender's refusals are logged
// once a minute, and [Options.Observer] hears of every one (package
// metrics counts them).
package httpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultAddr is where --http listens when given no address.
const DefaultAddr = "127.0.0.1:3939"

// DefaultMaxBodyBytes bounds a request body (4 MiB); larger bodies get 413.
const DefaultMaxBodyBytes = 4 << 20

// Options configures a [Guard]. A nil *Options means defaults.
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
	// [NewGuard] ignores such entries and [CheckBind] reports them.
	// If empty, only loopback names are accepted.
	AllowedHosts []string

	// AllowedHostsSetting names, in the messages of refused hosts and
	// origins, the setting that lists AllowedHosts. If empty,
	// "SKILLS_ALLOWED_HOSTS".
	AllowedHostsSetting string

	// Tokens are the accepted bearer tokens of /mcp and /metrics
	// ([Guard.Handler]). If empty, requests need no authentication there.
	// An empty string in the list never matches. [Guard.Wrap] ignores
	// them: a wrapped site checks its own tokens.
	Tokens []string

	// MaxBodyBytes bounds request bodies of MCP endpoints. If zero or
	// negative, defaults to [DefaultMaxBodyBytes].
	MaxBodyBytes int64

	// MaxConcurrent bounds the requests handled at once; past it a request
	// gets 503 with Retry-After. Event streams are not counted: they are
	// bounded by MaxStreams. If zero or negative, defaults to
	// [DefaultMaxConcurrent].
	MaxConcurrent int

	// MaxStreams bounds the event streams open at once, so that streams
	// never hold every connection; past it a stream gets 503 with
	// Retry-After. If zero or negative, defaults to [DefaultMaxStreams].
	MaxStreams int

	// MaxConns bounds the connections open at once ([Guard.Listener]);
	// past it a connection is answered 503 and closed. If zero or
	// negative, defaults to [DefaultMaxConns].
	MaxConns int

	// Shares bound what one client may hold at once. The zero value means
	// the defaults of [DefaultShares].
	Shares Shares

	// MaxResponseBytes bounds the answer to one request to an MCP
	// endpoint; an answer over it is replaced by a JSON-RPC error for the
	// request, naming the limit. Event streams are not bounded in total.
	// If zero or negative, defaults to [DefaultMaxResponseBytes].
	MaxResponseBytes int64

	// WriteTimeout bounds each write of an answer: a client that takes
	// none of it for this long is cut off (a whole answer also has 60 s,
	// an event stream its lifetime). If zero or negative, defaults to
	// [DefaultWriteTimeout].
	WriteTimeout time.Duration

	// StreamLifetime bounds how long an event stream stays open; then it
	// ends, and its client reconnects as the protocol expects. If zero,
	// defaults to [DefaultStreamLifetime]; if negative, streams last as
	// long as their clients listen.
	StreamLifetime time.Duration

	// KeepAlive is how long an event stream may be silent before the guard
	// sends it a comment line, which keeps proxies from closing it and
	// finds clients that left. If zero, defaults to [DefaultKeepAlive]; if
	// negative, no keep-alive is sent.
	KeepAlive time.Duration

	// Ready reports whether the server can serve, for /readyz and its
	// alias /healthz: 200 {"status":"ok"} while it returns "", else 503
	// {"status":S} with the word S it returns ("loading", "unavailable").
	// It is called once per probe, with the probe's context (which has a
	// deadline of 2 s), and must be safe for concurrent use. If nil, the
	// server is always ready. /livez answers 200 {"status":"ok"} whenever
	// the process answers at all.
	Ready func(ctx context.Context) string

	// AddressRate bounds the requests per second from one client address
	// (an IPv4 address, or the /64 of an IPv6 one), as a token bucket that
	// holds RateBurst's worth of requests. The address is the connection's
	// peer: X-Forwarded-For is never trusted. If zero, defaults to
	// [DefaultAddressRate]; if negative, there is no limit.
	AddressRate float64

	// TokenRate bounds the requests per second made with one bearer token,
	// from any address, as AddressRate does. With Tokens set
	// ([Guard.Handler]) only valid tokens count; a wrapped site
	// ([Guard.Wrap]) checks its own tokens, so every bearer token sent
	// counts there (after the address limit, which bounds guessing). If
	// zero, defaults to [DefaultTokenRate]; if negative, there is no
	// limit.
	TokenRate float64

	// Project, if set, names the project a request is for ("" for none);
	// ProjectRate then bounds the requests per second to one project, from
	// any address and token. The hub sets it for its /p/{project}/ routes.
	Project func(r *http.Request) string

	// LogPath, if set, rewrites a request's path before a log line holds
	// it. The hub cuts off the secrets its paths may carry (a well-known
	// index's capability is a path segment).
	LogPath func(path string) string

	// ProjectRate is the requests per second one project may take (see
	// Project). If zero, defaults to [DefaultProjectRate]; if negative,
	// there is no limit.
	ProjectRate float64

	// RateBurst is how many seconds' worth of requests a client may send
	// at once above its rate. If zero or negative, defaults to
	// [DefaultRateBurst].
	RateBurst time.Duration

	// MCP, for [Guard.Wrap], reports whether a request is for an MCP
	// endpoint of the wrapped site: such requests also get the body,
	// batch, stream and answer-size guards of /mcp. If nil, none is.
	MCP func(r *http.Request) bool

	// Metrics, if non-nil, is served at GET /metrics by [Guard.Handler]
	// behind the same guards as /mcp (Host, Origin, bearer token, rate
	// limits).
	Metrics http.Handler

	// WellKnown, if non-nil, is served by [Guard.Handler] at /.well-known/
	// behind the same guards as /metrics (Host, Origin, bearer token, rate
	// limits) but the share of requests in flight: the Agent Skills
	// well-known index (package wellknown), for installers that do not
	// speak MCP and fetch every archive at once.
	WellKnown http.Handler

	// UI, if non-nil, is served by [Guard.Handler] at every path the
	// routes above do not take (/, /assets/..., the browser's pages),
	// behind the Host check, the address rate limit and the shares only:
	// it answers HTML, and authenticates and checks the origin of requests
	// itself (package web). If nil, those paths get 404.
	UI http.Handler

	// Observer, if non-nil, hears of every request to an MCP endpoint and
	// every refusal by a rate limit, a share or a bound.
	Observer Observer

	// Logger receives a Debug record for every refused request, with the
	// reason (never a token), a Warn record for each AllowedHosts entry
	// the guard ignores, and a Warn record when a client goes over a rate
	// limit or its share (once a minute per client and kind; a token is
	// named by a prefix of its SHA-256). If nil, do not log.
	Logger *slog.Logger
}

// Handler returns NewGuard(opts).Handler(mcpHandler).
func Handler(mcpHandler http.Handler, opts *Options) http.Handler {
	return NewGuard(opts).Handler(mcpHandler)
}

// Handler returns the complete HTTP handler of `serve --http`:
//
//	/livez, /readyz, /healthz  the probes (see the package doc)
//	/mcp          mcpHandler, all methods (the SDK answers 405 itself for the
//	              ones it does not serve), behind every guard
//	GET /metrics  Options.Metrics, if set, behind the same guards but the
//	              body size and the streams
//	/.well-known/ Options.WellKnown, if set, behind the same guards as
//	              /metrics
//	anything else Options.UI behind the Host check, the address rate
//	              limit and the shares, if set; else 404
//
// Refusals: a missing Host header gets 400; a disallowed Host or Origin gets
// 403; a missing or wrong token gets 401 with
// `WWW-Authenticate: Bearer realm="skills-mcp"`; a body over the limit gets
// 413, whether it announces its length or streams chunks; a client over a
// rate limit or its share gets 429 with Retry-After (whole seconds); a
// body not read within the read timeout 408; an application/json body that
// is not JSON 400 (code -32700); a batch 400 (code -32600); a request past
// MaxConcurrent or MaxStreams, or while too many large bodies are being
// read, 503 with `Retry-After: 1`. Every error body is
// {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"..."}}. An
// answer over MaxResponseBytes is replaced by a JSON-RPC error (code
// -32000) for the request's id, with status 200.
//
// The returned handler is safe for concurrent use.
func (g *Guard) Handler(mcpHandler http.Handler) http.Handler {
	mux := http.NewServeMux()
	// The address limit comes first, so that floods and token guessing
	// cost the least; the token limit after the token check, so that only
	// valid tokens get a bucket.
	protect := func(h http.Handler) http.Handler {
		if g.auth {
			h = g.limitToken(h)
		}
		return g.limitAddress(g.checkOrigin(g.checkToken(h)))
	}
	mux.Handle("/mcp", g.observe(protect(g.serveMCP(mcpHandler))))
	if g.metrics != nil {
		mux.Handle("GET /metrics", protect(g.admitPlain(g.metrics)))
		mux.HandleFunc("/metrics", g.serveMethodNotAllowed)
	}
	if g.wellKnown != nil {
		// No share of the requests in flight: the skills client fetches
		// every archive at once and drops, without a word, those refused;
		// its connections are bounded by the address's share of them.
		mux.Handle("/.well-known/", protect(g.wellKnown))
	}
	if g.ui != nil {
		mux.Handle("/", g.limitAddress(g.admitPlain(g.ui)))
	} else {
		mux.HandleFunc("/", g.serveNotFound)
	}
	return g.probes(g.timed(g.checkHost(mux)))
}

// Wrap puts site, a whole HTTP site that authenticates its own requests,
// behind the guards: the probes are answered first; every other request
// meets the deadlines, the Host and Origin checks, the address, token and
// project rate limits and the shares; a request for which Options.MCP
// reports true also meets the guards of an MCP endpoint (body size and
// budget, batches, event streams, the answer's size). The hub serves its
// API, its project endpoints, /metrics and its web pages this way.
func (g *Guard) Wrap(site http.Handler) http.Handler {
	mcp := g.observe(g.serveMCP(site))
	plain := g.admitPlain(site)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.isMCP != nil && g.isMCP(r) {
			mcp.ServeHTTP(w, r)
			return
		}
		plain.ServeHTTP(w, r)
	})
	return g.probes(g.timed(g.checkHost(g.limitAddress(g.checkOrigin(g.limitToken(g.limitProject(inner)))))))
}

// probeTimeout bounds the work of one readiness probe.
const probeTimeout = 2 * time.Second

// probes answers /livez, /readyz and /healthz before any other guard: a
// kubelet probe from the pod's IP sends that IP as its Host, carries no
// token, and must see the state even while the server refuses a flood.
// The answers say nothing but the state, so a page that rebinds a name
// to this server learns nothing from them.
func (g *Guard) probes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/livez", "/readyz", "/healthz":
		default:
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			g.serveMethodNotAllowed(w, r)
			return
		}
		status := ""
		if r.URL.Path != "/livez" && g.ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
			status = g.ready(ctx)
			cancel()
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		if status != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
		} else {
			status = "ok"
		}
		data, _ := json.Marshal(struct {
			Status string `json:"status"`
		}{status})
		w.Write(append(data, '\n'))
	})
}

// serveMethodNotAllowed answers the probes and /metrics for methods other
// than GET and HEAD.
func (g *Guard) serveMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	g.reject(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s; use GET", quoteTrunc(r.Method), r.URL.Path))
}

// serveNotFound answers every path that has no route.
func (g *Guard) serveNotFound(w http.ResponseWriter, r *http.Request) {
	g.reject(w, r, http.StatusNotFound, fmt.Sprintf("no endpoint at %s; the MCP endpoint is /mcp", quoteTrunc(r.URL.Path)))
}

// errorCode is the JSON-RPC code of every refusal: the implementation-defined
// server error, since none of the reserved codes means "HTTP-level refusal".
const errorCode = -32000

// writeError writes a JSON-RPC error body with the given HTTP status.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeErrorID(w, status, nil, code, msg)
}

// writeErrorID writes a JSON-RPC error body for the request whose id is
// raw (echoed byte for byte; null if nil) with the given HTTP status.
func writeErrorID(w http.ResponseWriter, status int, raw []byte, code int, msg string) {
	if raw == nil {
		raw = []byte("null")
	}
	text, err := json.Marshal(msg)
	if err != nil {
		// Unreachable: a string always encodes.
		http.Error(w, msg, status)
		return
	}
	body := make([]byte, 0, 64+len(raw)+len(text))
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, raw...)
	body = append(body, `,"error":{"code":`...)
	body = strconv.AppendInt(body, int64(code), 10)
	body = append(body, `,"message":`...)
	body = append(body, text...)
	body = append(body, "}}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
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

// bearer returns the token of an Authorization header value ("" if there
// is none).
func bearer(header string) string {
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

package httpserve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Guard is the guard stack: what every request check needs, copied from
// [Options] once, and the shares held by the requests, streams and
// connections it admitted. Make one with [NewGuard]; it is safe for
// concurrent use, and one Guard serves one listener's handler (the
// shares and caps are its own).
type Guard struct {
	hosts        []hostEntry
	hostsSetting string // what messages tell the client to add a host to
	tokens       *Tokens
	auth         bool
	maxBody      int64
	ready        func(context.Context) string
	log          *slog.Logger
	obs          Observer
	rate         rateLimits
	metrics      http.Handler
	wellKnown    http.Handler
	ui           http.Handler
	isMCP        func(*http.Request) bool
	project      func(*http.Request) string
	logPath      func(string) string

	slots       chan struct{} // one per request in flight (MaxConcurrent)
	maxResponse int64
	bodies      budget // bytes of request bodies held, in all

	shares   Shares
	held     clientTallies // what each client holds
	streams  atomic.Int64  // event streams open
	maxConns int
	// maxStreams bounds streams; conns and streams bound connections.
	maxStreams int64

	writeTimeout time.Duration
	lifetime     time.Duration // <= 0: none
	keepAlive    time.Duration // <= 0: none

	refusals *refusalLog // share and connection refusals, logged once a minute per offender
}

// hostEntry is one parsed AllowedHosts entry; port is "" for any port.
type hostEntry struct {
	name, port string
}

// NewGuard returns the guard stack of opts (nil: all defaults). It copies
// what it needs, so later changes to opts have no effect.
func NewGuard(opts *Options) *Guard {
	return newGuard(opts, time.Now)
}

func newGuard(opts *Options, now func() time.Time) *Guard {
	if opts == nil {
		opts = &Options{}
	}
	g := &Guard{
		maxBody: opts.MaxBodyBytes,
		ready:   opts.Ready,
		log:     opts.Logger,
		// Authentication is on as soon as any token is configured, even an
		// empty one, so a mistake in the token list fails closed.
		auth:      len(opts.Tokens) > 0,
		obs:       opts.Observer,
		metrics:   opts.Metrics,
		wellKnown: opts.WellKnown,
		ui:        opts.UI,
		isMCP:     opts.MCP,

		hostsSetting: opts.AllowedHostsSetting,
	}
	if g.hostsSetting == "" {
		g.hostsSetting = "SKILLS_ALLOWED_HOSTS"
	}
	if g.obs == nil {
		g.obs = nopObserver{}
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.rate = newRateLimits(opts, now)
	g.project = opts.Project
	g.logPath = opts.LogPath
	if g.logPath == nil {
		g.logPath = func(p string) string { return p }
	}
	if g.maxBody <= 0 {
		g.maxBody = DefaultMaxBodyBytes
	}
	g.maxResponse = opts.MaxResponseBytes
	if g.maxResponse <= 0 {
		g.maxResponse = DefaultMaxResponseBytes
	}
	n := opts.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	g.slots = make(chan struct{}, n)
	g.maxStreams = int64(opts.MaxStreams)
	if g.maxStreams <= 0 {
		g.maxStreams = DefaultMaxStreams
	}
	g.maxConns = opts.MaxConns
	if g.maxConns <= 0 {
		g.maxConns = DefaultMaxConns
	}
	// Four bodies at the limit at once, or 16 MiB: room for any burst of
	// real requests (a few hundred bytes each), none for a flood of large
	// ones.
	g.bodies.limit = max(4*g.maxBody, 16<<20)
	g.shares = g.sharesWithDefaults(opts.Shares)
	g.held = newClientTallies()
	g.writeTimeout = opts.WriteTimeout
	if g.writeTimeout <= 0 {
		g.writeTimeout = DefaultWriteTimeout
	}
	g.lifetime = opts.StreamLifetime
	if g.lifetime == 0 {
		g.lifetime = DefaultStreamLifetime
	}
	g.keepAlive = opts.KeepAlive
	if g.keepAlive == 0 {
		g.keepAlive = DefaultKeepAlive
	}
	g.refusals = newRefusalLog(now)
	var bad []error
	g.hosts, bad = parseAllowedHosts(opts.AllowedHosts)
	for _, err := range bad {
		g.log.Warn("ignoring allowed host", "err", err)
	}
	g.tokens = NewTokens(opts.Tokens)
	return g
}

// reject logs why a request is refused and writes the error response.
func (g *Guard) reject(w http.ResponseWriter, r *http.Request, status int, msg string) {
	g.rejectCode(w, r, status, errorCode, msg)
}

// rejectCode is reject with a chosen JSON-RPC error code.
func (g *Guard) rejectCode(w http.ResponseWriter, r *http.Request, status, code int, msg string) {
	g.log.DebugContext(r.Context(), "request refused",
		"status", status, "reason", msg,
		"method", r.Method, "path", g.logPath(r.URL.Path), "addr", r.RemoteAddr)
	writeError(w, status, code, msg)
}

// checkHost refuses requests whose Host header names neither a loopback host
// nor an allowed one. This is the DNS-rebinding defence: a rebound page's
// requests still carry the attacker's host name.
func (g *Guard) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "" {
			// Only HTTP/1.0 can omit it; Go's server answers 400 itself for
			// HTTP/1.1. Without a name there is nothing to check.
			g.reject(w, r, http.StatusBadRequest,
				"missing Host header; send the host name of this server (a loopback name, or one listed in "+g.hostsSetting+")")
			return
		}
		name, port, ok := splitHostPort(r.Host)
		if !ok {
			g.reject(w, r, http.StatusBadRequest, fmt.Sprintf("host %s is malformed; send name, name:port or [IPv6]:port", quoteTrunc(r.Host)))
			return
		}
		if port == "" {
			port = "80"
			if r.TLS != nil {
				port = "443"
			}
		}
		if ok, known := g.hostAllowed(name, port); !ok {
			msg := fmt.Sprintf("host %s is not allowed; add it to %s", quoteTrunc(name), g.hostsSetting)
			if known {
				msg = fmt.Sprintf("host %s is not allowed on port %s; add %s:%s or %s to %s",
					quoteTrunc(name), port, name, port, name, g.hostsSetting)
			}
			g.reject(w, r, http.StatusForbidden, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests from pages whose origin is not an
// allowed host. Requests without an Origin header (every non-browser client)
// pass.
func (g *Guard) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !g.originAllowed(origin) {
			g.reject(w, r, http.StatusForbidden,
				fmt.Sprintf("origin %s is not allowed; add its host to %s", quoteTrunc(origin), g.hostsSetting))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed reports whether origin (scheme://host[:port]) names an
// allowed host. The opaque origin "null" (sandboxed frames, file: pages) and
// anything unparsable are refused.
func (g *Guard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	name, port, ok := splitHostPort(u.Host)
	if !ok {
		return false
	}
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	allowed, _ := g.hostAllowed(name, port)
	return allowed
}

// hostAllowed reports whether name (at port) is a loopback host or matches
// an AllowedHosts entry, and, when it is not allowed, whether some entry
// names it with another port.
func (g *Guard) hostAllowed(name, port string) (allowed, known bool) {
	name = normalizeHost(name)
	if name == "" {
		return false, false
	}
	if IsLoopback(name) {
		return true, true
	}
	for _, e := range g.hosts {
		if e.name != name {
			continue
		}
		if e.port == "" || e.port == port {
			return true, true
		}
		known = true
	}
	return false, known
}

// checkToken refuses requests without one of the configured bearer tokens.
func (g *Guard) checkToken(next http.Handler) http.Handler {
	if !g.auth {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := g.tokenProblem(r.Header.Get("Authorization")); msg != "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="skills-mcp"`)
			g.reject(w, r, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenProblem returns why the Authorization header value is not accepted,
// or "" if it carries a valid token. The message never repeats the token.
func (g *Guard) tokenProblem(header string) string {
	if header == "" {
		return `missing bearer token; send "Authorization: Bearer <token>" with a token the server was started with`
	}
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return `authorization scheme is not Bearer; send "Authorization: Bearer <token>"`
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return `missing bearer token; send "Authorization: Bearer <token>" with a token the server was started with`
	}
	if !g.tokens.Match(token) {
		return "bearer token is not valid; use a token the server was started with"
	}
	return ""
}

// Tokens is a set of accepted bearer tokens: the one token check of
// skills-mcp, which the MCP endpoint and the web interface's sign-in both
// use. It is safe for concurrent use; the zero value accepts nothing.
type Tokens struct {
	// digests holds SHA-256 digests of the accepted tokens, so that every
	// comparison is over 32 bytes and its timing reveals no token length.
	digests [][sha256.Size]byte
}

// NewTokens returns the set of tokens in list; empty strings never match.
func NewTokens(list []string) *Tokens {
	t := &Tokens{}
	for _, tok := range list {
		if tok != "" {
			t.digests = append(t.digests, sha256.Sum256([]byte(tok)))
		}
	}
	return t
}

// Len returns how many tokens the set accepts.
func (t *Tokens) Len() int { return len(t.digests) }

// Match reports whether token is one of the set's, in time that says
// nothing about which one matched or how many there are.
func (t *Tokens) Match(token string) bool {
	if token == "" {
		return false
	}
	got := sha256.Sum256([]byte(token))
	// Compare against every token without stopping at a match.
	match := 0
	for i := range t.digests {
		match |= subtle.ConstantTimeCompare(got[:], t.digests[i][:])
	}
	return match == 1
}

// serveMCP reads the request body whole, then admits the request (see
// admit). A body over g.maxBody gets 413: before any of it is read when it
// announces its length, once the limit is passed when it streams chunks.
// Reading it first costs no extra memory, because the MCP handler reads the
// whole message before acting on it anyway, and it lets a client dripping
// its body hold a connection (until the read timeout) but never a slot of
// the requests in flight. The bytes held are bounded in total (g.bodies):
// past that, 503; and per client (Shares): past its share, 429. A
// JSON-RPC batch gets 400: batches were removed from MCP in 2025-06-18,
// and the SDK still takes one sent without a protocol header, answering
// every request in it into one buffer.
func (g *Guard) serveMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.maxBody {
			g.obs.SizeLimited(LimitRequestBody)
			g.reject(w, r, http.StatusRequestEntityTooLarge, g.tooLarge(fmt.Sprintf("is %d bytes", r.ContentLength)))
			return
		}
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			c := clientOf(r)
			var held int64
			var refusal func()
			body, held, refusal = g.readBody(w, r, c)
			defer g.giveBody(c, held)
			if refusal != nil {
				refusal()
				return
			}
			if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" && !json.Valid(body) {
				// The SDK would answer in plain text; a JSON-RPC client
				// reads this one.
				g.rejectCode(w, r, http.StatusBadRequest, jsonrpcParseError,
					"Parse error: the body is not valid JSON (an unescaped control character, an invalid escape or a truncated message); send one JSON-RPC message")
				return
			}
			if r.Method == http.MethodPost && isBatch(body) {
				g.obs.SizeLimited(LimitBatch)
				g.rejectCode(w, r, http.StatusBadRequest, jsonrpcInvalidRequest,
					"JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per POST")
				return
			}
			if id := requestID(body); r.Method == http.MethodPost && skillsext.GarbledID(id) {
				// Refused, with the id as sent: the SDK would answer
				// another id, with U+FFFD in place of what it could not
				// decode.
				g.log.DebugContext(r.Context(), "request refused", "status", http.StatusBadRequest, "reason", "garbled id", "remote", r.RemoteAddr)
				writeErrorID(w, http.StatusBadRequest, id, jsonrpcInvalidRequest, garbledIDMessage)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		g.admit(w, r, body, next)
	})
}

// takeBody reserves n bytes of body for c: from the body budget of all
// clients and from c's share. It returns a refusal to answer with if
// either is spent.
func (g *Guard) takeBody(w http.ResponseWriter, r *http.Request, c *client, n int64) (refusal func()) {
	if over := g.held.take(c, shareBody, n, &g.shares); over != "" {
		return func() { g.refuseShare(w, r, c, shareBody, over) }
	}
	if !g.bodies.take(n) {
		g.held.give(c, shareBody, n)
		return func() {
			g.obs.SizeLimited(LimitBodyBudget)
			w.Header().Set("Retry-After", retryAfter)
			g.reject(w, r, http.StatusServiceUnavailable, "server busy: too many request bodies being read at once; retry in a second")
		}
	}
	return nil
}

// giveBody gives back n bytes taken by takeBody.
func (g *Guard) giveBody(c *client, n int64) {
	if n != 0 {
		g.bodies.give(n)
		g.held.give(c, shareBody, n)
	}
}

// garbledIDMessage is the error of a request whose id cannot be echoed.
const garbledIDMessage = "Invalid Request: the id holds a lone UTF-16 surrogate or invalid UTF-8, which cannot be answered under the same id; use a plain string or a number"

// JSON-RPC's codes for a body that is not JSON and for a message that is
// not a valid request.
const (
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
)

// readBody reads r's body through http.MaxBytesReader into buffers that
// grow with what arrives, never with what the client announces (a
// Content-Length costs nothing to claim, and a slow client would otherwise
// hold its whole size from the start), each reserved from g.bodies. The
// first 4 KiB (every real request) go into a buffer of their own; the rest
// into pieces of bodyPiece from a pool shared by all requests, joined at
// the end into one buffer of the body's size. The pieces go back to the
// pool, and their bytes to the budget, as soon as readBody returns: a body
// refused at the limit, the large body an attacker sends most cheaply,
// then costs the limit while it is read and no garbage afterwards, however
// often it is sent (each one was 4 MiB of garbage, and a single client
// sending them took the heap, paced at twice what is live, to three times
// the idle resident size). The bytes are reserved from the body budget and
// from c's share. It returns the body and the bytes still reserved for it
// (to give back once the request is done), or the refusal to answer with.
func (g *Guard) readBody(w http.ResponseWriter, r *http.Request, c *client) (body []byte, held int64, refusal func()) {
	src := http.MaxBytesReader(w, r.Body, g.maxBody)
	most := g.maxBody + 1 // room to see the end, or the excess byte
	if r.ContentLength >= 0 {
		most = min(most, r.ContentLength+1)
	}
	var reading int64 // bytes reserved for the buffers read into
	var pieces []*[bodyPiece]byte
	defer func() {
		for _, p := range pieces {
			piecePool.Put(p)
		}
		g.giveBody(c, reading)
	}()
	first := min(most, firstPiece)
	if refusal := g.takeBody(w, r, c, first); refusal != nil {
		return nil, 0, refusal
	}
	reading = first
	bufs := [][]byte{make([]byte, 0, first)}
	var total int64
	for {
		cur := bufs[len(bufs)-1]
		if len(cur) == cap(cur) {
			// A pooled piece when the rest may fill one (always, for a
			// chunked body), else one of the announced rest's size.
			size := int64(bodyPiece)
			if rest := most - total; rest < bodyPiece && r.ContentLength >= 0 {
				size = rest
			}
			if refusal := g.takeBody(w, r, c, size); refusal != nil {
				return nil, 0, refusal
			}
			reading += size
			if size == bodyPiece {
				p := piecePool.Get().(*[bodyPiece]byte)
				pieces = append(pieces, p)
				cur = p[:0]
			} else {
				cur = make([]byte, 0, size)
			}
			bufs = append(bufs, cur)
		}
		n, err := src.Read(cur[len(cur):cap(cur)])
		cur = cur[:len(cur)+n]
		bufs[len(bufs)-1] = cur
		total += int64(n)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if len(bufs) == 1 {
				reading = 0 // the first buffer is the body: held until the request is done
				return cur, first, nil
			}
			// The joined body takes over part of the buffers' reservation
			// (they hold at least as much), so that a body read whole is
			// never refused for the copy, which lasts a memmove.
			body = make([]byte, 0, total)
			for _, b := range bufs {
				body = append(body, b...)
			}
			reading -= total
			return body, total, nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, 0, g.refusal(w, r, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s; send it at once", readTimeout))
		default:
			if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
				g.obs.SizeLimited(LimitRequestBody)
				return nil, 0, g.refusal(w, r, http.StatusRequestEntityTooLarge, g.tooLarge(fmt.Sprintf("exceeds %d bytes", mbe.Limit)))
			}
			return nil, 0, g.refusal(w, r, http.StatusBadRequest, fmt.Sprintf("reading request body: %v; resend the request", err))
		}
	}
}

const (
	// firstPiece is the buffer a body is read into first: room for every
	// real request, whose bodies are a few hundred bytes.
	firstPiece = 4 << 10
	// bodyPiece is the size of the pooled buffers the rest of a body is
	// read into.
	bodyPiece = 64 << 10
)

// piecePool holds the pieces of bodies being read; what it keeps between
// requests is bounded by the body budget, and released by the collector
// once the pieces go unused.
var piecePool = sync.Pool{New: func() any { return new([bodyPiece]byte) }}

// refusal returns a refusal that answers status with msg.
func (g *Guard) refusal(w http.ResponseWriter, r *http.Request, status int, msg string) func() {
	return func() { g.reject(w, r, status, msg) }
}

func (g *Guard) tooLarge(what string) string {
	return fmt.Sprintf("request body %s; the limit is %d bytes, send a smaller request", what, g.maxBody)
}

// parseAllowedHosts parses AllowedHosts entries, skipping empty ones and
// returning an error for each entry that cannot be used.
func parseAllowedHosts(entries []string) ([]hostEntry, []error) {
	var hosts []hostEntry
	var bad []error
	for _, raw := range entries {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if strings.Contains(s, "*") {
			bad = append(bad, fmt.Errorf("allowed host %q: wildcards are not supported; list each host name explicitly", raw))
			continue
		}
		name, port, ok := splitHostPort(s)
		if !ok || strings.ContainsAny(name, "/ ") {
			bad = append(bad, fmt.Errorf("allowed host %q is malformed; use name, name:port or [IPv6]:port", raw))
			continue
		}
		hosts = append(hosts, hostEntry{name: normalizeHost(name), port: port})
	}
	return hosts, bad
}

// splitHostPort splits "name", "name:port", "[v6]" or "[v6]:port". An
// unbracketed string with several colons is taken as a bare IPv6 address.
// The port, if any, must be decimal digits. ok is false for malformed input.
func splitHostPort(s string) (name, port string, ok bool) {
	if rest, found := strings.CutPrefix(s, "["); found {
		name, rest, found = strings.Cut(rest, "]")
		if !found {
			return "", "", false
		}
		if rest != "" {
			if port, found = strings.CutPrefix(rest, ":"); !found {
				return "", "", false
			}
			if !isPort(port) {
				return "", "", false
			}
		}
		return name, port, name != ""
	}
	if strings.Count(s, ":") == 1 {
		name, port, _ = strings.Cut(s, ":")
		if !isPort(port) {
			return "", "", false
		}
		return name, port, name != ""
	}
	return s, "", s != ""
}

// isPort reports whether s is a decimal port number.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// normalizeHost lowercases a host name, drops one trailing dot (the
// fully-qualified spelling of the same name) and writes IP addresses in
// canonical form, so that equal hosts compare equal.
func normalizeHost(name string) string {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if ip, err := netip.ParseAddr(name); err == nil {
		return ip.Unmap().String()
	}
	return name
}

// IsLoopback reports whether host, a host name or IP address with or
// without a port ("localhost", "127.0.0.2:3939", "[::1]:80", "::1"), names
// this machine: localhost (in any case, with or without a trailing dot) or
// a loopback IP address (127.0.0.0/8 and ::1, also IPv4-mapped and with a
// zone). Subdomains of localhost are not included: outside browsers they
// can resolve through ordinary DNS. It is the one loopback test of
// skills-mcp: the Host guard, the listen-address check, pull's warning
// about credentials over plain http and skills-bench's refusal of remote
// targets all use it.
func IsLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	name := normalizeHost(host)
	if name == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.WithZone("").Unmap().IsLoopback()
}

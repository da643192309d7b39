package httpserve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate limit defaults. A host's start-up burst (the whole listing, then the
// SKILL.md of each skill it keeps) is a few hundred requests; dozens of
// agents starting at once behind one NAT address stay well below these.
// The server answers about 20,000 plain requests per second on 2 cores, so
// one address at the default rate takes a twentieth of it.
const (
	// DefaultAddressRate is the requests per second one client address may
	// make (see [Options.AddressRate]).
	DefaultAddressRate = 1000
	// DefaultTokenRate is the requests per second one bearer token may make,
	// from any number of addresses (see [Options.TokenRate]). A team's
	// agents often share one token, so it is above the address rate.
	DefaultTokenRate = 2000
	// DefaultProjectRate is the requests per second one project of the hub
	// may take, from any number of addresses and tokens (see
	// [Options.ProjectRate]): above the token rate, since a project's
	// agents may hold several tokens.
	DefaultProjectRate = 5000
	// DefaultRateBurst is how many seconds' worth of requests a client may
	// send at once, above its rate.
	DefaultRateBurst = 2 * time.Second
)

const (
	// maxBuckets bounds the buckets one limiter keeps. A bucket costs about
	// 250 bytes (measured: 2.2 MiB for 8,768 after a million addresses), so
	// a flood from ever new addresses holds at most about 4 MiB. Only a client that makes its next request after more than
	// maxBuckets/2 other keys came in can find its bucket dropped (and full
	// again): that takes thousands of distinct addresses, against which a
	// per-address limit is no defence anyway.
	maxBuckets = 16384

	// refusalLogEvery is how often one offender's refusals are logged: once
	// on the first, then at most once per period with the count since.
	refusalLogEvery = time.Minute

	// maxRefusalLogs bounds the refusal lines one limiter writes per
	// refusalLogEvery, whatever the number of offenders, so that a flood
	// from many addresses cannot flood the log. The metrics count every
	// refusal.
	maxRefusalLogs = 20

	// ipv6Prefix is how many leading bits of an IPv6 address name one
	// client. One host commonly holds a whole /64 and can pick any address
	// in it, so a limit per full address would be none.
	ipv6Prefix = 64
)

// limiter is a set of token buckets, one per key, with the same rate. It is
// safe for concurrent use.
//
// The buckets live in two generations. A key is looked up in the current
// one, then in the previous one (and moved to the current); a new key goes
// into the current one. The current generation becomes the previous one,
// and the previous one is dropped, when the current one holds half of
// maxBuckets keys or when it is a period old. A period is at least the
// time a bucket takes to fill and at least refusalLogEvery, so a key
// dropped for idleness had a full bucket and nothing left to log: dropping
// it changes nothing. The bound holds whatever the keys: an attacker who
// rotates addresses or tokens only rotates generations faster.
type limiter[K comparable] struct {
	limit  rate.Limit
	burst  int
	period time.Duration
	max    int
	now    func() time.Time

	mu        sync.Mutex
	cur, prev map[K]*bucket
	rotated   time.Time
	// The log budget of the current refusalLogEvery window.
	logWindow  time.Time
	logLines   int
	logDropped int
}

// bucket is one key's token bucket and the state of its refusal log.
type bucket struct {
	lim *rate.Limiter
	// logged is when a refusal of this key was last logged; refused counts
	// the refusals since then.
	logged  time.Time
	refused int
}

// verdict is what a limiter decided for one request.
type verdict struct {
	ok bool
	// retryAfter is, for a refusal, how long until the bucket holds a
	// token again.
	retryAfter time.Duration
	// log is set when this refusal is to be logged; refused is then the
	// number of the key's refusals it stands for (this one included), and
	// unlogged the number of other keys' refusals the log budget left out
	// since the last line.
	log      bool
	refused  int
	unlogged int
}

// newLimiter returns a limiter of perSecond requests per second with bursts
// of burst's worth of requests (at least one), or nil if perSecond is not
// positive: no limit.
func newLimiter[K comparable](perSecond float64, burst time.Duration, maxKeys int, now func() time.Time) *limiter[K] {
	if !(perSecond > 0) || math.IsInf(perSecond, 0) {
		return nil
	}
	b := max(1, int(math.Ceil(perSecond*burst.Seconds())))
	fill := time.Duration(float64(b) / perSecond * float64(time.Second))
	return &limiter[K]{
		limit:  rate.Limit(perSecond),
		burst:  b,
		period: max(fill, refusalLogEvery),
		max:    max(maxKeys, 2),
		now:    now,
		cur:    map[K]*bucket{},
	}
}

// allow takes a token from key's bucket, or says why not.
func (l *limiter[K]) allow(key K) verdict {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	if b.lim.AllowN(now, 1) {
		return verdict{ok: true}
	}
	missing := 1 - b.lim.TokensAt(now)
	v := verdict{retryAfter: time.Duration(missing / float64(l.limit) * float64(time.Second))}
	b.refused++
	if !b.logged.IsZero() && now.Sub(b.logged) < refusalLogEvery {
		return v
	}
	if now.Sub(l.logWindow) >= refusalLogEvery {
		l.logWindow, l.logLines = now, 0
	}
	// The key is marked logged even when the budget is spent, so that it
	// does not try again on its next request.
	b.logged = now
	if l.logLines >= maxRefusalLogs {
		l.logDropped += b.refused
		b.refused = 0
		return v
	}
	l.logLines++
	v.log, v.refused, v.unlogged = true, b.refused, l.logDropped
	b.refused, l.logDropped = 0, 0
	return v
}

// bucket returns key's bucket, making one if needed. l.mu is held.
func (l *limiter[K]) bucket(key K, now time.Time) *bucket {
	if age := now.Sub(l.rotated); age >= l.period || len(l.cur) >= l.max/2 {
		l.prev, l.cur = l.cur, make(map[K]*bucket, len(l.cur)/2)
		if age >= 2*l.period {
			l.prev = nil // idle for two periods: every bucket is full
		}
		l.rotated = now
	}
	if b, ok := l.cur[key]; ok {
		return b
	}
	if b, ok := l.prev[key]; ok {
		delete(l.prev, key)
		l.cur[key] = b
		return b
	}
	b := &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
	l.cur[key] = b
	return b
}

// len returns how many buckets l holds.
func (l *limiter[K]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cur) + len(l.prev)
}

// rateLimits holds the limiters of a guard; a nil limiter is off.
type rateLimits struct {
	byAddr    *limiter[netip.Prefix]
	byToken   *limiter[[sha256.Size]byte]
	byProject *limiter[string]
}

func newRateLimits(opts *Options, now func() time.Time) rateLimits {
	burst := opts.RateBurst
	if burst <= 0 {
		burst = DefaultRateBurst
	}
	rl := rateLimits{
		byAddr: newLimiter[netip.Prefix](orDefault(opts.AddressRate, DefaultAddressRate), burst, maxBuckets, now),
		// With Tokens, only tokens that passed the check get a bucket, so
		// their number is that of the configured tokens; a wrapped site's
		// tokens are bounded by maxBuckets, and guessing them by the
		// address limit before.
		byToken: newLimiter[[sha256.Size]byte](orDefault(opts.TokenRate, DefaultTokenRate), burst, maxBuckets, now),
	}
	if opts.Project != nil {
		rl.byProject = newLimiter[string](orDefault(opts.ProjectRate, DefaultProjectRate), burst, maxBuckets, now)
	}
	return rl
}

// orDefault maps an Options rate to a limiter's: zero means def, a
// negative value no limit.
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// addressKey names the client of a request by its address: the IPv4
// address, or the /64 of an IPv6 one. X-Forwarded-For and similar headers
// are never read: any client can send them, so trusting them would let
// every request pick its own bucket. Behind a reverse proxy every client
// therefore shares the proxy's bucket; raise or turn off the address limit
// there and let the proxy limit clients. A RemoteAddr that is no IP
// address (a test's, or a Unix socket's) is one client.
func addressKey(remoteAddr string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	ip := ap.Addr().Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = ipv6Prefix
	}
	p, _ := ip.Prefix(bits)
	return p
}

// limitAddress refuses, with 429, requests from a client address over its
// rate. It runs before any token check, so that guessing tokens is rate
// limited too.
func (g *Guard) limitAddress(next http.Handler) http.Handler {
	if g.rate.byAddr == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := clientOf(r).addr
		if v := g.rate.byAddr.allow(key); !v.ok {
			client := addressName(key)
			if !key.IsValid() {
				client = quoteTrunc(r.RemoteAddr)
			}
			g.refuseRate(w, r, v, rateKeyAddress, "client", client, float64(g.rate.byAddr.limit))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitToken records the request's bearer token as its client's, for the
// token's shares, and refuses with 429 requests whose token is over its
// rate. On /mcp it runs after the token check, so only valid tokens reach
// it; on a wrapped site (the hub) every bearer token sent does, after the
// address limit.
func (g *Guard) limitToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r.Header.Get("Authorization"))
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		c := clientOf(r)
		c.token, c.hasToken = sha256.Sum256([]byte(token)), true
		if g.rate.byToken != nil {
			if v := g.rate.byToken.allow(c.token); !v.ok {
				g.refuseRate(w, r, v, rateKeyToken, "token", tokenID(c.token), float64(g.rate.byToken.limit))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limitProject refuses, with 429, requests to a project over its rate
// (Options.Project names it), from whatever address and token.
func (g *Guard) limitProject(next http.Handler) http.Handler {
	if g.rate.byProject == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := g.project(r); p != "" {
			if v := g.rate.byProject.allow(p); !v.ok {
				g.refuseRate(w, r, v, rateKeyProject, "project", quoteTrunc(p), float64(g.rate.byProject.limit))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Keys of [Observer.RateLimited].
const (
	rateKeyAddress = "address"
	rateKeyToken   = "token"
	rateKeyProject = "project"
)

// tokenID names a token in logs without revealing it: the first 8 hex
// digits of its SHA-256, which an operator finds with
// `printf %s "$TOKEN" | sha256sum | cut -c1-8`.
func tokenID(digest [sha256.Size]byte) string {
	return "sha256:" + hex.EncodeToString(digest[:4])
}

// refuseRate answers 429 with Retry-After, counts the refusal and, when the
// limiter says so, logs it. kind and who name the offender in the log.
func (g *Guard) refuseRate(w http.ResponseWriter, r *http.Request, v verdict, key, kind, who string, perSecond float64) {
	g.obs.RateLimited(key)
	// Retry-After is in whole seconds; rounding up never invites a retry
	// that would be refused again.
	secs := max(1, int(math.Ceil(v.retryAfter.Seconds())))
	if v.log {
		attrs := []any{kind, who, "limit_per_second", perSecond, "refused_since_last_line", v.refused}
		if v.unlogged > 0 {
			attrs = append(attrs, "other_refusals_not_logged", v.unlogged)
		}
		g.log.WarnContext(r.Context(), "rate limit exceeded; refusing with 429 (logged at most once a minute per "+kind+")", attrs...)
	}
	what := "this client address"
	switch key {
	case rateKeyToken:
		what = "this bearer token"
	case rateKeyProject:
		what = "this project"
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, errorCode, fmt.Sprintf(
		"too many requests from %s (the limit is %s per second); retry after %d s", what, strconv.FormatFloat(perSecond, 'f', -1, 64), secs))
}

// nopObserver is the Observer of a handler given none.
type nopObserver struct{}

func (nopObserver) Request(RequestInfo) {}
func (nopObserver) RateLimited(string)  {}
func (nopObserver) SizeLimited(string)  {}

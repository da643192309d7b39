package httpserve

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Global caps: the last line, for the server as a whole. Sized for a
// fleet: 2,000 agents each holding one event stream are well inside them,
// with room for everyone's requests (an idle parked stream costs a few
// KiB; see BENCHMARKS.md).
const (
	// DefaultMaxConns bounds the open connections (see [Guard.Listener]).
	// Every one holds a file descriptor: Go raises the process's soft
	// limit to the hard one at start, and the log warns when that is
	// below this.
	DefaultMaxConns = 4096

	// DefaultMaxStreams bounds the open event streams: three quarters of
	// the connections, so that requests always find one.
	DefaultMaxStreams = 3072
)

// Shares bound what one client may hold at once: a client address (an
// IPv4 address, or the /64 of an IPv6 one; the connection's peer, never a
// forwarded header) and a bearer token each have their own share, well
// below the global caps, so that one client reaches its share and no
// further. A client over its share gets 429 with Retry-After (a
// connection, 503 at accept), and is logged once a minute. A zero field
// takes its default (a fraction of the global cap it divides, see
// [DefaultShares]); a negative one means no share of that kind.
type Shares struct {
	// AddressConns bounds the connections open from one address; default
	// a sixteenth of MaxConns (256).
	AddressConns int
	// AddressStreams bounds the event streams one address holds open;
	// default a 48th of MaxStreams (64).
	AddressStreams int
	// AddressRequests bounds the requests one address has in flight (event
	// streams aside); default a quarter of MaxConcurrent (16).
	AddressRequests int
	// AddressBodyBytes bounds the bytes of request bodies being read or
	// served for one address; default half the body budget (8 MiB, two
	// bodies at the default limit).
	AddressBodyBytes int64
	// TokenStreams, TokenRequests and TokenBodyBytes are the same for one
	// bearer token, from any number of addresses (a team's agents often
	// share one); default half of each global cap.
	TokenStreams   int
	TokenRequests  int
	TokenBodyBytes int64
}

// DefaultShares returns the shares of a guard whose global caps are the
// given ones: what a zero Shares means.
func DefaultShares(maxConns, maxStreams, maxConcurrent int, bodyBudget int64) Shares {
	return Shares{
		AddressConns:     max(1, maxConns/16),
		AddressStreams:   max(1, maxStreams/48),
		AddressRequests:  max(1, maxConcurrent/4),
		AddressBodyBytes: max(1, bodyBudget/2),
		TokenStreams:     max(1, maxStreams/2),
		TokenRequests:    max(1, maxConcurrent/2),
		TokenBodyBytes:   max(1, bodyBudget/2),
	}
}

// sharesWithDefaults fills s's zero fields from the guard's caps.
func (g *Guard) sharesWithDefaults(s Shares) Shares {
	d := DefaultShares(g.maxConns, int(g.maxStreams), cap(g.slots), g.bodies.limit)
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill64 := func(v *int64, def int64) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&s.AddressConns, d.AddressConns)
	fill(&s.AddressStreams, d.AddressStreams)
	fill(&s.AddressRequests, d.AddressRequests)
	fill64(&s.AddressBodyBytes, d.AddressBodyBytes)
	fill(&s.TokenStreams, d.TokenStreams)
	fill(&s.TokenRequests, d.TokenRequests)
	fill64(&s.TokenBodyBytes, d.TokenBodyBytes)
	return s
}

// client is who a request comes from, as the shares and the rate limits
// key it: its address (IPv4, or IPv6 /64) and, once a guard has read it,
// its bearer token's digest. The guard puts one in each request's context.
type client struct {
	addr     netip.Prefix
	token    [sha256.Size]byte
	hasToken bool
}

type clientKey struct{}

// clientOf returns the client of r, as the guard recorded it; a request
// that did not pass through the guard (a test's) is the client of its
// RemoteAddr.
func clientOf(r *http.Request) *client {
	if c, ok := r.Context().Value(clientKey{}).(*client); ok {
		return c
	}
	return &client{addr: addressKey(r.RemoteAddr)}
}

// ClientOf names the client of a request from its context, for a share
// kept outside the guard (package server's bound on large answers): its
// address, as the guard keys it (an IPv4 address, or an IPv6 /64). ok is
// false for a context that no guard saw.
func ClientOf(ctx context.Context) (name string, ok bool) {
	c, ok := ctx.Value(clientKey{}).(*client)
	if !ok {
		return "", false
	}
	return addressName(c.addr), true
}

// addressName is how logs and messages name a client address key.
func addressName(p netip.Prefix) string {
	if !p.IsValid() {
		return "unknown"
	}
	if p.Addr().Is4() {
		return p.Addr().String()
	}
	return p.String()
}

// tally is what one client key holds.
type tally struct {
	conns, streams, requests int
	body                     int64
}

func (t *tally) zero() bool { return *t == tally{} }

// tallies keeps the tallies of clients that hold nothing for the next: a
// client that makes one request at a time would otherwise cost one for
// each.
var tallies = sync.Pool{New: func() any { return new(tally) }}

// newTally returns a zero tally.
func newTally() *tally { return tallies.Get().(*tally) }

// share names what a client holds; the values are its Limit constants.
type share int

const (
	shareConns share = iota
	shareStreams
	shareRequests
	shareBody
)

// clientTallies is what every client holds, by address and by token. An
// entry exists only while its client holds something, so the maps are
// bounded by the connections and requests the global caps admit.
type clientTallies struct {
	mu      sync.Mutex
	byAddr  map[netip.Prefix]*tally
	byToken map[[sha256.Size]byte]*tally
}

func newClientTallies() clientTallies {
	return clientTallies{byAddr: map[netip.Prefix]*tally{}, byToken: map[[sha256.Size]byte]*tally{}}
}

// take adds n of kind to c's tallies, or, if that would take the address
// or the token past its share in s, adds nothing and says which ("address"
// or "token"). A share of 0 or less is no share.
func (ct *clientTallies) take(c *client, kind share, n int64, s *Shares) (over string) {
	addrMax, tokMax := s.limits(kind)
	ct.mu.Lock()
	defer ct.mu.Unlock()
	a := ct.byAddr[c.addr]
	if addrMax > 0 && a.get(kind)+n > addrMax {
		return rateKeyAddress
	}
	var tk *tally
	if c.hasToken {
		tk = ct.byToken[c.token]
		if tokMax > 0 && tk.get(kind)+n > tokMax {
			return rateKeyToken
		}
	}
	if a == nil {
		a = newTally()
		ct.byAddr[c.addr] = a
	}
	a.add(kind, n)
	if c.hasToken {
		if tk == nil {
			tk = newTally()
			ct.byToken[c.token] = tk
		}
		tk.add(kind, n)
	}
	return ""
}

// give returns n of kind, taken by take.
func (ct *clientTallies) give(c *client, kind share, n int64) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if a := ct.byAddr[c.addr]; a != nil {
		a.add(kind, -n)
		if a.zero() {
			delete(ct.byAddr, c.addr)
			tallies.Put(a)
		}
	}
	if c.hasToken {
		if tk := ct.byToken[c.token]; tk != nil {
			tk.add(kind, -n)
			if tk.zero() {
				delete(ct.byToken, c.token)
				tallies.Put(tk)
			}
		}
	}
}

// clients returns how many addresses and tokens hold something, for tests.
func (ct *clientTallies) clients() (addrs, tokens int) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return len(ct.byAddr), len(ct.byToken)
}

func (t *tally) get(kind share) int64 {
	if t == nil {
		return 0
	}
	switch kind {
	case shareConns:
		return int64(t.conns)
	case shareStreams:
		return int64(t.streams)
	case shareRequests:
		return int64(t.requests)
	}
	return t.body
}

func (t *tally) add(kind share, n int64) {
	switch kind {
	case shareConns:
		t.conns += int(n)
	case shareStreams:
		t.streams += int(n)
	case shareRequests:
		t.requests += int(n)
	default:
		t.body += n
	}
}

// limits returns the address and token shares of kind.
func (s *Shares) limits(kind share) (addr, token int64) {
	switch kind {
	case shareConns:
		return int64(s.AddressConns), 0 // a connection has no token yet
	case shareStreams:
		return int64(s.AddressStreams), int64(s.TokenStreams)
	case shareRequests:
		return int64(s.AddressRequests), int64(s.TokenRequests)
	}
	return s.AddressBodyBytes, s.TokenBodyBytes
}

// Observer limits of the shares, by kind and key.
var shareLimits = map[share][2]string{
	shareConns:    {LimitAddressConns, ""},
	shareStreams:  {LimitAddressStreams, LimitTokenStreams},
	shareRequests: {LimitAddressRequests, LimitTokenRequests},
	shareBody:     {LimitAddressBody, LimitTokenBody},
}

// shareWords name each kind of share in messages and logs.
var shareWords = map[share]string{
	shareConns:    "connections open",
	shareStreams:  "event streams open",
	shareRequests: "requests in flight",
	shareBody:     "bytes of request bodies being read",
}

// refuseShare answers 429 to a request over its client's share of kind
// (over is "address" or "token", as take returned it), counts the refusal
// and logs it once a minute per offender.
func (g *Guard) refuseShare(w http.ResponseWriter, r *http.Request, c *client, kind share, over string) {
	limit, who, what := shareLimits[kind][0], addressName(c.addr), "this client address"
	n, _ := g.shares.limits(kind)
	if over == rateKeyToken {
		limit, who, what = shareLimits[kind][1], tokenID(c.token), "this bearer token"
		_, n = g.shares.limits(kind)
	}
	g.obs.SizeLimited(limit)
	g.noteRefusal(r.Context(), over, who, shareWords[kind], n)
	w.Header().Set("Retry-After", retryAfter)
	writeError(w, http.StatusTooManyRequests, errorCode, "too many "+shareWords[kind]+" from "+what+
		" (its share is "+strconv.FormatInt(n, 10)+"); retry once some end")
}

// noteRefusal logs a refusal of who (an address or a token's id) for
// going over its share of what, once a minute per offender and kind.
func (g *Guard) noteRefusal(ctx context.Context, key, who, what string, share int64) {
	log, refused, unlogged := g.refusals.note(key + " " + who + " " + what)
	if !log {
		return
	}
	kind := "client"
	if key == rateKeyToken {
		kind = "token"
	}
	attrs := []any{kind, who, "share", share, "refusedSinceLastLine", refused}
	if unlogged > 0 {
		attrs = append(attrs, "otherRefusalsNotLogged", unlogged)
	}
	g.log.WarnContext(ctx, "client over its share of "+what+"; refusing (logged at most once a minute per "+kind+")", attrs...)
}

// refusalLog decides which refusals are logged: the first of each
// offender, then at most one a minute with the count since, and at most
// maxRefusalLogs lines a minute in all. It is safe for concurrent use.
//
// Offenders live in two generations, rotated every minute (or when the
// current one is full), so that what it remembers is bounded whatever the
// number of offenders; a rotation only ever lets an offender be logged
// again early.
type refusalLog struct {
	now func() time.Time

	mu        sync.Mutex
	cur, prev map[string]*offender
	rotated   time.Time
	// The budget of the current window.
	window   time.Time
	lines    int
	dropped  int
	capacity int
}

type offender struct {
	logged  time.Time
	refused int
}

func newRefusalLog(now func() time.Time) *refusalLog {
	return &refusalLog{now: now, cur: map[string]*offender{}, capacity: maxBuckets / 2}
}

// note records one refusal of key and reports whether to log it now; if
// so, refused is the number of key's refusals the line stands for and
// unlogged the number of others' refusals the budget left out since the
// last line.
func (l *refusalLog) note(key string) (log bool, refused, unlogged int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if age := now.Sub(l.rotated); age >= refusalLogEvery || len(l.cur) >= l.capacity {
		l.prev, l.cur = l.cur, map[string]*offender{}
		if age >= 2*refusalLogEvery {
			l.prev = nil
		}
		l.rotated = now
	}
	o := l.cur[key]
	if o == nil {
		if o = l.prev[key]; o != nil {
			delete(l.prev, key)
		} else {
			o = &offender{}
		}
		l.cur[key] = o
	}
	o.refused++
	if !o.logged.IsZero() && now.Sub(o.logged) < refusalLogEvery {
		return false, 0, 0
	}
	if now.Sub(l.window) >= refusalLogEvery {
		l.window, l.lines = now, 0
	}
	o.logged = now
	if l.lines >= maxRefusalLogs {
		l.dropped += o.refused
		o.refused = 0
		return false, 0, 0
	}
	l.lines++
	refused, unlogged = o.refused, l.dropped
	o.refused, l.dropped = 0, 0
	return true, refused, unlogged
}

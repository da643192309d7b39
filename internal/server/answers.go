package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Large answers cost what is sent, not what is asked: a resources/read of
// an 8 MiB file holds the file, its encoding and the SDK's copies of it
// (about four times its size) until the answer is written, and a client
// that never reads its answers would otherwise hold that many times over
// by asking again and again. The answer budget bounds the bytes the large
// answers being built and written hold at once, in all and per client;
// an answer over what is left waits for others to finish (a client's own
// answers queue behind each other) for at most answerWait, then fails
// with "server busy". Answers under largeAnswer are not counted: the
// limits on requests in flight bound them.

const (
	// DefaultAnswerBytes is the default of Options.AnswerBytes.
	DefaultAnswerBytes = 64 << 20

	// largeAnswer is the smallest file an answer counts against the
	// budget: below it, what a read costs is noise.
	largeAnswer = 256 << 10

	// answerCost is how many times its size an answer of a file holds at
	// its peak: the bytes read, the text or base64 form, and the
	// encodings the SDK makes of the result and of the message.
	answerCost = 4

	// answerWait bounds the wait for room in the budget.
	answerWait = 10 * time.Second
)

// answerBudget is the bound on large answers (see above); safe for
// concurrent use.
type answerBudget struct {
	total, perClient int64 // <= 0: none
	client           func(context.Context) (string, bool)

	mu       sync.Mutex
	used     int64 // held by answers being built and written
	byClient map[string]int64
	changed  chan struct{} // closed and replaced when bytes are given back
}

func newAnswerBudget(o *Options) *answerBudget {
	b := &answerBudget{total: o.AnswerBytes, perClient: o.ClientAnswerBytes, client: o.Client,
		byClient: map[string]int64{}, changed: make(chan struct{})}
	if b.total == 0 {
		b.total = DefaultAnswerBytes
	}
	if b.perClient == 0 {
		b.perClient = b.total / 2
	}
	return b
}

// answerTicket collects the reservations of one HTTP request, which the
// front end gives back once the answer is written (the SDK encodes and
// writes it after the handler that read the file has returned). A
// reservation on a ticket has two owners, the handler and the ticket, and
// is given back when both have let it go: the answer may be written after
// the handler returned, and the handler may still run after the request
// ended (its client went away).
type answerTicket struct {
	mu       sync.Mutex
	releases []func()
	closed   bool // done: what is held from now on is the handler's alone
}

type answerTicketKey struct{}

// withAnswerTicket returns r with a ticket in its context, and the ticket.
func withAnswerTicket(r *http.Request) (*http.Request, *answerTicket) {
	t := &answerTicket{}
	return r.WithContext(context.WithValue(r.Context(), answerTicketKey{}, t)), t
}

// add puts release on the ticket, unless the request's answer is written
// already (or will never be).
func (t *answerTicket) add(release func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.releases = append(t.releases, release)
	return true
}

// done gives back what the request's answers held.
func (t *answerTicket) done() {
	t.mu.Lock()
	rs := t.releases
	t.releases, t.closed = nil, true
	t.mu.Unlock()
	for _, r := range rs {
		r()
	}
}

// Over a stateful session the SDK runs a request's handler in the
// session's context (the one of the POST that initialized it, with that
// request's values), not in the POST's, and writes the answer on the POST's
// stream after the handler returned; the POST's ServeHTTP returns once the
// answer is written, or the client went away. The only thing of the POST
// the handler sees is its header (RequestExtra.Header): AnswersHandler
// names the POST's ticket there, and readyMiddleware puts the ticket it
// names in the handler's context.

// ticketHeader names the ticket of a request (canonical form).
const ticketHeader = "Skills-Mcp-Answer-Ticket"

// tickets are the tickets of the requests AnswersHandler is serving, by
// the random name it gave them.
var tickets sync.Map // string → *answerTicket

// AnswersHandler returns next, an SDK handler that HTTPHandler does not
// front (one with sessions, event streams or the caller's options), with
// what the answers to its POSTs hold of the answer budget given back once
// the HTTP answer is written, as HTTPHandler does for its own: over a
// session the SDK writes an answer after its handler returned, to a client
// that may not read it. A POST's header gets the name of its ticket, and
// any such header the client sent is dropped.
func (srv *Server) AnswersHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		t, name := &answerTicket{}, rand.Text()
		tickets.Store(name, t)
		defer func() {
			tickets.Delete(name)
			t.done()
		}()
		r = r.Clone(r.Context()) // the header is the server's, not ours to change
		r.Header[ticketHeader] = []string{name}
		next.ServeHTTP(w, r)
	})
}

// withHeaderTicket returns ctx with the ticket req's header names, if any
// (see AnswersHandler).
func withHeaderTicket(ctx context.Context, req mcp.Request) context.Context {
	extra := req.GetExtra()
	if extra == nil {
		return ctx
	}
	names := extra.Header[ticketHeader]
	if len(names) != 1 {
		return ctx
	}
	if t, ok := tickets.Load(names[0]); ok {
		return context.WithValue(ctx, answerTicketKey{}, t)
	}
	return ctx
}

// answerWaitedKey marks the context of a request whose wait for room has
// run its course already: the front end's read found none within
// answerWait and handed the request to the SDK, whose handler then takes
// room only if there is some at once, so that the request waits
// answerWait in all, not twice.
type answerWaitedKey struct{}

// errBusy is the error of an answer that found no room in the budget.
var errBusy = &jsonrpc.Error{Code: -32000, Message: "server busy: too many large answers being sent (to this client, or to all); retry in a few seconds, and read each answer before asking for the next"}

// hold reserves the memory of an answer of a file of size bytes, for the
// request of ctx, until the answer is written: over HTTP through the front
// end or AnswersHandler, once its HTTP answer is (its ticket) and the
// handler has released it; over stdio, once the answer's
// frame is taken by the host (the session's output queue), or at once if
// the handler returns without an answer; else when the handler releases
// it. It waits for room at most answerWait, and fails with errBusy then,
// or with ctx's error if it ends first. A client with nothing held may take
// more than its share, so that one answer larger than the share is
// possible; the total is never passed.
//
// The handler defers h.release(), and calls h.answer() just before it
// returns its answer.
func (b *answerBudget) hold(ctx context.Context, size int64) (*answerHold, error) {
	n := answerCost * size
	if size < largeAnswer || b.total < 0 {
		return &answerHold{}, nil
	}
	who, hasClient := "", false
	if b.client != nil {
		who, hasClient = b.client(ctx)
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		mine := b.byClient[who]
		fits := b.used == 0 || b.used+n <= b.total
		if hasClient && b.perClient > 0 && mine > 0 && mine+n > b.perClient {
			fits = false
		}
		if fits {
			b.used += n
			if hasClient {
				b.byClient[who] = mine + n
			}
			b.mu.Unlock()
			h := &answerHold{give: sync.OnceFunc(func() { b.give(who, hasClient, n) }), size: size}
			if t, ok := ctx.Value(answerTicketKey{}).(*answerTicket); ok {
				h.owners.Store(2)
				h.ticket = t.add(h.let)
			}
			h.queue, _ = ctx.Value(answerQueueKey{}).(*answerQueue)
			return h, nil
		}
		changed := b.changed
		b.mu.Unlock()
		if timer == nil {
			if ctx.Value(answerWaitedKey{}) != nil {
				return nil, errBusy
			}
			timer = time.NewTimer(answerWait)
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, errBusy
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// answerHold is one answer's reservation (see hold).
type answerHold struct {
	give     func() // gives the bytes back, once; nil for an answer too small to count
	size     int64  // the file's size
	ticket   bool   // on an HTTP request's ticket: given back once owners is 0
	owners   atomic.Int32
	queue    *answerQueue
	answered bool
}

// let is one owner letting a hold on a ticket go: the last gives it back.
func (h *answerHold) let() {
	if h.owners.Add(-1) == 0 {
		h.give()
	}
}

// answered says the handler returns its answer: over stdio the bytes stay
// held until its frame is written.
func (h *answerHold) answer() { h.answered = true }

// release ends the handler's part of the hold.
func (h *answerHold) release() {
	switch {
	case h.give == nil:
	case h.ticket:
		h.let()
	case h.queue != nil && h.answered:
		h.queue.push(h)
	default:
		h.give()
	}
}

// answerQueue holds the reservations of answers made over stdio whose
// frames the host has not taken yet: a host that stops reading then makes
// the requests behind them wait for room, instead of piling up answers
// (each a few copies of a file) behind its unread output. A frame written
// gives back the oldest reservation its size can be the answer of; the
// frames of one session are written one at a time.
type answerQueue struct {
	mu      sync.Mutex
	pending []*answerHold
}

type answerQueueKey struct{}

func (q *answerQueue) push(h *answerHold) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, h)
}

// wrote gives back the oldest reservation a frame of n bytes answers: an
// answer's frame is at least as long as its file.
func (q *answerQueue) wrote(n int) {
	if n < largeAnswer {
		return
	}
	q.mu.Lock()
	var h *answerHold
	for i, p := range q.pending {
		if int64(n) >= p.size {
			h = p
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			break
		}
	}
	q.mu.Unlock()
	if h != nil {
		h.give()
	}
}

// close gives back every reservation left: the session is over.
func (q *answerQueue) close() {
	q.mu.Lock()
	pending := q.pending
	q.pending = nil
	q.mu.Unlock()
	for _, h := range pending {
		h.give()
	}
}

func (b *answerBudget) give(who string, hasClient bool, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if hasClient {
		if b.byClient[who] -= n; b.byClient[who] <= 0 {
			delete(b.byClient, who)
		}
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// heldBytes returns what the budget holds, for tests.
func (b *answerBudget) heldBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// mdSize is the size of sk's SKILL.md, whose body get_skill and the
// prompts answer.
func mdSize(snap *catalog.Snapshot, sk *catalog.Skill) int64 {
	if f, ok := snap.File(skillsext.FileURI(sk.Path, "SKILL.md")); ok {
		return f.Size
	}
	return 0
}

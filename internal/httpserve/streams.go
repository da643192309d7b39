package httpserve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// keepAliveComment is what an idle stream hears: an event-stream comment,
// which clients ignore and proxies count as traffic.
const keepAliveComment = ": keep-alive\n\n"

// serveStream serves an event stream: within MaxStreams (503 past it) and
// its client's share of streams (429 past it), for at most the stream
// lifetime (its context ends then, and its handler returns), with a
// keep-alive comment after each silence of KeepAlive, and each write
// bounded by WriteTimeout, so that a client that stops reading is cut at
// its first stalled write. (The read deadline needs no clearing: net/http
// clears it itself once the body is read.) The handler may park the
// stream (see [StreamParker]); the stream's shares are then held until
// the parked stream ends.
func (g *Guard) serveStream(w http.ResponseWriter, r *http.Request, next http.Handler) {
	c := clientOf(r)
	if g.streams.Add(1) > g.maxStreams {
		g.streams.Add(-1)
		g.obs.SizeLimited(LimitStreams)
		w.Header().Set("Retry-After", retryAfter)
		g.reject(w, r, http.StatusServiceUnavailable,
			fmt.Sprintf("server busy: %d event streams open; retry in a second", g.maxStreams))
		return
	}
	if over := g.held.take(c, shareStreams, 1, &g.shares); over != "" {
		g.streams.Add(-1)
		g.refuseShare(w, r, c, shareStreams, over)
		return
	}
	// A copy: the request's client lives in the request's state, which a
	// parked stream must not hold (the buffers of net/http among it).
	held := *c
	release := sync.OnceFunc(func() {
		g.streams.Add(-1)
		g.held.give(&held, shareStreams, 1)
	})
	markStream(w)
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // each write sets its own (timedWriter)
	ctx, cancel := context.WithCancel(r.Context())
	var end time.Time
	if g.lifetime > 0 {
		end = time.Now().Add(g.lifetime)
		ctx, cancel = context.WithDeadline(r.Context(), end)
	}
	defer cancel()
	sw := &streamWriter{ResponseWriter: w, rc: rc, g: g, r: r, cancel: cancel, release: release, end: end}
	sw.armKeepAlive()
	next.ServeHTTP(sw, r.WithContext(ctx))
	if !sw.stop() {
		release()
	}
}

// StreamParker is what the guard's writer of an event stream offers a
// handler (found through the Unwrap chain of the writers before it):
// ParkEventStream ends the handler's hold on the stream. The guard writes
// the response's status (200) and the header the handler set, then first,
// takes the connection over, and returns; the handler returns too, and no
// goroutine waits on the stream: the guard holds it, sends a keep-alive
// comment when it is idle, ends it at its lifetime (and when Serve shuts
// down), and cuts it at the first write its client does not take in time.
// send queues an event (whole, framed as the stream's format wants it)
// without blocking, and reports false once the stream has ended; ended is
// called once, from any goroutine, when the stream ends for any reason
// (before ParkEventStream returns, if the client is gone already). ok is
// false, with nothing written and ended never called, when the
// connection cannot be taken over (HTTP/2, or HTTP/1.0, which has no
// chunked framing, or a stream already written to); the handler then
// serves the stream itself.
//
// A parked stream costs its connection and a few KiB; a stream served by a
// waiting handler costs that handler's goroutines and buffers as well.
type StreamParker interface {
	ParkEventStream(first []byte, ended func()) (send func(event []byte) bool, ok bool)
}

// streamWriter is the writer of an event stream's handler: it serialises
// the handler's writes with the keep-alive comments, and parks the stream
// on request.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	g       *Guard
	r       *http.Request
	cancel  context.CancelFunc
	release func()
	end     time.Time // the lifetime's end; zero for none

	mu sync.Mutex
	// started: the header is written; dirty: bytes were written since the
	// last flush (an event may be half written); done: the handler
	// returned or parked the stream.
	started, dirty, done bool
	parked               bool
	last                 time.Time // last write or flush
	timer                *time.Timer
}

var _ StreamParker = (*streamWriter)(nil)

func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.ResponseWriter.WriteHeader(code)
	}
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0, http.ErrHijacked
	}
	s.started, s.dirty, s.last = true, true, time.Now()
	n, err := s.ResponseWriter.Write(p)
	if err != nil {
		s.cancel() // the client is gone or stalled: end the handler
	}
	return n, err
}

// Flush implements http.Flusher.
func (s *streamWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.started, s.dirty, s.last = true, false, time.Now()
	if err := s.rc.Flush(); err != nil {
		s.cancel()
	}
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// armKeepAlive starts the keep-alive timer, if the guard sends them.
func (s *streamWriter) armKeepAlive() {
	if s.g.keepAlive > 0 {
		s.timer = time.AfterFunc(s.g.keepAlive, s.keepAlive)
	}
}

// keepAlive writes a comment if the stream has been silent for KeepAlive,
// between two events (never inside one), and arms the timer again.
func (s *streamWriter) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	idle := time.Since(s.last)
	if s.started && !s.dirty && idle >= s.g.keepAlive {
		if _, err := io.WriteString(s.ResponseWriter, keepAliveComment); err != nil {
			s.cancel()
			return
		}
		if err := s.rc.Flush(); err != nil {
			s.cancel()
			return
		}
		s.last, idle = time.Now(), 0
	}
	s.timer.Reset(s.g.keepAlive - idle)
}

// stop ends the writer's work once the handler has returned, and reports
// whether the stream was parked (its shares then stay held).
func (s *streamWriter) stop() (parked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.timer != nil {
		s.timer.Stop()
	}
	return s.parked
}

// ParkEventStream implements [StreamParker].
func (s *streamWriter) ParkEventStream(first []byte, ended func()) (func([]byte) bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.started || s.r.ProtoMajor != 1 || !s.r.ProtoAtLeast(1, 1) {
		return nil, false
	}
	s.started = true
	dead := func([]byte) bool { return false }
	s.ResponseWriter.WriteHeader(http.StatusOK)
	if err := s.rc.Flush(); err != nil {
		s.cancel()
		ended()
		return dead, true
	}
	conn, _, err := s.rc.Hijack()
	if err != nil {
		s.cancel()
		ended()
		return dead, true
	}
	s.done, s.parked = true, true
	if s.timer != nil {
		s.timer.Stop()
	}
	p := &parkedStream{conn: conn, g: s.g, release: s.release, ended: ended}
	if set, ok := s.r.Context().Value(parkedKey{}).(*parkedSet); ok {
		p.set = set
	}
	if !p.start(first, s.end) {
		return dead, true // closed, and ended called
	}
	return p.send, true
}

// maxParkedQueue bounds what a parked stream holds for a client that does
// not take it: events are a few hundred bytes, and a client this far
// behind is cut.
const maxParkedQueue = 256 << 10

// parkedStream is an event stream whose connection the guard took over
// (see StreamParker). Its writes are chunks of the response's chunked
// encoding, made by one writer goroutine at a time, started when there is
// something to write; a goroutine reading the connection notices at once
// a client that leaves; timers send the keep-alive and end the stream at
// its lifetime. Each goroutine ends when the connection is closed.
type parkedStream struct {
	conn    net.Conn
	g       *Guard
	release func()
	ended   func()
	set     *parkedSet // nil outside Serve

	mu      sync.Mutex
	queue   []byte // framed chunks not written yet
	writing bool   // a writer goroutine runs
	ending  bool   // the last chunk is queued: close once written
	closed  bool
	last    time.Time // last write
	alive   *time.Timer
	life    *time.Timer
}

// start writes the first event and starts the stream's goroutine and
// timers; false if the first write failed (the stream is then closed).
func (p *parkedStream) start(first []byte, end time.Time) bool {
	if p.set != nil && !p.set.add(p) {
		p.close()
		return false // Serve is shutting down
	}
	p.conn.SetWriteDeadline(time.Now().Add(p.g.writeTimeout))
	if _, err := p.conn.Write(chunk(nil, first)); err != nil {
		p.close()
		return false
	}
	p.last = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.goWatch()
	if p.g.keepAlive > 0 {
		p.alive = time.AfterFunc(p.g.keepAlive, p.keepAlive)
	}
	if !end.IsZero() {
		p.life = time.AfterFunc(time.Until(end), p.finish)
	}
	return true
}

// goWatch starts the goroutine that reads the connection until it ends:
// a client sends nothing on a stream, so the read returns only when the
// client leaves (or the stream is closed).
func (p *parkedStream) goWatch() {
	watch := func() {
		var buf [512]byte
		for {
			if _, err := p.conn.Read(buf[:]); err != nil {
				p.close()
				return
			}
		}
	}
	if p.set != nil {
		p.set.wg.Go(watch)
	} else {
		go watch()
	}
}

// send queues event as a chunk of the stream; false once it has ended.
func (p *parkedStream) send(event []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ending {
		return false
	}
	if len(p.queue)+len(event) > maxParkedQueue {
		p.g.log.Warn("closing an event stream whose client takes none of it", "client", p.conn.RemoteAddr().String())
		go p.close()
		return false
	}
	p.queue = chunk(p.queue, event)
	p.kick()
	return true
}

// kick starts the writer goroutine if none runs. p.mu is held.
func (p *parkedStream) kick() {
	if p.writing || len(p.queue) == 0 {
		return
	}
	p.writing = true
	if p.set != nil {
		p.set.wg.Go(p.write)
	} else {
		go p.write()
	}
}

// write writes what is queued, each write within WriteTimeout, until the
// queue is empty; closes the stream once its last chunk is written.
func (p *parkedStream) write() {
	for {
		p.mu.Lock()
		data, ending := p.queue, p.ending
		p.queue = nil
		if len(data) == 0 || p.closed {
			p.writing = false
			closeNow := ending && !p.closed
			p.mu.Unlock()
			if closeNow {
				p.close()
			}
			return
		}
		p.mu.Unlock()
		p.conn.SetWriteDeadline(time.Now().Add(p.g.writeTimeout))
		if _, err := p.conn.Write(data); err != nil {
			p.close()
			return
		}
		p.mu.Lock()
		p.last = time.Now()
		p.mu.Unlock()
	}
}

// keepAlive queues a comment when the stream has been silent for
// KeepAlive, and arms the timer again.
func (p *parkedStream) keepAlive() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ending {
		return
	}
	idle := time.Since(p.last)
	if idle >= p.g.keepAlive && !p.writing {
		p.queue = chunk(p.queue, []byte(keepAliveComment))
		p.kick()
		idle = 0
	}
	p.alive.Reset(p.g.keepAlive - idle)
}

// finish ends the stream as a complete answer: the last chunk, then the
// connection closes; its client reconnects.
func (p *parkedStream) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ending {
		return
	}
	p.ending = true
	p.queue = append(p.queue, "0\r\n\r\n"...)
	p.kick()
}

// close closes the connection and gives back the stream's shares, once.
func (p *parkedStream) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.queue = nil
	if p.alive != nil {
		p.alive.Stop()
	}
	if p.life != nil {
		p.life.Stop()
	}
	ended := p.ended
	p.mu.Unlock()
	p.conn.Close()
	p.release()
	if p.set != nil {
		p.set.remove(p)
	}
	if ended != nil {
		ended()
	}
}

// chunk appends data to b as one chunk of a chunked HTTP/1.1 body.
func chunk(b, data []byte) []byte {
	b = strconv.AppendInt(b, int64(len(data)), 16)
	b = append(b, "\r\n"...)
	b = append(b, data...)
	return append(b, "\r\n"...)
}

// parkedSet is the parked streams of one Serve, which ends them when it
// shuts down (the http.Server forgets a connection once it is taken
// over). Serve puts it in the base context of its requests.
type parkedSet struct {
	mu      sync.Mutex
	streams map[*parkedStream]struct{}
	closing bool
	drained chan struct{}  // closed once closing and no stream is left
	wg      sync.WaitGroup // the streams' goroutines
}

type parkedKey struct{}

func newParkedSet() *parkedSet {
	return &parkedSet{streams: map[*parkedStream]struct{}{}, drained: make(chan struct{})}
}

func (s *parkedSet) add(p *parkedStream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.streams[p] = struct{}{}
	return true
}

func (s *parkedSet) remove(p *parkedStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, p)
	s.checkDrained()
}

// checkDrained closes drained once closing with no stream left. s.mu is
// held.
func (s *parkedSet) checkDrained() {
	if s.closing && len(s.streams) == 0 {
		select {
		case <-s.drained:
		default:
			close(s.drained)
		}
	}
}

func (s *parkedSet) list() []*parkedStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*parkedStream, 0, len(s.streams))
	for p := range s.streams {
		out = append(out, p)
	}
	return out
}

// finishAll ends every stream as at its lifetime, and takes no more;
// drained is closed once their last chunks are written (or they failed).
func (s *parkedSet) finishAll() {
	s.mu.Lock()
	s.closing = true
	s.checkDrained()
	s.mu.Unlock()
	for _, p := range s.list() {
		p.finish()
	}
}

// closeAll closes every stream left and waits for their goroutines.
func (s *parkedSet) closeAll() {
	s.mu.Lock()
	s.closing = true
	s.checkDrained()
	s.mu.Unlock()
	for _, p := range s.list() {
		p.close()
	}
	s.wg.Wait()
}

package httpserve

import (
	"context"
	"net/http"
	"time"
)

// writePiece is the most one write of an answer hands the connection at
// once, each piece with a deadline of its own: a client that reads, however
// slowly, keeps getting pieces; one that stopped is cut at the first piece
// it does not take within the write timeout, not after the whole answer's.
const writePiece = 64 << 10

// timed gives each request its client (the key of the shares and the
// rate limits, in the request's context) and bounds the writes of its
// answer: each piece of at most writePiece bytes must be taken within
// WriteTimeout, and the whole answer must be written within answerTimeout
// of the request's headers (an event stream has its lifetime instead; see
// serveStream). The server's own WriteTimeout, which bounds only the whole
// answer, is not used (Serve leaves it zero).
func (g *Guard) timed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One allocation for the client and the writer.
		t := &timedRequest{
			c: client{addr: addressKey(r.RemoteAddr)},
			w: timedWriter{ResponseWriter: w, dl: deadlinerOf(w), per: g.writeTimeout, end: time.Now().Add(answerTimeout)},
		}
		// Set again for every request: a connection kept alive still
		// carries the last deadline of the one before.
		t.w.setDeadline(t.w.end)
		next.ServeHTTP(&t.w, r.WithContext(context.WithValue(r.Context(), clientKey{}, &t.c)))
		// net/http writes what is buffered once the handler returns.
		t.w.setDeadline(t.w.deadline())
	})
}

type timedRequest struct {
	c client
	w timedWriter
}

// timedWriter sets a write deadline before each piece of an answer.
type timedWriter struct {
	http.ResponseWriter
	dl     writeDeadliner // the connection's, found once; nil if none
	per    time.Duration
	end    time.Time // the whole answer's deadline; zero for a stream
	stream bool
	cut    bool // no write may succeed: the connection ends with the answer cut
}

// deadline is the deadline of the next write: WriteTimeout from now,
// within the answer's; long past once the answer is cut off.
func (t *timedWriter) deadline() time.Time {
	if t.cut {
		return time.Unix(1, 0)
	}
	d := time.Now().Add(t.per)
	if !t.stream && t.end.Before(d) {
		return t.end
	}
	return d
}

func (t *timedWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		piece := p[:min(len(p), writePiece)]
		t.setDeadline(t.deadline())
		k, err := t.ResponseWriter.Write(piece)
		n += k
		if err != nil {
			return n, err
		}
		p = p[len(piece):]
	}
	return n, nil
}

// Flush implements http.Flusher.
func (t *timedWriter) Flush() {
	t.setDeadline(t.deadline())
	http.NewResponseController(t.ResponseWriter).Flush()
}

// setDeadline sets the connection's write deadline, if it has one.
func (t *timedWriter) setDeadline(d time.Time) {
	if t.dl != nil {
		t.dl.SetWriteDeadline(d)
	}
}

// writeDeadliner is what http.ResponseController calls to set a write
// deadline; asked for directly, once per request, it costs no allocation
// per call.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// deadlinerOf finds the write deadline of w, through the Unwrap chain of
// the writers before it (as http.ResponseController does); nil if none.
func deadlinerOf(w http.ResponseWriter) writeDeadliner {
	for w != nil {
		if d, ok := w.(writeDeadliner); ok {
			return d
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// setStream drops the whole answer's deadline: an event stream lasts its
// lifetime, each write still bounded.
func (t *timedWriter) setStream() { t.stream = true }

// cutOff makes every later write fail, so that the connection ends
// with the answer visibly cut rather than complete-looking.
func (t *timedWriter) cutOff() {
	t.cut = true
	t.setDeadline(t.deadline())
}

// markStream tells the timed writer under w that its answer is a stream.
func markStream(w http.ResponseWriter) {
	if t := timedOf(w); t != nil {
		t.setStream()
	}
}

// cutOff ends the connection of w's answer: no later write succeeds.
func cutOff(w http.ResponseWriter) {
	if t := timedOf(w); t != nil {
		t.cutOff()
		return
	}
	http.NewResponseController(w).SetWriteDeadline(time.Unix(1, 0))
}

// timedOf finds the timed writer under w, through the Unwrap chain of the
// writers between them; nil if there is none.
func timedOf(w http.ResponseWriter) *timedWriter {
	for w != nil {
		if t, ok := w.(*timedWriter); ok {
			return t
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// RunStdio serves one session over r and w, the host's stdin and stdout,
// until r ends or ctx is cancelled, as mcp.Server.Run does with a
// StdioTransport.
//
// skills/list and skills/get are most of what hosts send and most of what
// the server writes: a complete listing of 5,000 skills is 4.7 MB, which
// the SDK would encode twice more after the server encoded it (once to a
// raw result, once into the response frame). A front end reads each line
// first and answers these two methods itself, encoding the page or entry
// into its frame, when the request is of the plain kind the SDK would answer with
// the same bytes (see fastRequest); every other line, and every request in
// doubt, goes to the SDK unchanged.
//
// When r ends, the requests already read are answered before RunStdio
// returns, within DrainTimeout; when ctx ends, the session is closed at
// once, and RunStdio returns within DrainTimeout even if a request is stuck.
func (srv *Server) RunStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return srv.runStdio(ctx, r, w, DrainTimeout)
}

func (srv *Server) runStdio(ctx context.Context, r io.Reader, w io.Writer, drain time.Duration) error {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: w}
	calls := newPendingCalls()
	ss, err := srv.ms.Connect(ctx, &mcp.IOTransport{Reader: pr, Writer: &answerWriter{out: out, calls: calls}}, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	done := make(chan struct{}) // closed when the session has ended
	go func() {
		err := ss.Wait()
		close(done)
		ended <- err
	}()
	f := &stdioFront{s: srv.s, ss: ss, out: out, sdk: pw, calls: calls, done: done, drain: drain}
	go f.pump(r)

	select {
	case <-ctx.Done():
		// Close waits for the handlers in flight, which have seen ctx end;
		// one stuck in a read that ignores it must not hold the process,
		// so the wait is bounded and Close finishes on its own.
		go ss.Close()
		select {
		case <-ended:
		case <-time.After(drain):
			srv.s.log.Warn("stdio session still closing after the shutdown deadline; a request is stuck", "deadline", drain)
		}
		return ctx.Err()
	case err := <-ended:
		return err
	}
}

// lockedWriter serialises whole frames from the SDK and the front end. The
// SDK writes each message with one Write call, as the front end does.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the host's stdout: the process may still log.
func (l *lockedWriter) Close() error { return nil }

// stdioFront splits the host's input between itself and the SDK.
type stdioFront struct {
	s   *server
	ss  *mcp.ServerSession
	out *lockedWriter
	sdk *io.PipeWriter // the SDK's input

	// calls are those handed to the SDK and not answered yet; when the
	// input ends, the SDK's input is ended once they are, or after drain,
	// or when the session ends (done).
	calls *pendingCalls
	done  <-chan struct{}
	drain time.Duration

	frame []byte // the answer being built, reused
}

// frontLineBytes is the longest line the front end considers; longer ones
// go to the SDK in pieces, never held whole here.
const frontLineBytes = 64 << 10

// pump copies r to the SDK line by line, answering the lines it can.
func (f *stdioFront) pump(r io.Reader) {
	in := bufio.NewReaderSize(r, frontLineBytes)
	partial := false // inside a line longer than the buffer
	for {
		chunk, err := in.ReadSlice('\n')
		if len(chunk) > 0 {
			f.s.sawRequest()
			starts := !partial // this chunk starts a line
			whole := starts && err == nil
			partial = errors.Is(err, bufio.ErrBufferFull)
			if !(whole && f.answer(chunk)) {
				// Recorded before the SDK can read it, so that its answer
				// always finds it.
				switch {
				case starts && !partial: // a line, or the input's last
					f.calls.sent(chunk)
				case !partial: // the end of a long line
					f.calls.sentUnread()
				}
				if _, werr := f.sdk.Write(chunk); werr != nil {
					return // the session has ended
				}
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			f.endInput(nil)
			return
		default:
			f.endInput(err)
			return
		}
	}
}

// endInput ends the SDK's input, with err (nil for the end of the input),
// once the calls it was handed are answered: the SDK would cancel them.
func (f *stdioFront) endInput(err error) {
	if ok, open := f.calls.wait(f.drain, f.done); !ok && open > 0 {
		select {
		case <-f.done:
		default:
			f.s.log.Warn("stdin closed; requests still unanswered at the shutdown deadline are dropped", "requests", open, "deadline", f.drain)
		}
	}
	f.sdk.CloseWithError(err)
}

// answer writes the response to line if it is a request the front end
// serves, and reports whether it did.
func (f *stdioFront) answer(line []byte) bool {
	if f.s.opts.NoFastPath {
		return false
	}
	select {
	case <-f.s.ready:
	default:
		return false // the SDK holds it until the catalog is in
	}
	req, ok := parseFastRequest(line)
	if !ok || f.ss.InitializeParams() == nil || req.protocolMeta || req.method == methodReadResource {
		// The per-request protocol is the SDK's to check. Reads stay with
		// the SDK too: it serves each on a goroutine of its own, and a
		// slow file would hold up this loop.
		return false
	}
	b := append(f.frame[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, req.id...)
	b = append(b, `,"result":`...)
	if b, ok = f.s.appendFastResult(b, req, skillsext.ProtocolVersion(nil, f.ss), nil); !ok {
		return false
	}
	b = append(b, "}\n"...)
	f.frame = b
	if cap(f.frame) > 1<<20 {
		f.frame = nil // keep no listing-sized buffer between requests
	}
	f.out.Write(b) // on failure the SDK's next write fails and ends the session
	return true
}

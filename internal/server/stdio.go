package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"

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
func (srv *Server) RunStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: w}
	ss, err := srv.ms.Connect(ctx, &mcp.IOTransport{Reader: pr, Writer: out}, nil)
	if err != nil {
		return err
	}
	f := &stdioFront{s: srv.s, ss: ss, out: out, sdk: pw}
	go f.pump(r)

	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
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
			whole := !partial && err == nil
			partial = errors.Is(err, bufio.ErrBufferFull)
			if !(whole && f.answer(chunk)) {
				if _, werr := f.sdk.Write(chunk); werr != nil {
					return // the session has ended
				}
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			f.sdk.Close()
			return
		default:
			f.sdk.CloseWithError(err)
			return
		}
	}
}

// answer writes the response to line if it is a request the front end
// serves, and reports whether it did.
func (f *stdioFront) answer(line []byte) bool {
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

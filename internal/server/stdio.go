package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// returns, within DrainTimeout: once it passes, RunStdio returns (and logs
// how many requests had no answer yet, and how many answers were still
// waiting for w to take them) even if w takes nothing, a host that no
// longer reads its server's output; when ctx ends, the session is closed
// at once, and RunStdio returns within DrainTimeout even if a request is
// stuck. While w takes nothing, large answers waiting to be written count
// against the answer budget (Options.AnswerBytes), so that the requests
// behind them wait rather than pile their answers up in memory.
func (srv *Server) RunStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return srv.runStdio(ctx, r, w, DrainTimeout)
}

func (srv *Server) runStdio(ctx context.Context, r io.Reader, w io.Writer, drain time.Duration) error {
	pr, pw := io.Pipe()
	queue := &answerQueue{}
	defer queue.close()
	out := &lockedWriter{w: w, queue: queue}
	calls := newPendingCalls()
	aw := &answerWriter{out: out, calls: calls}
	// The handlers' contexts carry the queue their answers wait in.
	ss, err := srv.ms.Connect(context.WithValue(ctx, answerQueueKey{}, queue), &mcp.IOTransport{Reader: pr, Writer: aw}, nil)
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
	abandoned := make(chan struct{}) // closed when the drain gives up on w
	f := &stdioFront{s: srv.s, ss: ss, out: out, answers: aw, sdk: pw, calls: calls, done: done, drain: drain, abandoned: abandoned}
	go f.pump(r)

	select {
	case <-abandoned:
		// The answers still owed are logged: the process may exit now,
		// with a write to w stuck (a host that stopped reading).
		return nil
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
// Each frame taken gives back what its answer held of the answer budget
// (queue, if not nil).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	queue   *answerQueue
	waiting atomic.Int64 // frames in Write: being written, or waiting to be
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if l.queue != nil {
		l.queue.wrote(len(p))
	}
	return n, err
}

// Close does not close the host's stdout: the process may still log.
func (l *lockedWriter) Close() error { return nil }

// stdioFront splits the host's input between itself and the SDK.
type stdioFront struct {
	s       *server
	ss      *mcp.ServerSession
	out     *lockedWriter
	answers *answerWriter  // the SDK's output
	sdk     *io.PipeWriter // the SDK's input

	// calls are those handed to the SDK and not answered yet; when the
	// input ends, the SDK's input is ended once they are, or after drain,
	// or when the session ends (done).
	calls *pendingCalls
	done  <-chan struct{}
	drain time.Duration
	// abandoned is closed when the drain deadline passed with answers
	// still owed: RunStdio returns without them.
	abandoned chan struct{}

	frame []byte // the answer being built, reused
}

// frontLineBytes is the longest line the front end answers itself;
// longer ones are checked (see checkLine) and passed on.
const frontLineBytes = 64 << 10

// MaxLineBytes bounds a request line over stdio (4 MiB, the request body
// limit over HTTP). The SDK's own bound is 16 MiB, and a line over it ends
// the session; the front end drops a longer line and answers an error
// instead, holding at most this much of it.
const MaxLineBytes = 4 << 20

// pump copies r to the SDK line by line, answering the lines it can and
// refusing those the SDK could not read (see checkLine): the SDK's stdio
// transport ends the session on the first line that is not a JSON-RPC
// message, so one malformed line would cost the host every later answer.
func (f *stdioFront) pump(r io.Reader) {
	in := bufio.NewReaderSize(r, frontLineBytes)
	var long []byte // a line longer than the buffer, gathered
	over := false   // the line being read is over MaxLineBytes: dropped
	for {
		chunk, err := in.ReadSlice('\n')
		if len(chunk) > 0 {
			f.s.sawRequest()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			switch {
			case over:
			case len(long)+len(chunk) > MaxLineBytes:
				over, long = true, nil
			default:
				long = append(long, chunk...)
			}
			continue
		}
		line := chunk
		if long != nil {
			line, long = append(long, chunk...), nil
		}
		switch {
		case over:
			over = false
			f.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request line is over %d bytes; send a smaller request", MaxLineBytes))
		case len(line) > MaxLineBytes:
			f.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request line is over %d bytes; send a smaller request", MaxLineBytes))
		case len(line) > 0 && !(len(line) <= frontLineBytes && f.answer(line)):
			fwd, m, id, code, msg := checkLine(line)
			if msg != "" {
				f.refuse(id, code, msg)
				break
			}
			if fwd != nil {
				// Recorded before the SDK can read it, so that its answer
				// always finds it.
				f.calls.sent(m)
				if _, werr := f.sdk.Write(fwd); werr != nil {
					return // the session has ended
				}
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			f.endInput(nil)
			return
		default:
			f.endInput(err)
			return
		}
	}
}

// checkLine returns the line to pass to the SDK and the message it holds,
// decoded as the SDK will decode it, or the error to answer
// in its place: -32700 for a line that is not JSON, -32600 for a batch
// (removed from MCP in 2025-06-18; refused on every revision, as over
// HTTP), for a request whose id the SDK would not give back as sent (see
// skillsext.GarbledID; the id is echoed byte for byte) and for JSON the
// SDK cannot read as a message, with the request's id when it has one. A line of white space returns nothing to pass. The
// line passed on is the message without surrounding white space: the SDK
// ends the session on anything but a newline after a message.
func checkLine(line []byte) (fwd []byte, m jsonrpc.Message, id []byte, code int64, msg string) {
	msg0 := bytes.TrimSpace(line)
	if len(msg0) == 0 {
		return nil, nil, nil, 0, ""
	}
	if !json.Valid(msg0) {
		return nil, nil, nil, jsonrpc.CodeParseError, "Parse error: the line is not valid JSON (an unescaped control character, an invalid escape or a truncated message); send one JSON-RPC message per line"
	}
	switch msg0[0] {
	case '[':
		return nil, nil, nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported; send each message on a line of its own"
	case '{':
	default:
		return nil, nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object"
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	// Only a line with an escape or invalid UTF-8 can hold such an id.
	if (bytes.Contains(msg0, []byte(`\u`)) || !utf8.Valid(msg0)) && json.Unmarshal(msg0, &head) == nil && skillsext.GarbledID(head.ID) {
		// Refused, with the id as sent: the SDK would answer another id,
		// with U+FFFD in place of what it could not decode.
		return nil, nil, head.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: the id holds a lone UTF-16 surrogate or invalid UTF-8, which cannot be answered under the same id; use a plain string or a number"
	}
	m, err := jsonrpc.DecodeMessage(msg0)
	if err != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(msg0, &m) == nil && plainID(m.ID) {
			id = m.ID
		}
		return nil, nil, id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	if len(msg0) == len(line)-1 && line[len(line)-1] == '\n' {
		return line, m, nil, 0, "" // as it came: no copy
	}
	return append(msg0[:len(msg0):len(msg0)], '\n'), m, nil, 0, ""
}

// refuse writes a JSON-RPC error answer; id is the request's id, encoded,
// or nil for null.
func (f *stdioFront) refuse(id []byte, code int64, msg string) {
	if id == nil {
		id = []byte("null")
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = appendEscaped(b, msg)
	b = append(b, "}}\n"...)
	f.out.Write(b) // on failure the SDK's next write fails and ends the session
}

// endInput ends the SDK's input, with err (nil for the end of the input),
// once the calls it was handed are answered: the SDK would cancel them.
// At the drain deadline it gives up on what is still owed, saying what
// that is: requests still without an answer, and answers made but not
// taken by the host (which has stopped reading them).
func (f *stdioFront) endInput(err error) {
	if ok, open := f.calls.wait(f.drain, f.done); !ok && open > 0 {
		select {
		case <-f.done:
		default:
			// Calls whose answers are made but not taken count as
			// unwritten, not unanswered.
			unwritten := int(f.out.waiting.Load())
			unanswered := max(0, open-int(f.answers.writing.Load()))
			msg := "stdin closed and the shutdown deadline passed: exiting without the answers still owed"
			if unwritten > 0 {
				msg += " (the host is not reading stdout)"
			}
			f.s.log.Warn(msg, "unanswered", unanswered, "unwritten", unwritten, "deadline", f.drain)
			close(f.abandoned)
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

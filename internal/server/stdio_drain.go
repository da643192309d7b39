package server

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DrainTimeout is the longest RunStdio waits, once its input has ended,
// for the answers to the requests it read before; and, once its context
// ends, for the session to close. A host that writes its requests and
// closes stdin (printf ... | skills-mcp) gets every answer; one request
// that never completes (a stuck read) delays the exit by this much, no
// more.
const DrainTimeout = 10 * time.Second

// pendingCalls tracks the calls RunStdio handed to the SDK that the SDK has
// not answered yet. The SDK cancels every request in flight, and writes no
// answer, the moment its input ends; so RunStdio ends the SDK's input only
// once these are answered (or DrainTimeout passed). Calls are keyed by the
// id the SDK decodes, so that a request and its answer match as they do
// inside the SDK, however the id was spelled.
type pendingCalls struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{}
	// unread counts the calls that may be in lines too long for the front
	// end to decode (frontLineBytes): any answer to an id not in ids
	// settles one.
	unread int
	// answered receives (without blocking) after each answer.
	answered chan struct{}
}

func newPendingCalls() *pendingCalls {
	return &pendingCalls{ids: map[jsonrpc.ID]struct{}{}, answered: make(chan struct{}, 1)}
}

// sent records m, a message about to be handed to the SDK, if it is a
// call (batches never reach the SDK: checkLine refuses them).
func (p *pendingCalls) sent(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return // a notification, or a client's answer to the server
	}
	p.mu.Lock()
	p.ids[req.ID] = struct{}{}
	p.mu.Unlock()
}

// sentUnread records that the end of a line too long to decode here was
// handed to the SDK.
func (p *pendingCalls) sentUnread() {
	p.mu.Lock()
	p.unread++
	p.mu.Unlock()
}

// wrote settles the calls that msg, one write of the SDK, answers.
func (p *pendingCalls) wrote(msg []byte) {
	settled := false
	answeredIDs(msg, func(id jsonrpc.ID) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, ok := p.ids[id]; ok {
			delete(p.ids, id)
			settled = true
		} else if p.unread > 0 {
			p.unread--
			settled = true
		}
	})
	if settled {
		select {
		case p.answered <- struct{}{}:
		default:
		}
	}
}

// wait returns once every call sent has been answered (true), or when
// timeout passes or done is closed first (false), with the number of calls
// still open.
func (p *pendingCalls) wait(timeout time.Duration, done <-chan struct{}) (bool, int) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		open := len(p.ids) + p.unread
		p.mu.Unlock()
		if open == 0 {
			return true, 0
		}
		select {
		case <-p.answered:
		case <-done:
			return false, open
		case <-timer.C:
			return false, open
		}
	}
}

// answerWriter is the SDK's output: it writes each message to out, then
// settles the calls it answers.
type answerWriter struct {
	out     *lockedWriter
	calls   *pendingCalls
	writing atomic.Int64 // the SDK's frames not yet taken by out
}

func (w *answerWriter) Write(p []byte) (int, error) {
	w.writing.Add(1)
	defer w.writing.Add(-1)
	n, err := w.out.Write(p)
	w.calls.wrote(p)
	return n, err
}

// Close does not close the host's stdout: the process may still log.
func (w *answerWriter) Close() error { return nil }

// sdkAnswerPrefix starts every answer the SDK writes: its encoder writes
// jsonrpc, then id, then result or error (a request of its own has method
// after the id instead).
var sdkAnswerPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// answeredIDs calls fn with the id of each answer in msg, one message as
// the SDK writes it, or a batch of them.
func answeredIDs(msg []byte, fn func(jsonrpc.ID)) {
	msg = bytes.TrimSpace(msg)
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(msg, &batch) == nil {
			for _, m := range batch {
				answeredIDs(m, fn)
			}
		}
		return
	}
	if id, ok := answerID(msg); ok {
		fn(id)
	}
}

// answerID returns the id msg answers, if it is an answer. It reads only
// the prefix of the SDK's layout, since an answer may be a file of
// megabytes, and decodes a message laid out otherwise whole.
func answerID(msg []byte) (jsonrpc.ID, bool) {
	if rest, ok := bytes.CutPrefix(msg, sdkAnswerPrefix); ok {
		dec := json.NewDecoder(bytes.NewReader(rest))
		var v any
		if dec.Decode(&v) == nil {
			after := rest[dec.InputOffset():]
			switch {
			case bytes.HasPrefix(after, []byte(`,"result":`)), bytes.HasPrefix(after, []byte(`,"error":`)):
				id, err := jsonrpc.MakeID(v)
				return id, err == nil && id.IsValid()
			case bytes.HasPrefix(after, []byte(`,"method":`)):
				return jsonrpc.ID{}, false // a request of the server's own
			}
		}
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if resp, ok := m.(*jsonrpc.Response); err == nil && ok {
		return resp.ID, true
	}
	return jsonrpc.ID{}, false
}

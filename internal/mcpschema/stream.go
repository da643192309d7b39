package mcpschema

import (
	"bytes"
	"encoding/json"
	"sync"
)

// A Stream validates what one side of a connection receives. It remembers
// the method of each request the other side sent (Sent), so that a result
// is checked as the result of that method, and it follows the revision an
// initialize result negotiates. It is safe for concurrent use.
type Stream struct {
	mu          sync.Mutex
	schema      *Schema
	unsupported string             // a negotiated revision without a schema
	pending     map[string]request // by request id, as JSON text
}

// request is what a Stream keeps of a request it saw sent.
type request struct{ method, uri string }

// NewStream returns a stream validating against revision rev, the one the
// client asks for (an initialize result may change it).
func NewStream(rev string) (*Stream, error) {
	s, err := For(rev)
	if err != nil {
		return nil, err
	}
	return &Stream{schema: s, pending: map[string]request{}}, nil
}

// Revision returns the revision messages are validated against.
func (st *Stream) Revision() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.schema == nil {
		return st.unsupported
	}
	return st.schema.revision
}

// Unsupported returns the revision the server negotiated if this package
// has no schema for it (messages are then not validated), or "".
func (st *Stream) Unsupported() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.unsupported
}

// envelope is what a Stream reads of a message to route it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params struct {
		URI string `json:"uri"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

// Sent records a message (or a batch) sent to the peer.
func (st *Stream) Sent(msg []byte) {
	msg = bytes.TrimSpace(msg)
	var batch []envelope
	if len(msg) > 0 && msg[0] == '[' {
		if json.Unmarshal(msg, &batch) != nil {
			return
		}
	} else {
		var e envelope
		if json.Unmarshal(msg, &e) != nil {
			return
		}
		batch = []envelope{e}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range batch {
		if e.Method != nil && len(e.ID) > 0 && string(e.ID) != "null" {
			st.pending[idKey(e.ID)] = request{*e.Method, e.Params.URI}
		}
	}
}

// Received validates a message received from the peer and returns what
// its revision's schema refuses in it.
func (st *Stream) Received(msg []byte) []Violation {
	var e envelope
	_ = json.Unmarshal(msg, &e) // a message that is not an object is Validate's to report
	st.mu.Lock()
	var req request
	if e.Method == nil && len(e.ID) > 0 {
		key := idKey(e.ID)
		req = st.pending[key]
		delete(st.pending, key)
	}
	method := req.method
	if method == "initialize" && e.Result != nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(e.Result, &r) == nil && r.ProtocolVersion != "" &&
			(st.schema == nil || r.ProtocolVersion != st.schema.revision) {
			if s, err := For(r.ProtocolVersion); err == nil {
				st.schema, st.unsupported = s, ""
			} else {
				st.schema, st.unsupported = nil, r.ProtocolVersion
			}
		}
	}
	s := st.schema
	st.mu.Unlock()
	if s == nil {
		return nil
	}
	vs := s.Validate(msg, method)
	for i := range vs {
		vs[i].URI = req.uri
	}
	return vs
}

// Skipped records a message received from the peer that the caller does
// not validate (one too large to, say), so that the request it answers is
// not left pending.
func (st *Stream) Skipped(msg []byte) {
	var e envelope
	if json.Unmarshal(msg, &e) != nil || e.Method != nil || len(e.ID) == 0 {
		return
	}
	st.mu.Lock()
	delete(st.pending, idKey(e.ID))
	st.mu.Unlock()
}

// idKey is a request id as a map key: its compact JSON text, so that 1 and
// "1" stay apart.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

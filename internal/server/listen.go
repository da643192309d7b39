package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Listen streams (subscriptions/listen, 2026-07-28) are most of what a
// fleet of agents holds open: one per agent, idle for minutes. Served by
// the SDK, each costs a session, four goroutines and their buffers (about
// 80 KiB resident); the HTTP front end serves the plain ones itself and
// parks them with the HTTP layer (httpserve), which holds the connection
// without a goroutine waiting on it: a few KiB each. The events are the
// SDK's, byte for byte: the acknowledgement first, then each list-changed
// notification the SDK would send the stream, heard on one session of the
// server's own (see listenHub).

// methodListen is the per-request protocol's subscription stream.
const methodListen = "subscriptions/listen"

// eventStreamParker is what an HTTP response writer offers when its
// connection can carry an event stream without the handler
// (httpserve.StreamParker): it writes the status, the header set so far
// and first, then holds the stream; send queues an event without
// blocking, false once the stream ended; ended is called once when it
// ends. ok is false when it wrote nothing and holds nothing: the handler
// serves the stream itself.
type eventStreamParker interface {
	ParkEventStream(first []byte, ended func()) (send func(event []byte) bool, ok bool)
}

// parkerOf finds the parker under w, through the Unwrap chain of the
// writers between them; nil if there is none.
func parkerOf(w http.ResponseWriter) eventStreamParker {
	for w != nil {
		if p, ok := w.(eventStreamParker); ok {
			return p
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// listenRequest is a subscriptions/listen request the front end may serve:
// one JSON-RPC request with exactly jsonrpc, id, method and params; a plain
// id (see plainID); params with the per-request protocol's _meta (see
// newProtocolMeta) and notifications naming only the list-changed kinds,
// as booleans.
type listenRequest struct {
	id                        []byte
	tools, prompts, resources bool
}

func parseListenRequest(body []byte) (listenRequest, bool) {
	var req listenRequest
	var top map[string]json.RawMessage
	if !utf8.Valid(body) || json.Unmarshal(body, &top) != nil || len(top) != 4 {
		return req, false
	}
	var method string
	if string(top["jsonrpc"]) != `"2.0"` || !plainID(top["id"]) ||
		json.Unmarshal(top["method"], &method) != nil || method != methodListen {
		return req, false
	}
	req.id = top["id"]
	var params map[string]json.RawMessage
	if !bytes.HasPrefix(top["params"], []byte("{")) || json.Unmarshal(top["params"], &params) != nil || len(params) != 2 || !cleanParams(top["params"]) {
		return req, false
	}
	var meta map[string]json.RawMessage
	if !bytes.HasPrefix(params["_meta"], []byte("{")) || json.Unmarshal(params["_meta"], &meta) != nil || !newProtocolMeta(meta) {
		return req, false
	}
	var kinds map[string]json.RawMessage
	if !bytes.HasPrefix(params["notifications"], []byte("{")) || json.Unmarshal(params["notifications"], &kinds) != nil {
		return req, false
	}
	for k, v := range kinds {
		var on bool
		if json.Unmarshal(v, &on) != nil {
			return req, false
		}
		switch k {
		case "toolsListChanged":
			req.tools = on
		case "promptsListChanged":
			req.prompts = on
		case "resourcesListChanged":
			req.resources = on
		default:
			return req, false // resource subscriptions, or something new: the SDK's
		}
	}
	return req, req.tools || req.prompts || req.resources
}

// plainListen reports whether r passes, as the SDK would pass it, every
// check the SDK makes of a listen request before reading its body.
func (f *httpFront) plainListen(r *http.Request) bool {
	h := r.Header
	return r.Method == http.MethodPost && r.ContentLength <= frontBodyBytes &&
		len(h.Values("Mcp-Method")) == 1 && h.Get("Mcp-Method") == methodListen &&
		len(h.Values("Mcp-Protocol-Version")) == 1 && h.Get("Mcp-Protocol-Version") == revision20260728 &&
		len(h.Values("Content-Type")) == 1 && h.Get("Content-Type") == "application/json" &&
		plainAccept(h.Values("Accept")) &&
		len(h.Values("Last-Event-ID")) == 0 && len(h.Values("Mcp-Session-Id")) == 0
}

// serveListen parks a plain listen request's stream, and reports whether
// it did; if not, r is as it came (its body put back) for the SDK.
func (f *httpFront) serveListen(w http.ResponseWriter, r *http.Request) bool {
	if f.s.attached || !f.plainListen(r) {
		return false // an attached server's capabilities are its caller's
	}
	parker := parkerOf(w)
	if parker == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, frontBodyBytes+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil || len(body) > frontBodyBytes {
		return false
	}
	req, ok := parseListenRequest(body)
	if !ok {
		return false
	}
	// The server declares every list as changing (capabilities), so the
	// subscriptions granted are those asked for.
	l := &listener{id: req.id, tools: req.tools, prompts: req.prompts, resources: req.resources}
	hub := f.s.listenHub(f.ms)
	if err := hub.add(l); err != nil {
		return false
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	send, ok := parker.ParkEventStream(l.ack(), func() { hub.remove(l) })
	if !ok {
		hub.remove(l)
		h.Del("Cache-Control")
		h.Del("Content-Type")
		h.Del("Connection")
		return false
	}
	l.attach(send)
	return true
}

// listener is one parked listen stream.
type listener struct {
	id                        []byte
	tools, prompts, resources bool

	mu      sync.Mutex
	send    func([]byte) bool // nil until parked
	pending [][]byte          // events heard before it was
	gone    bool
}

// ack is the stream's first event, the SDK's acknowledgement.
func (l *listener) ack() []byte {
	b := []byte(`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	b = append(b, l.id...)
	b = append(b, `},"notifications":{`...)
	sep := ""
	for _, k := range []struct {
		on   bool
		name string
	}{{l.tools, "toolsListChanged"}, {l.prompts, "promptsListChanged"}, {l.resources, "resourcesListChanged"}} {
		if k.on {
			b = append(b, sep+`"`+k.name+`":true`...)
			sep = ","
		}
	}
	return append(b, "}}}\n\n"...)
}

// attach sets the stream's send, and sends what was heard before.
func (l *listener) attach(send func([]byte) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.send = send
	for _, e := range l.pending {
		send(e)
	}
	l.pending = nil
}

// notify sends the stream a list-changed notification of method, if it
// subscribed to it.
func (l *listener) notify(method string) {
	switch method {
	case "notifications/tools/list_changed":
		if !l.tools {
			return
		}
	case "notifications/prompts/list_changed":
		if !l.prompts {
			return
		}
	case "notifications/resources/list_changed":
		if !l.resources {
			return
		}
	default:
		return
	}
	e := []byte(`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	e = append(e, l.id...)
	e = append(e, "}}}\n\n"...)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.gone:
	case l.send == nil:
		l.pending = append(l.pending, e)
	default:
		l.send(e)
	}
}

// listenHub is the parked listen streams of one server, and the session
// through which it hears what to tell them: a session of the 2025-11-25
// protocol, to which the SDK sends every list change (the streams of
// 2026-07-28 hear only those they subscribed to, which notify filters). The
// session is open while a stream is; it is made and closed by add and
// remove, so it has no goroutine of its own to stop.
type listenHub struct {
	ms *mcp.Server

	mu      sync.Mutex
	streams map[*listener]struct{}
	session *mcp.ClientSession
}

// listenHub returns the server's hub of parked listen streams.
func (s *server) listenHub(ms *mcp.Server) *listenHub {
	s.listenOnce.Do(func() { s.listen = &listenHub{ms: ms, streams: map[*listener]struct{}{}} })
	return s.listen
}

// add registers l, opening the hub's session if it is the first.
func (h *listenHub) add(l *listener) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		cs, err := h.connect()
		if err != nil {
			return err
		}
		h.session = cs
	}
	h.streams[l] = struct{}{}
	return nil
}

// remove forgets l, closing the hub's session after the last stream.
func (h *listenHub) remove(l *listener) {
	l.mu.Lock()
	l.gone, l.pending = true, nil
	l.mu.Unlock()
	h.mu.Lock()
	delete(h.streams, l)
	var idle *mcp.ClientSession
	if len(h.streams) == 0 {
		idle, h.session = h.session, nil
	}
	h.mu.Unlock()
	if idle != nil {
		// Outside the lock: closing waits for a notification being
		// handled, which takes it.
		idle.Close()
	}
}

// connect opens the session the hub hears list changes on.
func (h *listenHub) connect() (*mcp.ClientSession, error) {
	fan := func(method string) {
		h.mu.Lock()
		ls := make([]*listener, 0, len(h.streams))
		for l := range h.streams {
			ls = append(ls, l)
		}
		h.mu.Unlock()
		for _, l := range ls {
			l.notify(method)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "listen-hub", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			fan("notifications/tools/list_changed")
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			fan("notifications/prompts/list_changed")
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			fan("notifications/resources/list_changed")
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := h.ms.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, err
	}
	return cs, nil
}

package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// HTTPHandler returns next, the SDK's stateless handler with JSON
// responses for srv.MCP(), behind a front end that answers plain
// skills/list, skills/get and resources/read POSTs itself (RunStdio does
// the same over stdio for the first two).
//
// Over stateless HTTP the SDK builds a session per request, decodes the
// body twice, checks the headers and _meta of the per-request protocol,
// and encodes the answer twice: about 300 µs of CPU for a skills/get whose
// entry is already known. The front end takes a request only when every
// check the SDK makes is one it makes the same way and passes (method,
// media types, the protocol header, Mcp-Method, the
// _meta of 2026-07-28, an exact request shape; see fastRequest), and writes
// what the SDK would write: status, Content-Type, Cache-Control and body.
// Anything else, errors included, goes to next with its body intact.
//
// The front end knows no SDK handler option but Stateless and JSONResponse,
// which next must set: a handler given CrossOriginProtection, a
// MaxRequestBodyBytes under 64 KiB, sessions or event-stream answers must
// not be put behind it. It makes no check of the Host header either, so
// next must set DisableLocalhostProtection and the whole stand behind a
// Host guard (httpserve.Handler's, which refuses every Host the SDK's
// localhost protection would, and more): the SDK's check and the front
// end's copy of it were a second and a third loopback test.
//
// On an attached server (Attach) the front end answers as the SDK server
// the catalog is attached to would, provided that server has no receiving
// middleware, no SetCacheable and no protocol-version list of the caller's
// (skills.Handler's own servers); without Options.Implementation it leaves
// 2026-07-28 requests to next.
func (srv *Server) HTTPHandler(next http.Handler) http.Handler {
	f := &httpFront{s: srv.s, ms: srv.ms, next: next}
	if impl := srv.s.impl; impl != nil {
		f.serverInfo, f.serverInfoEscaped = serverInfoMeta(impl, false), serverInfoMeta(impl, true)
	}
	return f
}

type httpFront struct {
	s    *server
	ms   *mcp.Server
	next http.Handler
	// serverInfo is the _meta the SDK adds to results of 2026-07-28;
	// serverInfoEscaped is the same with HTML escaping, as the SDK's
	// ReadResourceResult encodes it.
	serverInfo, serverInfoEscaped []byte
}

// frontBodyBytes is the largest request body the front end reads; a larger
// one goes to the SDK.
const frontBodyBytes = 64 << 10

// Protocol revisions, as the SDK spells them.
const (
	revision20250326 = "2025-03-26"
	revision20260728 = "2026-07-28"
)

// frontRevisions are the Mcp-Protocol-Version headers the front end
// serves; "" is a request without one, which the SDK serves as 2025-03-26.
var frontRevisions = map[string]bool{"": true, "2025-06-18": true, "2025-11-25": true, revision20260728: true}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.s.sawRequest()
	if !f.s.opts.NoFastPath && f.serveListen(w, r) {
		return
	}
	if f.s.opts.NoFastPath || !f.plainPost(r) {
		f.sdk(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, frontBodyBytes+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil || len(body) > frontBodyBytes {
		f.sdk(w, r)
		return
	}
	buf := answerBufs.Get().(*[]byte)
	out, release, ok, waited := f.answer(r, body, (*buf)[:0])
	if ok {
		h := w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(out) // a Writer never keeps what it is given
		release()
	}
	switch {
	case !ok: // *buf is as it was
		answerBufs.Put(buf)
		if waited {
			r = r.WithContext(context.WithValue(r.Context(), answerWaitedKey{}, true))
		}
		f.sdk(w, r)
	case cap(out) <= maxPooledAnswer:
		*buf = out[:0]
		answerBufs.Put(buf)
	}
}

// sdk hands r to the SDK; what its answer held of the answer budget is
// given back once the answer is written.
func (f *httpFront) sdk(w http.ResponseWriter, r *http.Request) {
	r, t := withAnswerTicket(r)
	defer t.done()
	f.next.ServeHTTP(w, r)
}

// answerBufs holds the buffers answers are built in: at a thousand
// catalogs in one process, every byte of garbage a request leaves brings
// the next collection of their heap closer.
var answerBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

// maxPooledAnswer is the largest buffer put back into answerBufs: a long
// skills/list page's is left to the collector.
const maxPooledAnswer = 64 << 10

// plainPost reports whether r passes, as the SDK would pass it, every check
// the SDK makes before reading the body.
func (f *httpFront) plainPost(r *http.Request) bool {
	if r.Method != http.MethodPost || r.ContentLength > frontBodyBytes {
		return false
	}
	h := r.Header
	if m := h.Get("Mcp-Method"); m != "" && m != skillsext.MethodList && m != skillsext.MethodGet && m != methodReadResource {
		return false // another method: not worth reading the body for
	}
	if len(h.Values("Content-Type")) != 1 || h.Get("Content-Type") != "application/json" ||
		!plainAccept(h.Values("Accept")) ||
		len(h.Values("Last-Event-ID")) > 0 || len(h.Values("Mcp-Session-Id")) > 0 ||
		len(h.Values("Mcp-Protocol-Version")) > 1 || !frontRevisions[h.Get("Mcp-Protocol-Version")] {
		return false
	}
	select {
	case <-f.s.ready:
		return true
	default:
		return false // the SDK holds it until the catalog is in
	}
}

// plainAccept reports whether the Accept header lists exactly the two
// media types a streamable HTTP client must accept.
func plainAccept(values []string) bool {
	var json, stream int
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			switch strings.TrimSpace(t) {
			case "application/json":
				json++
			case "text/event-stream":
				stream++
			default:
				return false
			}
		}
	}
	return json == 1 && stream == 1
}

// answer returns the response body to a request the front end serves,
// and the release of what it holds of the answer budget (to call once
// the body is written); or ok false, for the SDK to answer, with waited
// true if the request waited for room in the budget and found none.
func (f *httpFront) answer(r *http.Request, body, b []byte) (out []byte, release func(), ok, waited bool) {
	nothing := func() {}
	req, ok := parseFastRequest(body)
	if !ok {
		return nil, nothing, false, false
	}
	header := r.Header.Get("Mcp-Protocol-Version")
	version, meta := header, []byte(nil)
	if header == "" {
		version = revision20250326
	}
	if header == revision20260728 {
		if f.serverInfo == nil {
			return nil, nothing, false, false // an attached server's identity is unknown
		}
		// The per-request protocol: the SDK requires Mcp-Method (and for a
		// read, Mcp-Name), a matching protocolVersion and client
		// capabilities in _meta, and adds its server info to the result's
		// _meta.
		if r.Header.Get("Mcp-Method") != req.method || len(r.Header.Values("Mcp-Method")) != 1 || !newProtocolMeta(req.meta) {
			return nil, nothing, false, false
		}
		if req.method == methodReadResource && (r.Header.Get("Mcp-Name") != req.arg || len(r.Header.Values("Mcp-Name")) != 1) {
			return nil, nothing, false, false
		}
		meta = f.serverInfo
	} else if req.protocolMeta {
		return nil, nothing, false, false
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, req.id...)
	b = append(b, `,"result":`...)
	release = nothing
	if req.method == methodReadResource {
		if meta != nil {
			meta = f.serverInfoEscaped
		}
		b, release, ok, waited = f.s.appendFastRead(r.Context(), b, req.arg, meta)
	} else {
		b, ok = f.s.appendFastResult(b, req, version, meta)
	}
	if !ok {
		return nil, nothing, false, waited
	}
	return append(b, '}'), release, true, false
}

// appendFastRead appends the result of resources/read of uri as the SDK
// encodes a ReadResourceResult: with encoding/json's defaults (HTML
// characters escaped), the cache fields first, and resultType last on the
// per-request protocol (meta set). It reports false if uri is not a file
// the catalog serves or cannot be read, or the answer budget has no room
// for it (then waited is true), which the SDK then answers; else the
// release of what the answer holds of the budget, to call once it is
// written.
func (s *server) appendFastRead(ctx context.Context, b []byte, uri string, meta []byte) (_ []byte, release func(), ok, waited bool) {
	if !plainURI(uri) {
		return b, nil, false, false
	}
	f, ok := s.store.Snapshot().File(uri)
	if !ok {
		return b, nil, false, false
	}
	hold, err := s.answers.hold(ctx, f.Size)
	if err != nil {
		return b, nil, false, err == errBusy
	}
	data, err := f.ReadFile()
	if err != nil {
		hold.release()
		return b, nil, false, false
	}
	b = append(b, '{')
	if meta != nil {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	b = append(b, `"ttlMs":`...)
	b = strconv.AppendInt(b, int64(s.ttlMs()), 10)
	b = append(b, `,"cacheScope":"`...)
	b = append(b, s.cacheScope()...)
	b = append(b, `","contents":[{"uri":`...)
	b = appendEscaped(b, uri)
	if f.MIMEType != "" {
		b = append(b, `,"mimeType":`...)
		b = appendEscaped(b, f.MIMEType)
	}
	// An empty file is "text":"" or "blob":"", never neither (see
	// readResourceResult).
	if f.Text {
		b = append(b, `,"text":`...)
		b = appendJSONString(b, data)
	} else {
		b = append(b, `,"blob":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, '"')
	}
	b = append(b, "}]"...)
	if meta != nil {
		b = append(b, `,"resultType":"complete"`...)
	}
	// Given back once the front end has written the answer.
	return append(b, '}'), hold.release, true, false
}

// plainURI reports whether uri holds only characters that the SDK's
// template match takes as they are: unreserved and sub-delimiter ASCII,
// ':', '@', '/' and well-formed percent escapes. (A file whose name needs
// more, a space for one, is listed by the catalog under a URI the SDK
// does not match; the front end leaves its reads to the SDK's answer.)
func plainURI(uri string) bool {
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0:
		case c == '%' && i+2 < len(uri) && isHex(uri[i+1]) && isHex(uri[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// appendEscaped appends s as encoding/json encodes a string by default.
func appendEscaped(b []byte, s string) []byte {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always encodes
	}
	return append(b, data...)
}

// newProtocolMeta reports whether _meta carries what the SDK requires of a
// 2026-07-28 request, in a form it decodes: protocolVersion 2026-07-28,
// client capabilities, and client info if any.
func newProtocolMeta(meta map[string]json.RawMessage) bool {
	var version string
	if json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &version) != nil || version != revision20260728 {
		return false
	}
	caps, ok := meta["io.modelcontextprotocol/clientCapabilities"]
	var c struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if !ok || !bytes.HasPrefix(caps, []byte("{")) || json.Unmarshal(caps, &c) != nil {
		return false
	}
	if info, ok := meta["io.modelcontextprotocol/clientInfo"]; ok {
		var impl mcp.Implementation
		if !bytes.HasPrefix(info, []byte("{")) || json.Unmarshal(info, &impl) != nil {
			return false
		}
	}
	return true
}

// serverInfoMeta encodes the _meta the SDK sets on every result of the
// per-request protocol, as the SDK encodes it: without HTML escaping, or
// with it inside results that encode themselves with json.Marshal.
func serverInfoMeta(impl *mcp.Implementation, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(map[string]any{"io.modelcontextprotocol/serverInfo": impl}); err != nil {
		panic(err) // an Implementation always encodes
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

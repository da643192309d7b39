package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// RunStdio serves one session over r and w, the host's stdin and stdout,
// until r ends or ctx is cancelled, as mcp.Server.Run does with a
// StdioTransport.
//
// skills/list and skills/get are most of what hosts send and most of what
// the server writes: a complete listing of 5,000 skills is 4.7 MB, which
// the SDK would encode twice more after the page cache (once to a raw
// result, once into the response frame). A front end reads each line
// first and answers these two methods itself, from the encoded pages and
// entries, when the request is of the plain kind the SDK would answer with
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
	if !bytes.Contains(line, []byte(`"skills/`)) || f.ss.InitializeParams() == nil {
		return false
	}
	select {
	case <-f.s.ready:
	default:
		return false // the SDK holds it until the catalog is in
	}
	req, ok := parseFastRequest(line)
	if !ok || req.protocolMeta || req.method == methodReadResource {
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

// methodReadResource is the base protocol's read; only the HTTP front end
// answers it.
const methodReadResource = "resources/read"

// fastRequest is a skills/list, skills/get or resources/read request a
// front end may answer: one JSON-RPC request object with exactly the members jsonrpc
// "2.0", id, method and (optionally) params; a plain id (an integer, or a
// string of printable ASCII without quotes or backslashes) that the SDK
// would echo byte for byte; params with only cursor (list) or uri (get, read) as
// a string, and _meta, an object. Keys are matched exactly, unknown ones and
// invalid UTF-8 refused, so no case-insensitive or lenient decoding could
// read it differently.
type fastRequest struct {
	id     []byte
	method string
	arg    string // cursor or uri
	// meta is params._meta; protocolMeta reports whether it holds keys of
	// the per-request protocol (io.modelcontextprotocol/...).
	meta         map[string]json.RawMessage
	protocolMeta bool
}

func parseFastRequest(line []byte) (fastRequest, bool) {
	var top map[string]json.RawMessage
	if !utf8.Valid(line) || json.Unmarshal(line, &top) != nil {
		return fastRequest{}, false // decoders differ on invalid UTF-8
	}
	var req fastRequest
	for k, v := range top {
		switch k {
		case "jsonrpc":
			if string(v) != `"2.0"` {
				return req, false
			}
		case "id":
			if !plainID(v) {
				return req, false
			}
			req.id = v
		case "method":
			if json.Unmarshal(v, &req.method) != nil {
				return req, false
			}
		case "params":
		default:
			return req, false
		}
	}
	if _, ok := top["jsonrpc"]; !ok || req.id == nil {
		return req, false
	}
	var argName string
	switch req.method {
	case skillsext.MethodList:
		argName = "cursor"
	case skillsext.MethodGet, methodReadResource:
		argName = "uri"
	default:
		return req, false
	}
	params, ok := top["params"]
	if !ok {
		return req, req.method == skillsext.MethodList
	}
	var members map[string]json.RawMessage
	if bytes.Equal(params, []byte("null")) || json.Unmarshal(params, &members) != nil {
		return req, false
	}
	for k, v := range members {
		switch k {
		case argName:
			if json.Unmarshal(v, &req.arg) != nil {
				return req, false
			}
		case "_meta":
			if bytes.Equal(v, []byte("null")) || json.Unmarshal(v, &req.meta) != nil {
				return req, false
			}
			for mk := range req.meta {
				req.protocolMeta = req.protocolMeta || strings.HasPrefix(mk, "io.modelcontextprotocol/")
			}
		default:
			return req, false
		}
	}
	return req, true
}

// plainID reports whether id is an integer in canonical form or a string of
// printable ASCII without quotes or backslashes: ids the SDK writes back as
// they came.
func plainID(id []byte) bool {
	if len(id) >= 2 && id[0] == '"' && id[len(id)-1] == '"' {
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(id) && n > -1<<53 && n < 1<<53
}

// appendFastResult appends the result of req as the SDK would encode it,
// or reports false if the request fails (the SDK then answers with the
// error). meta, if not empty, is the result's _meta, encoded.
func (s *server) appendFastResult(b []byte, req fastRequest, version string, meta []byte) ([]byte, bool) {
	b = append(b, '{')
	if len(meta) > 0 {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	switch req.method {
	case skillsext.MethodList:
		key, err := skillsext.DecodeCursor(req.arg)
		if err != nil {
			return b, false
		}
		page := s.pages.page(s.store.Snapshot(), key)
		b = append(b, `"resultType":"complete","skills":`...)
		b = append(b, page.skills...)
		if page.next != "" {
			b = append(b, `,"nextCursor":"`...)
			b = append(b, page.next...)
			b = append(b, '"')
		}
	case skillsext.MethodGet:
		sk, err := s.lookupSkill(req.arg)
		if err != nil {
			return b, false
		}
		b = append(b, `"resultType":"complete","skill":`...)
		b = sk.AppendEntry(b)
	}
	if skillsext.UsesCacheFields(version) {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, int64(s.ttlMs()), 10)
		b = append(b, `,"cacheScope":"public"`...)
	}
	return append(b, '}'), true
}

// Package pulltest provides a skills server for tests whose every answer
// the test controls: what skills/list lists, what resources/read returns,
// and when the connection stalls or drops. It serves over any go-sdk
// transport and over Streamable HTTP, and records what it was asked, so a
// test can check that a client read nothing it should not have.
//
// It knows nothing about catalogs: entries are JSON a test writes (or
// derives from [Skill] and then breaks), which is the point, since the
// clients under test must survive servers that lie.
package pulltest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Fake is a skills server. Set its fields before calling Server or
// Handler; its methods are safe for concurrent use.
type Fake struct {
	// NoExtension leaves the skills extension undeclared.
	NoExtension bool
	// DirectoryRead declares directoryRead and answers
	// resources/directory/read from Files.
	DirectoryRead bool
	// Entries are the skills/list entries, marshalled as they are and
	// served on one page, unless Pages is set.
	Entries []any
	// Pages, if set, answers skills/list: it returns the whole result for a
	// cursor, as JSON.
	Pages func(cursor string) string
	// Files are served by resources/read, by URI: as text when valid UTF-8
	// and the URI is not in Blobs, else as a blob.
	Files map[string][]byte
	// Blobs lists URIs always served as blobs.
	Blobs map[string]bool
	// OnRead, if set, runs before a read is answered. A non-nil result
	// replaces the answer; an error fails the read.
	OnRead func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	// DropOn names a URI whose read drops the connection without an answer.
	DropOn string

	mu      sync.Mutex
	methods []string
	reads   []string
	conns   []mcp.Connection
	stop    chan struct{}
	stopped bool
}

// Done is closed by Stop. A slow OnRead waits on it, so that a test can
// end the wait once its client has given up.
func (f *Fake) Done() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop == nil {
		f.stop = make(chan struct{})
	}
	return f.stop
}

// Stop closes Done.
func (f *Fake) Stop() {
	f.Done()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		close(f.stop)
	}
}

// Connect runs the fake on t, as Server().Connect would, but keeps hold of
// the connection so that DropOn can cut it.
func (f *Fake) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return f.Server().Connect(ctx, &dropTransport{t: t, f: f}, nil)
}

type dropTransport struct {
	t mcp.Transport
	f *Fake
}

func (d *dropTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.t.Connect(ctx)
	if err == nil {
		d.f.mu.Lock()
		d.f.conns = append(d.f.conns, c)
		d.f.mu.Unlock()
	}
	return c, err
}

// drop closes every connection made through Connect.
func (f *Fake) drop() {
	f.mu.Lock()
	conns := f.conns
	f.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// Methods returns every method received, in order.
func (f *Fake) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.methods)
}

// Reads returns the URI of every resources/read received, in order.
func (f *Fake) Reads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reads)
}

// raw is a result sent exactly as written.
type raw struct {
	mcp.ResultBase
	b []byte
}

func (r *raw) MarshalJSON() ([]byte, error) { return r.b, nil }

// Server returns an MCP server with the fake's behaviour.
func (f *Fake) Server() *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}
	if !f.NoExtension {
		settings := map[string]any{}
		if f.DirectoryRead {
			settings["directoryRead"] = true
		}
		caps.AddExtension(skillsext.ExtensionID, settings)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			f.mu.Lock()
			f.methods = append(f.methods, method)
			f.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	must(mcp.AddReceivingCustomMethod(s, skillsext.MethodList, func(_ context.Context, _ *mcp.ServerSession, p *skillsext.ListSkillsParams) (*raw, error) {
		if f.Pages != nil {
			return &raw{b: []byte(f.Pages(p.Cursor))}, nil
		}
		b, err := json.Marshal(map[string]any{"resultType": "complete", "skills": f.entries(), "ttlMs": 0, "cacheScope": "private"})
		return &raw{b: b}, err
	}))
	must(mcp.AddReceivingCustomMethod(s, skillsext.MethodGet, func(_ context.Context, _ *mcp.ServerSession, p *skillsext.GetSkillParams) (*raw, error) {
		for _, e := range f.Entries {
			if m, ok := e.(map[string]any); ok && m["uri"] == p.URI {
				b, err := json.Marshal(map[string]any{"resultType": "complete", "skill": e, "ttlMs": 0, "cacheScope": "private"})
				return &raw{b: b}, err
			}
		}
		return nil, skillsext.NoSkill(p.URI)
	}))
	if f.DirectoryRead {
		must(mcp.AddReceivingCustomMethod(s, skillsext.MethodReadDirectory, f.readDirectory))
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "skill://{+path}", Name: "file"}, f.read)
	return s
}

func (f *Fake) entries() []any {
	if f.Entries == nil {
		return []any{}
	}
	return f.Entries
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (f *Fake) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	f.mu.Lock()
	f.reads = append(f.reads, uri)
	f.mu.Unlock()
	if uri == f.DropOn {
		f.drop()
		return nil, skillsext.Internal("dropped")
	}
	if f.OnRead != nil {
		res, err := f.OnRead(ctx, uri)
		if res != nil || err != nil {
			return res, err
		}
	}
	data, ok := f.Files[uri]
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return Contents(uri, data, f.Blobs[uri]), nil
}

// Contents is the resources/read result for data at uri.
func Contents(uri string, data []byte, blob bool) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: "text/markdown"}
	if blob || !isText(data) {
		c.MIMEType = "application/octet-stream"
		c.Blob = data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	} else {
		c.Text = string(data)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

func isText(b []byte) bool {
	return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) && !bytes.ContainsRune(b, 0)
}

// readDirectory lists the direct children of uri among Files.
func (f *Fake) readDirectory(_ context.Context, _ *mcp.ServerSession, p *skillsext.ReadDirectoryParams) (*skillsext.ReadDirectoryResult, error) {
	prefix := p.URI + "/"
	seen := map[string]bool{}
	var out []*mcp.Resource
	for uri := range f.Files {
		rest, ok := strings.CutPrefix(uri, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		r := &mcp.Resource{URI: prefix + name, Name: name}
		if isDir {
			r.MIMEType = skillsext.DirectoryMIMEType
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, skillsext.InvalidParams(p.URI, "no directory %s", p.URI)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return &skillsext.ReadDirectoryResult{ResultType: "complete", Resources: out}, nil
}

// Handler serves the fake over Streamable HTTP: stateless (protocol
// 2026-07-28) or stateful (which negotiates 2025-11-25). A read of DropOn
// closes the TCP connection without an answer.
func (f *Fake) Handler(stateless bool) http.Handler {
	srv := f.Server()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.DropOn != "" && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"resources/read"`)) && bytes.Contains(body, []byte(`"`+f.DropOn+`"`)) {
				f.mu.Lock()
				f.reads = append(f.reads, f.DropOn)
				f.mu.Unlock()
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
						return
					}
				}
				panic(http.ErrAbortHandler)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// SlowDrip wraps h, a Streamable HTTP handler such as [Fake.Handler]: it
// answers every resources/read itself with a valid result for the URI
// asked, one byte at a time with pause between bytes, so that an answer
// takes minutes while the connection never looks idle. It stops dripping
// when the request's context or stop ends.
func SlowDrip(h http.Handler, pause time.Duration, stop <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != "resources/read" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":%q,"mimeType":"text/markdown","text":%q}]}}`, req.ID, req.Params.URI, strings.Repeat(" ", 4096))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for i := range len(answer) {
			if _, err := io.WriteString(w, answer[i:i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(pause):
			case <-r.Context().Done():
				return
			case <-stop:
				return
			}
		}
	})
}

// Digest returns the sha256: digest of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Skill returns a consistent entry for the skill at path (a skill:// path
// ending in the name) and the files to serve for it. skillMD is the whole
// SKILL.md; files maps other relative paths to their content. The entry is
// a map, so that a test can break any part of it; its frontmatter is
// {"name": <last segment>, "description": desc} and must match skillMD.
func Skill(path, desc, skillMD string, files map[string]string) (map[string]any, map[string][]byte) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	uri := skillsext.SkillURI(path)
	served := map[string][]byte{uri: []byte(skillMD)}
	res := []any{resource(uri, []byte(skillMD))}
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		u := skillsext.FileURI(path, rel)
		served[u] = []byte(files[rel])
		res = append(res, resource(u, []byte(files[rel])))
	}
	entry := map[string]any{
		"uri":         uri,
		"frontmatter": map[string]any{"name": name, "description": desc},
		"resources":   res,
	}
	return entry, served
}

func resource(uri string, data []byte) map[string]any {
	return map[string]any{"uri": uri, "digest": Digest(data), "size": len(data)}
}

package skills

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// handlerPeer is a Handler on one catalog over loopback, counting the
// requests that reach the SDK's handler.
type handlerPeer struct {
	url   string
	inSDK atomic.Int64
}

func startHandlerPeer(t *testing.T, c *Catalog, opts HandlerOptions) *handlerPeer {
	t.Helper()
	opts.Select = func(*http.Request) (*Catalog, error) { return c, nil }
	h, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &handlerPeer{}
	sdk := h.mh
	h.mh = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.inSDK.Add(1)
		sdk.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}

type handlerAnswer struct {
	status                          int
	contentType, cacheControl, body string
}

func (p *handlerPeer) post(t *testing.T, host string, header map[string]string, body string) handlerAnswer {
	t.Helper()
	req, err := http.NewRequest("POST", p.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return handlerAnswer{res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"), string(data)}
}

func handlerLibrary() fstest.MapFS {
	md := func(name string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: Use for " + name + " <work> & \"more\".\n---\n# " + name + "\n\nDo the thing.\n")}
	}
	return fstest.MapFS{
		"a/SKILL.md":               md("a"),
		"a/references/guide.md":    {Data: []byte("A guide with <html> & \"quotes\".\n")},
		"b/SKILL.md":               md("b"),
		"c/nested/d/SKILL.md":      md("d"),
		"e/SKILL.md":               md("e"),
		"e/empty.md":               {Data: nil},
		"e/assets/icon.bin":        {Data: []byte{0, 1, 2, 0xff, 0xfe}},
		"f/SKILL.md":               md("f"),
		"g/SKILL.md":               md("g"),
		"g/references/x y.md":      {Data: []byte("spaced\n")},
		"g/references/ünïcode.md":  {Data: []byte("non-ASCII\n")},
		"h-last/SKILL.md":          md("h-last"),
		"h-last/scripts/run.sh":    {Data: []byte("#!/bin/sh\necho hi\n"), Mode: 0o755},
		"h-last/references/ref.md": {Data: []byte("ref\n")},
	}
}

// TestHandlerFrontMatchesSDK sends every method the front end answers, at
// every revision, with its successes and each kind of error, to a Handler
// with the front end and to one without: status, media type, cache header
// and body are the same, plain requests never reach the SDK, and every
// answer that succeeds is valid for its revision.
func TestHandlerFrontMatchesSDK(t *testing.T) {
	c, err := Open(context.Background(), []Library{{FS: handlerLibrary()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	attach := &AttachOptions{PageSize: 3}
	sdk := startHandlerPeer(t, c, HandlerOptions{Attach: attach, NoFastPath: true})
	front := startHandlerPeer(t, c, HandlerOptions{Attach: attach})
	second := skillsext.EncodeCursor("skill://b/SKILL.md")
	cases := []struct {
		name, method, params string
		fast                 bool // a plain request the front end answers
	}{
		{"list", skillsext.MethodList, ``, true},
		{"list cursor", skillsext.MethodList, `"cursor":"` + second + `"`, true},
		{"list last page", skillsext.MethodList, `"cursor":"` + skillsext.EncodeCursor("skill://f/SKILL.md") + `"`, true},
		{"list bad cursor", skillsext.MethodList, `"cursor":"zzz"`, false},
		{"list cursor not a string", skillsext.MethodList, `"cursor":7`, false},
		{"get", skillsext.MethodGet, `"uri":"skill://a/SKILL.md"`, true},
		{"get nested", skillsext.MethodGet, `"uri":"skill://c/nested/d/SKILL.md"`, true},
		{"get with a script", skillsext.MethodGet, `"uri":"skill://h-last/SKILL.md"`, true},
		{"get unknown", skillsext.MethodGet, `"uri":"skill://nope/SKILL.md"`, false},
		{"get not a SKILL.md", skillsext.MethodGet, `"uri":"skill://a/references/guide.md"`, false},
		{"get invalid URI", skillsext.MethodGet, `"uri":"skill://./a/SKILL.md"`, false},
		{"get control character", skillsext.MethodGet, `"uri":"skill://a\u001b/SKILL.md"`, false},
		{"get without uri", skillsext.MethodGet, ``, false},
		{"read", "resources/read", `"uri":"skill://a/SKILL.md"`, true},
		{"read HTML characters", "resources/read", `"uri":"skill://a/references/guide.md"`, true},
		{"read empty", "resources/read", `"uri":"skill://e/empty.md"`, true},
		{"read binary", "resources/read", `"uri":"skill://e/assets/icon.bin"`, true},
		{"read escaped", "resources/read", `"uri":"skill://g/references/x%20y.md"`, false},
		{"read unknown", "resources/read", `"uri":"skill://e/none.md"`, false},
		{"read a directory", "resources/read", `"uri":"skill://e/assets"`, false},
		{"read without uri", "resources/read", ``, false},
	}
	const newMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	id := 100
	for _, rev := range mcpschema.Revisions() {
		for _, tc := range cases {
			t.Run(rev+"/"+tc.name, func(t *testing.T) {
				id++
				h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": rev}
				params := tc.params
				if rev == "2026-07-28" {
					h["Mcp-Method"] = tc.method
					if _, uri, ok := strings.Cut(tc.params, `"uri":"`); ok && tc.method == "resources/read" {
						h["Mcp-Name"] = strings.TrimSuffix(uri, `"`)
					}
					params = strings.TrimPrefix(params+","+newMeta, ",")
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, tc.method)
				if params != "" {
					body += `,"params":{` + params + `}`
				}
				body += "}"
				want := sdk.post(t, "", h, body)
				before := front.inSDK.Load()
				got := front.post(t, "", h, body)
				if got != want {
					t.Errorf("%s\nfront end: %d %q %q %.300s\n      SDK: %d %q %q %.300s", body,
						got.status, got.contentType, got.cacheControl, got.body, want.status, want.contentType, want.cacheControl, want.body)
				}
				failed := want.status != 200 || strings.Contains(want.body, `"error"`)
				if tc.fast && failed {
					t.Errorf("%s: a request meant to succeed failed: %.300s", body, want.body)
				}
				if tc.fast && front.inSDK.Load() != before {
					t.Errorf("%s: the front end passed a plain request to the SDK", body)
				}
				if !failed {
					st, err := mcpschema.NewStream(rev)
					if err != nil {
						t.Fatal(err)
					}
					st.Sent([]byte(body))
					for _, v := range st.Received([]byte(got.body)) {
						t.Errorf("%s: the answer breaks the %s schema: %s\n%.300s", body, rev, v, got.body)
					}
				}
			})
		}
	}
}

// TestHandlerHostCheck: behind a loopback listener, a Host that is not a
// loopback name is refused on both paths, before any catalog is selected;
// a caller's own HTTP options decide for themselves.
func TestHandlerHostCheck(t *testing.T) {
	c, err := Open(context.Background(), []Library{{FS: handlerLibrary()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
	get := `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`
	for _, opts := range []HandlerOptions{{}, {NoFastPath: true}} {
		p := startHandlerPeer(t, c, opts)
		port := p.url[strings.LastIndex(p.url, ":"):]
		for host, want := range map[string]int{"evil.example": 403, "evil.example" + port: 403, "localhost" + port: 200, "127.0.0.1" + port: 200, "LOCALHOST" + port: 200} {
			got := p.post(t, host, h, get)
			if got.status != want {
				t.Errorf("NoFastPath %v, Host %s: %d %.200s, want %d", opts.NoFastPath, host, got.status, got.body, want)
			}
		}
		if n := p.inSDK.Load(); opts.NoFastPath && n != 3 || !opts.NoFastPath && n != 0 {
			t.Errorf("NoFastPath %v: %d requests reached the SDK", opts.NoFastPath, n)
		}
	}
	own := startHandlerPeer(t, c, HandlerOptions{HTTP: &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}})
	if got := own.post(t, "evil.example", h, get); got.status != 200 || own.inSDK.Load() != 1 {
		t.Errorf("with the caller's options: %d %.200s, %d requests in the SDK; want 200 from the SDK", got.status, got.body, own.inSDK.Load())
	}
}

// TestHandlerCallersServer: the front end never answers for a server the
// caller made, whose middleware must see every request.
func TestHandlerCallersServer(t *testing.T) {
	c, err := Open(context.Background(), []Library{{FS: handlerLibrary()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen atomic.Int64
	p := startHandlerPeer(t, c, HandlerOptions{NewServer: func(*Catalog) *mcp.Server {
		ms := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
		ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == skillsext.MethodGet {
					seen.Add(1)
				}
				return next(ctx, method, req)
			}
		})
		return ms
	}})
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
	got := p.post(t, "", h, `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`)
	if got.status != 200 || !strings.Contains(got.body, `"result"`) || seen.Load() != 1 {
		t.Errorf("%d %.200s; the caller's middleware saw %d skills/get, want 1", got.status, got.body, seen.Load())
	}
}

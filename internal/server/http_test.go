package server

import (
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// httpPeer is an HTTP server on the front library, with or without the
// front end, counting the skills/* requests that reach the SDK.
type httpPeer struct {
	url   string
	inSDK atomic.Int64
}

func startHTTPPeer(t *testing.T, store *catalog.Store, front bool) *httpPeer {
	return startHTTPPeerAs(t, store, front, peerNew)
}

// How a peer's server is made: NewServer, or Attach to a bare SDK server
// (as skills.Handler makes its own) that is named in Options or not.
const (
	peerNew       = "new"
	peerAttached  = "attached"
	peerAnonymous = "attached without Implementation"
)

// peerKinds are the kinds of server the front end is checked on.
var peerKinds = []string{peerNew, peerAttached, peerAnonymous}

// frontFast reports whether the front end answers a plain request of
// revision rev on a server of kind itself.
func frontFast(kind, rev string) bool { return kind != peerAnonymous || rev != revision20260728 }

func startHTTPPeerAs(t *testing.T, store *catalog.Store, front bool, kind string) *httpPeer {
	t.Helper()
	title, version := `Skills & "more" <x>`, "1.2"
	var srv *Server
	switch kind {
	case peerNew:
		srv = NewServer(store, &Options{PageSize: 3, Title: title, Version: version})
	case peerAttached, peerAnonymous:
		impl := &mcp.Implementation{Name: "skills", Title: title, Version: version}
		opts := &Options{PageSize: 3}
		if kind == peerAttached {
			opts.Implementation = impl
		}
		var err error
		if srv, err = Attach(mcp.NewServer(impl, nil), store, opts, Parts{}); err != nil {
			t.Fatal(err)
		}
	}
	p := &httpPeer{}
	countSkillsCalls(srv.MCP(), &p.inSDK)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	if front {
		h = srv.HTTPHandler(h)
	}
	// As serve stands them: behind the Host guard.
	ts := httptest.NewServer(httpserve.Handler(h, &httpserve.Options{}))
	t.Cleanup(ts.Close)
	p.url = ts.URL + "/mcp"
	return p
}

type httpAnswer struct {
	status       int
	contentType  string
	cacheControl string
	body         string
}

func (p *httpPeer) do(t *testing.T, method, host string, header map[string]string, body string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, p.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), string(data)}
}

// TestHTTPFrontMatchesSDK sends the same requests to the SDK's handler
// alone and behind the front end: status, media type, cache header and
// body are the same for each, whoever answered. Reads are checked too: the
// SDK encodes their results with HTML escaping, unlike the skills results.
func TestHTTPFrontMatchesSDK(t *testing.T) {
	for _, kind := range peerKinds {
		t.Run(kind, func(t *testing.T) { testHTTPFrontMatchesSDK(t, kind) })
	}
}

func testHTTPFrontMatchesSDK(t *testing.T, kind string) {
	store := catalog.NewStore(frontSnapshot(t))
	sdk, front := startHTTPPeerAs(t, store, false, kind), startHTTPPeerAs(t, store, true, kind)

	const newMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	second := skillsext.EncodeCursor("skill://b/SKILL.md")
	headers := func(version, method string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if version != "" {
			h["Mcp-Protocol-Version"] = version
		}
		if method != "" {
			h["Mcp-Method"] = method
		}
		return h
	}
	with := func(h map[string]string, k, v string) map[string]string {
		h[k] = v
		return h
	}
	cases := []struct {
		name   string
		method string // HTTP method, POST if empty
		host   string
		header map[string]string
		body   string
		fast   bool
	}{
		{name: "list 2026-07-28", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{` + newMeta + `}}`, fast: true},
		{name: "list cursor 2026-07-28", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{` + newMeta + `,"cursor":"` + second + `"}}`, fast: true},
		{name: "get 2026-07-28", header: headers("2026-07-28", "skills/get"), body: `{"jsonrpc":"2.0","id":"g-3","method":"skills/get","params":{"uri":"skill://a/SKILL.md",` + newMeta + `}}`, fast: true},
		{name: "get hidden 2026-07-28", header: headers("2026-07-28", "skills/get"), body: `{"jsonrpc":"2.0","id":4,"method":"skills/get","params":{"uri":"skill://hidden/SKILL.md",` + newMeta + `}}`, fast: true},
		{name: "get 2025-11-25", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":"skill://c/nested/d/SKILL.md"}}`, fast: true},
		{name: "list 2025-06-18", header: headers("2025-06-18", "skills/list"), body: `{"jsonrpc":"2.0","id":6,"method":"skills/list","params":{"cursor":"` + second + `"}}`, fast: true},
		{name: "list without a version", header: headers("", ""), body: `{"jsonrpc":"2.0","id":7,"method":"skills/list"}`, fast: true},
		{name: "no client info", header: headers("2026-07-28", "skills/get"), body: `{"jsonrpc":"2.0","id":8,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, fast: true},

		{name: "no Mcp-Method", header: headers("2026-07-28", ""), body: `{"jsonrpc":"2.0","id":10,"method":"skills/list","params":{` + newMeta + `}}`},
		{name: "Mcp-Method differs", header: headers("2026-07-28", "skills/get"), body: `{"jsonrpc":"2.0","id":11,"method":"skills/list","params":{` + newMeta + `}}`},
		{name: "meta version differs", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":12,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`},
		{name: "no capabilities", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":13,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "capabilities not an object", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":14,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":"x","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "client info not an object", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":15,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "no _meta on 2026-07-28", header: headers("2026-07-28", "skills/list"), body: `{"jsonrpc":"2.0","id":16,"method":"skills/list"}`},
		{name: "new meta on an old header", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":17,"method":"skills/list","params":{` + newMeta + `}}`},
		{name: "unsupported version", header: headers("1999-01-01", ""), body: `{"jsonrpc":"2.0","id":18,"method":"skills/list"}`},
		{name: "JSON only", header: with(headers("2025-11-25", ""), "Accept", "application/json"), body: `{"jsonrpc":"2.0","id":19,"method":"skills/list"}`},
		{name: "text body", header: with(headers("2025-11-25", ""), "Content-Type", "text/plain"), body: `{"jsonrpc":"2.0","id":20,"method":"skills/list"}`},
		{name: "GET", method: http.MethodGet, header: headers("2025-11-25", "")},
		{name: "foreign Host", host: "evil.example", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":21,"method":"skills/list"}`},
		{name: "unknown skill", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":22,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md"}}`},
		{name: "bad cursor", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":23,"method":"skills/list","params":{"cursor":"zzz"}}`},
		{name: "large body", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":24,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"pad":"` + strings.Repeat("p", 70<<10) + `"}}}`},
		{name: "session header", header: with(headers("2025-11-25", ""), "Mcp-Session-Id", "abc"), body: `{"jsonrpc":"2.0","id":25,"method":"skills/list"}`},
		{name: "batch", header: headers("2025-03-26", ""), body: `[{"jsonrpc":"2.0","id":26,"method":"skills/list"}]`},
		{name: "control character in _meta", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":27,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"x":"\u001b"}}}`},
		{name: "control character in a read", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":28,"method":"resources/read","params":{"uri":"skill://a/SKILL.md\u0000"}}`},
		{name: "notification", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","method":"skills/list"}`},
		{name: "tools/list", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":27,"method":"tools/list"}`},
		{name: "tools/list 2026-07-28", header: headers("2026-07-28", "tools/list"), body: `{"jsonrpc":"2.0","id":28,"method":"tools/list","params":{` + newMeta + `}}`},

		{name: "read SKILL.md 2025-11-25", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{"uri":"skill://a/SKILL.md"}}`, fast: true},
		{name: "read odd text", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":31,"method":"resources/read","params":{"uri":"skill://e/odd.md"}}`, fast: true},
		{name: "read empty", header: headers("", ""), body: `{"jsonrpc":"2.0","id":32,"method":"resources/read","params":{"uri":"skill://e/empty.md"}}`, fast: true},
		{name: "read empty 2025-06-18", header: headers("2025-06-18", ""), body: `{"jsonrpc":"2.0","id":44,"method":"resources/read","params":{"uri":"skill://e/empty.md"}}`, fast: true},
		{name: "read empty 2026-07-28", header: with(headers("2026-07-28", "resources/read"), "Mcp-Name", "skill://e/empty.md"), body: `{"jsonrpc":"2.0","id":45,"method":"resources/read","params":{"uri":"skill://e/empty.md",` + newMeta + `}}`, fast: true},
		{name: "read binary", header: headers("2025-06-18", ""), body: `{"jsonrpc":"2.0","id":33,"method":"resources/read","params":{"uri":"skill://e/assets/icon.bin"}}`, fast: true},
		{name: "read escaped name", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":34,"method":"resources/read","params":{"uri":"skill://g/references/x%20y.md"}}`},
		{name: "read 2026-07-28", header: with(headers("2026-07-28", "resources/read"), "Mcp-Name", "skill://e/odd.md"), body: `{"jsonrpc":"2.0","id":35,"method":"resources/read","params":{"uri":"skill://e/odd.md",` + newMeta + `}}`, fast: true},
		{name: "read binary 2026-07-28", header: with(headers("2026-07-28", "resources/read"), "Mcp-Name", "skill://e/assets/icon.bin"), body: `{"jsonrpc":"2.0","id":36,"method":"resources/read","params":{"uri":"skill://e/assets/icon.bin",` + newMeta + `}}`, fast: true},
		{name: "read without Mcp-Name", header: headers("2026-07-28", "resources/read"), body: `{"jsonrpc":"2.0","id":37,"method":"resources/read","params":{"uri":"skill://e/odd.md",` + newMeta + `}}`},
		{name: "read with another Mcp-Name", header: with(headers("2026-07-28", "resources/read"), "Mcp-Name", "skill://a/SKILL.md"), body: `{"jsonrpc":"2.0","id":38,"method":"resources/read","params":{"uri":"skill://e/odd.md",` + newMeta + `}}`},
		{name: "read unknown", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":39,"method":"resources/read","params":{"uri":"skill://e/none.md"}}`},
		{name: "read a directory", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":40,"method":"resources/read","params":{"uri":"skill://e/assets"}}`},
		{name: "read a raw space", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":41,"method":"resources/read","params":{"uri":"skill://g/references/x y.md"}}`},
		{name: "read a non-ASCII name", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":43,"method":"resources/read","params":{"uri":"skill://g/references/ünïcode.md"}}`},
		{name: "read without uri", header: headers("2025-11-25", ""), body: `{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := cmp.Or(tc.method, http.MethodPost)
			want := sdk.do(t, method, tc.host, tc.header, tc.body)
			before := front.inSDK.Load()
			got := front.do(t, method, tc.host, tc.header, tc.body)
			if got != want {
				t.Errorf("front end: %d %q %q %.300s\n       SDK: %d %q %q %.300s",
					got.status, got.contentType, got.cacheControl, got.body, want.status, want.contentType, want.cacheControl, want.body)
			}
			if tc.fast && frontFast(kind, tc.header["Mcp-Protocol-Version"]) && front.inSDK.Load() != before {
				t.Error("the front end passed it to the SDK")
			}
			if v := tc.header["Mcp-Protocol-Version"]; got.status == http.StatusOK && slices.Contains(mcpschema.Revisions(), v) {
				assertValid(t, newSchemaStream(t, v), tc.body, got.body)
			}
			if tc.fast && want.status != http.StatusOK {
				t.Errorf("a request meant to succeed failed: %d %.300s", want.status, want.body)
			}
		})
	}
}

// TestPlainAccept: only the two media types, once each, in either order.
func TestPlainAccept(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   bool
	}{
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"text/event-stream,application/json"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"application/json"}, false},
		{[]string{"*/*"}, false},
		{[]string{"application/json, text/event-stream, text/html"}, false},
		{[]string{"application/json;q=0.9, text/event-stream"}, false},
		{[]string{"application/json, application/json, text/event-stream"}, false},
		{nil, false},
	} {
		if got := plainAccept(tt.values); got != tt.want {
			t.Errorf("plainAccept(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

// TestPlainURI: URI characters the SDK's template match takes as they are.
func TestPlainURI(t *testing.T) {
	for uri, want := range map[string]bool{
		"skill://a/SKILL.md":                  true,
		"skill://a/refs/x%20y.md":             true,
		"skill://a/it's(1)+more=;,!$&*~@:.md": true,
		"skill://a/x y.md":                    false,
		"skill://a/ünïcode.md":                false,
		"skill://a/x%2.md":                    false,
		"skill://a/x%zz.md":                   false,
		"skill://a/x?y":                       false,
		"skill://a/x#y":                       false,
		"skill://a/[x]":                       false,
		"skill://a/x\"y":                      false,
	} {
		if got := plainURI(uri); got != want {
			t.Errorf("plainURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

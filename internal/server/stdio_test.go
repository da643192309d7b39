package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func frontLibrary() fstest.MapFS {
	fs := fstest.MapFS{
		"a/SKILL.md":              {Data: []byte("---\nname: a\ndescription: First <skill> & \"quotes\".\nmetadata:\n  zeta: \"1\"\n  alpha: \"2\"\n---\nBody.\n")},
		"a/references/guide.md":   {Data: []byte("guide\n")},
		"b/SKILL.md":              {Data: []byte("---\nname: b\ndescription: Second.\n---\nBody.\n")},
		"c/SKILL.md":              {Data: []byte("---\nname: c\ndescription: Third, with é.\n---\nBody.\n")},
		"c/nested/d/SKILL.md":     {Data: []byte("---\nname: d\ndescription: Nested.\n---\nBody.\n")},
		"hidden/SKILL.md":         {Data: []byte("---\nname: hidden\ndescription: Hidden.\ndisable-model-invocation: true\n---\nBody.\n")},
		"e/scripts/run.sh":        {Data: []byte("echo hi\n")},
		"e/assets/icon.bin":       {Data: []byte{0x89, 'P', 'N', 'G', 0xff, 0x00, '<'}},
		"e/empty.md":              {Data: []byte{}},
		"e/odd.md":                {Data: []byte("line\u2028sep & <tag> \"q\" \\ \x01 é\n")},
		"e/SKILL.md":              {Data: []byte("---\nname: e\ndescription: Fifth.\n---\nBody.\n")},
		"f-long/SKILL.md":         {Data: []byte("---\nname: f-long\ndescription: " + strings.Repeat("long ", 200) + "\n---\nBody.\n")},
		"g/references/x y.md":     {Data: []byte("space\n")},
		"g/SKILL.md":              {Data: []byte("---\nname: g\ndescription: Seventh.\n---\nBody.\n")},
		"g/references/ünïcode.md": {Data: []byte("unicode\n")},
	}
	return fs
}

// stdioPeer drives a server over pipes one request at a time.
type stdioPeer struct {
	in  io.WriteCloser
	out *bufio.Reader

	inSDK atomic.Int64 // skills/* requests the SDK handled
}

// call writes line and returns the answer with the same id, skipping
// notifications.
func (p *stdioPeer) call(t *testing.T, line string, id string) string {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	if id == "" {
		return ""
	}
	got, err := p.read(id)
	if err != nil {
		t.Fatalf("reading the answer to %.120s: %v", line, err)
	}
	return got
}

// read returns the next answer with the given id.
func (p *stdioPeer) read(id string) (string, error) {
	for {
		got, err := p.out.ReadString('\n')
		if err != nil {
			return "", err
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(got), &m) == nil && string(m.ID) == id {
			return got, nil
		}
	}
}

// countSkillsCalls counts in n the skills/* and resources/read requests
// that reach ms's handlers: those the front end passed on.
func countSkillsCalls(ms *mcp.Server, n *atomic.Int64) {
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "skills/") || method == methodReadResource {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
}

// startPeer runs a server on the front library over pipes: through
// RunStdio when front is set, else as mcp.Server.Run does.
func startPeer(t *testing.T, front bool) *stdioPeer {
	t.Helper()
	return startPeerOn(t, front, catalog.NewStore(frontSnapshot(t)), &Options{PageSize: 3})
}

func frontSnapshot(t *testing.T) *catalog.Snapshot {
	t.Helper()
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: frontLibrary(), Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func startPeerOn(t *testing.T, front bool, store *catalog.Store, opts *Options) *stdioPeer {
	t.Helper()
	srv := NewServer(store, opts)
	peer := &stdioPeer{}
	countSkillsCalls(srv.MCP(), &peer.inSDK)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if front {
			srv.RunStdio(ctx, inR, outW)
		} else {
			srv.MCP().Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
		}
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
	})
	peer.in, peer.out = inW, bufio.NewReaderSize(outR, 1<<20)
	return peer
}

// TestStdioFrontMatchesSDK sends the same requests to a server behind the
// front end and to the SDK alone: every answer is the same, byte for
// byte, whether the front end took the request or passed it on.
func TestStdioFrontMatchesSDK(t *testing.T) {
	second := skillsext.EncodeCursor("skill://b/SKILL.md")
	long := strings.Repeat("x", 70<<10)
	// fast marks requests the front end answers itself; the others go to
	// the SDK (errors always do).
	requests := []struct {
		line, id string
		fast     bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`, "1", true},
		{`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`, "2", true},
		{`{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{"cursor":"` + second + `"}}`, "3", true},
		{`{"method":"skills/list","params":{"cursor":"` + second + `","_meta":{"progressToken":7}},"id":"req-4","jsonrpc":"2.0"}`, `"req-4"`, true},
		{`{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`, "5", true},
		{`{"jsonrpc":"2.0","id":6,"method":"skills/get","params":{"uri":"skill://hidden/SKILL.md"}}`, "6", true},
		{`{"jsonrpc":"2.0","id":7,"method":"skills/get","params":{"uri":"skill://c/nested/d/SKILL.md"}}`, "7", true},
		{`{"jsonrpc":"2.0","id":8,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md"}}`, "8", false},
		{`{"jsonrpc":"2.0","id":9,"method":"skills/get","params":{"uri":"skill://a/references/guide.md"}}`, "9", false},
		{`{"jsonrpc":"2.0","id":10,"method":"skills/get"}`, "10", false},
		{`{"jsonrpc":"2.0","id":11,"method":"skills/list","params":{"cursor":"not-a-cursor"}}`, "11", false},
		{`{"jsonrpc":"2.0","id":12,"method":"skills/list","params":{"Cursor":"` + second + `"}}`, "12", false},
		{`{"jsonrpc":"2.0","id":13,"method":"skills/get","params":{"URI":"skill://a/SKILL.md"}}`, "13", false},
		{`{"jsonrpc":"2.0","id":1.0e1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`, "10", false},
		{`{"jsonrpc":"2.0","id":"\u0041","method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`, `"A"`, false},
		{`{"jsonrpc":"2.0","id":15,"method":"skills/list","params":{"cursor":7}}`, "15", false},
		{`{"jsonrpc":"2.0","id":16,"method":"skills/list","params":null}`, "16", false},
		{`{"jsonrpc":"2.0","id":17,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "17", false},
		{`{"jsonrpc":"2.0","id":18,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"pad":"` + long + `"}}}`, "18", false},
		{`{"jsonrpc":"2.0","id":19,"method":"skills/get","params":{"uri":"skill://g/SKILL.md"},"extra":true}`, "19", false},
		{`{"jsonrpc":"2.0","id":20,"method":"tools/list"}`, "20", false},
		{`{"jsonrpc":"2.0","id":21,"method":"skills/get","params":{"uri":"skill://./a/SKILL.md"}}`, "21", false},
		{`{"jsonrpc":"2.0","id":22,"method":"skills/get","params":{"uri":"skill://f-long/SKILL.md"}}`, "22", true},
		{`{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"skill://e/odd.md"}}`, "23", false},
		{`{"jsonrpc":"2.0","id":24,"method":"resources/read","params":{"uri":"skill://e/empty.md"}}`, "24", false},
		{`{"jsonrpc":"2.0","id":25,"method":"resources/read","params":{"uri":"skill://e/assets/icon.bin"}}`, "25", false},
		{`{"jsonrpc":"2.0","id":26,"method":"resources/read","params":{"uri":"skill://g/references/%C3%BCn%C3%AFcode.md"}}`, "26", false},
		{`{"jsonrpc":"2.0","id":27,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"x":"\u001b"}}}`, "27", false},
		{`{"jsonrpc":"2.0","id":28,"method":"skills/list","params":{"cursor":"` + second + `","_meta":{"progressToken":"\u0000"}}}`, "28", false},
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			sdk, front := startPeer(t, false), startPeer(t, true)
			// Every answer is checked against the schema of the revision
			// the handshake negotiated.
			schema := newSchemaStream(t, version)
			for _, p := range []*stdioPeer{sdk, front} {
				init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, version)
				assertValid(t, schema, init, p.call(t, init, "0"))
				p.call(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
			}
			for _, r := range requests {
				want := sdk.call(t, r.line, r.id)
				before := front.inSDK.Load()
				got := front.call(t, r.line, r.id)
				if got != want {
					t.Errorf("%.120s\n front end: %.300s\n       SDK: %.300s", r.line, got, want)
				}
				assertValid(t, schema, r.line, got)
				// Requests the SDK refuses before dispatch never reach a
				// middleware either, so only the fast ones are checked.
				if r.fast && front.inSDK.Load() != before {
					t.Errorf("%.120s: the front end passed it to the SDK", r.line)
				}
			}
		})
	}
}

// TestStdioFrontWaitsForCatalog: a listing asked for while the first scan
// runs is held, as the SDK path holds it, and answered from the catalog
// once it is in.
func TestStdioFrontWaitsForCatalog(t *testing.T) {
	store := catalog.NewPendingStore()
	n := new(Notifier)
	p := startPeerOn(t, true, store, &Options{PageSize: 3, Notifier: n})
	p.call(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "0")
	p.call(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	p.call(t, `{"jsonrpc":"2.0","id":1,"method":"skills/list"}`, "")
	answer := make(chan string, 1)
	go func() {
		got, err := p.read("1")
		if err != nil {
			got = err.Error()
		}
		answer <- got
	}()
	store.Swap(frontSnapshot(t))
	n.CatalogReady()
	select {
	case got := <-answer:
		var res struct {
			Result struct {
				Skills []json.RawMessage `json:"skills"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || len(res.Result.Skills) != 3 {
			t.Errorf("listing after the scan: %.300s (%v)", got, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("skills/list still waiting after the scan")
	}
}

func newSchemaStream(t *testing.T, rev string) *mcpschema.Stream {
	t.Helper()
	st, err := mcpschema.NewStream(rev)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// assertValid fails t if answer, the server's answer to request, breaks
// the schema of the revision st follows.
func assertValid(t *testing.T, st *mcpschema.Stream, request, answer string) {
	t.Helper()
	st.Sent([]byte(request))
	for _, v := range st.Received([]byte(answer)) {
		t.Errorf("%.120s: the answer breaks the %s schema: %s\n%.300s", request, st.Revision(), v, answer)
	}
}

// TestEmptyFileText: an empty file is read as "text":"" on every path (the
// SDK's contents type leaves an empty text out), a binary file as a blob.
func TestEmptyFileText(t *testing.T) {
	for _, front := range []bool{false, true} {
		p := startPeer(t, front)
		p.call(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "0")
		got := p.call(t, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://e/empty.md"}}`, "1")
		if !strings.Contains(got, `"uri":"skill://e/empty.md","mimeType":"text/markdown","text":""}`) {
			t.Errorf("front end %v: an empty file read as %s", front, got)
		}
	}
	srv := NewServer(catalog.NewStore(frontSnapshot(t)), nil)
	for _, uri := range []string{"skill://e/empty.md", "skill://e/assets/icon.bin"} {
		res, err := readResultMiddleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return srv.s.readResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		})(context.Background(), methodReadResource, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(res)
		if text := strings.Contains(string(data), `"text":`); text == strings.Contains(string(data), `"blob":`) || text != strings.HasSuffix(uri, ".md") {
			t.Errorf("%s read as %s: want exactly one of text (for text) and blob (for binary)", uri, data)
		}
	}
}

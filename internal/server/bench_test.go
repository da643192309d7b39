package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// benchStore scans a generated library of n skills, written once per
// machine under the temporary directory.
func benchStore(b *testing.B, n int) *catalog.Store {
	b.Helper()
	dir, err := bench.SharedLibrary(n)
	if err != nil {
		b.Fatal(err)
	}
	lib, err := catalog.OpenDirectory("", dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lib.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	return catalog.NewStore(snap)
}

// rawPage is a skills/list result as the benchmark client keeps it: entries
// undecoded, the way skills-bench reads them.
type rawPage struct {
	mcp.ResultBase
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor"`
}

// BenchmarkListAll walks skills/list over 5,000 generated skills through the
// SDK's in-memory transport, client and server in one process: what one
// warm complete listing costs both ends, less the pipe.
func BenchmarkListAll(b *testing.B) {
	store := benchStore(b, 5000)
	ctx := context.Background()
	ms := New(store, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *rawPage](c, skillsext.MethodList); err != nil {
		b.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ReportAllocs()
	for b.Loop() {
		n, cursor := 0, ""
		for {
			res, err := mcp.CallCustomMethod[*skillsext.ListSkillsParams, *rawPage](ctx, cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
			if err != nil {
				b.Fatal(err)
			}
			n += len(res.Skills)
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if n != 5000 {
			b.Fatalf("listed %d skills, want 5000", n)
		}
	}
}

// BenchmarkListPageEncode is the server's own share of one skills/list page
// of 100 answered by the SDK: the handler, then the result encoded as the
// SDK encodes it.
func BenchmarkListPageEncode(b *testing.B) {
	s := &server{store: benchStore(b, 5000), listed: make(chan struct{}), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
	ctx := context.Background()
	cursor := skillsext.EncodeCursor(s.store.Snapshot().Skills()[2000].URI)
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.listSkills(ctx, nil, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		data, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
	}
}

// BenchmarkListFront is a complete listing of 5,000 skills answered by a
// front end: every page encoded, in turn, into a reused buffer.
func BenchmarkListFront(b *testing.B) {
	s := &server{store: benchStore(b, 5000), listed: make(chan struct{}), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		req, n := fastRequest{method: skillsext.MethodList}, int64(0)
		for {
			var ok bool
			if buf, ok = s.appendFastResult(buf[:0], req, "", nil); !ok {
				b.Fatal("the front end refused a plain page")
			}
			n += int64(len(buf))
			i := bytes.LastIndex(buf, []byte(`"nextCursor":"`))
			if i < 0 {
				break
			}
			rest := buf[i+len(`"nextCursor":"`):]
			req.arg = string(rest[:bytes.IndexByte(rest, '"')])
		}
		b.SetBytes(n)
	}
}

// BenchmarkGetSkillEncode is the server's own share of one skills/get.
func BenchmarkGetSkillEncode(b *testing.B) {
	s := &server{store: benchStore(b, 5000), listed: make(chan struct{}), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
	ctx := context.Background()
	uri := s.store.Snapshot().Skills()[2000].URI
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.getSkill(ctx, nil, &skillsext.GetSkillParams{URI: uri})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
}

// fastPaths are the two settings of the front ends' switch; the
// benchmarks below run each method both ways, alternately.
var fastPaths = []struct {
	name string
	off  bool
}{{"fast=on", false}, {"fast=off", true}}

// benchStdio is a server over pipes as RunStdio serves a host, past the
// handshake, with the front end on or off.
type benchStdio struct {
	in  io.Writer
	out *bufio.Reader
}

func startBenchStdio(b *testing.B, store *catalog.Store, off bool) *benchStdio {
	b.Helper()
	srv := NewServer(store, &Options{NoFastPath: off})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.RunStdio(ctx, inR, outW)
		outW.Close()
	}()
	b.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		<-done
	})
	p := &benchStdio{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	p.call(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	io.WriteString(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return p
}

// call writes one request and returns its answer, the next line.
func (p *benchStdio) call(b *testing.B, line string) []byte {
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		b.Fatal(err)
	}
	answer, err := p.out.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	return answer
}

// BenchmarkStdioList is a complete listing of 5,000 skills over stdio, page
// by page, client and server in one process, with the front end on and off.
func BenchmarkStdioList(b *testing.B) {
	store := benchStore(b, 5000)
	for _, fp := range fastPaths {
		b.Run(fp.name, func(b *testing.B) {
			p := startBenchStdio(b, store, fp.off)
			b.ReportAllocs()
			for b.Loop() {
				cursor, n := "", 0
				for {
					line := `{"jsonrpc":"2.0","id":1,"method":"skills/list"}`
					if cursor != "" {
						line = `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"` + cursor + `"}}`
					}
					// The client's share is kept small: the cursor is cut
					// out of the answer, pages counted, entries not decoded.
					a := p.call(b, line)
					n++
					i := bytes.LastIndex(a, []byte(`"nextCursor":"`))
					if i < 0 {
						break
					}
					rest := a[i+len(`"nextCursor":"`):]
					cursor = string(rest[:bytes.IndexByte(rest, '"')])
				}
				if want := (5000 + DefaultPageSize - 1) / DefaultPageSize; n != want {
					b.Fatalf("listed %d pages, want %d", n, want)
				}
			}
		})
	}
}

// BenchmarkStdioGet is one skills/get over stdio.
func BenchmarkStdioGet(b *testing.B) {
	store := benchStore(b, 5000)
	line := `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"` + store.Snapshot().Skills()[2000].URI + `"}}`
	for _, fp := range fastPaths {
		b.Run(fp.name, func(b *testing.B) {
			p := startBenchStdio(b, store, fp.off)
			b.ReportAllocs()
			for b.Loop() {
				if a := p.call(b, line); !bytes.Contains(a, []byte(`"result"`)) {
					b.Fatalf("%.200s", a)
				}
			}
		})
	}
}

// benchHTTP posts body to the stateless handler serve builds, in process
// (no socket), with the front end on or off, and checks for a result.
func benchHTTP(b *testing.B, store *catalog.Store, method, body string) {
	for _, fp := range fastPaths {
		b.Run(fp.name, func(b *testing.B) {
			srv := NewServer(store, &Options{NoFastPath: fp.off})
			h := srv.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"result"`)) {
					b.Fatalf("%s: %d %.200s", method, w.Code, w.Body.Bytes())
				}
			}
		})
	}
}

// BenchmarkHTTPGet is one skills/get over stateless HTTP.
func BenchmarkHTTPGet(b *testing.B) {
	store := benchStore(b, 5000)
	benchHTTP(b, store, "skills/get", `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"`+store.Snapshot().Skills()[2000].URI+`"}}`)
}

// BenchmarkHTTPList is one skills/list page over stateless HTTP.
func BenchmarkHTTPList(b *testing.B) {
	store := benchStore(b, 5000)
	cursor := skillsext.EncodeCursor(store.Snapshot().Skills()[2000].URI)
	benchHTTP(b, store, "skills/list", `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"`+cursor+`"}}`)
}

// BenchmarkHTTPRead is one resources/read of a SKILL.md over stateless HTTP.
func BenchmarkHTTPRead(b *testing.B) {
	store := benchStore(b, 5000)
	benchHTTP(b, store, "resources/read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+store.Snapshot().Skills()[2000].URI+`"}}`)
}

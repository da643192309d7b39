package server

import (
	"bytes"
	"context"
	"encoding/json"
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
	s := &server{store: benchStore(b, 5000), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
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
	s := &server{store: benchStore(b, 5000), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
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
	s := &server{store: benchStore(b, 5000), opts: Options{PageSize: DefaultPageSize, TTL: DefaultTTL}}
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

package check_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/check"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

// wireLibrary holds empty, binary, CRLF and non-ASCII files.
const wireLibrary = "../../testdata/wire"

// TestWireSchemaCatchesEmptyText: a server that reads an empty file back
// with neither text nor blob (the go-sdk's contents type drops an empty
// text, as our server did) fails wire-schema, naming resources/read and the
// content's JSON pointer, although every other check passes it.
func TestWireSchemaCatchesEmptyText(t *testing.T) {
	const md = "---\nname: empty-init\ndescription: Ships an empty __init__.py.\n---\nBody.\n"
	entry, files := pulltest.Skill("empty-init", "Ships an empty __init__.py.", md, map[string]string{"scripts/__init__.py": ""})
	for _, stateless := range []bool{true, false} {
		f := &pulltest.Fake{Entries: []any{entry}, Files: files}
		ts := httptest.NewServer(f.Handler(stateless))
		dial, err := check.HTTP(ts.URL, 0)
		if err != nil {
			t.Fatal(err)
		}
		rep := check.Run(context.Background(), dial, &check.Options{Versions: []string{"2026-07-28", "2025-11-25"}, Timeout: ample})
		ts.Close()
		fails := results(rep, "wire-schema", check.Fail)
		found := false
		for _, r := range fails {
			found = found || (r.Subject == "resources/read skill://empty-init/scripts/__init__.py" && strings.Contains(r.Message, "/result/contents/0") && strings.Contains(r.Message, "text"))
		}
		if !found {
			t.Errorf("stateless=%v: no wire-schema failure for the empty read:\n%s", stateless, text(rep))
		}
		for _, r := range rep.Results {
			if r.Status == check.Fail && r.ID != "wire-schema" {
				t.Errorf("stateless=%v: only wire-schema should fail, got %s: %s", stateless, r.ID, r.Message)
			}
		}
	}
}

// TestWireSchemaPassesOurServer: our server on a library of empty,
// binary, CRLF and non-ASCII files passes every check, wire-schema
// included, over HTTP and in memory, at every revision check asks for.
func TestWireSchemaPassesOurServer(t *testing.T) {
	lib, err := catalog.OpenDirectory("", wireLibrary)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Len() != 2 {
		t.Fatalf("the wire library serves %d skills, want 2", snap.Len())
	}
	for _, tr := range []string{"memory", "http"} {
		ms := server.New(catalog.NewStore(snap), &server.Options{PageSize: 1})
		dial := inMemory(ms)
		if tr == "http" {
			dial = overHTTP(t, ms, 0)
		}
		rep := check.Run(context.Background(), dial, &check.Options{Versions: []string{"2026-07-28", "2025-11-25", "2025-06-18"}, Timeout: ample})
		if rep.Failed() || rep.Count(check.Warn) > 0 {
			t.Errorf("%s: our server does not pass:\n%s", tr, text(rep))
		}
		for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
			ok := false
			for _, r := range results(rep, "wire-schema", check.Pass) {
				ok = ok || r.Version == v
			}
			if !ok {
				t.Errorf("%s: wire-schema did not pass at %s:\n%s", tr, v, text(rep))
			}
		}
	}
}

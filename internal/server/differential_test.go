package server

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// checkedSDK is the go-sdk version the front ends were last compared with,
// byte for byte, by the differential tests of this file and of
// TestStdioFrontMatchesSDK and TestHTTPFrontMatchesSDK.
const checkedSDK = "v1.8.0"

// TestFrontEndSDKPin fails when the go-sdk the server is built with is not
// the one the front ends were checked against: a front end answers in the
// SDK's place, so a new SDK check or encoding it does not copy would make
// the two paths differ.
func TestFrontEndSDKPin(t *testing.T) {
	const sdk = "github.com/modelcontextprotocol/go-sdk"
	version := ""
	// A test binary may carry no dependency list; go.mod then says.
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == sdk {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				version = dep.Version
			}
		}
	}
	if version == "" {
		data, err := os.ReadFile("../../go.mod")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] == "require" {
				f = f[1:]
			}
			if len(f) >= 2 && f[0] == sdk {
				version = f[1]
			}
		}
	}
	if version == "" {
		t.Fatal("neither the build information nor go.mod names the go-sdk")
	}
	if version != checkedSDK {
		t.Fatalf("the go-sdk is %s, but the fast front ends were checked against %s: "+
			"re-run the differential tests (go test ./internal/server -run 'Front|Differential'), "+
			"fix any difference, and update the pin (checkedSDK in differential_test.go)", version, checkedSDK)
	}
}

// fastCase is one request of the differential matrix: params (without
// _meta) of a method a front end answers, and whether it succeeds.
type fastCase struct {
	name, method, params string
	ok                   bool
}

// fastCases covers every method a front end answers, each with the
// answers that succeed and each kind of error.
func fastCases() []fastCase {
	second := skillsext.EncodeCursor("skill://b/SKILL.md")
	return []fastCase{
		{"list", skillsext.MethodList, ``, true},
		{"list cursor", skillsext.MethodList, `"cursor":"` + second + `"`, true},
		{"list last page", skillsext.MethodList, `"cursor":"` + skillsext.EncodeCursor("skill://f-long/SKILL.md") + `"`, true},
		{"list bad cursor", skillsext.MethodList, `"cursor":"zzz"`, false},
		{"list cursor not a string", skillsext.MethodList, `"cursor":7`, false},
		{"get", skillsext.MethodGet, `"uri":"skill://a/SKILL.md"`, true},
		{"get nested", skillsext.MethodGet, `"uri":"skill://c/nested/d/SKILL.md"`, true},
		{"get unknown", skillsext.MethodGet, `"uri":"skill://nope/SKILL.md"`, false},
		{"get not a SKILL.md", skillsext.MethodGet, `"uri":"skill://a/references/guide.md"`, false},
		{"get invalid URI", skillsext.MethodGet, `"uri":"skill://./a/SKILL.md"`, false},
		{"get control character", skillsext.MethodGet, `"uri":"skill://a\u001b/SKILL.md"`, false},
		{"get without uri", skillsext.MethodGet, ``, false},
		{"read", methodReadResource, `"uri":"skill://a/SKILL.md"`, true},
		{"read text", methodReadResource, `"uri":"skill://e/odd.md"`, true},
		{"read empty", methodReadResource, `"uri":"skill://e/empty.md"`, true},
		{"read binary", methodReadResource, `"uri":"skill://e/assets/icon.bin"`, true},
		{"read escaped", methodReadResource, `"uri":"skill://g/references/x%20y.md"`, true},
		{"read unknown", methodReadResource, `"uri":"skill://e/none.md"`, false},
		{"read a directory", methodReadResource, `"uri":"skill://e/assets"`, false},
		// A read of a URI holding a control character is left out: the
		// SDK's not-found error for it is not JSON (it kills a stdio
		// session and is an empty 200 over HTTP); the guard of issue 16
		// answers it before the SDK, on both paths alike, and brings the
		// case back.
		{"read without uri", methodReadResource, ``, false},
	}
}

// withParams returns the params member of a request: params and meta
// (the _meta of the per-request protocol, or ""), or nothing.
func withParams(params, meta string) string {
	switch {
	case params == "" && meta == "":
		return ""
	case params == "":
		return `,"params":{` + meta + `}`
	case meta == "":
		return `,"params":{` + params + `}`
	}
	return `,"params":{` + params + `,` + meta + `}`
}

// TestDifferentialHTTP sends every case at every revision to the SDK's
// handler alone and behind the front end: status, headers and bytes are
// the same, and every answer that succeeds is valid for its revision.
// It does so on each kind of server: made by NewServer, and attached to a
// bare SDK server as skills.Handler serves its catalogs.
func TestDifferentialHTTP(t *testing.T) {
	for _, kind := range peerKinds {
		t.Run(kind, func(t *testing.T) { testDifferentialHTTP(t, kind) })
	}
}

func testDifferentialHTTP(t *testing.T, kind string) {
	store := catalog.NewStore(frontSnapshot(t))
	sdk, front := startHTTPPeerAs(t, store, false, kind), startHTTPPeerAs(t, store, true, kind)
	const newMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	id := 100
	for _, rev := range mcpschema.Revisions() {
		for _, c := range fastCases() {
			t.Run(rev+"/"+c.name, func(t *testing.T) {
				id++
				h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": rev}
				meta := ""
				if rev == revision20260728 {
					meta = newMeta
					h["Mcp-Method"] = c.method
					if c.method == methodReadResource {
						if _, uri, ok := strings.Cut(c.params, `"uri":"`); ok {
							h["Mcp-Name"] = strings.TrimSuffix(uri, `"`)
						}
					}
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q%s}`, id, c.method, withParams(c.params, meta))
				want := sdk.do(t, "POST", "", h, body)
				before := front.inSDK.Load()
				got := front.do(t, "POST", "", h, body)
				if got != want {
					t.Errorf("%s\nfront end: %d %q %q %.300s\n      SDK: %d %q %q %.300s", body,
						got.status, got.contentType, got.cacheControl, got.body, want.status, want.contentType, want.cacheControl, want.body)
				}
				failed := want.status != 200 || strings.Contains(want.body, `"error"`)
				if failed == c.ok {
					t.Errorf("%s: the SDK answered %.300s", body, want.body)
				}
				if c.ok && !strings.Contains(c.name, "escaped") && frontFast(kind, rev) && front.inSDK.Load() != before {
					t.Errorf("%s: the front end passed a plain request to the SDK", body)
				}
				if got.status == 200 {
					assertValid(t, newSchemaStream(t, rev), body, got.body)
				}
			})
		}
	}
}

// TestDifferentialStdio does the same over stdio, on a session of each
// revision: the answer to every case is the same line, whoever wrote it.
func TestDifferentialStdio(t *testing.T) {
	for _, rev := range mcpschema.Revisions() {
		t.Run(rev, func(t *testing.T) {
			sdk, front := startPeer(t, false), startPeer(t, true)
			schema := newSchemaStream(t, rev)
			for _, p := range []*stdioPeer{sdk, front} {
				init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, rev)
				assertValid(t, schema, init, p.call(t, init, "0"))
				p.call(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
			}
			for i, c := range fastCases() {
				id := fmt.Sprint(100 + i)
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q%s}`, id, c.method, withParams(c.params, ""))
				want := sdk.call(t, line, id)
				before := front.inSDK.Load()
				got := front.call(t, line, id)
				if got != want {
					t.Errorf("%s\nfront end: %.300s\n      SDK: %.300s", line, got, want)
				}
				if strings.Contains(want, `"error"`) == c.ok {
					t.Errorf("%s: the SDK answered %.300s", line, want)
				}
				assertValid(t, schema, line, got)
				// Over stdio the front end answers skills/list and
				// skills/get; reads stay with the SDK (see RunStdio).
				if c.ok && c.method != methodReadResource && front.inSDK.Load() != before {
					t.Errorf("%s: the front end passed a plain request to the SDK", line)
				}
			}
		})
	}
}

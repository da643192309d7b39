package server

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// TestParseFastRequest checks which requests the front end takes: only
// those whose every member it reads exactly as the SDK does.
func TestParseFastRequest(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`, true},
		{`{"jsonrpc":"2.0","id":"x-1","method":"skills/list","params":{"cursor":"abc"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"progressToken":1}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"cursor":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://a/SKILL.md"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://a/SKILL.md","cursor":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, false},
		{`{"jsonrpc":"1.0","id":1,"method":"skills/list"}`, false},
		{`{"id":1,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":01,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":-0,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":1e3,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":"é","method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":null,"method":"skills/list"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","Params":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":[]}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":null}}`, false},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/get\",\"params\":{\"uri\":\"skill://a\xff/SKILL.md\"}}", false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":[]}}`, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"skills/list"}]`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list"`, false},
	} {
		if _, got := parseFastRequest([]byte(tt.line)); got != tt.want {
			t.Errorf("parseFastRequest(%s) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// FuzzParseFastRequest holds the front ends' request parser to the SDK's
// reading of the same bytes: whatever it accepts, the SDK decodes as a
// request with the same method, and answers with the id written as it
// came.
func FuzzParseFastRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`,
		`{"jsonrpc":"2.0","id":"x-1","method":"skills/list","params":{"cursor":"abc","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"skills/list"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, ok := parseFastRequest(line)
		if !ok {
			return
		}
		if req.method != skillsext.MethodList && req.method != skillsext.MethodGet && req.method != methodReadResource {
			t.Fatalf("accepted method %q", req.method)
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("accepted %s, which the SDK refuses: %v", line, err)
		}
		r, isReq := msg.(*jsonrpc.Request)
		if !isReq || r.Method != req.method || !r.IsCall() {
			t.Fatalf("accepted %s; the SDK reads %#v", line, msg)
		}
		echoed, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: r.ID, Result: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"jsonrpc":"2.0","id":` + string(req.id) + `,"result":{}}`; string(echoed) != want {
			t.Fatalf("the SDK echoes the id as %s, the front end as %s", echoed, want)
		}
	})
}

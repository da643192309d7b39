package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func TestCheckParams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params any
		want   string // a part of the message; "" for accepted
	}{
		{"plain uri", &mcp.ReadResourceParams{URI: "skill://a/SKILL.md"}, ""},
		{"non-ASCII uri", &mcp.ReadResourceParams{URI: "skill://g/references/ünïcode.md"}, ""},
		{"NUL in uri", &mcp.ReadResourceParams{URI: "skill://a\x00b"}, "params.uri holds a control character (U+0000)"},
		{"ESC in uri", &mcp.ReadResourceParams{URI: "skill://a\x1bb"}, "U+001B"},
		{"DEL in uri", &mcp.ReadResourceParams{URI: "skill://a\x7f"}, "U+007F"},
		{"C1 in uri", &mcp.ReadResourceParams{URI: "skill://a\u0085"}, "U+0085"},
		{"tag character in uri", &mcp.ReadResourceParams{URI: "skill://a\U000E0001"}, "invisible formatting character (U+E0001)"},
		{"bidi override in uri", &mcp.ReadResourceParams{URI: "skill://a\u202e"}, "U+202E"},
		{"replacement character in uri", &mcp.ReadResourceParams{URI: "skill://a\ufffd"}, "replacement character"},
		{"newline in uri", &mcp.ReadResourceParams{URI: "skill://a\nb"}, "a tab or line break"},
		{"cursor", &skillsext.ListSkillsParams{Cursor: "abc\x00"}, "params.cursor"},
		{"skills/get", &skillsext.GetSkillParams{URI: "skill://\x01"}, "params.uri"},
		{"prompt argument text", &mcp.GetPromptParams{Name: "use-skill", Arguments: map[string]string{"skill": "a", "task": "line one\nline\ttwo"}}, ""},
		{"prompt argument name", &mcp.GetPromptParams{Name: "use-skill", Arguments: map[string]string{"skill": "a\u200b"}}, "params.arguments.skill"},
		{"prompt argument control", &mcp.GetPromptParams{Name: "use-skill", Arguments: map[string]string{"task": "a\x1b[31m"}}, "params.arguments.task holds a control character"},
		{"tool text argument", &mcp.CallToolParamsRaw{Name: "s_search_skills", Arguments: json.RawMessage(`{"query":"tab\there, é and \ud83d\ude00"}`)}, ""},
		{"tool lone high surrogate", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"query":"a\ud800b"}`)}, "params.arguments.query holds a lone UTF-16 surrogate"},
		{"tool lone low surrogate", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"query":"\udc01"}`)}, "lone UTF-16 surrogate"},
		{"tool high surrogate at end", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"query":"\ud800"}`)}, "lone UTF-16 surrogate"},
		{"tool escaped NUL", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"query":"\u0000"}`)}, "control character (U+0000)"},
		{"tool escaped backslash u", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"query":"\\ud800"}`)}, ""},
		{"tool nested", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"a":[1,{"b":["ok","\u001f"]}]}`)}, "params.arguments.a[1].b[1]"},
		{"tool member name", &mcp.CallToolParamsRaw{Name: "s", Arguments: json.RawMessage(`{"a\tb":1}`)}, "member name"},
		{"tool name", &mcp.CallToolParamsRaw{Name: "s\x00", Arguments: json.RawMessage(`{}`)}, "params.name"},
		{"meta", &mcp.ListToolsParams{Meta: mcp.Meta{"progressToken": "x\x02"}}, "params._meta.progressToken"},
		{"nil params", (*mcp.ListToolsParams)(nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkParams(tc.params)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			we, ok := errors.AsType[*jsonrpc.Error](err)
			if !ok || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, tc.want) {
				t.Fatalf("error %v, want -32602 containing %q", err, tc.want)
			}
			for _, c := range we.Message {
				if c < 0x20 || c == 0x7f {
					t.Errorf("the message repeats a control character: %q", we.Message)
				}
			}
		})
	}
}

func FuzzCheckParams(f *testing.F) {
	for _, s := range []string{`{"query":"a"}`, `{"a":[1,{"b":"\ud800"}]}`, `{"x":"\\u0000\u00e9"}`, `[]`, `"s"`, `{"a\u0000":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		// Whatever the arguments, the check returns, and its message is
		// JSON-safe and says which member.
		err := checkParams(&mcp.CallToolParamsRaw{Name: "t", Arguments: json.RawMessage(raw)})
		if err != nil && !strings.HasPrefix(err.Error(), "params.") {
			t.Fatalf("message %q", err)
		}
	})
}

func TestJSONErrorData(t *testing.T) {
	for _, uri := range []string{"skill://a\x00b", "x://\U000E0001", "s://\x7f", "skill://plain"} {
		err := jsonErrorData(mcp.ResourceNotFoundError(uri))
		we, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok || !json.Valid(we.Data) {
			t.Fatalf("%q: data %s is not JSON", uri, we.Data)
		}
		var data struct{ URI string }
		if json.Unmarshal(we.Data, &data) != nil || data.URI != uri {
			t.Errorf("%q: data %s does not carry the URI", uri, we.Data)
		}
		if _, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: mustID(t, 1), Error: err}); err != nil {
			t.Errorf("%q: the answer does not encode: %v", uri, err)
		}
	}
	bad := &jsonrpc.Error{Code: 1, Message: "m", Data: json.RawMessage(`{not json`)}
	if we, _ := errors.AsType[*jsonrpc.Error](jsonErrorData(bad)); we.Data != nil || we.Message != "m" {
		t.Errorf("unrecoverable data kept: %+v", we)
	}
	if err := jsonErrorData(nil); err != nil {
		t.Errorf("nil error became %v", err)
	}
	plain := fmt.Errorf("plain")
	if jsonErrorData(plain) != plain {
		t.Error("a plain error was replaced")
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(v.(int)))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStdioMalformedInput: over stdio, a request with a malformed string,
// a line that is not JSON, a batch and a line the SDK cannot read as a
// message each get a JSON-RPC error, and the session answers the next
// request. Without the front end's checks the SDK would end the session
// on each of them.
func TestStdioMalformedInput(t *testing.T) {
	for _, tc := range []struct {
		line, id string
		code     int64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://a\u0000b"}}`, "1", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://a\u001b"}}`, "2", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://a\udb40\udc01"}}`, "3", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"other://\udb40\udc01"}}`, "4", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":"skill://a/SKILL.md\u0007"}}`, "5", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":6,"method":"resources/directory/read","params":{"uri":"skill://a\u0001"}}`, "6", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{"cursor":"\u0000"}}`, "7", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"\ud800"}}`, "8", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"use-skill","arguments":{"skill":"a\u0000"}}}`, "9", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"skills_search_skills","arguments":{"query":"x\ud800"}}}`, "10", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"skill://a\x41"}}`, "null", jsonrpc.CodeParseError},
		{"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\",\"params\":{\"_meta\":{\"x\":\"\x01\"}}}", "null", jsonrpc.CodeParseError},
		{`{"jsonrpc":"2.0","id":13,"method":"ping"`, "null", jsonrpc.CodeParseError},
		{`[{"jsonrpc":"2.0","id":14,"method":"ping"}]`, "null", jsonrpc.CodeInvalidRequest},
		{`"just a string"`, "null", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":16,"method":"ping"}`, "16", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, "null", jsonrpc.CodeInvalidRequest},
		{strings.Repeat(" ", MaxLineBytes+10), "null", jsonrpc.CodeInvalidRequest},
	} {
		p := startPeer(t, true)
		p.call(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "0")
		p.call(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
		got := p.call(t, tc.line, tc.id)
		var answer struct {
			Error *jsonrpc.Error `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &answer); err != nil || answer.Error == nil || answer.Error.Code != tc.code {
			t.Errorf("%.80q: answer %.300s, want error %d", tc.line, got, tc.code)
		}
		// The session is still usable.
		if got := p.call(t, `{"jsonrpc":"2.0","id":99,"method":"ping"}`, "99"); !strings.Contains(got, `"result":{}`) {
			t.Errorf("%.80q: the next ping got %.300s", tc.line, got)
		}
	}
}

// TestStdioOddLinesPassed: lines the SDK reads as they are still reach it:
// white space around a message (which the SDK itself would refuse after
// it), blank lines, and a client's answer.
func TestStdioOddLinesPassed(t *testing.T) {
	p := startPeer(t, true)
	p.call(t, `  {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}  `, "0")
	p.call(t, "\r\n", "")
	p.call(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\t", "")
	p.call(t, `{"jsonrpc":"2.0","id":"unknown","result":{}}`, "")
	if got := p.call(t, `{"jsonrpc":"2.0","id":1,"method":"ping"} `, "1"); !strings.Contains(got, `"result":{}`) {
		t.Errorf("ping got %.300s", got)
	}
	// A long request is held whole and answered.
	long := `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"pad":"` + strings.Repeat("x", 200<<10) + `"}}}`
	if got := p.call(t, long, "2"); !strings.Contains(got, `"result"`) {
		t.Errorf("long request got %.300s", got)
	}
}

// FuzzCheckLine: whatever a stdio line holds, checkLine either refuses it
// or passes on one message the SDK's reader accepts: a JSON-RPC message
// followed by exactly one newline.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`  {"jsonrpc":"2.0","id":"a","method":"x","params":{}}  ` + "\r\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":1}`, `{garbage`, "\n", `"s"`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\x01\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fwd, m, id, code, msg := checkLine(line)
		if msg != "" {
			if fwd != nil || code == 0 {
				t.Fatalf("refused with code %d but passed %q", code, fwd)
			}
			if id != nil && !json.Valid(id) {
				t.Fatalf("refusal id %q is not JSON", id)
			}
			return
		}
		if fwd == nil {
			if len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("%q neither refused nor passed", line)
			}
			return
		}
		body, ok := bytes.CutSuffix(fwd, []byte("\n"))
		if !ok || len(bytes.TrimSpace(body)) != len(body) {
			t.Fatalf("passed %q: want one message and one newline", fwd)
		}
		want, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("passed %q, which the SDK cannot decode: %v", fwd, err)
		}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("passed %q with the message %#v, but the SDK decodes %#v", fwd, m, want)
		}
	})
}

// metaParams is the params of a skills/get as a go-sdk client sends it on
// 2026-07-28: the URI, and _meta with the client's capabilities and info.
const metaParams = `{"uri":"skill://engineering/code-review/SKILL.md","_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/skills":{}}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"skills-bench","title":"Skills bench","version":"v0.1.0"}}}`

// Every request's params are walked, on both paths: a clean walk
// allocates its two buffers and nothing per member or string (it made 69
// allocations of these params when it built each member's path).
func TestCleanParamsAllocates(t *testing.T) {
	raw := []byte(metaParams)
	if !cleanParams(raw) {
		t.Fatal("refused clean params")
	}
	if n := testing.AllocsPerRun(100, func() { cleanParams(raw) }); n > 2 {
		t.Errorf("a clean walk allocated %v times, want at most 2", n)
	}
}

func BenchmarkCleanParams(b *testing.B) {
	raw := []byte(metaParams)
	b.ReportAllocs()
	for b.Loop() {
		if !cleanParams(raw) {
			b.Fatal("refused")
		}
	}
}

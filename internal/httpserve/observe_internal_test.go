package httpserve

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func TestJSONRPCMethod(t *testing.T) {
	for _, tc := range []struct {
		body   string
		method string
		batch  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`, "skills/list", false},
		{` {"params":{"uri":"skill://a/\"}{[","n":[1,{"method":"x"}]},"method" : "resources/read","id":"7"}`, "resources/read", false},
		{`{"id":1,"method":"skills\/get"}`, "skills/get", false},
		{`{"id":1,"\u006dethod":"ping"}`, "ping", false},
		{`{"method":"a","method":"b"}`, "b", false},
		{`{"method":7}`, "", false},
		{`{"id":true,"x":null,"y":-1.5e3,"method":"tools/call"}`, "tools/call", false},
		{`[{"method":"ping"}]`, "", true},
		{`{"jsonrpc":"2.0","method":"initialize","params":{"capabilities":{"roots":`, "initialize", false}, // cut short
		{`{"jsonrpc":"2.0","params":{"a":"`, "", false},
		{`{"method":"pi`, "", false},
		{`not json`, "", false},
		{``, "", false},
		{`{`, "", false},
		{`{"method"`, "", false},
		{`{"method":`, "", false},
	} {
		m, batch := jsonrpcMethod([]byte(tc.body))
		if m != tc.method || batch != tc.batch {
			t.Errorf("jsonrpcMethod(%s) = %q, %v; want %q, %v", tc.body, m, batch, tc.method, tc.batch)
		}
	}
}

// FuzzJSONRPCMethod checks that the method finder never panics and agrees
// with encoding/json on every JSON object it is given whole.
func FuzzJSONRPCMethod(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"x"}}`,
		`{"params":{"a":[1,2,{"b":"]}"}]},"method":"resources/read"}`,
		`{"method":"a\u0000b","method":"c"}`,
		`[{"jsonrpc":"2.0"}]`,
		`{"a":"\\","method":"x\"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, batch := jsonrpcMethod(b)
		var obj map[string]json.RawMessage
		if len(b) > maxMethodScan || json.Unmarshal(b, &obj) != nil {
			return
		}
		if batch {
			t.Fatalf("object %q taken for a batch", b)
		}
		var want string
		if raw, ok := obj["method"]; ok {
			if json.Unmarshal(raw, &want) != nil {
				want = ""
			}
		}
		if !utf8.ValidString(want) || strings.ContainsRune(want, utf8.RuneError) {
			return // encoding/json replaces invalid UTF-8; a count need not
		}
		if got != want {
			t.Fatalf("jsonrpcMethod(%q) = %q, encoding/json says %q", b, got, want)
		}
	})
}

func TestGarbledID(t *testing.T) {
	for _, tc := range []struct {
		body string
		id   string
		bad  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "1", false},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, `"a\"b"`, false},
		{`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}`, `"\ud83d\ude00"`, false},
		{`{"jsonrpc":"2.0","id":"\ufffd","method":"ping"}`, `"\ufffd"`, false},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `"\ud800"`, true},
		{`{"jsonrpc":"2.0","id":"x\udc00y","method":"ping"}`, `"x\udc00y"`, true},
		{`{"jsonrpc":"2.0","id":"\ud83d\u0041","method":"ping"}`, `"\ud83d\u0041"`, true},
		{`{"jsonrpc":"2.0","id":"\ud83dx","method":"ping"}`, `"\ud83dx"`, true},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", "\"\xff\"", true},
		{`{"params":{"id":"\ud800"},"id":2}`, "2", false},
	} {
		id := requestID([]byte(tc.body))
		if string(id) != tc.id || skillsext.GarbledID(id) != tc.bad {
			t.Errorf("%s: id %s garbled %v, want %s %v", tc.body, id, skillsext.GarbledID(id), tc.id, tc.bad)
		}
	}
}

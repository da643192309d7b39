package bench

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// decodeListFrame is the reference: what encoding/json reads from a frame
// that is a JSON object (a JSON-RPC message is one).
func decodeListFrame(frame []byte) (*skimmedFrame, error) {
	if b := skipSpace(frame); len(b) == 0 || b[0] != '{' {
		return nil, errSkim
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Error  json.RawMessage `json:"error"`
		Result *struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		return nil, err
	}
	f := &skimmedFrame{id: m.ID, method: m.Method, err: m.Error}
	if m.Result != nil {
		f.hasResult = true
		f.skills, f.nextCursor = m.Result.Skills, m.Result.NextCursor
	}
	return f, nil
}

func sameFrame(a, b *skimmedFrame) bool {
	raw := func(x []byte) string {
		if string(x) == "null" {
			return ""
		}
		return string(x)
	}
	return raw(a.id) == raw(b.id) && raw(a.method) == raw(b.method) && raw(a.err) == raw(b.err) &&
		a.hasResult == b.hasResult && a.nextCursor == b.nextCursor &&
		slices.EqualFunc(a.skills, b.skills, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

var skimSeeds = []string{
	`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"say \"hi\" \\ ok"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":1}]}],"nextCursor":"abc"}}`,
	` { "id" : 3 , "result" : { "skills" : [ ] } } `,
	`{"id":4,"result":{"skills":[1,"two",[3],{"four":null},true,-5.5e3]}}`,
	`{"id":5,"error":{"code":-32602,"message":"bad cursor"}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
	`{"jsonrpc":"2.0","id":"p1","method":"ping"}`,
	`{"id":6,"result":{"sk\u0069lls":[{"a":"]"}],"nextCursor":"\u0063"}}`,
	`{"id":7,"error":null,"result":{"skills":[{"s":"\\\\"},{"t":"\\\""}]}}`,
	`{"id":8,"result":{"skills":[{]}}`,
	`{"id":9,"result":{"skills":["unterminated]}}`,
	`{"id":10,"result":{"skills":[1,]}}`,
	`{"id":11}{"id":12}`,
	`{"id":13,"result":{"skills":{"not":"an array"}}}`,
	`[{"id":14}]`,
	`{"id":15,"result":{"skills":[{"a":1}],"nextCursor":7}}`,
}

// TestSkimMatchesEncodingJSON: on every seed, the skimmer reads what
// encoding/json reads, or refuses a frame encoding/json refuses.
func TestSkimMatchesEncodingJSON(t *testing.T) {
	for _, frame := range skimSeeds {
		checkSkim(t, []byte(frame))
	}
	got, err := skimListFrame([]byte(skimSeeds[0]))
	if err != nil || len(got.skills) != 1 || got.nextCursor != "abc" || string(got.id) != "2" {
		t.Errorf("first seed: %+v, %v", got, err)
	}
}

func checkSkim(t *testing.T, frame []byte) {
	t.Helper()
	want, werr := decodeListFrame(frame)
	got, gerr := skimListFrame(frame)
	switch {
	case gerr == nil && werr == nil:
		if !sameFrame(got, want) {
			t.Fatalf("%s\nskimmed %+v\ndecoded %+v", frame, got, want)
		}
	case gerr == nil && werr != nil:
		// The skimmer may accept what encoding/json refuses only inside
		// values it does not decode; parseEntries checks the entries.
		if json.Valid(frame) {
			t.Fatalf("%s: skimmed, but encoding/json refused: %v", frame, werr)
		}
	case gerr != nil && werr == nil:
		t.Fatalf("%s: encoding/json read it, the skimmer refused: %v", frame, gerr)
	}
}

// FuzzSkim compares the skimmer with encoding/json on any frame.
func FuzzSkim(f *testing.F) {
	for _, s := range skimSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat(`[`, 100)))
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkSkim(t, frame)
	})
}

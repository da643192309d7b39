package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A project endpoint's answers depend on the token that asks (its
// project's bindings), so on 2026-07-28 every cacheable result is private:
// no shared cache may serve one project's listing to another.
func TestCacheScopePrivate(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	ctx := context.Background()
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	v := install(t, db, "pdf", "Fill PDF forms.", nil)
	if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	tok := projectToken(t, db, "alpha")
	h := startHub(t, db, endpoint.Options{})
	call := func(method string, params map[string]any) map[string]any {
		t.Helper()
		st, m := call20260728(t, h.url("alpha"), tok, method, params)
		res, _ := m["result"].(map[string]any)
		if st != 200 || res == nil {
			t.Fatalf("%s: %d %v", method, st, m)
		}
		return res
	}
	list := call("skills/list", map[string]any{})
	skills, _ := list["skills"].([]any)
	if len(skills) != 1 {
		t.Fatalf("skills/list: %v", list)
	}
	uri, _ := skills[0].(map[string]any)["uri"].(string)
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"tools/list", map[string]any{}},
		{"resources/list", map[string]any{}},
		{"skills/list", map[string]any{}},
		{"skills/get", map[string]any{"uri": uri}},
		{"resources/read", map[string]any{"uri": uri}},
	} {
		res := call(c.method, c.params)
		if res["cacheScope"] != "private" {
			t.Errorf("%s: cacheScope %v, want private", c.method, res["cacheScope"])
		}
		if _, ok := res["ttlMs"].(float64); !ok {
			t.Errorf("%s: no ttlMs: %v", c.method, res)
		}
	}
}

// call20260728 sends one stateless 2026-07-28 request with its headers and
// _meta, and returns the status and the decoded answer.
func call20260728(t *testing.T, url, tok, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if u, ok := params["uri"].(string); ok {
		req.Header.Set("Mcp-Name", u)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// initialize on 2026-07-28 is "method not found" (404, as the SDK answers
// it, never the session handler's version error); the prompts capability
// is declared, with no prompt, since prompts/list is answered (with the
// cache hints) on every revision.
func TestMethodsNotServed(t *testing.T) {
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err := db.CreateProject(context.Background(), "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	tok := projectToken(t, db, "alpha")
	h := startHub(t, db, endpoint.Options{})
	code := func(m map[string]any) any {
		e, _ := m["error"].(map[string]any)
		return e["code"]
	}
	// As the conformance suite sends it: params of _meta only.
	st, m := call20260728(t, h.url("alpha"), tok, "initialize", map[string]any{})
	if st != http.StatusNotFound || code(m) != float64(-32601) {
		t.Errorf("initialize on 2026-07-28: %d %v", st, m)
	}
	st, m = call20260728(t, h.url("alpha"), tok, "server/discover", map[string]any{})
	res, _ := m["result"].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	if st != 200 || caps == nil || caps["prompts"] == nil {
		t.Errorf("server/discover: %d %v", st, m)
	}
	st, m = call20260728(t, h.url("alpha"), tok, "prompts/list", map[string]any{})
	if res, _ := m["result"].(map[string]any); st != 200 || res["cacheScope"] != "private" || len(res["prompts"].([]any)) != 0 {
		t.Errorf("prompts/list on 2026-07-28: %d %v", st, m)
	}
	cs, _ := h.connect(t, "alpha", tok)
	if res, err := cs.ListPrompts(context.Background(), nil); err != nil || len(res.Prompts) != 0 || cs.InitializeResult().Capabilities.Prompts == nil {
		t.Errorf("prompts/list on a 2025-11-25 session: %v %v", res, err)
	}
}

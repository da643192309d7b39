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
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	call := func(method string, params map[string]any) map[string]any {
		t.Helper()
		params["_meta"] = meta
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequest(http.MethodPost, h.url("alpha"), bytes.NewReader(b))
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
		st := resp.StatusCode
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

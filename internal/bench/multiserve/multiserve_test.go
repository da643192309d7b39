package multiserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServe: catalog i is served at /c/i, round-robin over the libraries;
// an unknown catalog is a JSON-RPC error; closing stdin stops the server.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	for _, lib := range []string{"one", "two"} {
		path := filepath.Join(dir, lib, lib+"-skill", "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + lib + "-skill\ndescription: Use for " + lib + " work.\n---\nDo it.\n"
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"--dir", dir, "--catalogs", "5"}, inR, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, outR) // ends when Main's stdout closes
	var ready Ready
	if err := json.Unmarshal(line, &ready); err != nil || ready.Catalogs != 5 {
		t.Fatalf("ready line %s: %v", line, err)
	}
	post := func(path, uri string) (int, string) {
		req, _ := http.NewRequest("POST", ready.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"`+uri+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(data)
	}
	for path, uri := range map[string]string{"/c/0": "skill://one-skill/SKILL.md", "/c/3": "skill://two-skill/SKILL.md"} {
		if code, body := post(path, uri); code != 200 || !strings.Contains(body, `"result"`) {
			t.Errorf("%s %s: %d %s", path, uri, code, body)
		}
	}
	if code, body := post("/c/5", "skill://one-skill/SKILL.md"); code != 404 || !strings.Contains(body, "no such catalog") {
		t.Errorf("/c/5: %d %s, want 404 and a JSON-RPC error", code, body)
	}
	http.DefaultClient.CloseIdleConnections()
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("Main = %d, want 0", code)
	}
}

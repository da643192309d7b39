package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve over stdio runs in-process on the caller's streams: the handshake
// and a listing are answered on the pipes it was given, and the end of
// stdin ends it with status 0, every goroutine stopped.
func TestServeStdioInProcess(t *testing.T) {
	lib := t.TempDir()
	if err := os.MkdirAll(filepath.Join(lib, "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: alpha\ndescription: Use for alpha work.\n---\nDo it.\n"
	if err := os.WriteFile(filepath.Join(lib, "alpha", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := func(string) (string, bool) { return "", false }
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"serve", "--root", lib, "--cache-dir", t.TempDir(), "--log-level", "error"},
			streams{stdin: inR, stdout: outW, stderr: io.Discard, env: env})
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(id int) map[string]any {
		t.Helper()
		for lines.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
				t.Fatalf("%q: %v", lines.Text(), err)
			}
			if v, ok := msg["id"].(float64); ok && int(v) == id {
				return msg
			}
		}
		t.Fatalf("no answer to %d: %v", id, lines.Err())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if msg := answer(1); msg["result"] == nil {
		t.Fatalf("initialize: %v", msg)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	msg := answer(2)
	b, _ := json.Marshal(msg["result"])
	if !strings.Contains(string(b), "skill://alpha/SKILL.md") {
		t.Fatalf("skills/list: %s", b)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case c := <-code:
		if c != cmdline.ExitOK {
			t.Fatalf("exit status %d", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not end 30 s after stdin closed")
	}
}

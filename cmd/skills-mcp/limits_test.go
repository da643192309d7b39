package main_test

// End-to-end tests of bad input and resource limits (issue 16, items 4
// and 5): a malformed request gets a JSON-RPC error and the session or
// connection keeps serving; HTTP refuses batches, bounds answers and
// connections.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// malformedLines are requests a client should never send, with the error
// code each must get. Each is sent alone on a line (stdio) or as a body
// (HTTP).
var malformedLines = []struct {
	line string
	code int
	bad  bool // not a JSON-RPC message: over HTTP, 400
}{
	{`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"skill://code-review/\u0000"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"skill://code-review\u001b[2J"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"skill://code-review/\udb40\udc01"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"file:///\u0007"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":15,"method":"skills/get","params":{"uri":"skill://code-review/SKILL.md\u0000"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":16,"method":"resources/directory/read","params":{"uri":"skill://code-review\u0001"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":17,"method":"skills/list","params":{"cursor":"\ud800"}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":18,"method":"prompts/get","params":{"name":"use-skill","arguments":{"skill":"code-review\u0000"}}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"skills_search_skills","arguments":{"query":"\udc00review"}}}`, -32602, false},
	{`{"jsonrpc":"2.0","id":20,"method":"resources/read","params":{"uri":"skill://code-review/\x41"}}`, -32700, true},
	{"{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"resources/read\",\"params\":{\"uri\":\"skill://\x01\"}}", -32700, true},
	{`[{"jsonrpc":"2.0","id":22,"method":"ping"}]`, -32600, true},
	{`{"jsonrpc":"2.0","id":23,"method":`, -32700, true},
}

// TestStdioMalformedInput: over stdio each malformed line is answered
// with an error, and the session answers the request after it.
func TestStdioMalformedInput(t *testing.T) {
	cmd := exec.Command(binary, "--root", testLibrary)
	cmd.Env = testEnv(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server did not exit cleanly at the end of its input: %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("server did not exit within 30s of its input ending")
		}
	})
	// await returns the answer with the given id; the answers to refused
	// lines without a usable id come with id null.
	await := func(id string) map[string]json.RawMessage {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("the server closed stdout waiting for id %s", id)
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("the server wrote a line that is not JSON: %q", line)
				}
				if string(m["id"]) == id {
					return m
				}
			case <-deadline:
				t.Fatalf("no answer with id %s", id)
			}
		}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing to the server: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	await("0")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range malformedLines {
		send(tc.line)
		id := fmt.Sprint(11 + i)
		if tc.code != -32602 {
			id = "null"
		}
		if got := errorCode(t, await(id)); got != tc.code {
			t.Errorf("%.70q: error code %d, want %d", tc.line, got, tc.code)
		}
		ping := fmt.Sprint(100 + i)
		send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
		if _, ok := await(ping)["result"]; !ok {
			t.Errorf("%.70q: the ping after it got no result", tc.line)
		}
	}
}

func errorCode(t *testing.T, m map[string]json.RawMessage) int {
	t.Helper()
	var e struct{ Code int }
	if err := json.Unmarshal(m["error"], &e); err != nil {
		b, _ := json.Marshal(m)
		t.Errorf("answer %.300s has no error", b)
	}
	return e.Code
}

// postJSON posts body to the MCP endpoint and returns the status and body.
func postJSON(t *testing.T, c *http.Client, endpoint, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, resp.Header, data
}

// TestHTTPMalformedInput: over HTTP a malformed string gets a JSON-RPC
// error (not an empty 200), and the same connection answers the next
// request; a batch gets 400 on every revision.
func TestHTTPMalformedInput(t *testing.T) {
	endpoint := startHTTP(t, nil, "--root", testLibrary)
	var conns int
	c := &http.Client{Transport: &http.Transport{
		MaxConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conns++
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	for _, v := range []string{"", "2025-06-18", "2025-11-25"} {
		header := map[string]string{}
		if v != "" {
			header["MCP-Protocol-Version"] = v
		}
		for _, tc := range malformedLines {
			status, _, body := postJSON(t, c, endpoint, tc.line, header)
			want := 200
			if tc.bad {
				want = 400 // the message is not one: an HTTP error too
			}
			var m map[string]json.RawMessage
			if status != want || json.Unmarshal(body, &m) != nil {
				t.Errorf("%s %.70q: %d %q, want %d and a JSON-RPC error", v, tc.line, status, body, want)
				continue
			}
			if got := errorCode(t, m); got != tc.code {
				t.Errorf("%s %.70q: code %d, want %d", v, tc.line, got, tc.code)
			}
		}
		status, _, body := postJSON(t, c, endpoint, `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://code-review/SKILL.md"}}`, header)
		if status != 200 || !bytes.Contains(body, []byte(`"result"`)) {
			t.Errorf("%s: the request after them got %d %.200s", v, status, body)
		}
	}
	if conns != 1 {
		t.Errorf("the requests took %d connections, want 1 kept open throughout", conns)
	}
}

// TestHTTPLimits: a batch is refused without a protocol header too, an
// answer over --max-response-bytes is an error for its request, and a
// connection past --max-conns is answered 503 and closed.
func TestHTTPLimits(t *testing.T) {
	// One address holds them all: its share is not what is under test.
	endpoint := startHTTP(t, nil, "--root", testLibrary, "--max-response-bytes", "4000", "--max-conns", "2", "--max-conns-per-address", "0")
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}

	batch := `[{"jsonrpc":"2.0","id":1,"method":"skills/list"},{"jsonrpc":"2.0","id":2,"method":"skills/list"}]`
	status, _, body := postJSON(t, c, endpoint, batch, nil)
	if status != 400 || !bytes.Contains(body, []byte("-32600")) {
		t.Errorf("batch without a protocol header: %d %s, want 400 and -32600", status, body)
	}

	// The whole listing of the test library is over 4000 bytes; one skill
	// is not.
	status, _, body = postJSON(t, c, endpoint, `{"jsonrpc":"2.0","id":"big","method":"skills/list","params":{}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	var answer struct {
		ID    string
		Error struct{ Message string }
	}
	if status != 200 || json.Unmarshal(body, &answer) != nil || answer.ID != "big" || !strings.Contains(answer.Error.Message, "over 4000 bytes") {
		t.Errorf("listing over the limit: %d %s, want an error for id big naming the limit", status, body)
	}
	status, _, body = postJSON(t, c, endpoint, `{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://code-review/SKILL.md"}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	if status != 200 || !bytes.Contains(body, []byte(`"result"`)) {
		t.Errorf("skills/get under the limit: %d %.200s", status, body)
	}

	// Two connections are held open; the third is refused.
	u, _ := url.Parse(endpoint)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	c.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for len(held) < 2 {
		// The server frees the client's connection once it sees it closed:
		// until then a connection may be refused.
		if time.Now().After(deadline) {
			t.Fatal("two connections could not be held open")
		}
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			conn.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		resp.Body.Close()
		held = append(held, conn)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the connection past --max-conns got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the connection past --max-conns got %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestHTTPListensTakeNoSlots: open subscriptions/listen streams do not
// count against --max-requests, so hosts listening never lock others out.
func TestHTTPListensTakeNoSlots(t *testing.T) {
	endpoint := startHTTP(t, nil, "--root", testLibrary, "--max-requests", "2")
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 3 {
		req, _ := http.NewRequestWithContext(ctx, "POST", endpoint, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{`+meta+`,"notifications":{"resourcesListChanged":true}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("listen %d: %v", i, err)
		}
		defer resp.Body.Close()
		line, err := bufio.NewReader(resp.Body).ReadString('}')
		if resp.StatusCode != 200 || err != nil || !strings.Contains(line, "subscriptions/acknowledged") {
			t.Fatalf("listen %d: %d %q %v", i, resp.StatusCode, line, err)
		}
	}
	c := &http.Client{}
	status, _, body := postJSON(t, c, endpoint, `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://code-review/SKILL.md"}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	if status != 200 || !bytes.Contains(body, []byte(`"result"`)) {
		t.Errorf("skills/get beside three listens: %d %.200s", status, body)
	}
}

// TestGarbledIDs: a request whose id the SDK could not give back as sent
// (a lone surrogate, invalid UTF-8) is refused with that id, byte for
// byte, over stdio and over HTTP, never answered under another id.
func TestGarbledIDs(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\udc00b","method":"skills/list","params":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
	}
	rawID := func(line string) string {
		_, rest, _ := strings.Cut(line, `"id":`)
		id, _, _ := strings.Cut(rest, `,"method"`)
		return id
	}
	t.Run("stdio", func(t *testing.T) {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
		cmd := exec.Command(binary, "--root", testLibrary)
		cmd.Env = testEnv(t)
		cmd.Stdin = strings.NewReader(init + "\n" + strings.Join(lines, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			want := `{"jsonrpc":"2.0","id":` + rawID(line) + `,"error":{"code":-32600,`
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("no refusal with the id as sent, %q, in:\n%s", want, out)
			}
		}
		if bytes.Contains(out, []byte(`\ufffd`)) || bytes.Contains(out, []byte("\ufffd")) {
			t.Errorf("an id came back replaced:\n%s", out)
		}
	})
	t.Run("http", func(t *testing.T) {
		endpoint := startHTTP(t, nil, "--root", testLibrary)
		for _, line := range lines {
			status, _, body := postJSON(t, http.DefaultClient, endpoint, line, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			want := `{"jsonrpc":"2.0","id":` + rawID(line) + `,"error":{"code":-32600,`
			if status != 400 || !bytes.HasPrefix(body, []byte(want)) {
				t.Errorf("%q: %d %s, want 400 and %s", line, status, body, want)
			}
		}
	})
}

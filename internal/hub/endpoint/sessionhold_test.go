package endpoint_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// A project's session whose large answers go unread holds them in the
// answer budget until they are written: the SDK writes a session's
// answer after its handler returned, and the hold lasts until then, so
// with two unread 8 MB answers (64 MB of the 64 MiB budget) a third read
// finds no room (and fails "server busy" after its wait), and a read gets
// room again once one of them is given up.
func TestSessionUnreadAnswersCounted(t *testing.T) {
	db := openStore(t, store.Options{Dir: t.TempDir()})
	ctx := context.Background()
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	const size = 8_000_000
	line := "A large reference that a session asks for and never reads.\n"
	v := install(t, db, "big", "A skill with one large reference.", storetest.Tree{"references/big.md": strings.Repeat(line, size/len(line)+1)[:size]})
	if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	token := projectToken(t, db, "alpha")
	h := startHub(t, db, endpoint.Options{})
	// post sends body in session (a new one if ""), reads its answer
	// whole, and returns the session.
	post := func(session, body string) string {
		req, _ := http.NewRequest("POST", h.url("alpha"), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode/100 != 2 || (res.StatusCode == 200 && !strings.Contains(string(data), `"result"`)) {
			t.Fatalf("%.100s: %s %v %.300s", body, res.Status, err, data)
		}
		if session == "" {
			session = res.Header.Get("Mcp-Session-Id")
		}
		return session
	}
	session := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if session == "" {
		t.Fatal("initialize made no session")
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	defer func() {
		req, _ := http.NewRequest("DELETE", h.url("alpha"), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", session)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	uri := "skill://" + strings.TrimPrefix(v.TreeDigest, "sha256:")[:12] + "/big/references/big.md"

	var conns []net.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	// unread reads uri in the session on a connection that takes nothing
	// past the start of its answer, which comes on the channel.
	unread := func(id int) <-chan string {
		host := h.srv.Listener.Addr().String()
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		conn.(*net.TCPConn).SetReadBuffer(4 << 10)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`, id, uri)
		fmt.Fprintf(conn, "POST /p/alpha/mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
			host, token, session, len(body), body)
		start := make(chan string, 1)
		go func() { // ends with the answer's start, or when the connection is closed
			res, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
			if err != nil {
				start <- err.Error()
				return
			}
			head := make([]byte, 256)
			n, _ := io.ReadFull(res.Body, head)
			start <- string(head[:n])
		}()
		return start
	}
	for i := range 2 {
		if got := <-unread(100 + i); !strings.Contains(got, `"result"`) {
			t.Fatalf("unread read %d was not answered: %.300q", i, got)
		}
	}
	third := unread(102)
	// Meanwhile the session's other requests are answered.
	post(session, `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{}}`)
	// The third finds no room while the two are unread: it waits its 10 s
	// for room, then fails "server busy".
	if got := <-third; !strings.Contains(got, "server busy") {
		t.Errorf("a third large answer while two are unread: %.300q, want server busy once its wait is over", got)
	}
	// Once one of them is given up, there is room again.
	conns[0].Close()
	if got := <-unread(103); !strings.Contains(got, `"result"`) {
		t.Errorf("a read once an unread answer was given up: %.300q", got)
	}
}

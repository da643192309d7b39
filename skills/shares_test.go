package skills_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/skills"
)

// A handler behind skills-mcp's HTTP guard (as the hub serves its project
// endpoints) shares the answer budget per client, as serve --http does: a
// client whose large answers go unread holds at most its half, its next
// large answer waits behind its own (and then fails "server busy"), and
// another client of the same catalog still gets its large reads.
func TestHandlerAnswerShares(t *testing.T) {
	// About 32 MB of answer (four times the file): one client's share of
	// the 64 MiB budget, so that two of them fit at once and three do not.
	const size = 8_000_000
	line := "A large reference, read by a client that never takes its answer.\n"
	lib := fstest.MapFS{
		"big/SKILL.md":          {Data: []byte(skillMD("big", "A skill with one large reference."))},
		"big/references/big.md": {Data: []byte(strings.Repeat(line, size/len(line)+1)[:size])},
	}
	c := open(t, []skills.Library{{FS: lib}}, nil)
	h, err := skills.NewHandler(skills.HandlerOptions{Select: func(*http.Request) (*skills.Catalog, error) { return c, nil }})
	if err != nil {
		t.Fatal(err)
	}
	// A write deadline past the test's length: the unread answer is held
	// until the test lets it go, never cut by the guard meanwhile.
	g := httpserve.NewGuard(&httpserve.Options{WriteTimeout: 10 * time.Minute, MCP: func(*http.Request) bool { return true }})
	ts := httptest.NewServer(g.Wrap(h))
	defer ts.Close()
	host := ts.Listener.Addr().String()
	const read = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://big/references/big.md"}}`

	// unread asks from 127.0.0.1 on a connection that takes nothing past
	// the start of its answer: what that start says comes on the channel.
	var conns []net.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	unread := func() <-chan string {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
		conn, err := d.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		conn.(*net.TCPConn).SetReadBuffer(4 << 10) // little room to fill
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", host, len(read), read)
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
	// The good client asks from 127.0.0.2 and reads its answers whole.
	tr := &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
	defer tr.CloseIdleConnections()
	good := &http.Client{Transport: tr}

	// The first unread answer is being written, so it holds its share.
	first := unread()
	if got := <-first; !strings.Contains(got, `"result"`) {
		t.Fatalf("the first unread read was not answered: %q", got)
	}
	second := unread()
	for i := range 2 {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(read))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		res, err := good.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Result struct{ Contents []struct{ Text string } }
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(body, &msg); err != nil || msg.Error != nil || len(msg.Result.Contents) != 1 || len(msg.Result.Contents[0].Text) != size {
			t.Fatalf("the other client's read %d, while the first client's answer was unread: %v %.300s", i, err, body)
		}
	}
	// The unread client's second answer waits behind its first, which
	// holds its whole share (or, past the wait's bound, was refused): it
	// never took the other half.
	select {
	case got := <-second:
		if !strings.Contains(got, "server busy") {
			t.Errorf("a second large answer of the client holding one unread: %.300q, want it to wait", got)
		}
	default:
		// Once the first is given up, the second has room.
		conns[0].Close()
		if got := <-second; !strings.Contains(got, `"result"`) && !strings.Contains(got, "server busy") {
			t.Errorf("the second read once the first was given up: %.300q", got)
		}
	}
}

// Over sessions (the hub's per-project handler: the caller's HTTP options,
// stateful, answers on event streams) the SDK writes an answer after its
// handler returned, on the POST's stream: its large answers stay counted
// until written all the same, so a session whose answers go unread holds
// at most its client's half, and another client still gets its reads.
func TestHandlerSessionAnswerShares(t *testing.T) {
	const size = 8_000_000
	line := "A large reference, read by a session that never takes its answer.\n"
	lib := fstest.MapFS{
		"big/SKILL.md":          {Data: []byte(skillMD("big", "A skill with one large reference."))},
		"big/references/big.md": {Data: []byte(strings.Repeat(line, size/len(line)+1)[:size])},
	}
	c := open(t, []skills.Library{{FS: lib}}, nil)
	h, err := skills.NewHandler(skills.HandlerOptions{
		Select: func(*http.Request) (*skills.Catalog, error) { return c, nil },
		HTTP:   &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	g := httpserve.NewGuard(&httpserve.Options{WriteTimeout: 10 * time.Minute, MCP: func(*http.Request) bool { return true }})
	ts := httptest.NewServer(g.Wrap(h))
	defer ts.Close()
	host := ts.Listener.Addr().String()
	const read = `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://big/references/big.md"}}`
	from := func(ip net.IP) *http.Client {
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}).DialContext}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	// post sends body in session (a new one if ""), and returns the
	// session and the data of the answer's event.
	post := func(client *http.Client, session, body string) (string, string) {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("%.100s: %s %v %.300s", body, res.Status, err, data)
		}
		if session == "" {
			session = res.Header.Get("Mcp-Session-Id")
		}
		_, event, _ := strings.Cut(string(data), "data: ")
		return session, strings.TrimSpace(event)
	}
	initialize := func(client *http.Client) string {
		s, _ := post(client, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		post(client, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return s
	}
	badSession := initialize(from(net.IPv4(127, 0, 0, 1)))
	goodClient := from(net.IPv4(127, 0, 0, 2))
	goodSession := initialize(goodClient)
	defer func() { // the sessions end with the test
		for _, s := range []string{badSession, goodSession} {
			req, _ := http.NewRequest("DELETE", ts.URL+"/mcp", nil)
			req.Header.Set("Mcp-Session-Id", s)
			if res, err := goodClient.Do(req); err == nil {
				res.Body.Close()
			}
		}
	}()

	// unread asks in the bad session from 127.0.0.1 on a connection that
	// takes nothing past the start of its answer.
	var conns []net.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	unread := func(id int) <-chan string {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
		conn, err := d.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		conn.(*net.TCPConn).SetReadBuffer(4 << 10)
		body := fmt.Sprintf(read, id)
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s", host, badSession, len(body), body)
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
	first := unread(2)
	if got := <-first; !strings.Contains(got, `"result"`) {
		t.Fatalf("the first unread read was not answered: %q", got)
	}
	second := unread(3)
	for i := range 2 {
		_, event := post(goodClient, goodSession, fmt.Sprintf(read, 10+i))
		var msg struct {
			Result struct{ Contents []struct{ Text string } }
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal([]byte(event), &msg); err != nil || msg.Error != nil || len(msg.Result.Contents) != 1 || len(msg.Result.Contents[0].Text) != size {
			t.Fatalf("the other client's read %d, while the first session's answer was unread: %v %.300s", i, err, event)
		}
	}
	// The bad session's second answer waits behind its first, which holds
	// its client's whole share (or, past the wait's bound, was refused).
	select {
	case got := <-second:
		if !strings.Contains(got, "server busy") {
			t.Errorf("a second large answer of the session holding one unread: %.300q, want it to wait", got)
		}
	default:
		conns[0].Close()
		if got := <-second; !strings.Contains(got, `"result"`) && !strings.Contains(got, "server busy") {
			t.Errorf("the second read once the first was given up: %.300q", got)
		}
	}
}

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

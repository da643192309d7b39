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
	ts := bigAnswerServer(t, nil)
	const read = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://big/references/big.md"}}`
	u := &unreadClient{t: t, host: ts.Listener.Addr().String()}
	defer u.close()
	// The good client asks from 127.0.0.2 and reads its answers whole.
	tr := &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
	defer tr.CloseIdleConnections()
	good := &http.Client{Transport: tr}

	// The first unread answer is being written, so it holds its share.
	first := u.post("", read)
	if got := <-first; !strings.Contains(got, `"result"`) {
		t.Fatalf("the first unread read was not answered: %q", got)
	}
	second := u.post("", read)
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
		if err := wholeRead(body); err != nil {
			t.Fatalf("the other client's read %d, while the first client's answer was unread: %v %.300s", i, err, body)
		}
	}
	u.secondWaited(second)
}

// Over sessions (the hub's per-project handler: the caller's HTTP options,
// stateful, answers on event streams) the SDK writes an answer after its
// handler returned, on the POST's stream: its large answers stay counted
// until written all the same, so a session whose answers go unread holds
// at most its client's half, and another client still gets its reads.
func TestHandlerSessionAnswerShares(t *testing.T) {
	ts := bigAnswerServer(t, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
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

	// The bad session asks from 127.0.0.1 and takes nothing past the start
	// of its answers.
	u := &unreadClient{t: t, host: ts.Listener.Addr().String()}
	defer u.close()
	first := u.post(badSession, fmt.Sprintf(read, 2))
	if got := <-first; !strings.Contains(got, `"result"`) {
		t.Fatalf("the first unread read was not answered: %q", got)
	}
	second := u.post(badSession, fmt.Sprintf(read, 3))
	for i := range 2 {
		_, event := post(goodClient, goodSession, fmt.Sprintf(read, 10+i))
		if err := wholeRead([]byte(event)); err != nil {
			t.Fatalf("the other client's read %d, while the first session's answer was unread: %v %.300s", i, err, event)
		}
	}
	u.secondWaited(second)
}

// bigAnswerSize is the size of the large reference the share tests read:
// about 32 MB of answer (four times the file), one client's share of the
// 64 MiB budget, so that two of them fit at once and three do not.
const bigAnswerSize = 8_000_000

// bigAnswerServer serves a catalog holding skill://big/references/big.md
// (bigAnswerSize bytes) through a Handler with the HTTP options opts (nil:
// its own front end) behind skills-mcp's HTTP guard, as the hub serves its
// project endpoints. The guard's write deadline is past the test's length:
// an unread answer is held until the test lets it go.
func bigAnswerServer(t *testing.T, opts *mcp.StreamableHTTPOptions) *httptest.Server {
	t.Helper()
	line := "A large reference, read by a client that never takes its answer.\n"
	lib := fstest.MapFS{
		"big/SKILL.md":          {Data: []byte(skillMD("big", "A skill with one large reference."))},
		"big/references/big.md": {Data: []byte(strings.Repeat(line, bigAnswerSize/len(line)+1)[:bigAnswerSize])},
	}
	c := open(t, []skills.Library{{FS: lib}}, nil)
	h, err := skills.NewHandler(skills.HandlerOptions{Select: func(*http.Request) (*skills.Catalog, error) { return c, nil }, HTTP: opts})
	if err != nil {
		t.Fatal(err)
	}
	g := httpserve.NewGuard(&httpserve.Options{WriteTimeout: 10 * time.Minute, MCP: func(*http.Request) bool { return true }})
	ts := httptest.NewServer(g.Wrap(h))
	t.Cleanup(ts.Close)
	return ts
}

// unreadClient asks from 127.0.0.1, each request on a connection that
// takes nothing past the start of its answer.
type unreadClient struct {
	t     *testing.T
	host  string
	conns []net.Conn
}

// post sends body (in session, if not "") and returns a channel that gets
// the start of the answer, or the error that ended it.
func (u *unreadClient) post(session, body string) <-chan string {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
	conn, err := d.Dial("tcp", u.host)
	if err != nil {
		u.t.Fatal(err)
	}
	u.conns = append(u.conns, conn)
	conn.(*net.TCPConn).SetReadBuffer(4 << 10) // little room to fill
	header := ""
	if session != "" {
		header = "Mcp-Session-Id: " + session + "\r\n"
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n%sContent-Length: %d\r\n\r\n%s", u.host, header, len(body), body)
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

// secondWaited checks that the client's second large answer, second, waits
// behind its first, which holds the client's whole share (or, past the
// wait's bound, was refused): it never took the other half. Once the
// first is given up, the second has room.
func (u *unreadClient) secondWaited(second <-chan string) {
	select {
	case got := <-second:
		if !strings.Contains(got, "server busy") {
			u.t.Errorf("a second large answer of the client holding one unread: %.300q, want it to wait", got)
		}
	default:
		u.conns[0].Close()
		if got := <-second; !strings.Contains(got, `"result"`) && !strings.Contains(got, "server busy") {
			u.t.Errorf("the second read once the first was given up: %.300q", got)
		}
	}
}

func (u *unreadClient) close() {
	for _, conn := range u.conns {
		conn.Close()
	}
}

// wholeRead returns why body is not the answer of a whole read of the
// large reference, or nil.
func wholeRead(body []byte) error {
	var msg struct {
		Result struct{ Contents []struct{ Text string } }
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return err
	}
	if msg.Error != nil {
		return fmt.Errorf("error %q", msg.Error.Message)
	}
	if len(msg.Result.Contents) != 1 || len(msg.Result.Contents[0].Text) != bigAnswerSize {
		return fmt.Errorf("not the whole file")
	}
	return nil
}

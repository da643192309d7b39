package server

import (
	"bufio"
	"context"
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

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// TestSessionAnswerHeldUntilWritten: over a stateful session (the hub's
// per-project sessions) the SDK runs the handler in the session's context,
// not the POST's, and writes the answer after the handler returned; the
// answer's reservation is still held until the POST's answer is written,
// and given back whole once its client goes away.
func TestSessionAnswerHeldUntilWritten(t *testing.T) {
	const size = 8_000_000 // more than loopback's socket buffers take
	fs := frontLibrary()
	fs["a/references/big.md"] = &fstest.MapFile{Data: []byte(strings.Repeat("0123456789abcdef", size/16))}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: fs, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			srv := NewServer(catalog.NewStore(snap), &Options{Client: httpserve.ClientOf})
			sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse, DisableLocalhostProtection: true})
			g := httpserve.NewGuard(&httpserve.Options{WriteTimeout: 10 * time.Minute, MCP: func(*http.Request) bool { return true }})
			ts := httptest.NewServer(g.Wrap(srv.AnswersHandler(sdk)))
			defer ts.Close()
			id := startSession(t, ts.URL+"/mcp")
			defer endSession(ts.URL+"/mcp", id)

			// A read on a connection that takes nothing past the start of its
			// answer.
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.(*net.TCPConn).SetReadBuffer(4 << 10)
			read := `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"skill://a/references/big.md"}}`
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
				ts.Listener.Addr(), id, len(read), read)
			res, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
			if err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 256)
			if n, err := io.ReadFull(res.Body, head); err != nil || !strings.Contains(string(head[:n]), `"result"`) {
				t.Fatalf("the read's answer starts %q: %v", head[:n], err)
			}
			// The SDK writes after the handler returned: what the answer holds
			// is still counted while it is being written.
			if got, want := srv.s.answers.heldBytes(), int64(answerCost*size); got != want {
				t.Errorf("while the session's answer is unread: %d bytes held, want %d", got, want)
			}
			conn.Close()
			waitFor(t, "the budget whole again after the client went away", func() bool { return srv.s.answers.heldBytes() == 0 })
		})
	}
}

// startSession initializes a session at url and returns its id.
func startSession(t *testing.T, url string) string {
	t.Helper()
	post := func(body, session string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			t.Fatalf("%s: %s", body, res.Status)
		}
		return res
	}
	res := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	id := res.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id)
	return id
}

// endSession ends the session id at url.
func endSession(url, id string) {
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

// TestAnswerTicketOwners: a reservation on an HTTP request's ticket is
// given back once both the handler and the request are done with it, in
// either order, and one taken after the request ended is the handler's
// alone (a session's handler can outlive its POST).
func TestAnswerTicketOwners(t *testing.T) {
	b := newAnswerBudget(&Options{})
	const n = answerCost << 20
	for _, handlerFirst := range []bool{true, false} {
		tk := &answerTicket{}
		h, err := b.hold(context.WithValue(context.Background(), answerTicketKey{}, tk), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		first, second := tk.done, h.release
		if handlerFirst {
			first, second = h.release, tk.done
		}
		first()
		if got := b.heldBytes(); got != n {
			t.Errorf("handler first %v: %d held after one owner let go, want %d", handlerFirst, got, n)
		}
		second()
		if got := b.heldBytes(); got != 0 {
			t.Errorf("handler first %v: %d held after both let go", handlerFirst, got)
		}
	}
	tk := &answerTicket{}
	tk.done()
	h, err := b.hold(context.WithValue(context.Background(), answerTicketKey{}, tk), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	h.release()
	if got := b.heldBytes(); got != 0 {
		t.Errorf("a hold taken after its request ended: %d held after the handler returned", got)
	}
}

// TestAnswersHandlerTicket: AnswersHandler names its ticket in the POST's
// header in place of any the client sent, and the ticket is found from
// the header only while the request is served.
func TestAnswersHandlerTicket(t *testing.T) {
	var name string
	var found bool
	h := (&Server{}).AnswersHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name = r.Header.Get(ticketHeader)
		ctx := withHeaderTicket(context.Background(), &mcp.ReadResourceRequest{Extra: &mcp.RequestExtra{Header: r.Header}})
		_, found = ctx.Value(answerTicketKey{}).(*answerTicket)
	}))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set(ticketHeader, "forged")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if name == "" || name == "forged" || !found {
		t.Errorf("ticket %q found %v, want a fresh one found", name, found)
	}
	if req.Header.Get(ticketHeader) != "forged" {
		t.Error("the caller's request header was changed")
	}
	ctx := withHeaderTicket(context.Background(), &mcp.ReadResourceRequest{Extra: &mcp.RequestExtra{Header: http.Header{ticketHeader: {name}}}})
	if ctx.Value(answerTicketKey{}) != nil {
		t.Error("a ticket was found after its request ended")
	}
}

// waitFor waits until cond holds, failing the test if it does not within a
// minute: a wait for a state, not a timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

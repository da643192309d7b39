package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// listenPeer is an HTTP server on the front library, as serve stands it
// (behind the guard), with or without the front end.
type listenPeer struct {
	url   string
	srv   *Server
	n     *Notifier
	store *catalog.Store
}

func startListenPeer(t *testing.T, front bool) *listenPeer {
	t.Helper()
	store := catalog.NewStore(frontSnapshot(t))
	n := &Notifier{}
	srv := NewServer(store, &Options{Notifier: n, Version: "1.2", NoFastPath: !front})
	ts := httptest.NewServer(httpserve.Handler(StreamableHTTP(srv.MCP(), srv, nil), nil))
	t.Cleanup(ts.Close)
	return &listenPeer{url: ts.URL + "/mcp", srv: srv, n: n, store: store}
}

// listenOn opens a listen stream with id and the notifications asked for,
// and returns its answer (closed when the test ends) and a reader of its
// events.
func listenOn(t *testing.T, url, id, notifications string) (*http.Response, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"notifications":%s}}`, id, notifications)
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// event reads one event (up to its blank line), skipping keep-alive
// comments.
func event(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, ev.String())
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		if line == "\n" {
			if ev.Len() > 0 {
				return ev.String()
			}
			continue
		}
		ev.WriteString(line)
	}
}

// parked returns how many listen streams the front end holds parked.
func (p *listenPeer) parked() int {
	h := p.srv.s.listen
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

// TestListenParked: the front end parks a plain listen stream with the
// HTTP layer, and its client gets what the SDK would send, byte for byte:
// the same header, the acknowledgement, and each list-changed
// notification it subscribed to, however its id is spelled.
func TestListenParked(t *testing.T) {
	front, sdk := startListenPeer(t, true), startListenPeer(t, false)
	for _, tc := range []struct{ id, notifications string }{
		{"1", `{"resourcesListChanged":true}`},
		{`"ab-7"`, `{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true}`},
		{"-42", `{"promptsListChanged":false,"resourcesListChanged":true}`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			fr, fbr := listenOn(t, front.url, tc.id, tc.notifications)
			sr, sbr := listenOn(t, sdk.url, tc.id, tc.notifications)
			for _, h := range []string{"Content-Type", "Cache-Control", "Connection"} {
				if fr.Header.Get(h) != sr.Header.Get(h) {
					t.Errorf("%s: front end %q, SDK %q", h, fr.Header.Get(h), sr.Header.Get(h))
				}
			}
			if fr.StatusCode != 200 || sr.StatusCode != 200 {
				t.Fatalf("status: front end %d, SDK %d", fr.StatusCode, sr.StatusCode)
			}
			if f, s := event(t, fbr), event(t, sbr); f != s {
				t.Errorf("acknowledgement:\nfront end %s\nSDK       %s", f, s)
			}
			if front.parked() == 0 {
				t.Error("the front end did not park the stream")
			}
			front.n.CatalogChanged()
			sdk.n.CatalogChanged()
			if f, s := event(t, fbr), event(t, sbr); f != s || !strings.Contains(f, "notifications/resources/list_changed") {
				t.Errorf("after a catalog change:\nfront end %s\nSDK       %s", f, s)
			}
		})
	}
	// Once its clients leave, the front end holds nothing.
	deadline := time.Now().Add(10 * time.Second)
	for front.parked() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still parked after their clients left", front.parked())
		}
		time.Sleep(10 * time.Millisecond) // polling for the closes to be seen
	}
	if front.srv.s.listen.session != nil {
		t.Error("the hub's session is open with no stream")
	}
}

// TestListenLeftToSDK: listens the front end does not take get the SDK's
// answer: resource subscriptions, an unknown member, no notification
// asked for, and a server with no guard to park the stream with.
func TestListenLeftToSDK(t *testing.T) {
	front := startListenPeer(t, true)
	for _, notifications := range []string{
		`{"resourceSubscriptions":["skill://a/SKILL.md"]}`,
		`{"resourcesListChanged":true,"somethingNew":true}`,
	} {
		resp, _ := listenOn(t, front.url, "1", notifications)
		resp.Body.Close()
		if front.parked() != 0 {
			t.Errorf("%s: parked", notifications)
		}
	}
	// Nothing asked: the SDK answers at once.
	resp, br := listenOn(t, front.url, "2", `{}`)
	event(t, br) // its acknowledgement, of nothing
	if ev := event(t, br); resp.StatusCode != 200 || !strings.Contains(ev, `"result"`) || front.parked() != 0 {
		t.Errorf("a listen of nothing: %d %q", resp.StatusCode, ev)
	}

	// Without the guard, no parker: the SDK serves the stream.
	store := catalog.NewStore(frontSnapshot(t))
	srv := NewServer(store, nil)
	ts := httptest.NewServer(StreamableHTTP(srv.MCP(), srv, nil))
	t.Cleanup(ts.Close)
	resp, br = listenOn(t, ts.URL, "3", `{"resourcesListChanged":true}`)
	if ev := event(t, br); resp.StatusCode != 200 || !strings.Contains(ev, "subscriptions/acknowledged") {
		t.Errorf("without a guard: %d %q", resp.StatusCode, ev)
	}
	if srv.s.listen != nil {
		t.Error("a stream was parked without a guard")
	}
}

// TestAnswerBudget: large answers wait for room in the budget, a
// client's own answers queue behind each other while another client's
// pass, one answer larger than a share is possible for a client that holds
// nothing, and an answer that finds no room within answerWait fails with
// "server busy".
func TestAnswerBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const mib = 1 << 20
		b := newAnswerBudget(&Options{AnswerBytes: 64 * mib, ClientAnswerBytes: 16 * mib, Client: func(ctx context.Context) (string, bool) {
			c, ok := ctx.Value(clientName{}).(string)
			return c, ok
		}})
		as := func(c string) context.Context { return context.WithValue(context.Background(), clientName{}, c) }
		small, err := b.hold(as("a"), 1000)
		if err != nil || b.heldBytes() != 0 {
			t.Fatalf("a small answer: %v, %d held", err, b.heldBytes())
		}
		small.release()
		// 3 MiB of file: 12 MiB of answer, within a's share of 16.
		relA, err := b.hold(as("a"), 3*mib)
		if err != nil {
			t.Fatal(err)
		}
		// A second one waits until the first is written.
		got := make(chan error, 1)
		var relA2 *answerHold
		go func() {
			var err error
			relA2, err = b.hold(as("a"), 3*mib)
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("a's second answer went past its share: %v", err)
		default:
		}
		// Another client passes meanwhile, even over its share alone.
		relB, err := b.hold(as("b"), 5*mib)
		if err != nil {
			t.Fatalf("b: %v", err)
		}
		relA.release()
		if err := <-got; err != nil {
			t.Fatalf("a's second answer after the first: %v", err)
		}
		// The total: b holds 20 MiB and a 12; 12 more for c fit, then 32
		// do not, and fail after answerWait.
		relC, err := b.hold(as("c"), 3*mib)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := b.hold(as("d"), 8*mib); err != errBusy || time.Since(start) != answerWait {
			t.Errorf("over the total: %v after %s, want errBusy after %s", err, time.Since(start), answerWait)
		}
		relA2.release()
		relB.release()
		relC.release()
		if b.heldBytes() != 0 {
			t.Errorf("%d bytes held after every release", b.heldBytes())
		}
	})
}

type clientName struct{}

// TestHTTPBusyWaitsOnce: over HTTP a read that finds no room in the answer
// budget is answered "server busy" after answerWait, whoever answers it:
// the front end, having waited, hands it to the SDK, whose handler does
// not wait as long again.
func TestHTTPBusyWaitsOnce(t *testing.T) {
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: bigLibrary(), Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, noFast := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			// Another answer holds 4 MiB of 6: a read of the 1 MiB file
			// (4 MiB of answer) finds no room until it is written.
			srv := NewServer(catalog.NewStore(snap), &Options{AnswerBytes: 6 << 20, NoFastPath: noFast})
			other, err := srv.s.answers.hold(context.Background(), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer other.release()
			h := srv.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}))
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://a/references/big.md"}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			w := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(w, req)
			if waited := time.Since(start); waited != answerWait || !strings.Contains(w.Body.String(), "server busy") {
				t.Errorf("no fast path %v: %d %.200s after %s, want server busy after %s", noFast, w.Code, w.Body, waited, answerWait)
			}
		})
	}
}

// bigLibrary is the front library with a file of 1 MiB.
func bigLibrary() fstest.MapFS {
	fs := frontLibrary()
	fs["a/references/big.md"] = &fstest.MapFile{Data: []byte(strings.Repeat("0123456789abcdef", 1<<16))}
	return fs
}

// TestAnswerQueue: over stdio an answer's reservation is held until its
// frame is written (a host that stops reading makes the requests behind
// wait), and given back at once when the handler has no answer.
func TestAnswerQueue(t *testing.T) {
	b := newAnswerBudget(&Options{})
	q := &answerQueue{}
	ctx := context.WithValue(context.Background(), answerQueueKey{}, q)
	h, err := b.hold(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	h.answer()
	h.release()
	if got := b.heldBytes(); got != answerCost<<20 {
		t.Fatalf("after the handler returned: %d held, want the answer's %d", got, answerCost<<20)
	}
	q.wrote(100) // a small frame: another answer
	if b.heldBytes() == 0 {
		t.Fatal("a small frame gave back a large answer's reservation")
	}
	q.wrote(1<<20 + 200) // its frame
	if got := b.heldBytes(); got != 0 {
		t.Fatalf("after its frame: %d held", got)
	}
	h, _ = b.hold(ctx, 1<<20)
	h.release() // no answer: the handler failed
	if got := b.heldBytes(); got != 0 {
		t.Fatalf("after a failed handler: %d held", got)
	}
	h, _ = b.hold(ctx, 1<<20)
	h.answer()
	h.release()
	q.close() // the session ended
	if got := b.heldBytes(); got != 0 {
		t.Fatalf("after the session: %d held", got)
	}
}

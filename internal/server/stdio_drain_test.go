package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// eofReader reads r and closes eof once r has reported its end.
type eofReader struct {
	r   io.Reader
	eof chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		close(e.eof)
	}
	return n, err
}

// drainRun serves input, then its end, on a server whose first scan is
// still running, with the given drain deadline. It returns the session's
// output, once RunStdio has returned, after calling ready (if not nil)
// when the server has read the end of the input.
func drainRun(t *testing.T, input string, drain time.Duration, ready func(*catalog.Store, *Notifier)) (string, time.Duration) {
	t.Helper()
	store := catalog.NewPendingStore()
	n := new(Notifier)
	srv := NewServer(store, &Options{PageSize: 100, Notifier: n})
	in := &eofReader{r: strings.NewReader(input), eof: make(chan struct{})}
	var out bytes.Buffer
	w := &lockedWriter{w: &out}
	start := time.Now()
	returned := make(chan error, 1)
	go func() { returned <- srv.runStdio(context.Background(), in, w, drain) }()
	select {
	case <-in.eof:
	case <-time.After(10 * time.Second):
		t.Fatal("the input was not read to its end")
	}
	if ready != nil {
		ready(store, n)
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Logf("RunStdio: %v", err)
		}
	case <-time.After(drain + 20*time.Second):
		t.Fatal("RunStdio did not return after the input ended")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return out.String(), time.Since(start)
}

// answers maps each answer's id to the answer, in out.
func answers(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		if m.Method == "" && m.ID != nil {
			got[string(m.ID)] = sc.Text()
		}
	}
	return got
}

// TestStdioDrainsAtEOF: requests read before stdin closed are all
// answered, those that wait for the first scan once it is in, on every
// revision, whether the front end or the SDK answers them, however their
// ids are spelled.
func TestStdioDrainsAtEOF(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			input := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, version) + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":1,"method":"skills/list"}` + "\n" +
				`{"jsonrpc":"2.0","id":"two","method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}` + "\n" +
				`{"jsonrpc":"2.0","id":3.0,"method":"resources/read","params":{"uri":"skill://a/references/guide.md"}}` + "\n" +
				`{"jsonrpc":"2.0","id":"\u0034","method":"tools/list"}` + "\n" +
				`{"jsonrpc":"2.0","id":5,"method":"skills/list","params":{"_meta":{"pad":"` + strings.Repeat("x", frontLineBytes) + `"}}}` + "\n" +
				// The last line has no newline.
				`{"jsonrpc":"2.0","id":6,"method":"skills/get","params":{"uri":"skill://b/SKILL.md"}}`
			out, _ := drainRun(t, input, time.Minute, func(store *catalog.Store, n *Notifier) {
				store.Swap(frontSnapshot(t))
				n.CatalogReady()
			})
			got := answers(t, out)
			for id, want := range map[string]string{"0": `"serverInfo"`, "1": `"skills":[`, `"two"`: `"name":"a"`, "3": `guide`, `"4"`: `"tools":[`, "5": `"skills":[`, "6": `"name":"b"`} {
				if !strings.Contains(got[id], want) {
					t.Errorf("answer %s = %.200q, want it to hold %s", id, got[id], want)
				}
			}
		})
	}
}

// TestStdioDrainDeadline: a request still waiting when the deadline
// passes is dropped, and RunStdio returns rather than wait for it.
func TestStdioDrainDeadline(t *testing.T) {
	input := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"skills/list"}` + "\n"
	out, took := drainRun(t, input, 100*time.Millisecond, nil) // the scan never ends
	got := answers(t, out)
	if _, ok := got["0"]; !ok {
		t.Errorf("initialize was not answered: %q", out)
	}
	if a, ok := got["1"]; ok && !strings.Contains(a, `"error"`) {
		t.Errorf("skills/list answered from no catalog: %.200q", a)
	}
	if took < 100*time.Millisecond {
		t.Errorf("returned after %s, before the deadline", took)
	}
}

// lockedBuffer is a buffer safe for concurrent use, for logs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStdioDrainUnreadStdout: a host that stops reading stdout does not
// hold the process past the drain deadline once stdin has closed:
// RunStdio returns, and the log says truthfully what it leaves unwritten.
// While the host reads nothing, large reads wait for the answers before
// them rather than pile theirs up (the answer budget).
func TestStdioDrainUnreadStdout(t *testing.T) {
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: bigLibrary(), Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	srv := NewServer(catalog.NewStore(snap), &Options{AnswerBytes: 8 << 20,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	input := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	for i := range 20 {
		input += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://a/references/big.md"}}`, i+1) + "\n"
	}
	outR, outW := io.Pipe() // the host reads nothing
	defer outR.Close()      // and leaves, unblocking what is stuck
	const drain = 200 * time.Millisecond
	returned := make(chan error, 1)
	go func() { returned <- srv.runStdio(context.Background(), strings.NewReader(input), outW, drain) }()
	select {
	case <-returned:
	case <-time.After(20 * time.Second):
		t.Fatal("RunStdio did not return at the drain deadline while the host read nothing")
	}
	log := logs.String()
	if !strings.Contains(log, "not reading stdout") || !strings.Contains(log, "unwritten=") || strings.Contains(log, "unwritten=0") {
		t.Errorf("the log does not say that answers were left unwritten:\n%s", log)
	}
	if held := srv.s.answers.heldBytes(); held > 8<<20 {
		t.Errorf("the answers held %d bytes, over the budget", held)
	}
}

// TestAnswerID: the id of an answer is read as the SDK reads the id of the
// request, whichever way the answer is laid out; the server's own requests
// and notifications answer nothing.
func TestAnswerID(t *testing.T) {
	num, _ := jsonrpc.MakeID(float64(7))
	str, _ := jsonrpc.MakeID("a\"b")
	for msg, want := range map[string]*jsonrpc.ID{
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                                &num,
		`{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32602,"message":"x"}}`: &str,
		`{"jsonrpc":"2.0","id":"a\u0022b","result":{}}`:                       &str,
		`{"id":7,"jsonrpc":"2.0","result":{}}`:                                &num,
		`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`:                      nil,
		`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`:   nil,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`:   nil,
		`not json`: nil,
	} {
		var got []jsonrpc.ID
		answeredIDs([]byte(msg+"\n"), func(id jsonrpc.ID) { got = append(got, id) })
		switch {
		case want == nil && len(got) > 0:
			t.Errorf("%s answers %v", msg, got)
		case want != nil && (len(got) != 1 || got[0] != *want):
			t.Errorf("%s answers %v, want %v", msg, got, *want)
		}
	}
	var got []jsonrpc.ID
	answeredIDs([]byte(`[{"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","id":"a\"b","result":{}}]`), func(id jsonrpc.ID) { got = append(got, id) })
	if len(got) != 2 || got[0] != num || got[1] != str {
		t.Errorf("batch answers %v", got)
	}
}

// FuzzAnswerID: the answer the SDK encodes for a call answers that call's
// id, whatever the id; and no input makes answeredIDs fail.
func FuzzAnswerID(f *testing.F) {
	f.Add("a\"b", int64(7), []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`))
	f.Add("\u2028<&>", int64(-1), []byte(`[{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":""}}]`))
	f.Fuzz(func(t *testing.T, s string, n int64, raw []byte) {
		answeredIDs(raw, func(jsonrpc.ID) {})
		for _, v := range []any{s, float64(n)} {
			call, err := jsonrpc.MakeID(v)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call, Result: json.RawMessage(`{"x":1}`)})
			if err != nil {
				return // an id the SDK cannot encode is never answered
			}
			req, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: call, Method: "m"})
			if err != nil {
				t.Fatal(err)
			}
			// The call as the SDK reads it back, and its answer.
			m, err := jsonrpc.DecodeMessage(req)
			if err != nil {
				continue
			}
			var got []jsonrpc.ID
			answeredIDs(append(msg, '\n'), func(id jsonrpc.ID) { got = append(got, id) })
			if want := m.(*jsonrpc.Request).ID; len(got) != 1 || got[0] != want {
				t.Fatalf("answer %s settles %v, want %v", msg, got, want)
			}
		}
	})
}

package mcpclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// TestHeaderStaysWithItsOrigin: a redirect to another origin must not carry
// the configured headers, which hold credentials.
func TestHeaderStaysWithItsOrigin(t *testing.T) {
	var otherGot string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherGot = r.Header.Get("Authorization")
		io.WriteString(w, "ok")
	}))
	defer other.Close()
	var firstGot string
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstGot = r.Header.Get("Authorization")
		w.Header().Set("Location", other.URL+"/x")
		w.WriteHeader(http.StatusFound)
	}))
	defer first.Close()
	m := new(Meter)
	tr, err := NewHTTPTransport(first.URL+"/mcp", http.Header{"Authorization": {"Bearer secret"}}, 1<<20, m)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.HTTPClient.Get(first.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if firstGot != "Bearer secret" || otherGot != "" {
		t.Errorf("first origin got %q, the redirect target got %q; want the header at the first only", firstGot, otherGot)
	}
	if m.Received() != 2 {
		t.Errorf("received %d bytes, want 2", m.Received())
	}
}

// TestBodyBound: a body over the bound fails the read, and the meter says
// why, whether the length was declared or not.
func TestBodyBound(t *testing.T) {
	for _, declared := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !declared {
				w.(http.Flusher).Flush() // chunked: no Content-Length
			}
			io.WriteString(w, strings.Repeat("x", 100))
		}))
		m := new(Meter)
		tr, _ := NewHTTPTransport(srv.URL, nil, 10, m)
		resp, err := tr.HTTPClient.Get(srv.URL)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		srv.Close()
		if err == nil || !strings.Contains(m.Cause(), "over the 10-byte limit of one message") {
			t.Errorf("declared=%v: err %v, cause %q", declared, err, m.Cause())
		}
	}
}

// TestLineBound: a line over the bound is noted, the first cause kept.
func TestLineBound(t *testing.T) {
	m := new(Meter)
	r := &lineReader{r: strings.NewReader("short\n" + strings.Repeat("y", 20) + "\n"), max: 10, meter: m}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Cause(), "over the 10-byte limit") || m.Received() != 27 {
		t.Errorf("cause %q, received %d", m.Cause(), m.Received())
	}
	if _, err := NewHTTPTransport("ftp://h/x", nil, 1, m); err == nil {
		t.Error("a non-HTTP URL was accepted")
	}
}

// recorder is a Tap that keeps what it saw.
type recorder struct {
	mu             sync.Mutex
	sent, received []string
}

func (r *recorder) Sent(msg []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, string(msg))
}

func (r *recorder) Received(msg []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = append(r.received, string(msg))
}

// TestTap: the tap sees each request body and each message of a JSON body,
// of an event stream and of a stdio stream, whole, however the bytes came.
func TestTap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\r\nid: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: comment\n\ndata: {\"b\":2}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"c":3}`)
	}))
	defer srv.Close()
	rec := &recorder{}
	m := &Meter{Tap: rec}
	tr, err := NewHTTPTransport(srv.URL+"/mcp", nil, 1<<20, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/mcp", "/sse"} {
		resp, err := tr.HTTPClient.Post(srv.URL+path, "application/json", strings.NewReader(`{"q":1}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, iotest.OneByteReader(resp.Body))
		resp.Body.Close()
	}
	want := []string{`{"c":3}`, "{\"a\":\n1}", `{"b":2}`}
	if !slices.Equal(rec.received, want) || !slices.Equal(rec.sent, []string{`{"q":1}`, `{"q":1}`}) {
		t.Errorf("received %q, sent %q; want %q and the two bodies", rec.received, rec.sent, want)
	}

	rec = &recorder{}
	lr := &lineReader{r: iotest.HalfReader(strings.NewReader("{\"x\":1}\n\n{\"y\":2}\r\n{\"z\"")), meter: m, tap: rec}
	io.ReadAll(lr)
	if want := []string{`{"x":1}`, "{\"y\":2}\r", `{"z"`}; !slices.Equal(rec.received, want) {
		t.Errorf("stdio lines %q, want %q", rec.received, want)
	}
}

package httpserve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// pattern returns n bytes that differ from one position to the next, so
// that a body joined out of order, or with a piece repeated, is seen.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%23)
	}
	return b
}

// lengthless hides the length of its reader from httptest.NewRequest, so
// the request is sent as a chunked one would arrive.
type lengthless struct{ io.Reader }

// serveBody passes a request with body through g.limitBody to next and
// returns the recorded answer. chunked sends no Content-Length.
func serveBody(g *Guard, next http.Handler, body io.Reader, n int64, chunked bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", lengthless{body})
	r.ContentLength = n
	if chunked {
		r.ContentLength = -1
	}
	w := httptest.NewRecorder()
	g.serveMCP(next).ServeHTTP(w, r)
	return w
}

// TestBodyPieces reads bodies of every size around the first buffer and
// the pooled pieces, announced and chunked, and checks that the handler
// gets each one whole and in order, that the ones over the limit are
// refused, and that the budget is whole again after each request.
func TestBodyPieces(t *testing.T) {
	const limit = 300 << 10
	g := newGuard(&Options{MaxBodyBytes: limit}, time.Now)
	var got []byte
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		if used := g.bodies.used.Load(); used < int64(len(got)) {
			t.Errorf("a body of %d bytes is served with only %d bytes reserved", len(got), used)
		}
	})
	for _, n := range []int{1, 100, firstPiece - 1, firstPiece, firstPiece + 1,
		firstPiece + bodyPiece - 1, firstPiece + bodyPiece, firstPiece + bodyPiece + 1,
		3*bodyPiece + 17, limit - 1, limit, limit + 1, limit + bodyPiece} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d chunked=%v", n, chunked), func(t *testing.T) {
				got = nil
				want := pattern(n)
				w := serveBody(g, next, bytes.NewReader(want), int64(n), chunked)
				switch {
				case n > limit:
					if w.Code != http.StatusRequestEntityTooLarge || got != nil {
						t.Errorf("status %d (handler called: %v), want 413", w.Code, got != nil)
					}
				case w.Code != http.StatusOK:
					t.Errorf("status %d, want 200: %s", w.Code, w.Body)
				case !bytes.Equal(got, want):
					t.Errorf("handler got %d bytes, not the %d sent (first difference at %d)", len(got), n, firstDiff(got, want))
				}
				if used := g.bodies.used.Load(); used != 0 {
					t.Errorf("%d bytes of the body budget still reserved after the request", used)
				}
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// zeros reads as endless zero bytes, without allocating.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestRefusedBodyLeavesNoGarbage sends bodies streamed past the default
// limit again and again, as the attack run does: each costs the limit
// while it is read, but its pieces go back to the pool, so the server
// allocates almost nothing per refusal. (Each one allocated 4 MiB before,
// and one client sending them paced the heap to three times its idle
// size.)
func TestRefusedBodyLeavesNoGarbage(t *testing.T) {
	g := newGuard(nil, time.Now)
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("a body over the limit reached the handler") })
	send := func() {
		w := serveBody(g, next, io.LimitReader(zeros{}, DefaultMaxBodyBytes+bodyPiece), -1, true)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", w.Code)
		}
	}
	send() // fills the pool
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		send()
	}
	runtime.ReadMemStats(&after)
	// A collection during the loop may empty the pool once or twice;
	// refilling it is a few limits' worth over n requests.
	perRequest := (after.TotalAlloc - before.TotalAlloc) / n
	bound := uint64(DefaultMaxBodyBytes / 4)
	if raceEnabled {
		bound = DefaultMaxBodyBytes / 2 // the pool drops a quarter of what it is given
	}
	if perRequest > bound {
		t.Errorf("each refused body allocated %d bytes; the pieces it was read into are not reused", perRequest)
	}
	t.Logf("%d bytes allocated per refused body of over %d bytes", perRequest, DefaultMaxBodyBytes)
	if used := g.bodies.used.Load(); used != 0 {
		t.Errorf("%d bytes of the body budget still reserved", used)
	}
}

// TestBodyBudget holds bodies being read until the budget is spent: the
// next body gets 503 with Retry-After, and once the held ones end, bodies
// are read again.
func TestBodyBudget(t *testing.T) {
	const limit = 1 << 20
	g := newGuard(&Options{MaxBodyBytes: limit}, time.Now)
	g.bodies.limit = 3 * (limit + bodyPiece)
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	// Three chunked bodies stop just short of the limit, and wait.
	var writers []*io.PipeWriter
	done := make(chan *httptest.ResponseRecorder, 3)
	for range 3 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		go func() { done <- serveBody(g, next, pr, -1, true) }()
		if _, err := pw.Write(pattern(limit - 1)); err != nil {
			t.Fatal(err)
		}
	}
	w := serveBody(g, next, bytes.NewReader(pattern(limit-1)), -1, true)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("with the budget spent: status %d, Retry-After %q; want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	for _, pw := range writers {
		pw.Close()
	}
	for range writers {
		if w := <-done; w.Code != http.StatusOK {
			t.Errorf("a held body: status %d, want 200", w.Code)
		}
	}
	if used := g.bodies.used.Load(); used != 0 {
		t.Errorf("%d bytes of the body budget still reserved", used)
	}
	if w := serveBody(g, next, bytes.NewReader(pattern(limit-1)), -1, true); w.Code != http.StatusOK {
		t.Errorf("after the held bodies: status %d, want 200", w.Code)
	}
}

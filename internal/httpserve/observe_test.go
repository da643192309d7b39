package httpserve_test

import (
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// recorder is an Observer that keeps what it hears.
type recorder struct {
	mu       sync.Mutex
	requests []httpserve.RequestInfo
	rate     []string
	size     []string
}

func (r *recorder) Request(i httpserve.RequestInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, i)
}

func (r *recorder) RateLimited(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rate = append(r.rate, k)
}

func (r *recorder) SizeLimited(l string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.size = append(r.size, l)
}

// TestObserver checks what the Observer hears: the method and status of
// each request, a streamed body over the limit (whose method was read),
// and that a handler behind it can still flush and set deadlines.
func TestObserver(t *testing.T) {
	rec := &recorder{}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("SetWriteDeadline through the observer: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusAccepted)
		if err := rc.Flush(); err != nil {
			t.Errorf("Flush through the observer: %v", err)
		}
	})
	srv := httptest.NewServer(httpserve.Handler(mcp, &httpserve.Options{Observer: rec, MaxBodyBytes: 100}))
	defer srv.Close()
	post := func(body string, chunked bool) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		if chunked {
			req.ContentLength = -1
			req.Body = io.NopCloser(strings.NewReader(body)) // unknown length: chunked
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	if got := post(`{"method":"resources/read","params":{"pad":"`+strings.Repeat("x", 200)+`"}}`, true); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked body over the limit: status %d, want 413", got)
	}
	post(`[{"method":"ping"}]`, false)
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	want := []httpserve.RequestInfo{
		{Method: "notifications/initialized", Status: http.StatusAccepted},
		{Method: "resources/read", Status: http.StatusRequestEntityTooLarge},
		{Batch: true, Status: http.StatusBadRequest}, // batches are refused
	}
	// A request is heard when its handler returns, which for the streamed
	// answer can be after the client has moved on: wait for all of them,
	// then compare in a fixed order.
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec.mu.Lock()
		n := len(rec.requests)
		rec.mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.requests) != len(want) {
		t.Fatalf("observer heard %d requests, want %d (/healthz is not counted): %+v", len(rec.requests), len(want), rec.requests)
	}
	got := slices.Clone(rec.requests)
	slices.SortFunc(got, func(a, b httpserve.RequestInfo) int { return cmp.Compare(a.Status, b.Status) })
	slices.SortFunc(want, func(a, b httpserve.RequestInfo) int { return cmp.Compare(a.Status, b.Status) })
	for i, w := range want {
		got := got[i]
		if got.Method != w.Method || got.Batch != w.Batch || got.Status != w.Status || got.Elapsed <= 0 {
			t.Errorf("request %d: %+v, want %+v with a positive Elapsed", i, got, w)
		}
	}
	if len(rec.size) != 2 || rec.size[0] != httpserve.LimitRequestBody || rec.size[1] != httpserve.LimitBatch {
		t.Errorf("size refusals = %v, want [%s %s]", rec.size, httpserve.LimitRequestBody, httpserve.LimitBatch)
	}
}

package bench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		url    string
		remote bool
		ok     bool
	}{
		{"http://127.0.0.1:3939/mcp", false, true},
		{"http://localhost:3939/mcp", false, true},
		{"http://[::1]:3939/mcp", false, true},
		{"http://127.8.9.10/mcp", false, true},
		{"http://10.0.0.1:3939/mcp", false, false},
		{"https://example.com/mcp", false, false},
		{"http://localhost.example.com/mcp", false, false},
		{"https://example.com/mcp", true, true},
		{"ftp://127.0.0.1/", false, false},
		{"127.0.0.1:3939", false, false},
	} {
		err := checkLoopback(tc.url, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q, %v) = %v, want ok=%v", tc.url, tc.remote, err, tc.ok)
		}
	}
	if err := checkLoopback("http://192.0.2.1/", false); !errors.Is(err, ErrRemote) {
		t.Errorf("remote host: got %v, want ErrRemote", err)
	}
}

func TestLoadHTTP(t *testing.T) {
	srv := newFakeServer("good")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var sawToken atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer s3cret" {
			sawToken.Store(true)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	rep, err := LoadHTTP(context.Background(), HTTPOptions{
		URL: ts.URL, Concurrency: 3, Duration: time.Minute, MaxRequests: 40, Token: "s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawToken.Load() {
		t.Error("the bearer token was not sent")
	}
	if rep.Skills != len(fakeSkills) || rep.Files != len(fakeSkills) || len(rep.Phases) != 2 {
		t.Fatalf("report %+v: want %d skills and files, 2 phases", rep, len(fakeSkills))
	}
	for i, want := range []string{"skills/get", "resources/read"} {
		p := rep.Phases[i]
		// MaxRequests, not the minute, ends each phase.
		if p.Method != want || p.Requests != 40 || p.Errors != 0 || !(p.P50Ms > 0 && p.P99Ms >= p.P50Ms && p.MaxMs >= p.P99Ms) {
			t.Errorf("phase %d = %+v; want %s, 40 requests, no errors, ordered percentiles", i, p, want)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "requests/s") {
		t.Errorf("WriteText: %v\n%s", err, text.String())
	}
}

func TestLoadHTTPFailures(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	_, err := LoadHTTP(context.Background(), HTTPOptions{URL: ts.URL, Concurrency: 1, MaxRequests: 1})
	if err == nil || !strings.Contains(err.Error(), "connecting") {
		t.Errorf("a server that is not MCP: got %v, want a connection error", err)
	}
	if _, err := LoadHTTP(context.Background(), HTTPOptions{URL: "http://127.0.0.1:1/mcp", Concurrency: MaxConcurrency + 1}); err == nil {
		t.Error("too many clients accepted")
	}
}

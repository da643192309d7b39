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

	for _, client := range []string{ClientRaw, ClientSDK} {
		t.Run(client, func(t *testing.T) {
			sawToken.Store(false)
			rep, err := LoadHTTP(context.Background(), HTTPOptions{
				URL: ts.URL, Concurrency: 3, Duration: time.Minute, MaxRequests: 40, Token: "s3cret", Client: client,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !sawToken.Load() {
				t.Error("the bearer token was not sent")
			}
			if rep.Client != client || rep.Skills != len(fakeSkills) || rep.Files != len(fakeSkills) || len(rep.Phases) != 2 {
				t.Fatalf("report %+v: want client %s, %d skills and files, 2 phases", rep, client, len(fakeSkills))
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
		})
	}
}

// TestLoadHTTPMethods loads one method alone, over event streams (the
// SDK's default answer) instead of JSON bodies.
func TestLoadHTTPMethods(t *testing.T) {
	srv := newFakeServer("good")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	rep, err := LoadHTTP(context.Background(), HTTPOptions{
		URL: ts.URL, Concurrency: 2, Duration: time.Minute, MaxRequests: 30, Methods: []string{"resources/read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != 1 || rep.Phases[0].Method != "resources/read" || rep.Phases[0].Errors != 0 {
		t.Fatalf("phases %+v; want resources/read alone, without errors", rep.Phases)
	}
}

func TestCheckRawResponse(t *testing.T) {
	for _, tc := range []struct {
		method, contentType, body string
		ok                        bool
	}{
		{"skills/get", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"skill":{"uri":"skill://a/SKILL.md"}}}`, true},
		{"skills/get", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"skill":null}}`, false},
		{"skills/get", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no skill"}}`, false},
		{"skills/get", "application/json", `not json`, false},
		{"resources/read", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n" + "data: \"result\":{\"contents\":[{\"uri\":\"x\"}]}}\n\n", true},
		{"resources/read", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[]}}\n", false},
		{"resources/read", "text/event-stream", ": keep-alive\n\n", false},
	} {
		err := checkRawResponse(tc.method, tc.contentType, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: got %v, want ok=%v", tc.method, tc.body, err, tc.ok)
		}
	}
}

func TestLoadHTTPFailures(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	_, err := LoadHTTP(context.Background(), HTTPOptions{URL: ts.URL, Concurrency: 1, MaxRequests: 1})
	if err == nil || !strings.Contains(err.Error(), "connecting") {
		t.Errorf("a server that is not MCP: got %v, want a connection error", err)
	}
	for _, o := range []HTTPOptions{
		{URL: "http://127.0.0.1:1/mcp", Concurrency: MaxConcurrency + 1},
		{URL: "http://127.0.0.1:1/mcp", Client: "curl"},
		{URL: "http://127.0.0.1:1/mcp", Methods: []string{"tools/list"}},
	} {
		if _, err := LoadHTTP(context.Background(), o); err == nil || strings.Contains(err.Error(), "connecting") {
			t.Errorf("options %+v: got %v, want them refused before connecting", o, err)
		}
	}
}

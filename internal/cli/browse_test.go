package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer written by the server's logger and read by the
// test.
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

// serveHTTPFor runs serve --http on a free loopback port with args and env
// until the test ends, and returns its base URL.
func serveHTTPFor(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	done := make(chan int, 1)
	st := streams{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
		env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	// Made before the cleanup below is registered, so that it is removed
	// after the server has stopped (cleanups run last first).
	cache := t.TempDir()
	go func() {
		done <- run(ctx, append([]string{"serve", "--http", "127.0.0.1:0", "--root", "../../examples/library", "--cache-dir", cache}, args...), st)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr := regexp.MustCompile(`url=http://(127\.0\.0\.1:\d+)/mcp`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1]
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited with %d before listening:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen within 30 s:\n%s", stderr.String())
		}
	}
}

// getReady GETs url until the catalog is in (the browser answers 503 while
// the first scan runs).
func getReady(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return resp, string(body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeBrowser(t *testing.T) {
	t.Run("on by default", func(t *testing.T) {
		base := serveHTTPFor(t, nil)
		resp, body := getReady(t, base+"/")
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "release-notes") {
			t.Fatalf("GET /: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if resp, _ := getReady(t, base+"/status"); resp.StatusCode != 200 {
			t.Errorf("GET /status: %d", resp.StatusCode)
		}
	})
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"--no-ui":      {args: []string{"--no-ui"}},
		"SKILLS_NO_UI": {env: map[string]string{"SKILLS_NO_UI": "true"}},
	} {
		t.Run(name, func(t *testing.T) {
			base := serveHTTPFor(t, tc.env, tc.args...)
			resp, body := getReady(t, base+"/")
			if resp.StatusCode != 404 || !strings.Contains(body, "the MCP endpoint is /mcp") {
				t.Fatalf("GET / with the browser off: %d\n%s", resp.StatusCode, body)
			}
		})
	}
	t.Run("tokens: sign-in", func(t *testing.T) {
		base := serveHTTPFor(t, map[string]string{"SKILLS_TOKEN": "cli-token"})
		resp, body := getReady(t, base+"/status")
		if resp.Request.URL.Path != "/signin" || !strings.Contains(body, `name="token"`) {
			t.Fatalf("GET /status with tokens ended at %s:\n%s", resp.Request.URL, body)
		}
	})
}

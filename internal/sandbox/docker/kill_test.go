package docker_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/docker"
)

// TestFailedKillRemovesInstead: when the engine refuses the kill, the
// forced removal still ends the container, so the run is confirmed.
func TestFailedKillRemovesInstead(t *testing.T) {
	e := engine.Engine(t)
	sock := strings.TrimPrefix(e.Host, "unix://")
	// A short folder: a socket path has a length limit.
	dir, err := os.MkdirTemp("", "dkp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "p.sock"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "docker"}) },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/kill") {
			http.Error(w, `{"message":"kill refused by the test"}`, http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	x, err := docker.New(&docker.Options{Host: "unix://" + ln.Addr().String(), BindUsr: "/usr"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	res, err := x.Run(context.Background(), sandbox.Spec{
		Name: "killfail", Image: e.Image, Argv: []string{"/usr/bin/sleep", "60"},
		Limits: sandbox.Limits{Wall: time.Second},
	})
	if err != nil {
		t.Fatalf("run whose kill the engine refused: %v (want it removed instead)", err)
	}
	if res.Reason != sandbox.ReasonTimeout {
		t.Errorf("reason %q, want %q", res.Reason, sandbox.ReasonTimeout)
	}
	names, err := x.Running(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("containers left running: %v", names)
	}
}

package main_test

// The attack run's rows against `hub serve` (see attack_test.go): a hub
// with two projects, each bound to one version, an attacker on one
// project's token (and on the API with an admin token of its own), and the
// well-behaved client on 127.0.0.2 reading /readyz, its own project's
// endpoint and the API.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hubCLI runs the binary under attack with `hub --data data args…` and
// returns its stdout; any failure fails the test.
func hubCLI(t *testing.T, data string, args ...string) string {
	t.Helper()
	cmd := exec.Command(attackBinary(), append([]string{"hub", "--data", data}, args...)...)
	cmd.Env = testEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hub %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// attackHubSetup is a hub under attack: its base URL and process, and the
// tokens of both sides.
type attackHubSetup struct {
	base, host string
	pid        int
	// good and bad are the admin tokens of the well-behaved client and of
	// the attacker; goodProject and badProject their projects' tokens.
	good, bad, goodProject, badProject string
}

func startAttackHub(t *testing.T) *attackHubSetup {
	t.Helper()
	data := filepath.Join(t.TempDir(), "hub")
	hubCLI(t, data, "import", hubZip(t, "pdf.zip", map[string]string{"SKILL.md": hubSkill, "references/guide.md": strings.Repeat("A guide to PDF forms.\n", 1000)}))
	var vs []struct{ ID string }
	if err := json.Unmarshal([]byte(hubCLI(t, data, "versions", "pdf-tools", "--json")), &vs); err != nil || len(vs) != 1 {
		t.Fatalf("versions: %v %v", vs, err)
	}
	h := &attackHubSetup{
		good: strings.TrimSpace(hubCLI(t, data, "token", "create", "--scope", "admin", "--name", "good")),
		bad:  strings.TrimSpace(hubCLI(t, data, "token", "create", "--scope", "admin", "--name", "attacker")),
	}
	base, proc := startServerProc(t, "hub", "--data", data, "serve", "--http", "127.0.0.1:0")
	h.base, h.pid = base, proc.Pid
	u, _ := url.Parse(base)
	h.host = u.Host
	for _, p := range []struct {
		id  string
		tok *string
	}{{"alpha", &h.goodProject}, {"bravo", &h.badProject}} {
		if code, body := hubCall(t, "POST", base+"/api/projects", h.good, map[string]string{"id": p.id, "name": p.id}); code != 201 {
			t.Fatalf("create project %s: %d %s", p.id, code, body)
		}
		if code, body := hubCall(t, "PUT", base+"/api/projects/"+p.id+"/skills/"+vs[0].ID, h.good, nil); code != 200 {
			t.Fatalf("bind %s: %d %s", p.id, code, body)
		}
		code, body := hubCall(t, "POST", base+"/api/projects/"+p.id+"/tokens", h.good, map[string]string{})
		var tok struct{ Secret string }
		if code != 201 || json.Unmarshal(body, &tok) != nil || tok.Secret == "" {
			t.Fatalf("project token %s: %d %s", p.id, code, body)
		}
		*p.tok = tok.Secret
	}
	return h
}

// requests are the well-behaved client's: the probe, a listing on its
// project's endpoint, a read there, and a page of the API.
func (h *attackHubSetup) requests() func(int) *http.Request {
	mcpBody := []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	return func(i int) *http.Request {
		switch i % 4 {
		case 0:
			req, _ := http.NewRequest("GET", h.base+"/healthz", nil)
			return req
		case 3:
			req, _ := http.NewRequest("GET", h.base+"/api/projects", nil)
			req.Header.Set("Authorization", "Bearer "+h.good)
			return req
		}
		req, _ := http.NewRequest("POST", h.base+"/p/alpha/mcp", strings.NewReader(mcpBody[i%2]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+h.goodProject)
		return req
	}
}

// attackHub runs the rows against hub serve.
func attackHub(t *testing.T, length time.Duration) {
	row(t, "hub/slow-headers", func(t *testing.T) {
		// 300 sockets sending one header line a second.
		h := startAttackHub(t)
		runAttack(t, "hub/slow-headers", length, h.pid, newGoodClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attack) {
			for range 300 {
				a.loop(func(int) {
					conn, err := attacker.DialContext(a.ctx, "tcp", a.host)
					if err != nil {
						a.pause(time.Second)
						return
					}
					defer conn.Close()
					closed := make(chan struct{})
					go func() {
						defer close(closed)
						if code := status(bufio.NewReader(conn)); code != "" {
							a.count("slow header " + code)
						}
					}()
					fmt.Fprintf(conn, "GET /api/projects HTTP/1.1\r\nHost: %s\r\n", a.host)
					for i := 0; a.ctx.Err() == nil; i++ {
						if _, err := fmt.Fprintf(conn, "X-Line-%d: a\r\n", i); err != nil {
							return
						}
						select {
						case <-closed:
							a.count("slow header cut")
							return
						case <-a.ctx.Done():
						case <-time.After(time.Second): // one line a second
						}
					}
				})
			}
		})
	})
	row(t, "hub/token-flood", func(t *testing.T) {
		// 20,000 MCP requests on one project token, as fast as 16
		// connections send them, and the API flooded with an admin token.
		h := startAttackHub(t)
		var sent atomic.Int64
		runAttack(t, "hub/token-flood", length, h.pid, newGoodClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attack) {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: attacker.DialContext, MaxIdleConnsPerHost: 32}}
			do := func(req *http.Request) {
				resp, err := c.Do(req.WithContext(a.ctx))
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				a.count(fmt.Sprintf("%s %d", req.URL.Path, resp.StatusCode))
			}
			for range 16 {
				a.loop(func(int) {
					if sent.Add(1) > 20000 {
						a.pause(time.Second)
						return
					}
					req, _ := http.NewRequest("POST", h.base+"/p/bravo/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("MCP-Protocol-Version", "2025-11-25")
					req.Header.Set("Authorization", "Bearer "+h.badProject)
					do(req)
				})
			}
			for range 4 {
				a.loop(func(int) {
					req, _ := http.NewRequest("GET", h.base+"/api/projects", nil)
					req.Header.Set("Authorization", "Bearer "+h.bad)
					do(req)
				})
			}
		})
	})
	row(t, "hub/listen-streams", func(t *testing.T) {
		// 256 listen streams on one project's endpoint from one address.
		h := startAttackHub(t)
		runAttack(t, "hub/listen-streams", length, h.pid, newGoodClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attack) {
			a.listenStreams(256, "/p/bravo/mcp", h.badProject)
		})
	})
}

package main_test

// The attack run's rows against `skills-hub serve` (issue 26; the harness
// is internal/attacktest, serve's rows are cmd/skills-mcp's): a hub with
// two projects, each bound to one version, an attacker on one project's
// token (and on the API with an admin token of its own), and the
// well-behaved client on 127.0.0.2 reading /healthz, its own project's
// endpoint and the API. SKILLS_ATTACK_HUB, the words of a command, runs
// them against another build (an older single binary: "skills-mcp hub").

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/attacktest"
)

// hubCommand is the command under attack: the skills-hub TestMain built, or
// the words of SKILLS_ATTACK_HUB.
func hubCommand() []string {
	if c := strings.Fields(os.Getenv("SKILLS_ATTACK_HUB")); len(c) > 0 {
		return c
	}
	return []string{binary}
}

// hubCLI runs the command under attack with `--data data args…` and
// returns its stdout; any failure fails the test.
func hubCLI(t *testing.T, data string, args ...string) string {
	t.Helper()
	argv := append(hubCommand(), append([]string{"--data", data}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
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
	base, pid := attacktest.StartServer(t, append(hubCommand(), "--data", data, "serve", "--http", "127.0.0.1:0"), testEnv(t))
	h.base, h.pid = base, pid
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

// TestAttack runs the rows against hub serve.
func TestAttack(t *testing.T) {
	length := attacktest.Length(t)
	attacktest.Row(t, "hub/slow-headers", func(t *testing.T) {
		// 300 sockets sending one header line a second.
		h := startAttackHub(t)
		attacktest.Run(t, "hub/slow-headers", length, h.pid, attacktest.NewClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
			for range 300 {
				a.Loop(func(int) {
					conn, err := attacktest.Attacker.DialContext(a.Ctx, "tcp", a.Host)
					if err != nil {
						a.Pause(time.Second)
						return
					}
					defer conn.Close()
					closed := make(chan struct{})
					go func() {
						defer close(closed)
						if code := attacktest.Status(bufio.NewReader(conn)); code != "" {
							a.Count("slow header " + code)
						}
					}()
					fmt.Fprintf(conn, "GET /api/projects HTTP/1.1\r\nHost: %s\r\n", a.Host)
					for i := 0; a.Ctx.Err() == nil; i++ {
						if _, err := fmt.Fprintf(conn, "X-Line-%d: a\r\n", i); err != nil {
							return
						}
						select {
						case <-closed:
							a.Count("slow header cut")
							return
						case <-a.Ctx.Done():
						case <-time.After(time.Second): // one line a second
						}
					}
				})
			}
		})
	})
	attacktest.Row(t, "hub/token-flood", func(t *testing.T) {
		// 20,000 MCP requests on one project token, as fast as 16
		// connections send them, and the API flooded with an admin token.
		h := startAttackHub(t)
		var sent atomic.Int64
		attacktest.Run(t, "hub/token-flood", length, h.pid, attacktest.NewClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: attacktest.Attacker.DialContext, MaxIdleConnsPerHost: 32}}
			do := func(req *http.Request) {
				resp, err := c.Do(req.WithContext(a.Ctx))
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				a.Count(fmt.Sprintf("%s %d", req.URL.Path, resp.StatusCode))
			}
			for range 16 {
				a.Loop(func(int) {
					if sent.Add(1) > 20000 {
						a.Pause(time.Second)
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
				a.Loop(func(int) {
					req, _ := http.NewRequest("GET", h.base+"/api/projects", nil)
					req.Header.Set("Authorization", "Bearer "+h.bad)
					do(req)
				})
			}
		})
	})
	attacktest.Row(t, "hub/listen-streams", func(t *testing.T) {
		// 256 listen streams on one project's endpoint from one address.
		h := startAttackHub(t)
		attacktest.Run(t, "hub/listen-streams", length, h.pid, attacktest.NewClient(h.requests()), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
			a.ListenStreams(256, "/p/bravo/mcp", h.badProject)
		})
	})
}

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
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("hub %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// attackHubSetup is a hub under attack: its base URL and process, and the
// tokens of both sides.
type attackHubSetup struct {
	base, host string
	pid        int
	// good and bad are the admin tokens of the well-behaved client and of
	// the attacker; goodProject and badProject their projects' tokens, and
	// sameProject the attacker's token of the well-behaved client's
	// project.
	good, bad, goodProject, badProject, sameProject string
	// skill is the URI of the bound skill's SKILL.md on the endpoints.
	skill string
}

// The sizes of the large files of the unread-reads row: the one the
// attackers ask for and never read (as serve's row, 8 MB: 32 MB of answer
// budget, a client's share), and the one the well-behaved client reads
// (1 MB: 4 MB of the budget, a large answer too).
const (
	hubBigFileBytes    = 8_000_000
	hubManualFileBytes = 1_000_000
)

// repeatTo repeats line, each numbered, to n bytes: numbered, so that the
// package's ZIP stays within the hub's bound on compression ratios.
func repeatTo(line string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%07d %s", i, line)
	}
	return b.String()[:n]
}

// startAttackHub starts a hub whose two projects have one version of a
// skill bound, with extra files in its package besides SKILL.md and a
// small guide.
func startAttackHub(t *testing.T, extra map[string]string) *attackHubSetup {
	t.Helper()
	data := filepath.Join(t.TempDir(), "hub")
	files := map[string]string{"SKILL.md": hubSkill, "references/guide.md": strings.Repeat("A guide to PDF forms.\n", 1000)}
	maps.Copy(files, extra)
	hubCLI(t, data, "import", hubZip(t, "pdf.zip", files))
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
	code, body := hubCall(t, "POST", base+"/api/projects/alpha/tokens", h.good, map[string]string{})
	var tok struct{ Secret string }
	if code != 201 || json.Unmarshal(body, &tok) != nil || tok.Secret == "" {
		t.Fatalf("second token of alpha: %d %s", code, body)
	}
	h.sameProject = tok.Secret
	resp, err := http.DefaultClient.Do(h.mcp("alpha", h.goodProject, `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.skill = regexp.MustCompile(`skill://[^"]*/SKILL\.md`).FindString(string(list))
	if h.skill == "" {
		t.Fatalf("skills/list of alpha names no skill: %s", list)
	}
	return h
}

// mcp is an MCP request on project's endpoint with token.
func (h *attackHubSetup) mcp(project, token, body string) *http.Request {
	req, _ := http.NewRequest("POST", h.base+"/p/"+project+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// file is the URI of a file of the bound skill.
func (h *attackHubSetup) file(name string) string {
	return strings.TrimSuffix(h.skill, "SKILL.md") + name
}

// requests are the well-behaved client's: the probe, a listing on its
// project's endpoint, the tools there (or, with read set, a read of that
// URI), and a page of the API.
func (h *attackHubSetup) requests(read string) func(int) *http.Request {
	mcpBody := []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	if read != "" {
		mcpBody[1] = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"` + read + `"}}`
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
		return h.mcp("alpha", h.goodProject, mcpBody[i%2])
	}
}

// unreadReads asks for uri on project's endpoint with token, on n
// connections that never read the answer.
func (h *attackHubSetup) unreadReads(a *attacktest.Attack, n int, project, token, uri string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	a.UnreadRequests(n, fmt.Sprintf("POST /p/%s/mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
		project, a.Host, token, len(body), body))
}

// TestAttack runs the rows against hub serve.
func TestAttack(t *testing.T) {
	length := attacktest.Length(t)
	attacktest.Row(t, "hub/slow-headers", func(t *testing.T) {
		// 300 sockets sending one header line a second.
		h := startAttackHub(t, nil)
		attacktest.Run(t, "hub/slow-headers", length, h.pid, attacktest.NewClient(h.requests("")), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
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
		h := startAttackHub(t, nil)
		var sent atomic.Int64
		attacktest.Run(t, "hub/token-flood", length, h.pid, attacktest.NewClient(h.requests("")), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
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
	attacktest.Row(t, "hub/unread-reads", func(t *testing.T) {
		// 64 connections from one address ask for an 8 MB file of the
		// well-behaved client's own project, with a token of that project,
		// and never read the answer; the well-behaved client reads a 1 MB
		// file there (a large answer too). One address holds at most its
		// half of the project's answer budget; two such addresses would
		// fill it (an 8 MB answer holds about 32 MB), and the well-behaved
		// client's reads would wait for their answers to be cut.
		h := startAttackHub(t, map[string]string{
			"references/big.md":    repeatTo("A large reference, read by clients that never take their answer.\n", hubBigFileBytes),
			"references/manual.md": repeatTo("The manual, read whole by the well-behaved client.\n", hubManualFileBytes),
		})
		good := attacktest.NewClient(h.requests(h.file("references/manual.md")))
		attacktest.Run(t, "hub/unread-reads", length, h.pid, good, h.host, h.base+"/p/alpha/mcp", func(a *attacktest.Attack) {
			h.unreadReads(a, 64, "alpha", h.sameProject, h.file("references/big.md"))
		})
		// A read that finds no room waits for the attackers' answers to be
		// cut (10 s) and may still be answered then: what tells a client
		// held back by another's answers from one that is not is how long
		// it waits, not whether it is answered in the end.
		if p99 := good.Latency(0.99); p99 > 5*time.Second {
			t.Errorf("the well-behaved client's p99 is %s: its large reads waited for room the attackers held", p99)
		}
	})
	attacktest.Row(t, "hub/listen-streams", func(t *testing.T) {
		// 256 listen streams on one project's endpoint from one address.
		h := startAttackHub(t, nil)
		attacktest.Run(t, "hub/listen-streams", length, h.pid, attacktest.NewClient(h.requests("")), h.host, h.base+"/p/bravo/mcp", func(a *attacktest.Attack) {
			a.ListenStreams(256, "/p/bravo/mcp", h.badProject)
		})
	})
}

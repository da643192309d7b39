package main_test

// The attack run's rows against `skills-mcp serve --http` (issue 26), each
// against a server of its own, beside a well-behaved client on another
// address; the harness is internal/attacktest, the hub's rows are
// cmd/skills-hub's. SKILLS_ATTACK_BINARY runs them against another build
// (an older one, to measure before and after).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/attacktest"
)

// bigFileBytes is the size of the attack library's large file, read by
// clients that never read the answer ("an 8 MB file").
const bigFileBytes = 8_000_000

// attackLibrary writes a library of n skills, each with a SKILL.md of
// about 1 KiB and a 32 KiB reference, so that listings and reads have
// some weight, and one more skill with a file of bigFileBytes.
func attackLibrary(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	ref := bytes.Repeat([]byte("Reference text for the attack run.\n"), 32<<10/35)
	write := func(dir, name string, content []byte) {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("skill-%04d", i))
		md := fmt.Sprintf("---\nname: skill-%04d\ndescription: Skill number %d of the attack library; %s\n---\n\n%s",
			i, i, strings.Repeat("words ", 20), strings.Repeat("Instructions for the task at hand.\n", 20))
		write(dir, "SKILL.md", []byte(md))
		write(dir, "references/guide.md", ref)
	}
	big := filepath.Join(root, "big-file")
	write(big, "SKILL.md", []byte("---\nname: big-file\ndescription: A skill with one large reference.\n---\n\nRead references/big.md.\n"))
	line := []byte("A large reference, read by clients that never take their answer.\n")
	write(big, "references/big.md", bytes.Repeat(line, bigFileBytes/len(line)+1)[:bigFileBytes])
	return root
}

// attackBinary is the binary under attack: the one TestMain built, or
// SKILLS_ATTACK_BINARY.
func attackBinary() string {
	if b := os.Getenv("SKILLS_ATTACK_BINARY"); b != "" {
		return b
	}
	return binary
}

// mcpRequests are a host's requests to a serve endpoint: a skill, the
// listing, a reference of 32 KiB, a search.
func mcpRequests(endpoint string) func(int) *http.Request {
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://skill-0042/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://skill-0007/references/guide.md"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"skills_search_skills","arguments":{"query":"skill number 12"}}}`,
	}
	return func(i int) *http.Request {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		return req
	}
}

// slowBodies sends n bodies of just under 4 MiB each (the limit less one
// byte) at once: all of each but its last bytes at once, then a byte a
// second, so that they hold what the server reserved for them; renewed
// every 25 s (within the read timeout).
func slowBodies(a *attacktest.Attack, n int) {
	const size = 4<<20 - 1
	for range n {
		a.Loop(func(int) {
			conn, err := attacktest.Attacker.DialContext(a.Ctx, "tcp", a.Host)
			if err != nil {
				a.Pause(time.Second)
				return
			}
			defer conn.Close()
			renew, cancel := context.WithTimeout(a.Ctx, 25*time.Second)
			defer cancel()
			stop := context.AfterFunc(renew, func() { conn.Close() })
			defer stop()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", a.Host, size)
			answered := make(chan string, 1)
			go func() { answered <- attacktest.Status(bufio.NewReader(conn)) }()
			if _, err := conn.Write(bytes.Repeat([]byte("x"), size-64)); err != nil {
				return
			}
			for renew.Err() == nil {
				select {
				case code := <-answered:
					a.Count("body " + code)
					<-renew.Done()
					return
				case <-renew.Done():
				case <-time.After(time.Second): // the drip
					conn.Write([]byte("x"))
				}
			}
			a.Count("body renewed")
		})
	}
}

// unreadReads asks for the big file on n connections that never read the
// answer.
func unreadReads(a *attacktest.Attack, n int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://big-file/references/big.md"}}`
	a.UnreadRequests(n, fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", a.Host, len(body), body))
}

// TestAttack runs every row. The rows against serve share one library of
// 1,000 skills and a file of 8 MB; each row starts a server of its own,
// so that each measures its own idle and peak.
func TestAttack(t *testing.T) {
	length := attacktest.Length(t)
	lib := attackLibrary(t, 1000)
	serve := func(t *testing.T, args ...string) (string, string, int) {
		endpoint, pid := attacktest.StartServer(t, append([]string{attackBinary(), "--http", "127.0.0.1:0", "--root", lib}, args...), testEnv(t))
		u, _ := url.Parse(endpoint)
		return u.Host, endpoint, pid
	}
	attacktest.Row(t, "serve/listen-streams", func(t *testing.T) {
		// 256 subscriptions/listen streams held open from one address.
		host, endpoint, pid := serve(t)
		a := attacktest.Run(t, "serve/listen-streams", length, pid, attacktest.NewClient(mcpRequests(endpoint)), host, endpoint, func(a *attacktest.Attack) {
			a.ListenStreams(256, "/mcp", "")
		})
		if a.Counts("listen 200") == 0 {
			t.Error("no listen stream of the attacker was served")
		}
	})
	attacktest.Row(t, "serve/slow-bodies", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		attacktest.Run(t, "serve/slow-bodies", length, pid, attacktest.NewClient(mcpRequests(endpoint)), host, endpoint, func(a *attacktest.Attack) {
			slowBodies(a, 4)
		})
	})
	attacktest.Row(t, "serve/unread-reads", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		attacktest.Run(t, "serve/unread-reads", length, pid, attacktest.NewClient(mcpRequests(endpoint)), host, endpoint, func(a *attacktest.Attack) {
			unreadReads(a, 64)
		})
	})
	attacktest.Row(t, "serve/mix", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		a := attacktest.Run(t, "serve/mix", length, pid, attacktest.NewClient(mcpRequests(endpoint)), host, endpoint, func(a *attacktest.Attack) {
			a.ListenStreams(256, "/mcp", "")
			slowBodies(a, 4)
			unreadReads(a, 64)
			classic(a)
		})
		if length >= 20*time.Second && a.Counts("slow header cut") == 0 {
			t.Error("no slow-header connection was cut off")
		}
	})
	attacktest.Row(t, "fleet", func(t *testing.T) { attackFleet(t, length, serve) })
}

// classic starts the attackers of the first attack run: batches,
// malformed strings, oversized bodies, slow headers, slow bodies, clients
// that never read their listings, and floods of connections (from
// 127.0.0.3) held a second.
func classic(a *attacktest.Attack) {
	post := func(c *http.Client, body io.Reader, n int64) (int, []byte) {
		req, _ := http.NewRequestWithContext(a.Ctx, "POST", a.Endpoint, body)
		req.ContentLength = n
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, data
	}
	client := func(timeout time.Duration) *http.Client {
		return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: attacktest.Attacker.DialContext}}
	}
	var batch strings.Builder
	batch.WriteString("[")
	for i := range 30 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"skills/list","params":{}}`, i)
	}
	batch.WriteString("]")
	for range 2 {
		c := client(10 * time.Second)
		a.Loop(func(int) {
			if code, _ := post(c, strings.NewReader(batch.String()), int64(batch.Len())); code == 400 {
				a.Count("batch refused")
			}
		})
	}
	for range 2 {
		c := client(10 * time.Second)
		a.Loop(func(i int) {
			line := malformedLines[i%len(malformedLines)].line
			if code, data := post(c, strings.NewReader(line), int64(len(line))); code == 200 && bytes.Contains(data, []byte(`"error"`)) || code == 400 {
				a.Count("malformed refused")
			}
		})
	}
	c := client(30 * time.Second)
	a.Loop(func(i int) {
		n := int64(5 << 20)
		body := io.Reader(io.LimitReader(zeroReader{}, n))
		if i%2 == 1 {
			n = -1
		}
		if code, _ := post(c, body, n); code == 413 {
			a.Count("oversized refused")
		}
	})
	// Slow headers: a byte a second, 100 connections at a time.
	for range 100 {
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
				io.Copy(io.Discard, conn)
			}()
			header := "POST /mcp HTTP/1.1\r\nHost: " + a.Host + "\r\nX-Slow: " + strings.Repeat("a", 1000)
			for i := 0; i < len(header); i++ {
				if _, err := conn.Write([]byte{header[i]}); err != nil {
					break
				}
				select {
				case <-closed:
					a.Count("slow header cut")
					return
				case <-a.Ctx.Done():
					return
				case <-time.After(time.Second): // the drip
				}
			}
		})
	}
	// Slow bodies: headers at once, then a byte every half second.
	for range 50 {
		a.Loop(func(int) {
			conn, err := attacktest.Attacker.DialContext(a.Ctx, "tcp", a.Host)
			if err != nil {
				a.Pause(time.Second)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{", a.Host)
			for a.Ctx.Err() == nil {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				a.Pause(500 * time.Millisecond)
			}
		})
	}
	// Clients that never read: listings pipelined on one connection until
	// the socket buffers are full.
	for range 32 {
		a.Go(func() {
			conn, err := attacktest.Attacker.DialContext(a.Ctx, "tcp", a.Host)
			if err != nil {
				return
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`
			req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", a.Host, len(body), body)
			for i := 0; i < 1000 && a.Ctx.Err() == nil; i++ {
				conn.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := io.WriteString(conn, req); err != nil {
					break // full: now just never read
				}
			}
			<-a.Ctx.Done()
		})
	}
	// Floods: 600 connections from 127.0.0.3 held for a second, then closed.
	a.Loop(func(int) {
		var conns []net.Conn
		for range 600 {
			c, err := attacktest.Flooder.DialContext(a.Ctx, "tcp", a.Host)
			if err != nil {
				break
			}
			conns = append(conns, c)
		}
		a.Count("flood")
		a.Pause(time.Second)
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if b, _ := bufio.NewReader(c).Peek(12); string(b) == "HTTP/1.1 503" {
				a.Count("flood connection refused")
			}
			c.Close()
		}
	})
}

// attackFleet opens 2,000 listen streams from 2,000 loopback addresses
// (127.1.x.y), as a fleet of agents would, holds them while the
// well-behaved client asks, and reports what an idle stream costs.
func attackFleet(t *testing.T, length time.Duration, serve func(t *testing.T, args ...string) (string, string, int)) {
	const n = 2000
	host, endpoint, pid := serve(t)
	good := attacktest.NewClient(mcpRequests(endpoint))
	var acked atomic.Int64
	var before, held int64
	a := attacktest.Run(t, "fleet", length, pid, good, host, endpoint, func(a *attacktest.Attack) {
		before = attacktest.RSS(t, pid)
		var opened sync.WaitGroup
		sem := make(chan struct{}, 64) // dials at once
		for i := range n {
			opened.Add(1)
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(i%250+1))}, Timeout: 10 * time.Second}
			a.Go(func() {
				sem <- struct{}{}
				conn, err := d.DialContext(a.Ctx, "tcp", host)
				if err != nil {
					<-sem
					opened.Done()
					a.Count("dial failed")
					return
				}
				defer conn.Close()
				stop := context.AfterFunc(a.Ctx, func() { conn.Close() })
				defer stop()
				io.WriteString(conn, attacktest.ListenRequest(host, "/mcp", ""))
				br := bufio.NewReader(conn)
				code := attacktest.Status(br)
				if code == "200" {
					// The acknowledgement is the first event.
					for {
						line, err := br.ReadString('\n')
						if err != nil || strings.Contains(line, "subscriptions/acknowledged") {
							if err == nil {
								acked.Add(1)
							}
							break
						}
					}
				}
				<-sem
				opened.Done()
				a.Count("listen " + code)
				io.Copy(io.Discard, br)
			})
		}
		opened.Wait()
		attacktest.Settle(t, pid)
		held = attacktest.RSS(t, pid)
	})
	perStream := float64(held-before) / float64(max(1, acked.Load()))
	t.Logf("attack fleet: %d of %d streams acknowledged; RSS %.1f MiB before them, %.1f MiB holding them: %.1f KiB per idle stream",
		acked.Load(), n, float64(before)/(1<<20), float64(held)/(1<<20), perStream/1024)
	if acked.Load() != n {
		t.Errorf("%d of %d listen streams were acknowledged (%d refused with 503, %d dials failed)", acked.Load(), n, a.Counts("listen 503"), a.Counts("dial failed"))
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

package main_test

// The attack run: hostile HTTP clients against the real binary on
// loopback, beside a well-behaved one. It runs only when SKILLS_ATTACK
// names its length (SKILLS_ATTACK=30s go test -run TestAttack
// ./cmd/skills-mcp), since it takes that long and both cores.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// attackLibrary writes a library of n skills, each with a SKILL.md of
// about 1 KiB and a 32 KiB reference, so that listings and reads have
// some weight.
func attackLibrary(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	ref := bytes.Repeat([]byte("Reference text for the attack run.\n"), 32<<10/35)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("skill-%04d", i))
		if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
			t.Fatal(err)
		}
		md := fmt.Sprintf("---\nname: skill-%04d\ndescription: Skill number %d of the attack library; %s\n---\n\n%s",
			i, i, strings.Repeat("words ", 20), strings.Repeat("Instructions for the task at hand.\n", 20))
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "references", "guide.md"), ref, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// startServerProc starts the binary over HTTP and returns its endpoint and
// process; it is stopped when the test ends.
func startServerProc(t *testing.T, args ...string) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = testEnv(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "url="); ok {
				select {
				case urls <- strings.Fields(after)[0]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("server did not stop within 30s of SIGINT")
		}
	})
	select {
	case u := <-urls:
		return u, cmd.Process
	case <-time.After(60 * time.Second):
		t.Fatal("server did not report its URL")
		return "", nil
	}
}

// rssBytes returns the resident set size of process pid.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's RSS: %v", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// goodClient makes the requests a host makes, one at a time, and records
// each one's latency and any failure.
type goodClient struct {
	endpoint string
	c        *http.Client
	lat      []time.Duration
	failures []string
}

var goodRequests = []string{
	`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://skill-0042/SKILL.md"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`,
	`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://skill-0007/references/guide.md"}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"skills_search_skills","arguments":{"query":"skill number 12"}}}`,
}

func (g *goodClient) do(i int) {
	body := goodRequests[i%len(goodRequests)]
	req, _ := http.NewRequest("POST", g.endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	start := time.Now()
	resp, err := g.c.Do(req)
	if err != nil {
		g.failures = append(g.failures, err.Error())
		return
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.lat = append(g.lat, time.Since(start))
	if err != nil || resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"result"`)) {
		g.failures = append(g.failures, fmt.Sprintf("%.40s: %d %.200s %v", body[33:], resp.StatusCode, data, err))
	}
}

func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestAttack replays hostile clients (batches, slow headers and bodies,
// clients that never read, oversized bodies, malformed strings, floods of
// connections) for SKILLS_ATTACK while a well-behaved client keeps asking.
// It fails if the server's RSS goes over twice its idle RSS (issue 16's
// target), or if any well-behaved request goes unanswered. (Before the
// limits, the same run took the server to 4x its idle RSS and its p99 past
// half a second; with them, but with garbage left by every refused body
// and a soft memory limit of 96 MiB above a 6 MiB catalog, to 2.2-2.6x,
// as the heap grew to twice what the attackers made live. Pooled body
// pieces and a limit sized from the catalog keep it at 1.5-1.9x.)
func TestAttack(t *testing.T) {
	spec := os.Getenv("SKILLS_ATTACK")
	if spec == "" {
		t.Skip("set SKILLS_ATTACK to a duration (e.g. 30s) to run the attack")
	}
	length, err := time.ParseDuration(spec)
	if err != nil || length <= 0 {
		t.Fatalf("SKILLS_ATTACK=%q is not a positive duration", spec)
	}
	// The attackers' own transports log each 503 a refused flood
	// connection reads: noise here.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	endpoint, proc := startServerProc(t, "--root", attackLibrary(t, 1000))
	u, _ := url.Parse(endpoint)
	host := u.Host

	good := &goodClient{endpoint: endpoint, c: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}}
	for i := range 400 { // warm up: every path, every buffer pool
		good.do(i)
	}
	if len(good.failures) > 0 {
		t.Fatalf("before the attack: %v", good.failures[0])
	}
	time.Sleep(time.Second) // let the warm-up's garbage be collected: idle means idle
	idle := rssBytes(t, proc.Pid)
	good.lat = nil

	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	var wg sync.WaitGroup
	var stats struct {
		batches, oversized, malformed, floods atomic.Int64
		slowCut                               atomic.Int64 // slow-header connections the server closed
		slowCutMax                            atomic.Int64 // longest such a connection lived, in ms
		refusedConns                          atomic.Int64
	}
	post := func(c *http.Client, body io.Reader, n int64, header map[string]string) (int, []byte) {
		req, _ := http.NewRequestWithContext(ctx, "POST", endpoint, body)
		req.ContentLength = n
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, data
	}
	// SKILLS_ATTACK_ONLY, a comma-separated list of attacker names, runs
	// only those (to find which one costs what).
	only := os.Getenv("SKILLS_ATTACK_ONLY")
	var name string
	// loop runs f until the attack ends, at most max times.
	loop := func(max int, f func(i int)) {
		if only != "" && !slices.Contains(strings.Split(only, ","), name) {
			return
		}
		wg.Go(func() {
			for i := 0; i < max && ctx.Err() == nil; i++ {
				f(i)
			}
		})
	}

	name = "batch"
	// Batches of listings, without a protocol header: 2 KB each.
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
		c := attackClient(10 * time.Second)
		loop(100000, func(int) {
			if status, _ := post(c, strings.NewReader(batch.String()), int64(batch.Len()), nil); status == 400 {
				stats.batches.Add(1)
			}
		})
	}
	name = "malformed"
	// Malformed strings.
	for range 2 {
		c := attackClient(10 * time.Second)
		loop(100000, func(i int) {
			line := malformedLines[i%len(malformedLines)].line
			if status, data := post(c, strings.NewReader(line), int64(len(line)), nil); status == 200 && bytes.Contains(data, []byte(`"error"`)) || status == 400 {
				stats.malformed.Add(1)
			}
		})
	}
	name = "oversized"
	// Oversized bodies: announced (refused before reading) and chunked
	// (refused at the limit).
	{
		c := attackClient(30 * time.Second)
		loop(100000, func(i int) {
			n := int64(5 << 20)
			body := io.Reader(io.LimitReader(zeroReader{}, n))
			if i%2 == 1 {
				n = -1
			}
			if status, _ := post(c, body, n, nil); status == 413 {
				stats.oversized.Add(1)
			}
		})
	}
	name = "slowheader"
	// Slow headers: a byte a second, 100 connections at a time.
	for range 100 {
		loop(1000, func(int) {
			conn, err := attacker.Dial("tcp", host)
			if err != nil {
				return
			}
			defer conn.Close()
			start := time.Now()
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				io.Copy(io.Discard, conn)
			}()
			header := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nX-Slow: " + strings.Repeat("a", 1000)
			for i := 0; i < len(header); i++ {
				if _, err := conn.Write([]byte{header[i]}); err != nil {
					break
				}
				select {
				case <-closed:
					stats.slowCut.Add(1)
					if ms := time.Since(start).Milliseconds(); ms > stats.slowCutMax.Load() {
						stats.slowCutMax.Store(ms)
					}
					return
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		})
	}
	name = "slowbody"
	// Slow bodies: headers at once, then a byte every half second.
	for range 50 {
		loop(1000, func(int) {
			conn, err := attacker.Dial("tcp", host)
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{", host)
			for ctx.Err() == nil {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
	}
	name = "noread"
	// Clients that never read: listings pipelined on one connection until
	// the socket buffers are full.
	for range 32 {
		loop(1, func(int) {
			conn, err := attacker.Dial("tcp", host)
			if err != nil {
				return
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`
			req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
			for i := 0; i < 1000 && ctx.Err() == nil; i++ {
				conn.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := io.WriteString(conn, req); err != nil {
					break // full: now just never read
				}
			}
			<-ctx.Done()
		})
	}
	name = "flood"
	// Floods: 600 connections (over --max-conns' 256) held for a second,
	// then closed.
	loop(1000, func(int) {
		var conns []net.Conn
		for range 600 {
			c, err := flooder.Dial("tcp", host)
			if err != nil {
				break
			}
			conns = append(conns, c)
		}
		stats.floods.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if b, _ := bufio.NewReader(c).Peek(12); string(b) == "HTTP/1.1 503" {
				stats.refusedConns.Add(1)
			}
			c.Close()
		}
	})

	// The well-behaved client, and the RSS samples.
	var peak int64
	for i := 0; i < 1_000_000 && ctx.Err() == nil; i++ {
		good.do(i)
		if i%10 == 0 {
			peak = max(peak, rssBytes(t, proc.Pid))
		}
		time.Sleep(5 * time.Millisecond) // a host's pace, not a benchmark's
	}
	cancel()
	wg.Wait()
	peak = max(peak, rssBytes(t, proc.Pid))

	t.Logf("attack of %s: RSS idle %.1f MiB, peak %.1f MiB (%.2fx); well-behaved requests %d, p50 %s, p99 %s, max %s, failed %d",
		length, float64(idle)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(idle),
		len(good.lat), percentile(good.lat, 0.5), percentile(good.lat, 0.99), percentile(good.lat, 1), len(good.failures))
	t.Logf("refused (besides 429s): %d batches, %d malformed, %d oversized, %d flood connections over %d floods; %d slow-header connections cut (longest %d ms)",
		stats.batches.Load(), stats.malformed.Load(), stats.oversized.Load(), stats.refusedConns.Load(), stats.floods.Load(),
		stats.slowCut.Load(), stats.slowCutMax.Load())
	for i, f := range good.failures {
		if i == 5 {
			t.Errorf("... and %d more", len(good.failures)-5)
			break
		}
		t.Errorf("well-behaved request failed: %s", f)
	}
	// Issue 16's target is twice idle; 4 MiB more absorbs the wobble of the
	// idle figure itself (31-38 MiB over runs of the same binary), so that
	// the bound catches a regression (2.2-2.6x before the pooled bodies)
	// without failing on the sampling.
	if bound := 2*idle + 4<<20; peak > bound {
		t.Errorf("RSS peaked at %d bytes, over the bound of %d (twice idle, plus 4 MiB)", peak, bound)
	}
	if length >= 20*time.Second && stats.slowCut.Load() == 0 {
		t.Error("no slow-header connection was cut off")
	}
	if stats.slowCutMax.Load() > 20_000 {
		t.Errorf("a slow-header connection lived %d ms; the header timeout is 10 s", stats.slowCutMax.Load())
	}
	// Afterwards the server still serves.
	good.failures = nil
	good.do(0)
	if len(good.failures) > 0 {
		t.Errorf("after the attack: %s", good.failures[0])
	}
}

// The attackers connect from other loopback addresses than the
// well-behaved client (127.0.0.1), as they would from other hosts, so
// that the per-address rate limit tells them apart.
var (
	attacker = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	flooder  = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}, Timeout: time.Second}
)

// attackClient is an HTTP client that connects as an attacker.
func attackClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: attacker.DialContext}}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

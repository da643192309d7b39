package main_test

// The attack run: hostile HTTP clients against the real binary on
// loopback, each attack beside a well-behaved client on another address
// (127.0.0.2), as issue 26 measured them. It runs only when SKILLS_ATTACK
// names the length of each attack (SKILLS_ATTACK=20s go test -run
// '^TestAttack$' ./cmd/skills-mcp), since it takes that long and both
// cores. SKILLS_ATTACK_ONLY (comma-separated row names, such as
// serve/mix,fleet) runs some rows only; SKILLS_ATTACK_BINARY runs them
// against another build (an older one, to measure before and after: a
// row whose server lacks a flag used here fails to start). Each row logs
// one line "attack ROW: …" with the figures the issue asks for.
//
// The rows against serve are here, the hub's in attack_hub_test.go.

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

// Issue 26's targets, asserted by every row: the well-behaved client gets
// at least this share of answers, and the server's resident size stays
// within this much above idle.
const (
	minAnswered   = 0.99
	maxRSSOverIdl = 128 << 20
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

// startServerProc starts the binary with args, waits for the url= of its
// log, and returns it and the process; it is stopped when the test ends.
func startServerProc(t *testing.T, args ...string) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(attackBinary(), args...)
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
			if _, after, ok := strings.Cut(sc.Text(), " url="); ok {
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

// rssPeak samples the RSS of pid every 50 ms until stop is called, which
// returns the highest sample.
func rssPeak(t *testing.T, pid int) (stop func() int64) {
	var peak atomic.Int64
	peak.Store(rssBytes(t, pid))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond) // the sampling period, not a wait for state
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				if err != nil {
					continue
				}
				for line := range strings.SplitSeq(string(data), "\n") {
					if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
						if kb<<10 > peak.Load() {
							peak.Store(kb << 10)
						}
					}
				}
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return max(peak.Load(), rssBytes(t, pid))
	}
}

// The well-behaved client connects from its own loopback address, as
// another host would: the attackers are 127.0.0.1 (and the flood
// 127.0.0.3), so that the per-address limits and shares tell them apart.
var (
	goodDialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 10 * time.Second}
	attacker   = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, Timeout: 10 * time.Second}
	flooder    = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}, Timeout: time.Second}
)

// goodClient makes the requests a host makes, one at a time, each on a
// connection of its own (as hosts come and go, and as a fleet behind one
// load balancer does), and records each one's latency and any failure. A
// client that kept one connection open from before an attack would never
// meet the bounds on connections, which is what some attacks take.
type goodClient struct {
	c        *http.Client
	requests func(i int) *http.Request // the i-th request
	lat      []time.Duration
	total    int
	failures []string
}

func newGoodClient(requests func(int) *http.Request) *goodClient {
	return &goodClient{requests: requests, c: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, DialContext: goodDialer.DialContext}}}
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

func (g *goodClient) do(i int) {
	req := g.requests(i)
	g.total++
	start := time.Now()
	resp, err := g.c.Do(req)
	if err != nil {
		g.failures = append(g.failures, fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
		return
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.lat = append(g.lat, time.Since(start))
	if err != nil || resp.StatusCode != 200 || (req.Method == "POST" && !bytes.Contains(data, []byte(`"result"`))) {
		g.failures = append(g.failures, fmt.Sprintf("%s %s: %d %.200s %v", req.Method, req.URL.Path, resp.StatusCode, data, err))
	}
}

// run asks until ctx ends, at a host's pace.
func (g *goodClient) run(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		g.do(i)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond): // a host's pace, not a benchmark's
		}
	}
}

// warm asks n times before an attack (every path, every buffer pool) and
// fails the test on any failure.
func (g *goodClient) warm(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		g.do(i)
	}
	if len(g.failures) > 0 {
		t.Fatalf("before the attack: %v", g.failures[0])
	}
	g.lat, g.total = nil, 0
}

func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// attackLength returns SKILLS_ATTACK, or skips the test without it.
func attackLength(t *testing.T) time.Duration {
	spec := os.Getenv("SKILLS_ATTACK")
	if spec == "" {
		t.Skip("set SKILLS_ATTACK to a duration (e.g. 30s) to run the attack")
	}
	length, err := time.ParseDuration(spec)
	if err != nil || length <= 0 {
		t.Fatalf("SKILLS_ATTACK=%q is not a positive duration", spec)
	}
	return length
}

// row runs f as subtest name unless SKILLS_ATTACK_ONLY leaves it out.
func row(t *testing.T, name string, f func(t *testing.T)) {
	if only := os.Getenv("SKILLS_ATTACK_ONLY"); only != "" && !slices.Contains(strings.Split(only, ","), name) {
		return
	}
	t.Run(name, f)
}

// attack is one row under way: the attackers' goroutines and counters, and
// what the row measures.
type attack struct {
	t        *testing.T
	ctx      context.Context
	host     string // the server's host:port
	endpoint string // its MCP endpoint (serve) or one project's (hub)
	wg       sync.WaitGroup
	mu       sync.Mutex
	counts   map[string]int
}

func (a *attack) count(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts[what]++
}

// loop runs f in a goroutine of its own until the attack ends.
func (a *attack) loop(f func(i int)) {
	a.wg.Go(func() {
		for i := 0; a.ctx.Err() == nil; i++ {
			f(i)
		}
	})
}

// pause waits d, or less if the attack ends.
func (a *attack) pause(d time.Duration) {
	select {
	case <-a.ctx.Done():
	case <-time.After(d): // the attacker's pace
	}
}

// status reads the status code of the answer on br ("" if none came).
func status(br *bufio.Reader) string {
	line, err := br.ReadString('\n')
	if err != nil {
		return ""
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// runAttack runs one row: the well-behaved client asks from 127.0.0.2
// while start's attackers run, for length, and then checks and logs what
// the issue measures: the good client's answers and p99, the server's idle
// and peak resident size.
func runAttack(t *testing.T, name string, length time.Duration, pid int, good *goodClient, host, endpoint string, start func(a *attack)) *attack {
	t.Helper()
	// The attackers' own transports log each 503 a refused connection
	// reads: noise here.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	good.warm(t, 200)
	settle(t, pid)
	idle := rssBytes(t, pid)
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	a := &attack{t: t, ctx: ctx, host: host, endpoint: endpoint, counts: map[string]int{}}
	stop := rssPeak(t, pid)
	start(a)
	good.run(ctx)
	cancel()
	a.wg.Wait()
	peak := stop()
	answered := good.total - len(good.failures)
	t.Logf("attack %s: good client answered %d/%d (%.2f%%), p50 %s, p99 %s, max %s; RSS idle %.1f MiB, peak %.1f MiB (+%.1f); attackers: %v",
		name, answered, good.total, 100*float64(answered)/float64(max(1, good.total)),
		percentile(good.lat, 0.5).Round(100*time.Microsecond), percentile(good.lat, 0.99).Round(100*time.Microsecond), percentile(good.lat, 1).Round(time.Millisecond),
		float64(idle)/(1<<20), float64(peak)/(1<<20), float64(peak-idle)/(1<<20), a.counts)
	for i, f := range good.failures {
		if i == 3 {
			t.Logf("... and %d more failures", len(good.failures)-3)
			break
		}
		t.Logf("well-behaved request failed: %s", f)
	}
	if good.total == 0 || float64(answered) < minAnswered*float64(good.total) {
		t.Errorf("the well-behaved client got %d answers of %d, under %.0f%%", answered, good.total, 100*minAnswered)
	}
	if peak > idle+maxRSSOverIdl {
		t.Errorf("RSS peaked at %.1f MiB, over idle (%.1f MiB) + %d MiB", float64(peak)/(1<<20), float64(idle)/(1<<20), maxRSSOverIdl>>20)
	}
	return a
}

// settle lets the warm-up's garbage be handed back, so that idle means
// idle: the RSS is read once it stops falling.
func settle(t *testing.T, pid int) {
	prev := rssBytes(t, pid)
	for range 20 {
		time.Sleep(250 * time.Millisecond) // sampling the RSS until it is steady
		cur := rssBytes(t, pid)
		if cur >= prev-(256<<10) {
			return
		}
		prev = cur
	}
}

// listenRequest is a raw subscriptions/listen request to host's /mcp (the
// path of endpoint), with the bearer token, if any.
func listenRequest(host, path, token string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + meta20260728 + `,"notifications":{"resourcesListChanged":true,"toolsListChanged":true}}}`
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		path, host, auth, len(body), body)
}

// holdStream opens a listen stream from d and holds it until the attack
// ends or the server closes it; it returns the answer's status ("" when
// the connection failed).
func (a *attack) holdStream(d *net.Dialer, path, token string) string {
	conn, err := d.DialContext(a.ctx, "tcp", a.host)
	if err != nil {
		return ""
	}
	defer conn.Close()
	stop := context.AfterFunc(a.ctx, func() { conn.Close() })
	defer stop()
	io.WriteString(conn, listenRequest(a.host, path, token))
	br := bufio.NewReader(conn)
	code := status(br)
	if code == "200" {
		io.Copy(io.Discard, br) // held until either side ends it
	}
	return code
}

// listenStreams holds n listen streams from the attacker's address,
// opening again each one refused (after a second) or ended.
func (a *attack) listenStreams(n int, path, token string) {
	for range n {
		a.loop(func(int) {
			code := a.holdStream(attacker, path, token)
			a.count("listen " + code)
			if code != "200" {
				a.pause(time.Second)
			}
		})
	}
}

// slowBodies sends n bodies of just under 4 MiB each (the limit less one
// byte) at once: all of each but its last bytes at once, then a byte a
// second, so that they hold what the server reserved for them; renewed
// every 25 s (within the read timeout).
func (a *attack) slowBodies(n int) {
	const size = 4<<20 - 1
	for range n {
		a.loop(func(int) {
			conn, err := attacker.DialContext(a.ctx, "tcp", a.host)
			if err != nil {
				a.pause(time.Second)
				return
			}
			defer conn.Close()
			renew, cancel := context.WithTimeout(a.ctx, 25*time.Second)
			defer cancel()
			stop := context.AfterFunc(renew, func() { conn.Close() })
			defer stop()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", a.host, size)
			answered := make(chan string, 1)
			go func() { answered <- status(bufio.NewReader(conn)) }()
			if _, err := conn.Write(bytes.Repeat([]byte("x"), size-64)); err != nil {
				return
			}
			for renew.Err() == nil {
				select {
				case code := <-answered:
					a.count("body " + code)
					<-renew.Done()
					return
				case <-renew.Done():
				case <-time.After(time.Second): // the drip
					conn.Write([]byte("x"))
				}
			}
			a.count("body renewed")
		})
	}
}

// unreadReads asks for the big file on n connections that never read the
// answer, each renewed after 15 s (the server cuts a stalled write
// sooner).
func (a *attack) unreadReads(n int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://big-file/references/big.md"}}`
	req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", a.host, len(body), body)
	for range n {
		a.loop(func(int) {
			conn, err := attacker.DialContext(a.ctx, "tcp", a.host)
			if err != nil {
				a.pause(time.Second)
				return
			}
			defer conn.Close()
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetReadBuffer(4 << 10) // a client that takes nothing, with little room to fill
			}
			io.WriteString(conn, req)
			a.count("unread read")
			a.pause(15 * time.Second)
		})
	}
}

// TestAttack runs every row. The rows against serve share one library of
// 1,000 skills and a file of 8 MB; each row starts a server of its own,
// so that each measures its own idle and peak.
func TestAttack(t *testing.T) {
	length := attackLength(t)
	lib := attackLibrary(t, 1000)
	serve := func(t *testing.T, args ...string) (host, endpoint string, pid int) {
		endpoint, proc := startServerProc(t, append([]string{"--http", "127.0.0.1:0", "--root", lib}, args...)...)
		u, _ := url.Parse(endpoint)
		return u.Host, endpoint, proc.Pid
	}
	row(t, "serve/listen-streams", func(t *testing.T) {
		// 256 subscriptions/listen streams held open from one address.
		host, endpoint, pid := serve(t)
		a := runAttack(t, "serve/listen-streams", length, pid, newGoodClient(mcpRequests(endpoint)), host, endpoint, func(a *attack) {
			a.listenStreams(256, "/mcp", "")
		})
		if a.counts["listen 200"] == 0 {
			t.Error("no listen stream of the attacker was served")
		}
	})
	row(t, "serve/slow-bodies", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		runAttack(t, "serve/slow-bodies", length, pid, newGoodClient(mcpRequests(endpoint)), host, endpoint, func(a *attack) {
			a.slowBodies(4)
		})
	})
	row(t, "serve/unread-reads", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		runAttack(t, "serve/unread-reads", length, pid, newGoodClient(mcpRequests(endpoint)), host, endpoint, func(a *attack) {
			a.unreadReads(64)
		})
	})
	row(t, "serve/mix", func(t *testing.T) {
		host, endpoint, pid := serve(t)
		a := runAttack(t, "serve/mix", length, pid, newGoodClient(mcpRequests(endpoint)), host, endpoint, func(a *attack) {
			a.listenStreams(256, "/mcp", "")
			a.slowBodies(4)
			a.unreadReads(64)
			a.classic()
		})
		if length >= 20*time.Second && a.counts["slow header cut"] == 0 {
			t.Error("no slow-header connection was cut off")
		}
	})
	row(t, "fleet", func(t *testing.T) { attackFleet(t, length, serve) })
	attackHub(t, length)
}

// classic starts the attackers of the first attack run: batches,
// malformed strings, oversized bodies, slow headers, slow bodies, clients
// that never read their listings, and floods of connections (from
// 127.0.0.3) held a second.
func (a *attack) classic() {
	post := func(c *http.Client, body io.Reader, n int64) (int, []byte) {
		req, _ := http.NewRequestWithContext(a.ctx, "POST", a.endpoint, body)
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
		return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: attacker.DialContext}}
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
		a.loop(func(int) {
			if code, _ := post(c, strings.NewReader(batch.String()), int64(batch.Len())); code == 400 {
				a.count("batch refused")
			}
		})
	}
	for range 2 {
		c := client(10 * time.Second)
		a.loop(func(i int) {
			line := malformedLines[i%len(malformedLines)].line
			if code, data := post(c, strings.NewReader(line), int64(len(line))); code == 200 && bytes.Contains(data, []byte(`"error"`)) || code == 400 {
				a.count("malformed refused")
			}
		})
	}
	c := client(30 * time.Second)
	a.loop(func(i int) {
		n := int64(5 << 20)
		body := io.Reader(io.LimitReader(zeroReader{}, n))
		if i%2 == 1 {
			n = -1
		}
		if code, _ := post(c, body, n); code == 413 {
			a.count("oversized refused")
		}
	})
	// Slow headers: a byte a second, 100 connections at a time.
	for range 100 {
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
				io.Copy(io.Discard, conn)
			}()
			header := "POST /mcp HTTP/1.1\r\nHost: " + a.host + "\r\nX-Slow: " + strings.Repeat("a", 1000)
			for i := 0; i < len(header); i++ {
				if _, err := conn.Write([]byte{header[i]}); err != nil {
					break
				}
				select {
				case <-closed:
					a.count("slow header cut")
					return
				case <-a.ctx.Done():
					return
				case <-time.After(time.Second): // the drip
				}
			}
		})
	}
	// Slow bodies: headers at once, then a byte every half second.
	for range 50 {
		a.loop(func(int) {
			conn, err := attacker.DialContext(a.ctx, "tcp", a.host)
			if err != nil {
				a.pause(time.Second)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{", a.host)
			for a.ctx.Err() == nil {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				a.pause(500 * time.Millisecond)
			}
		})
	}
	// Clients that never read: listings pipelined on one connection until
	// the socket buffers are full.
	for range 32 {
		a.wg.Go(func() {
			conn, err := attacker.DialContext(a.ctx, "tcp", a.host)
			if err != nil {
				return
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`
			req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", a.host, len(body), body)
			for i := 0; i < 1000 && a.ctx.Err() == nil; i++ {
				conn.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := io.WriteString(conn, req); err != nil {
					break // full: now just never read
				}
			}
			<-a.ctx.Done()
		})
	}
	// Floods: 600 connections from 127.0.0.3 held for a second, then closed.
	a.loop(func(int) {
		var conns []net.Conn
		for range 600 {
			c, err := flooder.DialContext(a.ctx, "tcp", a.host)
			if err != nil {
				break
			}
			conns = append(conns, c)
		}
		a.count("flood")
		a.pause(time.Second)
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if b, _ := bufio.NewReader(c).Peek(12); string(b) == "HTTP/1.1 503" {
				a.count("flood connection refused")
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
	good := newGoodClient(mcpRequests(endpoint))
	var acked atomic.Int64
	var before, held int64
	a := runAttack(t, "fleet", length, pid, good, host, endpoint, func(a *attack) {
		before = rssBytes(t, pid)
		var opened sync.WaitGroup
		sem := make(chan struct{}, 64) // dials at once
		for i := range n {
			opened.Add(1)
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(i%250+1))}, Timeout: 10 * time.Second}
			a.wg.Go(func() {
				sem <- struct{}{}
				conn, err := d.DialContext(a.ctx, "tcp", host)
				if err != nil {
					<-sem
					opened.Done()
					a.count("dial failed")
					return
				}
				defer conn.Close()
				stop := context.AfterFunc(a.ctx, func() { conn.Close() })
				defer stop()
				io.WriteString(conn, listenRequest(host, "/mcp", ""))
				br := bufio.NewReader(conn)
				code := status(br)
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
				a.count("listen " + code)
				io.Copy(io.Discard, br)
			})
		}
		opened.Wait()
		settle(t, pid)
		held = rssBytes(t, pid)
	})
	perStream := float64(held-before) / float64(max(1, acked.Load()))
	t.Logf("attack fleet: %d of %d streams acknowledged; RSS %.1f MiB before them, %.1f MiB holding them: %.1f KiB per idle stream",
		acked.Load(), n, float64(before)/(1<<20), float64(held)/(1<<20), perStream/1024)
	if acked.Load() != n {
		t.Errorf("%d of %d listen streams were acknowledged (%v)", acked.Load(), n, a.counts)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

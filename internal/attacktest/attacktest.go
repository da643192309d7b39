// Package attacktest is the harness of the attack run (issue 26): a row
// runs hostile clients against a real server process on loopback, from
// one address (127.0.0.1, floods from 127.0.0.3), while a well-behaved
// client on another (127.0.0.2) keeps asking, and checks what the issue
// measures: the good client's answers, its latency, and the server's idle
// and peak resident size. The rows themselves are the binaries' tests
// (cmd/skills-mcp, cmd/skills-hub); this package holds what they share.
//
// A run needs SKILLS_ATTACK, the length of each row (SKILLS_ATTACK=20s go
// test -run '^TestAttack$' ./cmd/skills-mcp ./cmd/skills-hub); without it
// the tests skip. SKILLS_ATTACK_ONLY (comma-separated row names) runs some
// rows only.
package attacktest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 26's targets, which every row asserts: the well-behaved client gets
// at least MinAnswered of its answers, and the server's resident size stays
// within MaxRSSOverIdle of idle.
const (
	MinAnswered    = 0.99
	MaxRSSOverIdle = 128 << 20
)

// The well-behaved client connects from its own loopback address, as
// another host would: the attackers are 127.0.0.1 (and floods 127.0.0.3),
// so that the per-address limits and shares tell them apart.
var (
	GoodDialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 10 * time.Second}
	Attacker   = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, Timeout: 10 * time.Second}
	Flooder    = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}, Timeout: time.Second}
)

// Meta20260728 is the _meta of a request of the per-request protocol.
const Meta20260728 = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"attack","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// Length returns SKILLS_ATTACK, or skips the test without it.
func Length(t *testing.T) time.Duration {
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

// Row runs f as subtest name unless SKILLS_ATTACK_ONLY leaves it out.
func Row(t *testing.T, name string, f func(t *testing.T)) {
	if only := os.Getenv("SKILLS_ATTACK_ONLY"); only != "" && !slices.Contains(strings.Split(only, ","), name) {
		return
	}
	t.Run(name, f)
}

// StartServer starts argv (a server that logs " url=" once it listens)
// with env, and returns that URL and its process id; it is stopped when
// the test ends.
func StartServer(t *testing.T, argv, env []string) (string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
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
		return u, cmd.Process.Pid
	case <-time.After(60 * time.Second):
		t.Fatal("server did not report its URL")
		return "", 0
	}
}

// RSS returns the resident set size of process pid.
func RSS(t *testing.T, pid int) int64 {
	t.Helper()
	n, err := rss(pid)
	if err != nil {
		t.Fatalf("reading the server's RSS: %v", err)
	}
	return n
}

func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// rssPeak samples the RSS of pid every 50 ms until stop is called, which
// returns the highest sample.
func rssPeak(t *testing.T, pid int) (stop func() int64) {
	var peak atomic.Int64
	peak.Store(RSS(t, pid))
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
				if n, err := rss(pid); err == nil && n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return max(peak.Load(), RSS(t, pid))
	}
}

// Settle lets a warm-up's garbage be handed back, so that idle means
// idle: the RSS is read once it stops falling.
func Settle(t *testing.T, pid int) {
	prev := RSS(t, pid)
	for range 20 {
		time.Sleep(250 * time.Millisecond) // sampling the RSS until it is steady
		cur := RSS(t, pid)
		if cur >= prev-(256<<10) {
			return
		}
		prev = cur
	}
}

// Client makes the requests a host makes, one at a time, each on a
// connection of its own (as hosts come and go, and as a fleet behind one
// load balancer does), and records each one's latency and any failure. A
// client that kept one connection open from before an attack would never
// meet the bounds on connections, which is what some attacks take.
type Client struct {
	c        *http.Client
	requests func(i int) *http.Request // the i-th request
	lat      []time.Duration
	total    int
	failures []string
}

// NewClient returns a client of the requests; a request is answered when
// its status is 200 and, for a POST, its body holds a JSON-RPC result.
func NewClient(requests func(int) *http.Request) *Client {
	return &Client{requests: requests, c: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, DialContext: GoodDialer.DialContext}}}
}

func (g *Client) do(i int) {
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
	if err != nil || resp.StatusCode != 200 || (req.Method == "POST" && !strings.Contains(string(data), `"result"`)) {
		g.failures = append(g.failures, fmt.Sprintf("%s %s: %d %.200s %v", req.Method, req.URL.Path, resp.StatusCode, data, err))
	}
}

// run asks until ctx ends, at a host's pace.
func (g *Client) run(ctx context.Context) {
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
func (g *Client) warm(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		g.do(i)
	}
	if len(g.failures) > 0 {
		t.Fatalf("before the attack: %v", g.failures[0])
	}
	g.lat, g.total = nil, 0
}

// Latency returns the p-th quantile of the latencies of the client's
// answers in the last row it ran in.
func (g *Client) Latency(p float64) time.Duration { return Percentile(g.lat, p) }

// Percentile returns the p-th quantile of lat.
func Percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// Attack is one row under way: the attackers' goroutines and counters.
type Attack struct {
	T        *testing.T
	Ctx      context.Context // ends with the row
	Host     string          // the server's host:port
	Endpoint string          // its MCP endpoint (serve) or one project's (hub)
	wg       sync.WaitGroup
	mu       sync.Mutex
	counts   map[string]int
}

// Count counts one outcome of the attackers.
func (a *Attack) Count(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts[what]++
}

// Counts returns the count of what.
func (a *Attack) Counts(what string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[what]
}

// Loop runs f in a goroutine of its own until the row ends.
func (a *Attack) Loop(f func(i int)) {
	a.wg.Go(func() {
		for i := 0; a.Ctx.Err() == nil; i++ {
			f(i)
		}
	})
}

// UnreadRequests sends the raw HTTP request req on n connections from the
// attacker's address that take nothing of the answer, with little room to
// fill, each renewed after 15 s (the server cuts a stalled write sooner);
// each sent counts as "unread read".
func (a *Attack) UnreadRequests(n int, req string) {
	for range n {
		a.Loop(func(int) {
			conn, err := Attacker.DialContext(a.Ctx, "tcp", a.Host)
			if err != nil {
				a.Pause(time.Second)
				return
			}
			defer conn.Close()
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetReadBuffer(4 << 10)
			}
			io.WriteString(conn, req)
			a.Count("unread read")
			a.Pause(15 * time.Second)
		})
	}
}

// Go runs f once in a goroutine of its own, which the row waits for.
func (a *Attack) Go(f func()) { a.wg.Go(f) }

// Pause waits d, or less if the row ends.
func (a *Attack) Pause(d time.Duration) {
	select {
	case <-a.Ctx.Done():
	case <-time.After(d): // the attacker's pace
	}
}

// Status reads the status code of the answer on br ("" if none came).
func Status(br *bufio.Reader) string {
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

// ListenRequest is a raw subscriptions/listen request to path on host,
// with the bearer token, if any.
func ListenRequest(host, path, token string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + Meta20260728 + `,"notifications":{"resourcesListChanged":true,"toolsListChanged":true}}}`
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		path, host, auth, len(body), body)
}

// HoldStream opens a listen stream from d and holds it until the row ends
// or the server closes it; it returns the answer's status ("" when the
// connection failed).
func (a *Attack) HoldStream(d *net.Dialer, path, token string) string {
	conn, err := d.DialContext(a.Ctx, "tcp", a.Host)
	if err != nil {
		return ""
	}
	defer conn.Close()
	stop := context.AfterFunc(a.Ctx, func() { conn.Close() })
	defer stop()
	io.WriteString(conn, ListenRequest(a.Host, path, token))
	br := bufio.NewReader(conn)
	code := Status(br)
	if code == "200" {
		io.Copy(io.Discard, br) // held until either side ends it
	}
	return code
}

// ListenStreams holds n listen streams from the attacker's address,
// opening again each one refused (after a second) or ended.
func (a *Attack) ListenStreams(n int, path, token string) {
	for range n {
		a.Loop(func(int) {
			code := a.HoldStream(Attacker, path, token)
			a.Count("listen " + code)
			if code != "200" {
				a.Pause(time.Second)
			}
		})
	}
}

// Run runs one row: the well-behaved client asks (after a warm-up) while
// start's attackers run, for length, and then the row logs and checks what
// the issue measures: the good client's answers and p99, the server's idle
// and peak resident size.
func Run(t *testing.T, name string, length time.Duration, pid int, good *Client, host, endpoint string, start func(a *Attack)) *Attack {
	t.Helper()
	// The attackers' own transports log each 503 a refused connection
	// reads: noise here.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	good.warm(t, 200)
	Settle(t, pid)
	idle := RSS(t, pid)
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	a := &Attack{T: t, Ctx: ctx, Host: host, Endpoint: endpoint, counts: map[string]int{}}
	stop := rssPeak(t, pid)
	start(a)
	good.run(ctx)
	cancel()
	a.wg.Wait()
	peak := stop()
	answered := good.total - len(good.failures)
	t.Logf("attack %s: good client answered %d/%d (%.2f%%), p50 %s, p99 %s, max %s; RSS idle %.1f MiB, peak %.1f MiB (+%.1f); attackers: %v",
		name, answered, good.total, 100*float64(answered)/float64(max(1, good.total)),
		Percentile(good.lat, 0.5).Round(100*time.Microsecond), Percentile(good.lat, 0.99).Round(100*time.Microsecond), Percentile(good.lat, 1).Round(time.Millisecond),
		float64(idle)/(1<<20), float64(peak)/(1<<20), float64(peak-idle)/(1<<20), a.counts)
	for i, f := range good.failures {
		if i == 3 {
			t.Logf("... and %d more failures", len(good.failures)-3)
			break
		}
		t.Logf("well-behaved request failed: %s", f)
	}
	if good.total == 0 || float64(answered) < MinAnswered*float64(good.total) {
		t.Errorf("the well-behaved client got %d answers of %d, under %.0f%%", answered, good.total, 100*MinAnswered)
	}
	if peak > idle+MaxRSSOverIdle {
		t.Errorf("RSS peaked at %.1f MiB, over idle (%.1f MiB) + %d MiB", float64(peak)/(1<<20), float64(idle)/(1<<20), MaxRSSOverIdle>>20)
	}
	return a
}

package main_test

// End-to-end tests of the process's lifecycle: what happens to requests
// when stdin closes or SIGTERM comes, and to signals while it starts.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bigLibrary writes n skills into a new folder: enough that a cold first
// scan is likely still running when a test's next step comes (the tests
// hold whichever way it falls).
func bigLibrary(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		if err := os.MkdirAll(filepath.Join(dir, name, "references"), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("---\nname: %s\ndescription: Generated skill number %d, for lifecycle tests.\n---\n# %s\n\nStep one, step two.\n", name, i, name)
		if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "references", "notes.md"), []byte("notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rpcLine is a JSON-RPC request line.
func rpcLine(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b) + "\n"
}

func initializeLine(version string) string {
	return rpcLine(0, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e", "version": "1"}})
}

// waitExit waits up to limit for cmd to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server did not exit within %s", limit)
		return -1
	}
}

// TestStdinClosedAfterRequests: requests written and stdin closed at once
// (printf ... | skills-mcp) are all answered before the process exits,
// those that wait for the first scan included, on every revision.
func TestStdinClosedAfterRequests(t *testing.T) {
	const skills = 2000
	lib := bigLibrary(t, skills)
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			cmd := exec.Command(binary, "--root", lib, "--page-size", "10000")
			cmd.Env = testEnv(t)
			cmd.Stdin = strings.NewReader(initializeLine(v) +
				rpcLine(nil, "notifications/initialized", nil) +
				rpcLine(2, "skills/list", map[string]any{}) +
				rpcLine(3, "resources/read", map[string]any{"uri": "skill://skill-00007/references/notes.md"}))
			stderr := newLogBuffer()
			cmd.Stderr = stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(stdout)
			if code := waitExit(t, cmd, time.Minute); code != 0 {
				t.Errorf("exit code %d; stderr:\n%s", code, stderr)
			}
			answers := map[int]json.RawMessage{}
			for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
				var m struct {
					ID     *int            `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("output line %.200q: %v", line, err)
				}
				if m.ID != nil {
					if m.Error != nil {
						t.Errorf("request %d failed: %s", *m.ID, m.Error)
					}
					answers[*m.ID] = m.Result
				}
			}
			var list struct {
				Skills []json.RawMessage `json:"skills"`
			}
			if err := json.Unmarshal(answers[2], &list); err != nil || len(list.Skills) != skills {
				t.Errorf("skills/list answered with %d skills (%v), want %d; output:\n%.500s", len(list.Skills), err, skills, out)
			}
			var read mcp.ReadResourceResult
			if err := json.Unmarshal(answers[3], &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "notes\n" {
				t.Errorf("resources/read answered %.300s (%v)", answers[3], err)
			}
		})
	}
}

// startHTTPProcess starts the binary with --http on a free loopback port
// and returns it, its log and its MCP endpoint once it listens.
func startHTTPProcess(t *testing.T, args ...string) (*exec.Cmd, *logBuffer, *url.URL) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = testEnv(t)
	log := newLogBuffer()
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a no-op once it exited
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !log.waitFor(ctx, "url=") {
		t.Fatalf("the server did not report its URL:\n%s", log)
	}
	_, after, _ := strings.Cut(log.String(), "url=")
	u, err := url.Parse(strings.Fields(after)[0])
	if err != nil {
		t.Fatal(err)
	}
	return cmd, log, u
}

// TestSIGTERMDrainsHTTP: a request in flight when SIGTERM comes is
// answered; meanwhile no new connection is taken; then the process exits
// cleanly. The request is held in flight by its body: it asks for
// 100-continue, which the server sends once the handler reads the body,
// and the body is sent only after SIGTERM. If the first scan is still
// running then, the answer waits for it: the scan goes on through the
// drain.
func TestSIGTERMDrainsHTTP(t *testing.T) {
	cmd, log, u := startHTTPProcess(t, "--root", testLibrary)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	body := rpcLine(7, "skills/list", map[string]any{})
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n", u.Path, u.Host, len(body))
	r := bufio.NewReader(conn)
	status, err := r.ReadString('\n')
	if err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("before the body: %q (%v)", status, err)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q (%v)", blank, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Wait for the listener to close: shutdown has begun.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("still accepting connections 20s after SIGTERM:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond) // poll for the state, not the assertion
	}

	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	status, err = r.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("answer to the request in flight: %q (%v)\n%s", status, err, log)
	}
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), `"id":7`) || !strings.Contains(string(rest), `"skills":[`) {
		t.Errorf("answer body: %.500s", rest)
	}
	if code := waitExit(t, cmd, 30*time.Second); code != 0 {
		t.Errorf("exit code %d after the drain:\n%s", code, log)
	}
}

// TestSIGHUPDuringFirstScan: a SIGHUP that lands while the server starts
// (here right after the handshake, when the first scan of a large library
// begins) neither kills the process nor is lost: the reload is held and
// applied once the catalog serves, and the whole catalog is served.
func TestSIGHUPDuringFirstScan(t *testing.T) {
	const skills = 3000
	lib := bigLibrary(t, skills)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(binary, "--root", lib, "--page-size", "1000")
	cmd.Env = testEnv(t)
	log := newLogBuffer()
	cmd.Stderr = log
	cs, err := newClient(t).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The handlers are in place before the handshake is answered, so this
	// lands during the first scan or after it, never before the handlers.
	for range 3 {
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(listAll(t, cs)); got != skills {
		t.Errorf("listed %d skills, want %d", got, skills)
	}
	if !log.waitFor(ctx, "SIGHUP: reloading") {
		t.Errorf("the SIGHUP was not applied:\n%s", log)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("the server does not answer after the reload: %v\n%s", err, log)
	}
}

// stdioProcess is the binary serving over pipes, driven line by line.
type stdioProcess struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // stdout, closed at its end
	log   *logBuffer
}

func startStdio(t *testing.T, args ...string) *stdioProcess {
	t.Helper()
	p := &stdioProcess{cmd: exec.Command(binary, args...), lines: make(chan string, 64), log: newLogBuffer()}
	p.cmd.Env = testEnv(t)
	p.cmd.Stderr = p.log
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() }) // a no-op once it exited
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

// call writes line and returns the answer with the given id.
func (p *stdioProcess) call(t *testing.T, line string, id int) string {
	t.Helper()
	if _, err := io.WriteString(p.in, line); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(time.Minute)
	for {
		select {
		case got, ok := <-p.lines:
			if !ok {
				t.Fatalf("stdout ended before the answer to %.100s:\n%s", line, p.log)
			}
			var m struct{ ID *int }
			if json.Unmarshal([]byte(got), &m) == nil && m.ID != nil && *m.ID == id {
				return got
			}
		case <-timeout:
			t.Fatalf("no answer to %.100s:\n%s", line, p.log)
		}
	}
}

// TestSIGTERMWithStuckRead: SIGTERM ends the process within a bounded time
// even while a request is stuck reading a file that never answers (a FIFO
// swapped in for a served file: opening it for reading blocks until a
// writer comes, unless the open is non-blocking).
func TestSIGTERMWithStuckRead(t *testing.T) {
	lib := copyTree(t, testLibrary)
	stuck := filepath.Join(lib, "code-review", "stuck.md")
	if err := os.WriteFile(stuck, []byte("soon a FIFO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startStdio(t, "--root", lib)
	p.call(t, initializeLine("2025-11-25"), 0)
	p.call(t, rpcLine(nil, "notifications/initialized", nil)+rpcLine(1, "skills/list", map[string]any{}), 1) // the catalog is in
	if err := os.Remove(stuck); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(stuck, 0o644); err != nil {
		t.Fatal(err)
	}
	// The SDK serves each call on a goroutine of its own, in order: once
	// the ping is answered, the read has started.
	p.call(t, rpcLine(2, "resources/read", map[string]any{"uri": "skill://code-review/stuck.md"})+rpcLine(3, "ping", nil), 3)
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, p.cmd, time.Minute)
	t.Logf("exit code %d, %s after SIGTERM", code, time.Since(start).Round(time.Millisecond))
}

// TestStdinClosedHostNotReading: a host that sends twenty reads of an
// 8 MB file, closes stdin and never reads stdout does not keep the process
// past the drain deadline (10 s), nor fill its memory meanwhile; the log
// says what was left unwritten. (On 3147e6f it ran past 40 s at 643 MiB,
// logging "dropped" while it went on writing.)
func TestStdinClosedHostNotReading(t *testing.T) {
	lib := t.TempDir()
	big := filepath.Join(lib, "big-file")
	if err := os.MkdirAll(filepath.Join(big, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(big, "SKILL.md"), []byte("---\nname: big-file\ndescription: One large file.\n---\nRead it.\n"), 0o644)
	line := "A large reference, read by a host that never takes its answers.\n"
	os.WriteFile(filepath.Join(big, "references", "big.md"), []byte(strings.Repeat(line, 8_000_000/len(line))), 0o644)

	cmd := exec.Command(binary, "--root", lib)
	cmd.Env = testEnv(t)
	stdin, _ := cmd.StdinPipe()
	stdoutR, stdoutW, err := os.Pipe() // never read until the process exits
	if err != nil {
		t.Fatal(err)
	}
	defer stdoutR.Close()
	cmd.Stdout = stdoutW
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutW.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`+"\n")
	for i := range 20 {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://big-file/references/big.md"}}`+"\n", i+1)
	}
	closed := time.Now()
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	for waiting := true; waiting; {
		select {
		case err := <-done:
			waiting = false
			if err != nil {
				t.Errorf("exit: %v\n%s", err, stderr.String())
			}
		case <-time.After(100 * time.Millisecond): // sampling the RSS while it drains
			if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
				for l := range strings.SplitSeq(string(data), "\n") {
					if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
						var kb int64
						fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
						peak = max(peak, kb<<10)
					}
				}
			}
			if time.Since(closed) > 60*time.Second {
				cmd.Process.Kill()
				t.Fatalf("still running 60 s after stdin closed\n%s", stderr.String())
			}
		}
	}
	took := time.Since(closed)
	t.Logf("exited %s after stdin closed, peak RSS %.1f MiB", took.Round(100*time.Millisecond), float64(peak)/(1<<20))
	if took > 25*time.Second {
		t.Errorf("exited %s after stdin closed; the drain deadline is 10 s", took)
	}
	if peak > 250<<20 {
		t.Errorf("peak RSS %.1f MiB while the host read nothing", float64(peak)/(1<<20))
	}
	if !strings.Contains(stderr.String(), "not reading stdout") || !strings.Contains(stderr.String(), "unwritten=") {
		t.Errorf("the log does not say what was left unwritten:\n%s", stderr.String())
	}
}

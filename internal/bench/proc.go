package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateGrace is how long closing a session waits for the server to exit
// after its stdin is closed, before the SDK sends SIGTERM (and later
// SIGKILL). Servers exit within milliseconds of EOF; a longer grace would
// only slow down the benchmark when one does not.
const terminateGrace = 2 * time.Second

// serverProcess runs one server command as the leader of its own process
// group and connects to it over stdio: with the SDK's CommandTransport
// (Connect), or with plain pipes (startPipes).
// Killing the group also ends the helpers a wrapper script or npx starts.
type serverProcess struct {
	cmd    *exec.Cmd
	inner  *mcp.CommandTransport
	stderr *tailBuffer
	pid    atomic.Int64 // set once the process has started
	killed atomic.Bool  // kill was called; a later start must die at once
}

func newServerProcess(argv []string) *serverProcess {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A helper that inherits stderr and outlives the server must not keep
	// Wait (and so Close) blocked on the stderr copy.
	cmd.WaitDelay = time.Second
	p := &serverProcess{cmd: cmd, stderr: newTailBuffer(4 << 10)}
	cmd.Stderr = p.stderr
	p.inner = &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}
	return p
}

// Connect implements mcp.Transport: it starts the command and records its
// process id, which the watchdog and the memory probe need. The SDK calls it
// from Client.Connect, before the initialize handshake.
func (p *serverProcess) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := p.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	p.started()
	return conn, nil
}

// started records the process id, which the watchdog and the memory probe
// need. The watchdog may have fired while the process was starting; it
// could not see the pid then, so its decision is honoured now.
func (p *serverProcess) started() {
	p.pid.Store(int64(p.cmd.Process.Pid))
	if p.killed.Load() {
		p.kill()
	}
}

// startPipes starts the command with pipes to its stdin and from its
// stdout, for a client that speaks JSON-RPC itself (ClientRaw).
func (p *serverProcess) startPipes() (io.WriteCloser, io.Reader, error) {
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, nil, err
	}
	p.started()
	return stdin, stdout, nil
}

// stop ends a process started by startPipes as the stdio transport
// prescribes, and as the SDK's CommandTransport does for ClientSDK: close
// its stdin and wait terminateGrace for it to exit, then SIGTERM, then
// SIGKILL. It returns what Wait returned.
func (p *serverProcess) stop(stdin io.Closer) error {
	_ = stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = p.cmd.Process.Signal(sig)
		}
		select {
		case err := <-done:
			return err
		case <-time.After(terminateGrace):
		}
	}
	return errors.New("the server did not exit after SIGKILL")
}

// kill sends SIGKILL to the server's process group. It is safe to call from
// any goroutine, any number of times, before or after the process started.
func (p *serverProcess) kill() {
	p.killed.Store(true)
	if pid := int(p.pid.Load()); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// reapStragglers kills, one by one, the processes still in the server's
// process group after the session closed: children of a wrapper that did
// not pass the shutdown on. Each is checked to be in the group first.
func (p *serverProcess) reapStragglers() {
	pgid := int(p.pid.Load())
	if pgid <= 0 {
		return
	}
	for _, pid := range groupMembers(pgid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// exitState describes how the process ended, if it has ended.
func (p *serverProcess) exitState() string {
	if ps := p.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	return ""
}

// memory is what /proc says about a process group's memory, in bytes.
type memory struct {
	Peak    int64 // sum of VmHWM over the group
	Current int64 // sum of VmRSS over the group
}

// groupMemory sums VmHWM and VmRSS over the processes of group pgid. For a
// server that is a single process, these are its peak and current resident
// set sizes. It fails where /proc is not available.
func groupMemory(pgid int) (memory, error) {
	var m memory
	members := groupMembers(pgid)
	if len(members) == 0 {
		return m, fmt.Errorf("no process in group %d (is /proc mounted?)", pgid)
	}
	for _, pid := range members {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue // exited meanwhile
		}
		m.Peak += statusKiB(data, "VmHWM:") << 10
		m.Current += statusKiB(data, "VmRSS:") << 10
	}
	if m.Peak == 0 {
		return m, errors.New("/proc reports no resident memory for the server")
	}
	return m, nil
}

// statusKiB returns the value of a "Key:   123 kB" line of /proc/PID/status.
func statusKiB(status []byte, key string) int64 {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		return n
	}
	return 0
}

// groupMembers lists the processes whose process group is pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if g, ok := statPgrp(data); ok && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// statPgrp returns the process group field of /proc/PID/stat. The command
// name in parentheses may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func statPgrp(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[i+1:])) // state ppid pgrp ...
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// which Linux fixes at 100 on every architecture Go supports.
const clockTick = 10 * time.Millisecond

// groupCPU returns the CPU time (user + system) the processes of group pgid
// have used so far, to the clock tick. Children that already exited and
// were reaped are not counted; a server is normally one process.
func groupCPU(pgid int) (time.Duration, error) {
	members := groupMembers(pgid)
	if len(members) == 0 {
		return 0, fmt.Errorf("no process in group %d (is /proc mounted?)", pgid)
	}
	var ticks int64
	for _, pid := range members {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		// After the command: state(3) ppid pgrp session tty_nr tpgid flags
		// minflt cminflt majflt cmajflt utime(14) stime(15).
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * clockTick, nil
}

// selfCPU returns the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tailBuffer keeps the last bytes written to it: the end of a server's
// stderr, quoted when the server fails.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes, trimmed, with the last lines first cut to
// a readable length.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, []byte("?"))))
	if lines := strings.Split(s, "\n"); len(lines) > 8 {
		s = strings.Join(lines[len(lines)-8:], "\n")
	}
	return s
}

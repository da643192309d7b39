package bwrap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/cgroup"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/seccomp"
)

// process is one started bwrap sandbox, as sandbox.Supervise drives it.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait has returned
	pidfd  int           // the namespace's first process
	cg     *cgroup.Group
}

func (p *process) Exited() <-chan struct{} { return p.exited }

func (p *process) Kill() {
	unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
	p.cmd.Process.Kill()
	if p.cg != nil {
		cgroup.KillAll(p.cg.V2(), p.cg.Dirs)
	}
}

// Confirm waits for bwrap, then for the namespace's first process (its
// pidfd turns readable only once every other process of the namespace is
// gone), reads the OOM count and removes the cgroups.
func (p *process) Confirm(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-p.exited:
	case <-ctx.Done():
		return sandbox.Exit{}, fmt.Errorf("bwrap did not exit after SIGKILL (%v)", ctx.Err())
	}
	wait := sandbox.ConfirmWait
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	if err := waitPidfd(p.pidfd, wait); err != nil {
		return sandbox.Exit{}, err
	}
	oom := p.cg.OOMKilled()
	if err := p.cg.Remove(wait); err != nil {
		return sandbox.Exit{}, err
	}
	code, sig := exitOf(p.cmd.ProcessState)
	return sandbox.Exit{Code: code, Signal: sig, OOM: oom}, nil
}

func (e *Executor) run(ctx context.Context, bin string, spec sandbox.Spec, r *sandbox.Run) (res sandbox.Result, err error) {
	lim := spec.Limits.WithDefaults()
	if ctx.Err() != nil {
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1}, nil
	}
	cg, err := e.cgroups().Create(spec.Name, lim)
	if err != nil {
		return res, err
	}
	cgDone := false
	defer func() {
		if !cgDone {
			if rerr := cg.Remove(sandbox.ConfirmWait); rerr != nil && err == nil {
				err = fmt.Errorf("%w: %v", sandbox.ErrUnconfirmed, rerr)
			}
		}
	}()

	// The files the sandbox inherits: fd 3 the info pipe, fd 4 the block
	// pipe, then the syscall filter and one O_PATH descriptor per mount,
	// opened here by the server so the sandbox user needs no access to the
	// folders above them.
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return res, err
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return res, err
	}
	defer blockW.Close()
	extra := []*os.File{infoW, blockR}
	closeExtra := func() {
		for _, f := range extra {
			f.Close()
		}
		extra = nil
	}
	defer func() { closeExtra() }()

	args := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--info-fd", "3", "--block-fd", "4",
	}
	if spec.Network {
		args = append(args, "--share-net")
	}
	addFD := func(f *os.File) string {
		extra = append(extra, f)
		return strconv.Itoa(2 + len(extra))
	}
	if !e.opts.NoSyscallFilter {
		progs, err := seccomp.Programs()
		if err != nil {
			return res, err
		}
		for _, prog := range progs {
			f, err := filterFile(prog)
			if err != nil {
				return res, err
			}
			args = append(args, "--add-seccomp-fd", addFD(f))
		}
	}
	usr := "/usr"
	if spec.RootFS != "" {
		usr = filepath.Join(spec.RootFS, "usr")
	}
	uf, err := openPath(usr)
	if err != nil {
		return res, fmt.Errorf("the sandbox's /usr: %w", err)
	}
	if _, err := os.Stat(filepath.Join(usr, "bin/prlimit")); err != nil {
		uf.Close()
		return res, fmt.Errorf("the sandbox's /usr has no bin/prlimit (util-linux), which sets the run's limits: %w", err)
	}
	args = append(args, "--ro-bind-fd", addFD(uf), "/usr")
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		args = append(args, "--symlink", "usr/"+l, "/"+l)
	}
	alt := "/etc/alternatives"
	if spec.RootFS != "" {
		alt = filepath.Join(spec.RootFS, "etc/alternatives")
	}
	if af, err := openPath(alt); err == nil {
		args = append(args, "--ro-bind-fd", addFD(af), "/etc/alternatives")
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(lim.WorkTree, 10), "--tmpfs", "/tmp")
	var writable []string
	for _, m := range spec.Mounts {
		if m.Writable && e.uid >= 0 {
			if err := chownTree(m.Host, e.uid, e.gid); err != nil {
				return res, fmt.Errorf("handing the writable mount %s to the sandbox user: %w", m.Target, err)
			}
		}
		if e.uid >= 0 {
			if err := reachable(m.Host); err != nil {
				return res, fmt.Errorf("mount %s: %w", m.Target, err)
			}
		}
		f, err := openPath(m.Host)
		if err != nil {
			return res, fmt.Errorf("mount %s: %w", m.Target, err)
		}
		opt := "--ro-bind-fd"
		if m.Writable {
			opt = "--bind-fd"
			writable = append(writable, m.Host)
		}
		args = append(args, opt, addFD(f), m.Target)
	}
	// The root tmpfs is read-only once built; /tmp and the writable mounts
	// are separate mounts and stay writable.
	args = append(args, "--remount-ro", "/", "--clearenv")
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	args = append(args, "--chdir", dir, "--")
	args = append(args, prlimitArgs(lim)...)
	args = append(args, spec.Argv...)

	stdout, stderr := sandbox.NewCapture(lim.Output), sandbox.NewCapture(lim.Output)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = extra
	// The processes that could hold the pipes open all die with the pid
	// namespace; this only bounds Wait if something unforeseen holds them.
	cmd.WaitDelay = sandbox.ConfirmWait / 2
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if e.uid >= 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(e.uid), Gid: uint32(e.gid), Groups: []uint32{}}
	}
	if cg != nil && cg.FD >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, cg.FD
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting bwrap: %w", err)
	}
	closeExtra()

	p := &process{cmd: cmd, exited: make(chan struct{}), pidfd: -1, cg: cg}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	defer func() {
		if p.pidfd >= 0 {
			unix.Close(p.pidfd)
		}
	}()
	// fail ends a sandbox that never started its command.
	fail := func(cause error) (sandbox.Result, error) {
		if p.pidfd >= 0 {
			unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
		}
		cmd.Process.Kill()
		<-p.exited
		if p.pidfd >= 0 {
			if err := waitPidfd(p.pidfd, sandbox.ConfirmWait); err != nil {
				return sandbox.Result{}, fmt.Errorf("%w: %v", sandbox.ErrUnconfirmed, err)
			}
		}
		if ctx.Err() != nil {
			// Cancelled before the command started: killed, and confirmed
			// gone by the wait above.
			return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1, Signal: "SIGKILL"}, nil
		}
		msg := firstLine(stderrOf(stderr))
		if msg != "" {
			cause = fmt.Errorf("%w (bwrap said: %s)", cause, msg)
		}
		return sandbox.Result{}, cause
	}

	child, err := readInfo(ctx, infoR)
	if err != nil {
		if child > 0 {
			// Cancelled during the setup: the sandbox is killed by its
			// pid (fail), before the block pipe is closed.
			if fd, perr := unix.PidfdOpen(child, 0); perr == nil {
				p.pidfd = fd
			}
		}
		return fail(fmt.Errorf("sandbox setup: %w", err))
	}
	if p.pidfd, err = unix.PidfdOpen(child, 0); err != nil {
		return fail(fmt.Errorf("sandbox setup: opening the sandbox's pid: %w", err))
	}
	if err := cg.Join(cmd.Process.Pid, child); err != nil {
		return fail(fmt.Errorf("sandbox setup: %w", err))
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		return fail(fmt.Errorf("sandbox setup: releasing the sandbox: %w", err))
	}
	blockW.Close()
	cgDone = true // Confirm removes the cgroups
	return sandbox.Supervise(ctx, p, sandbox.Watch{Limits: lim, Killed: r.Killed(), Writable: writable, Poll: e.opts.Poll, Stdout: stdout, Stderr: stderr})
}

// filterFile returns a syscall filter in a sealed memory file, read by
// bwrap from its start.
func filterFile(prog []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("skills-mcp-seccomp", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("the syscall filter's memory file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "seccomp")
	if _, err := f.Write(prog); err != nil {
		f.Close()
		return nil, fmt.Errorf("the syscall filter's memory file: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	return f, nil
}

// exitOf reads the command's status from bwrap's: bwrap exits with the
// command's code, or 128+N when the command died of signal N.
func exitOf(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, unix.SignalName(ws.Signal())
	}
	code := ps.ExitCode()
	if code > 128 && code < 128+65 {
		if name := unix.SignalName(syscall.Signal(code - 128)); name != "" {
			return -1, name
		}
	}
	return code, ""
}

// readInfo reads the pid of the sandbox's first process from bwrap's
// --info-fd. When ctx ends first, it still waits (as long as the setup
// may take) for the report, and returns the pid with ctx's error: the
// sandbox may exist already, waiting on the block pipe, which bwrap also
// reads as "go" when it is closed; its caller must kill it by that pid,
// since killing bwrap alone can leave it behind (on cgroup v1 it is in no
// cgroup of ours yet).
func readInfo(ctx context.Context, r *os.File) (int, error) {
	type info struct {
		ChildPid int `json:"child-pid"`
	}
	got := make(chan info, 1)
	bad := make(chan error, 1)
	go func() {
		var in info
		if err := json.NewDecoder(r).Decode(&in); err != nil {
			bad <- fmt.Errorf("bwrap reported no sandbox (%v)", err)
			return
		}
		got <- in
	}()
	setup := time.NewTimer(sandbox.ConfirmWait)
	defer setup.Stop()
	select {
	case in := <-got:
		if in.ChildPid <= 0 {
			return 0, errors.New("bwrap reported no sandbox pid")
		}
		return in.ChildPid, nil
	case err := <-bad:
		return 0, err
	case <-ctx.Done():
	case <-setup.C:
		r.Close()
		return 0, fmt.Errorf("bwrap did not start a sandbox within %v", sandbox.ConfirmWait)
	}
	select {
	case in := <-got:
		return in.ChildPid, ctx.Err()
	case <-bad:
		return 0, ctx.Err()
	case <-setup.C:
		r.Close() // unblocks the decoder
		return 0, ctx.Err()
	}
}

// prlimitArgs is the command that sets the run's rlimits inside the
// sandbox and then execs the job: util-linux prlimit from the sandbox's
// /usr. It runs as the sandbox's user, which may always lower its own
// limits (setting them from outside would need CAP_SYS_RESOURCE, which a
// containerised root often lacks).
func prlimitArgs(l sandbox.Limits) []string {
	cpu := int64(math.Ceil(l.CPUTime.Seconds()))
	as := max(8*l.Memory, 4<<30)
	return []string{
		prlimitPath,
		"--cpu=" + strconv.FormatInt(cpu, 10),
		"--nproc=" + strconv.Itoa(l.Processes),
		"--fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--nofile=" + strconv.Itoa(noFiles),
		"--core=0",
		"--as=" + strconv.FormatInt(as, 10),
		"--",
	}
}

// prlimitPath is util-linux prlimit inside the sandbox.
const prlimitPath = "/usr/bin/prlimit"

// noFiles is the open-file limit of a sandbox.
const noFiles = 1024

func waitPidfd(fd int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		ms := int(time.Until(deadline).Milliseconds())
		if ms < 0 {
			ms = 0
		}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the sandbox's pid namespace: %w", err)
		}
		if n > 0 {
			return nil
		}
		return fmt.Errorf("the sandbox's first process was still alive %v after the kill", wait)
	}
}

func openPath(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// supported is nil: bubblewrap's namespaces, cgroups and syscall filters
// are Linux's.
func supported() error { return nil }

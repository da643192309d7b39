// Package bwrap is the default sandbox backend: each run is a bubblewrap
// (bwrap) sandbox started as an unprivileged host user, with every
// namespace unshared (the network only when the spec asks for it), all
// capabilities dropped, no new privileges, further user namespaces
// disabled, and a fresh root of its own: a tmpfs with the host's /usr (or
// the spec's root tree) read-only, the usr-merge links, a new /proc and
// /dev, a size-capped /tmp, and the spec's mounts.
//
// Limits are rlimits (CPU time, processes, file size, open files, no core
// dumps, and address space as a backstop) plus, where the host offers
// them, cgroup memory, pids and cpu limits (v2, or v1 on hosts such as
// Debian's hybrid layout). Both are applied to the sandbox before its
// command starts: bwrap is told to wait on a pipe (--block-fd) once its
// root is built, reports its inner pid (--info-fd), and is released only
// after the server has set that pid's rlimits and moved it and the outer
// bwrap into the run's cgroups. Under v2 the outer bwrap is cloned
// straight into its cgroup instead.
//
// Killing a run kills the namespace's first process (through a pidfd, so a
// reused pid is never hit) and the outer bwrap; the kernel then kills
// every process of the pid namespace, double-forked daemons included. The
// kill is confirmed by that first process being gone and the cgroups
// empty; otherwise Run reports sandbox.ErrUnconfirmed.
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/cgroup"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/seccomp"
)

// Options configure the backend. The zero value (or nil) is the default.
type Options struct {
	// Path is the bwrap binary; empty: "bwrap" on PATH, else /usr/bin/bwrap.
	Path string
	// UID and GID are the host user and group the sandboxes run as when the
	// server runs as root; zero: 65534 (nobody). An unprivileged server
	// runs them as itself.
	UID, GID int
	// CgroupRoot is where the cgroup hierarchies are mounted; empty:
	// /sys/fs/cgroup.
	CgroupRoot string
	// CgroupName names the folder the owners' folders are made in; empty:
	// "skills-mcp".
	CgroupName string
	// Owner names the process that owns these sandboxes among the others
	// of the host (the hub passes its store's identity and replica): each
	// run's cgroups are made under CgroupName/Owner, and Running and Kill
	// see only this owner's. Letters, digits, '-' and '_'; empty:
	// "default".
	Owner string
	// NoCgroups turns the cgroup limits off (rlimits only).
	NoCgroups bool
	// NoSyscallFilter turns the seccomp filter off. For measuring its
	// cost only: a job then reaches every system call bwrap leaves it.
	NoSyscallFilter bool
	// Poll is how often the writable mounts are measured against
	// Limits.WorkTree and WorkFiles; zero: sandbox.DefaultPoll.
	Poll time.Duration
}

// Executor runs specs in bubblewrap sandboxes.
type Executor struct {
	opts Options
	uid  int // -1: run as the server's own user
	gid  int

	cgOnce sync.Once
	cg     *cgroup.Hierarchy

	runs sandbox.Runs
}

var _ sandbox.Executor = (*Executor)(nil)

// New returns the backend with opts (nil: defaults).
func New(opts *Options) *Executor {
	e := &Executor{uid: -1, gid: -1}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.CgroupRoot == "" {
		e.opts.CgroupRoot = "/sys/fs/cgroup"
	}
	if e.opts.CgroupName == "" {
		e.opts.CgroupName = "skills-mcp"
	}
	if e.opts.Owner == "" {
		e.opts.Owner = "default"
	}
	if os.Geteuid() == 0 {
		e.uid, e.gid = 65534, 65534
		if e.opts.UID > 0 {
			e.uid = e.opts.UID
		}
		if e.opts.GID > 0 {
			e.gid = e.opts.GID
		}
	}
	return e
}

// Name is "bwrap".
func (e *Executor) Name() string { return "bwrap" }

func (e *Executor) cgroups() *cgroup.Hierarchy {
	e.cgOnce.Do(func() {
		if e.opts.NoCgroups {
			e.cg = cgroup.Disabled("memory, processes, cpu share: cgroups turned off")
			return
		}
		e.cg = cgroup.Detect(e.opts.CgroupRoot, e.opts.CgroupName, e.opts.Owner)
	})
	return e.cg
}

func (e *Executor) binary() (string, error) {
	if e.opts.Path != "" {
		return e.opts.Path, nil
	}
	if p, err := exec.LookPath("bwrap"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/bwrap"); err == nil {
		return "/usr/bin/bwrap", nil
	}
	return "", errors.New("bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
}

// Check runs a trivial command in a sandbox built like a job's and says
// what is enforced on this host.
func (e *Executor) Check(ctx context.Context) (sandbox.Enforced, error) {
	if err := sandbox.CheckOwner(e.opts.Owner); err != nil {
		return sandbox.Enforced{}, err
	}
	if _, err := e.binary(); err != nil {
		return sandbox.Enforced{}, err
	}
	if !e.opts.NoSyscallFilter {
		if _, err := seccomp.Programs(); err != nil {
			return sandbox.Enforced{}, err
		}
	}
	if _, err := os.Stat("/usr/bin/true"); err != nil {
		return sandbox.Enforced{}, fmt.Errorf("bwrap check: no /usr/bin/true to probe with: %w", err)
	}
	var b [6]byte
	if _, err := unix.Getrandom(b[:], 0); err != nil {
		return sandbox.Enforced{}, fmt.Errorf("bwrap check: %w", err)
	}
	name := fmt.Sprintf("check-%x", b)
	res, err := e.Run(ctx, sandbox.Spec{Name: name, Argv: []string{"/usr/bin/true"}, Limits: sandbox.Limits{Wall: 10 * time.Second}})
	if err != nil {
		return sandbox.Enforced{}, fmt.Errorf("bwrap check: %w", err)
	}
	if res.Reason != sandbox.ReasonExited || res.ExitCode != 0 {
		return sandbox.Enforced{}, fmt.Errorf("bwrap check: a trivial sandbox failed (%s, exit %d): %s; user namespaces may be restricted on this host",
			res.Reason, res.ExitCode, firstLine(res.Stderr))
	}
	return e.enforced(), nil
}

func (e *Executor) enforced() sandbox.Enforced {
	cg := e.cgroups()
	user := "sandbox user: the server's own uid (not root)"
	if e.uid >= 0 {
		user = fmt.Sprintf("sandbox user: host uid %d, gid %d (the server is root)", e.uid, e.gid)
	}
	enf := sandbox.Enforced{
		Backend: "bwrap",
		Limits: append([]string{
			"network: none unless the profile allows it (net namespace)",
			"filesystem: fresh tmpfs root, /usr and the package read-only, host folders absent",
			"privileges: all capabilities dropped, no new privileges, no nested user namespaces",
			user,
			"owner: " + e.opts.Owner + " (Running and Kill see only its sandboxes)",
			"processes: rlimit NPROC (per sandbox user namespace)",
			"cpu time: rlimit CPU", "file size: rlimit FSIZE", "open files: rlimit NOFILE", "core dumps: off",
			"wall time: killed by the server (pid namespace teardown)",
			"output: first Limits.Output bytes of each stream kept",
		}, cg.Enforced...),
		Missing: slices.Clone(cg.Missing),
	}
	if e.opts.NoSyscallFilter {
		enf.Missing = append(enf.Missing, "seccomp: the syscall filter is turned off")
	} else {
		enf.Limits = append(enf.Limits, fmt.Sprintf("syscalls: seccomp filter (%d rules refused with EPERM, clone3 ENOSYS, other architectures refused)", len(seccomp.Refused)))
	}
	enf.Limits, enf.Missing = sandbox.WorkTreeEnforced(enf.Limits, enf.Missing)
	if !slices.ContainsFunc(cg.Enforced, func(s string) bool { return strings.HasPrefix(s, "memory:") }) {
		enf.Missing = append(enf.Missing, "memory: only an address-space rlimit backstop (not a memory limit for node)")
	}
	return enf
}

// Running lists this owner's runs in progress: this process's, and the
// runs' cgroups that still hold processes (runs of an earlier process of
// the same owner). The empty cgroups an earlier process left (its runs
// died with it) are removed on the way; nothing of another owner is
// looked at. After a restart, Kill each unfinished run: it also removes
// its cgroups.
func (e *Executor) Running(context.Context) ([]string, error) {
	names := e.runs.Names()
	cg := e.cgroups()
	for n, busy := range cg.Leftovers() {
		if e.runs.Has(n) {
			continue
		}
		if busy {
			names = append(names, n)
			continue
		}
		// Empty, and no run of this process: a crash's leftover.
		cg.RemoveStale(n, cgroup.StaleAge)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Kill stops the named run and waits until it is confirmed gone: a run of
// this process through its Run, a run of an earlier process of this owner
// through its cgroups. Without cgroups, a run of an earlier process cannot
// outlive it (--die-with-parent), so there is nothing to kill.
func (e *Executor) Kill(ctx context.Context, name string) error {
	done, err := e.runs.Kill(ctx, name)
	if done {
		return nil
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("bwrap: %w", err)
	}
	// Not run here, or its Run could not confirm its end: its cgroups are
	// the handle left on it.
	cg := e.cgroups()
	dirs := cg.DirsOf(name)
	if len(dirs) == 0 {
		if err != nil {
			return fmt.Errorf("bwrap: %w", err)
		}
		return nil
	}
	wait := sandbox.ConfirmWait
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	if err := cgroup.RemoveDirs(cg.V2, dirs, wait); err != nil {
		return fmt.Errorf("bwrap: kill %s: %w: %v", name, sandbox.ErrUnconfirmed, err)
	}
	e.runs.Forget(name)
	return nil
}

// Run runs spec in a new sandbox and waits for it to end.
func (e *Executor) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	if err := sandbox.CheckSpec(spec); err != nil {
		return sandbox.Result{}, err
	}
	bin, err := e.binary()
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("bwrap: %w", err)
	}
	r, err := e.runs.Add(spec.Name)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("bwrap: %w", err)
	}
	res, err := e.run(ctx, bin, spec, r)
	if err != nil {
		err = fmt.Errorf("bwrap: run %s: %w", spec.Name, err)
	}
	e.runs.Done(spec.Name, r, err)
	return res, err
}

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
		cmd.Process.Kill()
		if p.pidfd >= 0 {
			unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
		}
		<-p.exited
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

	child, err := readInfo(ctx, infoR, p.exited)
	if err != nil {
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
// --info-fd.
func readInfo(ctx context.Context, r *os.File, exited <-chan struct{}) (int, error) {
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
		r.Close() // unblocks the decoder
		return 0, ctx.Err()
	case <-setup.C:
		r.Close()
		return 0, fmt.Errorf("bwrap did not start a sandbox within %v", sandbox.ConfirmWait)
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

// reachable checks that the sandbox user, which is neither the owner nor
// in the group of the server's folders, may walk to p: bwrap resolves each
// mount's source as that user, even one given as a descriptor.
func reachable(p string) error {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the sandbox user cannot reach %s: %s has mode %04o; make the folders above the job folders traversable (chmod o+x, e.g. 0711)",
				p, dir, st.Mode().Perm())
		}
		if dir == "/" {
			return nil
		}
	}
}

// chownTree hands dir and everything in it to uid:gid, never following a
// link.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

func stderrOf(c *sandbox.Capture) []byte {
	b, _ := c.Result()
	return b
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// Package gvisor is the sandbox backend on gVisor: each run is one runsc
// container, whose system calls are served by gVisor's own kernel (the
// Sentry, a Go program on the host) rather than by the host's, so a job
// reaches the host kernel only through the Sentry's small, filtered set
// of calls. It is the strongest isolation a plain Linux host offers
// without a daemon, for code a team does not trust at all; each run costs
// a few hundred milliseconds more than bubblewrap.
//
// A run is an OCI bundle made here: a read-only root that holds only the
// mount points and the usr-merge links, the host's /usr (or the spec's
// root tree) read-only, /etc/alternatives, a new /proc, a size-capped
// tmpfs /tmp, and the spec's mounts; uid and gid 65534, no capabilities,
// no new privileges, rlimits for CPU time, processes, file size, open
// files, core dumps and address space, and the network none (runsc
// --network=none) unless the spec asks for it (the host's, through the
// Sentry). Memory, processes and CPU share are the cgroup limits of the
// run's own folder (package cgroup, under CgroupName/Owner), inside which
// runsc makes its container's: the Sentry's memory is the job's.
//
// runsc needs root here (its rootless mode is not used). Killing a run
// kills every process of its cgroups (the Sentry and its gofer with
// them) and `runsc run`; the end is confirmed once runsc has exited, the
// cgroups are empty and removed, and the container's state is deleted.
// A run outlives a server killed with SIGKILL (its Sentry is not the
// server's child): Running finds it by its cgroups, Kill ends it.
package gvisor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path"
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
)

// Options configure the backend. The zero value (or nil) is the default.
type Options struct {
	// Path is the runsc binary; empty: "runsc" on PATH, else
	// /usr/bin/runsc.
	Path string
	// StateRoot is the folder of runsc's state and the runs' bundles; the
	// owner's are under StateRoot/Owner (Close removes both when they are
	// left empty). Empty: /run/skills-mcp-runsc.
	StateRoot string
	// Platform is runsc's --platform; empty: runsc's default (ptrace).
	Platform string
	// UID and GID are the user and group inside the sandbox; zero: 65534.
	UID, GID int
	// CgroupRoot is where the cgroup hierarchies are mounted; empty:
	// /sys/fs/cgroup.
	CgroupRoot string
	// CgroupName names the folder the owners' folders are made in; empty:
	// "skills-mcp-gvisor".
	CgroupName string
	// Owner names the process that owns these sandboxes among the others
	// of the host (the hub passes its store's identity and replica):
	// Running and Kill see only its runs. Letters, digits, '-' and '_';
	// empty: "default".
	Owner string
	// Poll is how often the writable mounts are measured against
	// Limits.WorkTree and WorkFiles; zero: sandbox.DefaultPoll.
	Poll time.Duration
	// Logger gets what Close and the sweep of Running removed (debug) and
	// what they could not (warn); nil: slog.Default().
	Logger *slog.Logger
}

// Executor runs specs in gVisor sandboxes.
type Executor struct {
	opts Options
	cgMu sync.Mutex
	cg   *cgroup.Hierarchy // made at first use
	runs sandbox.Runs
}

var _ sandbox.Executor = (*Executor)(nil)

// New returns the backend with opts (nil: defaults).
func New(opts *Options) *Executor {
	e := &Executor{}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.StateRoot == "" {
		e.opts.StateRoot = "/run/skills-mcp-runsc"
	}
	if e.opts.UID <= 0 {
		e.opts.UID = 65534
	}
	if e.opts.GID <= 0 {
		e.opts.GID = 65534
	}
	if e.opts.CgroupRoot == "" {
		e.opts.CgroupRoot = "/sys/fs/cgroup"
	}
	if e.opts.CgroupName == "" {
		e.opts.CgroupName = "skills-mcp-gvisor"
	}
	if e.opts.Owner == "" {
		e.opts.Owner = "default"
	}
	return e
}

// Name is "gvisor".
func (e *Executor) Name() string { return "gvisor" }

func (e *Executor) cgroups() *cgroup.Hierarchy {
	e.cgMu.Lock()
	defer e.cgMu.Unlock()
	if e.cg == nil {
		e.cg = cgroup.Detect(e.opts.CgroupRoot, e.opts.CgroupName, e.opts.Owner)
	}
	return e.cg
}

// Close removes what this owner left on the host that no run holds: in
// its runsc folder (StateRoot/Owner), runsc's state and the bundles of
// runs that are over, then the folder itself when nothing else is in it,
// and StateRoot when no other owner's folder is; in each cgroup hierarchy,
// the owner's folder (CgroupName/Owner) where it is empty, and the
// CgroupName folder where no other owner's is left. So a stopped server
// leaves nothing behind. What belongs to a run, of this process or of
// another of the same owner, stays: a run whose cgroup folders are there
// (from before its bundle is made until after its state is deleted), or a
// container runsc says is starting or whose sandbox process is alive; the
// runsc folder stays while any run folder of the owner does. Close neither
// waits for nor stops runs (the caller ends them first). It logs what it
// removed at debug and what it could not at warn, and returns the latter;
// what is not there, not empty or busy is not an error. The executor may
// be used again after: its next run makes the folders again.
func (e *Executor) Close() error {
	e.cgMu.Lock()
	cg := e.cg
	e.cgMu.Unlock()
	log := e.logger()
	var errs []error
	owned := filepath.Join(e.opts.StateRoot, e.opts.Owner)
	if _, err := os.Lstat(owned); err == nil {
		if cg == nil {
			cg = e.cgroups() // an earlier process's folder: its runs' cgroups say which are over
		}
		if err := e.sweep(context.Background(), cg); err != nil {
			log.Warn("what the owner's runs left could not all be removed", "sandbox", "gvisor", "owner", e.opts.Owner, "err", err)
			errs = append(errs, err)
		}
	}
	if cg == nil {
		return nil // never used and nothing left by another: nothing was made
	}
	removed, err := cg.Close()
	if len(removed) > 0 {
		log.Debug("removed the owner's empty cgroup folders", "sandbox", "gvisor", "owner", e.opts.Owner, "folders", strings.Join(removed, " "))
	}
	if err != nil {
		log.Warn("the owner's cgroup folders could not all be removed", "sandbox", "gvisor", "owner", e.opts.Owner, "err", err)
		errs = append(errs, err)
	}
	// A run of another process of the owner makes its cgroup folders
	// before its bundle and runsc's state: while one is there, the
	// folders it is about to use stay.
	if len(cg.Leftovers()) == 0 {
		removed, err := removeEmpty(e.state(), e.bundles(), owned, e.opts.StateRoot)
		if len(removed) > 0 {
			log.Debug("removed the owner's empty runsc folders", "sandbox", "gvisor", "owner", e.opts.Owner, "folders", strings.Join(removed, " "))
		}
		if err != nil {
			log.Warn("the owner's runsc folders could not all be removed", "sandbox", "gvisor", "owner", e.opts.Owner, "err", err)
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gvisor: %w", err)
	}
	return nil
}

func (e *Executor) logger() *slog.Logger {
	if e.opts.Logger != nil {
		return e.opts.Logger
	}
	return slog.Default()
}

// removeEmpty removes each of dirs, in order, where it is empty, and
// returns those it removed. A folder that is not there, or holds
// something (a run's, another owner's), is left without an error; the
// error joins the others.
func removeEmpty(dirs ...string) (removed []string, err error) {
	var errs []error
	for _, dir := range dirs {
		rerr := os.Remove(dir)
		switch {
		case rerr == nil:
			removed = append(removed, dir)
		case errors.Is(rerr, os.ErrNotExist), errors.Is(rerr, syscall.ENOTEMPTY), errors.Is(rerr, syscall.EEXIST), errors.Is(rerr, syscall.EBUSY):
		default:
			errs = append(errs, fmt.Errorf("removing the empty runsc folder %s: %w; remove it by hand (rmdir) once no run is in it", dir, rerr))
		}
	}
	return removed, errors.Join(errs...)
}

func (e *Executor) binary() (string, error) {
	if e.opts.Path != "" {
		return e.opts.Path, nil
	}
	if p, err := exec.LookPath("runsc"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/runsc"); err == nil {
		return "/usr/bin/runsc", nil
	}
	return "", errors.New("runsc (gVisor) is not installed (Debian/Ubuntu: apt-get install runsc)")
}

func (e *Executor) state() string   { return filepath.Join(e.opts.StateRoot, e.opts.Owner, "state") }
func (e *Executor) bundles() string { return filepath.Join(e.opts.StateRoot, e.opts.Owner, "bundles") }

// Check starts a trivial sandbox built like a job's and says what is
// enforced. runsc must be installed, the server root, and the kernel one
// runsc's platform supports.
func (e *Executor) Check(ctx context.Context) (sandbox.Enforced, error) {
	if err := sandbox.CheckOwner(e.opts.Owner); err != nil {
		return sandbox.Enforced{}, err
	}
	if err := supported(); err != nil {
		return sandbox.Enforced{}, err
	}
	bin, err := e.binary()
	if err != nil {
		return sandbox.Enforced{}, err
	}
	if os.Geteuid() != 0 {
		return sandbox.Enforced{}, errors.New("gVisor: runsc needs the server to run as root here (its rootless mode is not used)")
	}
	if _, err := os.Stat("/usr/bin/true"); err != nil {
		return sandbox.Enforced{}, fmt.Errorf("gVisor check: no /usr/bin/true to probe with: %w", err)
	}
	var b [6]byte
	rand.Read(b[:])
	res, err := e.Run(ctx, sandbox.Spec{Name: fmt.Sprintf("check-%x", b), Argv: []string{"/usr/bin/true"}, Limits: sandbox.Limits{Wall: 30 * time.Second}})
	if err != nil {
		return sandbox.Enforced{}, fmt.Errorf("gVisor check: %w", err)
	}
	if res.Reason != sandbox.ReasonExited || res.ExitCode != 0 {
		return sandbox.Enforced{}, fmt.Errorf("gVisor check: runsc (%s) could not start a sandbox here (%s, exit %d): %s; the kernel or platform may not be supported",
			bin, res.Reason, res.ExitCode, firstLine(res.Stderr))
	}
	cg := e.cgroups()
	platform := e.opts.Platform
	if platform == "" {
		platform = "runsc's default"
	}
	enf := sandbox.Enforced{
		Backend: "gvisor",
		Limits: append([]string{
			"kernel: gVisor's Sentry serves the job's system calls (platform " + platform + "); the host kernel is reached only through the Sentry",
			"network: none unless the profile allows it (runsc --network=none)",
			"filesystem: read-only root of mount points only, /usr and the package read-only, host folders absent",
			fmt.Sprintf("privileges: no capabilities, no new privileges, uid %d, gid %d", e.opts.UID, e.opts.GID),
			"owner: " + e.opts.Owner + " (Running and Kill see only its sandboxes)",
			"processes, file size, open files, core dumps: rlimits (enforced by the Sentry)",
			"wall time: killed by the server (every process of the run's cgroups)",
			"output: first Limits.Output bytes of each stream kept",
		}, cg.Enforced...),
		Missing: append(slices.Clone(cg.Missing), "cpu time: the Sentry does not enforce RLIMIT_CPU; the wall time and the cpu share bound a run"),
	}
	enf.Limits, enf.Missing = sandbox.WorkTreeEnforced(enf.Limits, enf.Missing)
	return enf, nil
}

// Running lists this owner's runs in progress: this process's, and the
// runs' cgroups that still hold processes (runs of an earlier process: a
// Sentry outlives a server killed with SIGKILL). What an earlier process
// left of runs that are over (empty cgroups, runsc state, bundles) is
// removed on the way; what of it could not be is logged at warn.
func (e *Executor) Running(ctx context.Context) ([]string, error) {
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
		cg.RemoveStale(n, cgroup.StaleAge)
	}
	if err := e.sweep(ctx, cg); err != nil {
		e.logger().Warn("what earlier runs left could not all be removed", "sandbox", "gvisor", "owner", e.opts.Owner, "err", err)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// container is one of runsc's records, as `runsc list -format=json`
// gives it.
type container struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Pid    int    `json:"pid"`
}

// alive reports whether the container may still run, by runsc's record
// alone: starting, or with its sandbox process there. runsc keeps saying
// "created" of a container whose sandbox was killed before it started.
func (c container) alive() bool {
	switch c.Status {
	case "stopped":
		return false
	case "creating":
		return true
	}
	if c.Pid <= 0 {
		return false
	}
	err := unix.Kill(c.Pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// containers lists the containers runsc keeps state of in this owner's
// folder: none when it has no state folder.
func (e *Executor) containers(ctx context.Context) ([]container, error) {
	if _, err := os.Lstat(e.state()); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	bin, err := e.binary()
	if err != nil {
		return nil, fmt.Errorf("listing the containers of %s: %w", e.state(), err)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sandbox.ConfirmWait)
	defer cancel()
	cmd := exec.CommandContext(lctx, bin, "--root", e.state(), "list", "-format=json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the containers of %s (%s list): %w: %s", e.state(), bin, err, firstLine([]byte(stderr.String())))
	}
	var cs []container
	if err := json.Unmarshal(out, &cs); err != nil {
		return nil, fmt.Errorf("reading the containers of %s that %s list gave: %w", e.state(), bin, err)
	}
	return cs, nil
}

// sweep removes this owner's runsc state and bundles of runs that are
// over, and logs them at debug. A run is not over while it is one of this
// process's, or its cgroup folders are there (another process's run, from
// its setup to its end), or runsc's record says it may be alive. A bundle
// runsc lists no container of must also be older than cgroup.StaleAge (a
// run in its setup where there are no cgroups). Nothing is removed from
// the state when runsc cannot list it.
func (e *Executor) sweep(ctx context.Context, cg *cgroup.Hierarchy) error {
	cs, err := e.containers(ctx)
	if err != nil {
		return err
	}
	inUse := func(n string) bool { return e.runs.Has(n) || len(cg.DirsOf(n)) > 0 }
	over := map[string]bool{} // listed: whether it is over
	var removed []string
	var errs []error
	for _, c := range cs {
		over[c.ID] = false
		if inUse(c.ID) || c.alive() {
			continue
		}
		if err := e.deleteContainer(ctx, c.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		over[c.ID] = true
		removed = append(removed, "state:"+c.ID)
	}
	ents, _ := os.ReadDir(e.bundles())
	for _, d := range ents {
		n := d.Name()
		if inUse(n) {
			continue
		}
		isOver, listed := over[n]
		if listed && !isOver {
			continue
		}
		if !listed {
			if info, err := d.Info(); err != nil || time.Since(info.ModTime()) <= cgroup.StaleAge {
				continue
			}
		}
		if err := os.RemoveAll(filepath.Join(e.bundles(), n)); err != nil {
			errs = append(errs, fmt.Errorf("removing the bundle of the finished run %s: %w", n, err))
			continue
		}
		removed = append(removed, "bundle:"+n)
	}
	if len(removed) > 0 {
		e.logger().Debug("removed what runs that are over left", "sandbox", "gvisor", "owner", e.opts.Owner, "removed", strings.Join(removed, " "))
	}
	return errors.Join(errs...)
}

// Kill stops the named run and waits until it is confirmed gone: a run of
// this process through its Run, a run of an earlier process of this owner
// through its cgroups and runsc's state.
func (e *Executor) Kill(ctx context.Context, name string) error {
	done, err := e.runs.Kill(ctx, name)
	if done {
		return nil
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("gvisor: %w", err)
	}
	cg := e.cgroups()
	wait := sandbox.ConfirmWait
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	if dirs := cg.DirsOf(name); len(dirs) > 0 {
		if err := cgroup.RemoveDirs(cg.V2, dirs, wait); err != nil {
			return fmt.Errorf("gvisor: kill %s: %w: %v", name, sandbox.ErrUnconfirmed, err)
		}
	} else if err != nil {
		return fmt.Errorf("gvisor: %w", err)
	}
	e.deleteState(ctx, name)
	e.runs.Forget(name)
	return nil
}

// deleteState removes runsc's record of a container and its bundle.
func (e *Executor) deleteState(ctx context.Context, name string) {
	e.deleteContainer(ctx, name)
	os.RemoveAll(filepath.Join(e.bundles(), name))
}

// deleteContainer removes runsc's record of a container (`runsc delete
// --force`, which kills what is left of it); one runsc does not know is
// not an error.
func (e *Executor) deleteContainer(ctx context.Context, name string) error {
	bin, err := e.binary()
	if err != nil {
		return fmt.Errorf("deleting the state of the finished run %s: %w", name, err)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sandbox.ConfirmWait)
	defer cancel()
	out, err := exec.CommandContext(dctx, bin, "--root", e.state(), "delete", "--force", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("deleting the state of the finished run %s (%s --root %s delete --force %s): %w: %s", name, bin, e.state(), name, err, firstLine(out))
	}
	return nil
}

// Run runs spec in a new sandbox and waits for it to end.
func (e *Executor) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	if err := sandbox.CheckSpec(spec); err != nil {
		return sandbox.Result{}, err
	}
	if err := supported(); err != nil {
		return sandbox.Result{}, fmt.Errorf("gvisor: %w", err)
	}
	bin, err := e.binary()
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("gvisor: %w", err)
	}
	r, err := e.runs.Add(spec.Name)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("gvisor: %w", err)
	}
	res, err := e.run(ctx, bin, spec, r)
	if err != nil {
		err = fmt.Errorf("gvisor: run %s: %w", spec.Name, err)
	}
	e.runs.Done(spec.Name, r, err)
	return res, err
}

func (e *Executor) run(ctx context.Context, bin string, spec sandbox.Spec, r *sandbox.Run) (res sandbox.Result, err error) {
	lim := spec.Limits.WithDefaults()
	if ctx.Err() != nil {
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1}, nil
	}
	// The Sentry and its gofer are Go programs whose threads count as the
	// host's processes: the host's pids limit bounds them, the job's own
	// processes are bounded inside by RLIMIT_NPROC.
	hostLim := lim
	hostLim.Processes = max(4*lim.Processes, sentryThreads)
	cg, err := e.cgroups().Create(spec.Name, hostLim)
	if err != nil {
		return res, err
	}
	bundle := filepath.Join(e.bundles(), spec.Name)
	started := false
	defer func() {
		if !started {
			if rerr := cg.Remove(sandbox.ConfirmWait); rerr != nil && err == nil {
				err = fmt.Errorf("%w: %v", sandbox.ErrUnconfirmed, rerr)
			}
			os.RemoveAll(bundle)
		}
	}()
	var writable []string
	for _, m := range spec.Mounts {
		if m.Writable {
			if err := chownTree(m.Host, e.opts.UID, e.opts.GID); err != nil {
				return res, fmt.Errorf("handing the writable mount %s to the sandbox user: %w", m.Target, err)
			}
			writable = append(writable, m.Host)
		}
	}
	if err := e.makeBundle(bundle, spec, lim); err != nil {
		return res, fmt.Errorf("making the run's bundle: %w", err)
	}
	if err := mkdirAll(e.state(), 0o700); err != nil {
		return res, err
	}
	args := []string{"--root", e.state()}
	if spec.Network {
		args = append(args, "--network=host")
	} else {
		args = append(args, "--network=none")
	}
	if e.opts.Platform != "" {
		args = append(args, "--platform="+e.opts.Platform)
	}
	args = append(args, "run", "--bundle", bundle, spec.Name)
	stdout, stderr := sandbox.NewCapture(lim.Output), sandbox.NewCapture(lim.Output)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = sandbox.ConfirmWait / 2
	cmd.SysProcAttr = dieWithServer()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting runsc: %w", err)
	}
	started = true
	p := &process{e: e, name: spec.Name, cmd: cmd, cg: cg, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return sandbox.Supervise(ctx, p, sandbox.Watch{Limits: lim, Killed: r.Killed(), Writable: writable, Poll: e.opts.Poll, Stdout: stdout, Stderr: stderr})
}

// sentryThreads is the least host pids limit of a run: the Sentry's and
// the gofer's threads, with room.
const sentryThreads = 512

// process is one started runsc container, as sandbox.Supervise drives it.
type process struct {
	e      *Executor
	name   string
	cmd    *exec.Cmd
	cg     *cgroup.Group
	exited chan struct{}
	killed bool // Kill was called
}

func (p *process) Exited() <-chan struct{} { return p.exited }

// Kill kills every process of the run's cgroups (the Sentry among them)
// and runsc.
func (p *process) Kill() {
	p.killed = true
	if p.cg != nil {
		cgroup.KillAll(p.cg.V2(), p.cg.Dirs)
	}
	p.cmd.Process.Kill()
}

// Confirm waits for runsc, reads the OOM count, empties and removes the
// cgroups, and deletes runsc's state and the bundle.
func (p *process) Confirm(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-p.exited:
	case <-ctx.Done():
		return sandbox.Exit{}, fmt.Errorf("runsc did not exit after SIGKILL (%v)", ctx.Err())
	}
	wait := sandbox.ConfirmWait
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	// The Sentry reads the memory limit from its cgroups and kills the job
	// itself (SIGKILL) when it passes it; the host's kernel counts an OOM
	// kill only when the Sentry's own memory passes it. The Sentry does
	// not enforce RLIMIT_CPU, so a SIGKILL the server did not send is the
	// memory limit (or the job killing itself, which it may).
	code, sig := exitOf(p.cmd.ProcessState)
	oom := p.cg.OOMKilled() || p.cg.HitMemoryLimit() || (sig == "SIGKILL" && !p.killed)
	if err := p.cg.Remove(wait); err != nil {
		return sandbox.Exit{}, err
	}
	p.e.deleteState(ctx, p.name)
	return sandbox.Exit{Code: code, Signal: sig, OOM: oom}, nil
}

// exitOf reads the command's status from runsc's: runsc exits with the
// container's code, or 128+N when its process died of signal N.
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

// The OCI runtime spec, as much of it as a run uses.
type (
	ociSpec struct {
		Version  string     `json:"ociVersion"`
		Process  ociProcess `json:"process"`
		Root     ociRoot    `json:"root"`
		Hostname string     `json:"hostname"`
		Mounts   []ociMount `json:"mounts"`
		Linux    ociLinux   `json:"linux"`
	}
	ociProcess struct {
		User         ociUser        `json:"user"`
		Args         []string       `json:"args"`
		Env          []string       `json:"env"`
		Cwd          string         `json:"cwd"`
		Rlimits      []ociRlimit    `json:"rlimits"`
		NoNewPrivs   bool           `json:"noNewPrivileges"`
		Capabilities map[string]any `json:"capabilities"`
	}
	ociUser struct {
		UID uint32 `json:"uid"`
		GID uint32 `json:"gid"`
	}
	ociRlimit struct {
		Type string `json:"type"`
		Hard uint64 `json:"hard"`
		Soft uint64 `json:"soft"`
	}
	ociRoot struct {
		Path     string `json:"path"`
		Readonly bool   `json:"readonly"`
	}
	ociMount struct {
		Destination string   `json:"destination"`
		Type        string   `json:"type"`
		Source      string   `json:"source"`
		Options     []string `json:"options,omitempty"`
	}
	ociLinux struct {
		Namespaces  []map[string]string `json:"namespaces"`
		CgroupsPath string              `json:"cgroupsPath"`
	}
)

// makeBundle writes the run's OCI bundle: a root of mount points only and
// config.json.
func (e *Executor) makeBundle(bundle string, spec sandbox.Spec, lim sandbox.Limits) error {
	os.RemoveAll(bundle)
	root := filepath.Join(bundle, "rootfs")
	if err := mkdirAll(root, 0o755); err != nil {
		return err
	}
	// The bundle's folders are the server's; the Sentry reads them as root.
	if err := os.Chmod(bundle, 0o711); err != nil {
		return err
	}
	dirs := []string{"usr", "proc", "dev", "tmp", "etc", "etc/alternatives"}
	for _, m := range spec.Mounts {
		dirs = append(dirs, strings.TrimPrefix(m.Target, "/"))
	}
	if spec.Dir != "" {
		dirs = append(dirs, strings.TrimPrefix(spec.Dir, "/"))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			return err
		}
	}
	usr, alt := "/usr", "/etc/alternatives"
	if spec.RootFS != "" {
		usr, alt = filepath.Join(spec.RootFS, "usr"), filepath.Join(spec.RootFS, "etc/alternatives")
	}
	mounts := []ociMount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(lim.WorkTree, 10)}},
		{Destination: "/usr", Type: "bind", Source: usr, Options: []string{"rbind", "ro"}},
	}
	if st, err := os.Stat(alt); err == nil && st.IsDir() {
		mounts = append(mounts, ociMount{Destination: "/etc/alternatives", Type: "bind", Source: alt, Options: []string{"rbind", "ro"}})
	}
	for _, m := range spec.Mounts {
		opt := "ro"
		if m.Writable {
			opt = "rw"
		}
		mounts = append(mounts, ociMount{Destination: m.Target, Type: "bind", Source: m.Host, Options: []string{"rbind", opt}})
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	cpu := uint64(math.Ceil(lim.CPUTime.Seconds()))
	as := uint64(max(8*lim.Memory, 4<<30))
	rl := func(t string, v uint64) ociRlimit { return ociRlimit{Type: t, Hard: v, Soft: v} }
	none := []string{}
	cgPath := "/" + path.Join(e.opts.CgroupName, e.opts.Owner, spec.Name, "runsc")
	cfg := ociSpec{
		Version: "1.0.2",
		Process: ociProcess{
			User: ociUser{UID: uint32(e.opts.UID), GID: uint32(e.opts.GID)},
			Args: spec.Argv, Env: append([]string{}, spec.Env...), Cwd: dir,
			Rlimits: []ociRlimit{rl("RLIMIT_CPU", cpu), rl("RLIMIT_NPROC", uint64(lim.Processes)), rl("RLIMIT_FSIZE", uint64(lim.FileSize)),
				rl("RLIMIT_NOFILE", 1024), rl("RLIMIT_CORE", 0), rl("RLIMIT_AS", as)},
			NoNewPrivs:   true,
			Capabilities: map[string]any{"bounding": none, "effective": none, "permitted": none, "inheritable": none, "ambient": none},
		},
		Root:     ociRoot{Path: "rootfs", Readonly: true},
		Hostname: "job",
		Mounts:   mounts,
		Linux: ociLinux{
			Namespaces:  []map[string]string{{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}},
			CgroupsPath: cgPath,
		},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o644)
}

// mkdirAll is os.MkdirAll, tried again when a Close of another process
// of the owner (or of another owner, for StateRoot) removed a folder on
// the way, finding it empty.
func mkdirAll(dir string, perm os.FileMode) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(dir, perm); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// chownTree hands dir and everything in it to uid:gid, never following a
// link, and leaves what is theirs already alone (a folder shared by runs
// changing owner under a running Sentry confuses its gofer).
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && int(st.Uid) == uid && int(st.Gid) == gid {
			return nil
		}
		return os.Lchown(p, uid, gid)
	})
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

// Package docker is the sandbox backend on the Docker engine, through the
// engine's Go client (API version negotiated; 1.41, Docker 20.10, is
// enough). Each run is one container: network none (unless the spec asks
// for the network), a read-only root file system, every capability
// dropped, no-new-privileges, a non-root user, pids, memory (swap equal to
// memory, so none), CPU and rlimit file-size, open-file, CPU-time and core
// limits, a size-capped tmpfs /tmp, and the spec's mounts as binds. The log
// driver is none: the server attaches to the streams and keeps the first
// Limits.Output bytes of each.
//
// Containers are named "<prefix><spec name>" and labelled with the spec's
// name (LabelJob), so Running finds them after a restart and Kill removes
// them. A run ends with the container killed (on timeout, quota or a
// cancelled context) and removed; its removal is the confirmation that it
// is gone.
package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// LabelJob is the container label that carries the spec's name.
const LabelJob = "skills-mcp.job"

// Options configure the backend. The zero value (or nil) is the default.
type Options struct {
	// Host is the engine's address; empty: unix:///var/run/docker.sock.
	Host string
	// User is the container's user; empty: "65534:65534" (nobody). It is
	// never root.
	User string
	// BindUsr, when set, is a host folder bound read-only at /usr in every
	// container: a skeleton image (empty folders and the usr-merge links)
	// then runs the host's interpreters.
	BindUsr string
	// Prefix starts every container's name; empty: "skills-mcp-".
	Prefix string
	// Poll is how often the writable mounts are measured against
	// Limits.WorkTree and WorkFiles; zero: 100 ms.
	Poll time.Duration
}

// Executor runs specs in Docker containers.
type Executor struct {
	opts Options
	cli  *client.Client
	uid  int
	gid  int

	mu   sync.Mutex
	runs map[string]*run
}

var _ sandbox.Executor = (*Executor)(nil)

type run struct {
	kill chan struct{}
	once sync.Once
	done chan struct{}
	err  error
}

// New returns the backend; it does not contact the engine (Check does).
func New(opts *Options) (*Executor, error) {
	e := &Executor{runs: map[string]*run{}}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Host == "" {
		e.opts.Host = "unix:///var/run/docker.sock"
	}
	if e.opts.User == "" {
		e.opts.User = "65534:65534"
	}
	if e.opts.Prefix == "" {
		e.opts.Prefix = "skills-mcp-"
	}
	if e.opts.Poll <= 0 {
		e.opts.Poll = 100 * time.Millisecond
	}
	if _, err := fmt.Sscanf(e.opts.User, "%d:%d", &e.uid, &e.gid); err != nil || e.uid == 0 {
		return nil, fmt.Errorf("docker: user %q: want a numeric, non-root uid:gid such as 65534:65534", e.opts.User)
	}
	cli, err := client.New(client.WithHost(e.opts.Host))
	if err != nil {
		return nil, fmt.Errorf("docker: engine address %q: %w", e.opts.Host, err)
	}
	e.cli = cli
	return e, nil
}

// Close releases the client's connections.
func (e *Executor) Close() error { return e.cli.Close() }

// Name is "docker".
func (e *Executor) Name() string { return "docker" }

// Check asks the engine whether it answers and says what is enforced.
func (e *Executor) Check(ctx context.Context) (sandbox.Enforced, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ping, err := e.cli.Ping(ctx, client.PingOptions{})
	if err != nil {
		return sandbox.Enforced{}, fmt.Errorf("the Docker engine at %s does not answer: %w", e.opts.Host, err)
	}
	info, err := e.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return sandbox.Enforced{}, fmt.Errorf("the Docker engine at %s: %w", e.opts.Host, err)
	}
	cg := "cgroup v" + info.Info.CgroupVersion
	enf := sandbox.Enforced{
		Backend: "docker",
		Limits: []string{
			"engine: API " + ping.APIVersion + ", " + info.Info.ServerVersion,
			"network: none unless the profile allows it (NetworkMode none)",
			"filesystem: read-only root, the package read-only, only /work and a size-capped tmpfs /tmp writable",
			"privileges: all capabilities dropped, no-new-privileges, user " + e.opts.User,
			"memory: " + cg + " (Memory = MemorySwap)", "processes: " + cg + " (PidsLimit)", "cpu share: " + cg + " (NanoCPUs)",
			"cpu time, file size, open files, core dumps: ulimits",
			"wall time: the container is killed by the server",
			"output: first Limits.Output bytes of each stream kept (log driver none)",
			"work tree: measured every " + e.opts.Poll.String() + ", killed when over (may overshoot briefly)",
		},
	}
	if !slices.Contains(info.Info.SecurityOptions, "name=seccomp,profile=default") && !slices.ContainsFunc(info.Info.SecurityOptions, func(s string) bool { return strings.HasPrefix(s, "name=seccomp") }) {
		enf.Missing = append(enf.Missing, "seccomp: the engine applies no seccomp profile")
	}
	if !info.Info.MemoryLimit {
		enf.Missing = append(enf.Missing, "memory: the engine reports no memory limit support")
	}
	if !info.Info.PidsLimit {
		enf.Missing = append(enf.Missing, "processes: the engine reports no pids limit support")
	}
	return enf, nil
}

func (e *Executor) containerName(name string) string { return e.opts.Prefix + name }

// Running lists the runs in progress: this process's, and the engine's
// running containers that carry LabelJob (runs of an earlier process). It
// changes nothing: another process may be starting a container of its
// own. After a restart, Kill each unfinished run: it removes the run's
// container whatever its state.
func (e *Executor) Running(ctx context.Context) ([]string, error) {
	list, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelJob)})
	if err != nil {
		return nil, fmt.Errorf("docker: listing the job containers: %w", err)
	}
	e.mu.Lock()
	names := make([]string, 0, len(e.runs))
	live := map[string]bool{}
	for n := range e.runs {
		names = append(names, n)
		live[n] = true
	}
	e.mu.Unlock()
	for _, c := range list.Items {
		name := c.Labels[LabelJob]
		if name == "" || live[name] || !slices.Contains(c.Names, "/"+e.containerName(name)) {
			continue
		}
		if c.State == container.StateRunning || c.State == container.StatePaused || c.State == container.StateRestarting {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Kill stops the named run: through its Run in this process, else by
// killing and removing its container. A name with no container is not an
// error.
func (e *Executor) Kill(ctx context.Context, name string) error {
	e.mu.Lock()
	r := e.runs[name]
	e.mu.Unlock()
	if r != nil {
		r.once.Do(func() { close(r.kill) })
		select {
		case <-r.done:
			if !errors.Is(r.err, sandbox.ErrUnconfirmed) {
				return nil
			}
			// Its Run could not confirm the container gone: try again
			// below, and forget the run once it is.
		case <-ctx.Done():
			return fmt.Errorf("docker: kill %s: %w (%v)", name, sandbox.ErrUnconfirmed, ctx.Err())
		}
	}
	if err := e.remove(ctx, e.containerName(name)); err != nil {
		return fmt.Errorf("docker: kill %s: %w", name, err)
	}
	if r != nil {
		e.mu.Lock()
		if e.runs[name] == r {
			delete(e.runs, name)
		}
		e.mu.Unlock()
	}
	return nil
}

// remove kills and removes a container and confirms it is gone.
func (e *Executor) remove(ctx context.Context, id string) error {
	_, err := e.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("%w: removing container %s: %v", sandbox.ErrUnconfirmed, id, err)
	}
	if _, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err == nil {
		return fmt.Errorf("%w: container %s is still there after its removal", sandbox.ErrUnconfirmed, id)
	} else if !isNotFound(err) {
		return fmt.Errorf("%w: checking container %s is gone: %v", sandbox.ErrUnconfirmed, id, err)
	}
	return nil
}

func isNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "No such container") || strings.Contains(strings.ToLower(err.Error()), "not found"))
}

// Run runs spec in a new container and waits for it to end.
func (e *Executor) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	if err := sandbox.CheckSpec(spec); err != nil {
		return sandbox.Result{}, err
	}
	if spec.Image == "" {
		return sandbox.Result{}, fmt.Errorf("docker: run %s: no image (the profile names none)", spec.Name)
	}
	r := &run{kill: make(chan struct{}), done: make(chan struct{})}
	e.mu.Lock()
	if _, dup := e.runs[spec.Name]; dup {
		e.mu.Unlock()
		return sandbox.Result{}, fmt.Errorf("docker: a run named %s is already running", spec.Name)
	}
	e.runs[spec.Name] = r
	e.mu.Unlock()
	res, err := e.run(ctx, spec, r)
	if err != nil {
		err = fmt.Errorf("docker: run %s: %w", spec.Name, err)
	}
	r.err = err
	e.mu.Lock()
	if !errors.Is(err, sandbox.ErrUnconfirmed) {
		delete(e.runs, spec.Name)
	}
	e.mu.Unlock()
	close(r.done)
	return res, err
}

// engineWait bounds each call to the engine made after the run's context
// may have ended (kill, inspect, remove).
const engineWait = 20 * time.Second

func (e *Executor) run(ctx context.Context, spec sandbox.Spec, r *run) (res sandbox.Result, err error) {
	lim := spec.Limits.WithDefaults()
	var mounts []mount.Mount
	var writable []string
	if e.opts.BindUsr != "" {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: e.opts.BindUsr, Target: "/usr", ReadOnly: true})
	}
	for _, m := range spec.Mounts {
		if m.Writable {
			if err := chownTree(m.Host, e.uid, e.gid); err != nil {
				return res, fmt.Errorf("handing the writable mount %s to the container user: %w", m.Target, err)
			}
			writable = append(writable, m.Host)
		}
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: m.Host, Target: m.Target, ReadOnly: !m.Writable})
	}
	pids := int64(lim.Processes)
	network := container.NetworkMode("none")
	if spec.Network {
		network = "default"
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	ulimit := func(name string, v int64) *container.Ulimit { return &container.Ulimit{Name: name, Soft: v, Hard: v} }
	cfg := &container.Config{
		Image:           spec.Image,
		Entrypoint:      spec.Argv[:1],
		Cmd:             spec.Argv[1:],
		Env:             spec.Env,
		WorkingDir:      dir,
		User:            e.opts.User,
		NetworkDisabled: !spec.Network,
		AttachStdout:    true,
		AttachStderr:    true,
		Labels:          map[string]string{LabelJob: spec.Name},
	}
	host := &container.HostConfig{
		NetworkMode:    network,
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		IpcMode:        "private",
		LogConfig:      container.LogConfig{Type: "none"},
		Mounts:         mounts,
		Tmpfs:          map[string]string{"/tmp": fmt.Sprintf("rw,nosuid,nodev,size=%d,mode=1777", lim.WorkTree)},
		Resources: container.Resources{
			Memory:     lim.Memory,
			MemorySwap: lim.Memory,
			NanoCPUs:   int64(math.Round(lim.CPUs * 1e9)),
			PidsLimit:  &pids,
			Ulimits: []*container.Ulimit{
				ulimit("fsize", lim.FileSize), ulimit("nofile", 1024), ulimit("core", 0),
				ulimit("cpu", int64(math.Ceil(lim.CPUTime.Seconds()))),
			},
		},
	}
	if ctx.Err() != nil {
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1}, nil
	}
	name := e.containerName(spec.Name)
	// Calls after the run's context ended must still reach the engine.
	bg := context.WithoutCancel(ctx)
	// Setup is not cut short by ctx (a half-made container would be left
	// in an unknown state); a cancelled run is killed right after start.
	setup, endSetup := context.WithTimeout(bg, engineWait)
	defer endSetup()
	created, err := e.cli.ContainerCreate(setup, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: name})
	if err != nil {
		return res, fmt.Errorf("creating the container: %w", err)
	}
	id := created.ID
	removed := false
	defer func() {
		if !removed {
			rctx, cancel := context.WithTimeout(bg, engineWait)
			defer cancel()
			if rerr := e.remove(rctx, id); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()

	stdout, stderr := sandbox.NewCapture(lim.Output), sandbox.NewCapture(lim.Output)
	att, err := e.cli.ContainerAttach(bg, id, client.ContainerAttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return res, fmt.Errorf("attaching to the container: %w", err)
	}
	defer att.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		stdcopy.StdCopy(stdout, stderr, att.Reader)
	}()
	waitCtx, stopWait := context.WithCancel(bg)
	defer stopWait()
	wait := e.cli.ContainerWait(waitCtx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})

	if _, err := e.cli.ContainerStart(setup, id, client.ContainerStartOptions{}); err != nil {
		att.Close()
		<-copied
		return res, fmt.Errorf("starting the container: %w", err)
	}
	start := time.Now()
	timer := time.NewTimer(lim.Wall)
	defer timer.Stop()
	tick := time.NewTicker(e.opts.Poll)
	defer tick.Stop()
	var reason sandbox.Reason
	var status int64 = -1
	exited := false
loop:
	for {
		select {
		case w := <-wait.Result:
			status, exited = w.StatusCode, true
			break loop
		case <-wait.Error:
			// The engine's answer was lost: the state is read back below.
			break loop
		case <-timer.C:
			reason = sandbox.ReasonTimeout
		case <-ctx.Done():
			reason = sandbox.ReasonKilled
		case <-r.kill:
			reason = sandbox.ReasonKilled
		case <-tick.C:
			if len(writable) > 0 {
				if _, _, over := sandbox.WorkUsage(writable, lim.WorkTree, lim.WorkFiles); over {
					reason = sandbox.ReasonQuota
				}
			}
		}
		if reason != "" {
			break loop
		}
	}
	if reason != "" {
		kctx, cancel := context.WithTimeout(bg, engineWait)
		_, kerr := e.cli.ContainerKill(kctx, id, client.ContainerKillOptions{Signal: "KILL"})
		cancel()
		if kerr != nil && !strings.Contains(kerr.Error(), "is not running") {
			// The forced removal kills it too; only if that also fails is
			// the container's end unknown.
			rctx, cancel := context.WithTimeout(bg, engineWait)
			rerr := e.remove(rctx, id)
			cancel()
			if rerr != nil {
				return res, fmt.Errorf("%w: killing the container: %v; then %v", sandbox.ErrUnconfirmed, kerr, rerr)
			}
			removed = true
			// The wait's answer must be taken, or its sender stays blocked.
			select {
			case <-wait.Result:
			case <-wait.Error:
			case <-time.After(engineWait):
			}
			att.Close()
			<-copied
			res.Duration = time.Since(start)
			res.Stdout, res.StdoutCut = stdout.Result()
			res.Stderr, res.StderrCut = stderr.Result()
			res.Reason, res.ExitCode, res.Signal = reason, -1, "SIGKILL"
			return res, nil
		}
		select {
		case w := <-wait.Result:
			status, exited = w.StatusCode, true
		case <-wait.Error:
		case <-time.After(engineWait):
			return res, fmt.Errorf("%w: the container did not stop within %v of SIGKILL", sandbox.ErrUnconfirmed, engineWait)
		}
	}
	res.Duration = time.Since(start)
	ictx, cancel := context.WithTimeout(bg, engineWait)
	defer cancel()
	ins, err := e.cli.ContainerInspect(ictx, id, client.ContainerInspectOptions{})
	if isNotFound(err) {
		// Removed under us (Kill of another process): gone, so killed.
		removed = true
		att.Close()
		<-copied
		res.Stdout, res.StdoutCut = stdout.Result()
		res.Stderr, res.StderrCut = stderr.Result()
		res.Reason, res.ExitCode, res.Signal = sandbox.ReasonKilled, -1, "SIGKILL"
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("%w: inspecting the container: %v", sandbox.ErrUnconfirmed, err)
	}
	st := ins.Container.State
	if st == nil || st.Running {
		return res, fmt.Errorf("%w: the container still runs", sandbox.ErrUnconfirmed)
	}
	if !exited {
		status = int64(st.ExitCode)
	}
	// The streams end with the container; the bound covers a lost attach.
	select {
	case <-copied:
	case <-time.After(engineWait):
		att.Close()
		<-copied
	}
	removed = true
	if err := e.remove(ictx, id); err != nil {
		return res, err
	}
	res.Stdout, res.StdoutCut = stdout.Result()
	res.Stderr, res.StderrCut = stderr.Result()
	res.ExitCode = int(status)
	if status > 128 && status < 128+65 {
		res.ExitCode, res.Signal = -1, signalName(syscall.Signal(status-128))
	}
	switch {
	case reason != "":
		res.Reason, res.ExitCode, res.Signal = reason, -1, "SIGKILL"
	case st.OOMKilled:
		res.Reason = sandbox.ReasonMemory
	default:
		res.Reason = sandbox.ReasonExited
	}
	return res, nil
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGXCPU:
		return "SIGXCPU"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// chownTree hands dir and everything in it to uid:gid, never following a
// link, so the container's user may write its work folder.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if st, ok := statOwner(p); ok && st == [2]int{uid, gid} {
			return nil
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("%w (the server must run as root, or the folder must belong to the container user)", err)
		}
		return nil
	})
}

func statOwner(p string) ([2]int, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return [2]int{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]int{}, false
	}
	return [2]int{int(st.Uid), int(st.Gid)}, true
}

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
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// LabelJob is the container label that carries the spec's name, and
// LabelOwner the one that carries the backend's owner.
const (
	LabelJob   = "skills-mcp.job"
	LabelOwner = "skills-mcp.owner"
)

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
	// Owner names the process that owns these containers among the others
	// on the engine (the hub passes its store's identity and replica): it
	// is in each container's name and LabelOwner, and Running and Kill see
	// only this owner's. Letters, digits, '-' and '_'; empty: "default".
	Owner string
	// Labels are added to every container's (the hub: its store's
	// identity and its replica's id, for whoever lists the engine's
	// containers); LabelJob and LabelOwner are the backend's own and
	// cannot be replaced.
	Labels map[string]string
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

	runs sandbox.Runs
}

var _ sandbox.Executor = (*Executor)(nil)

// New returns the backend; it does not contact the engine (Check does).
func New(opts *Options) (*Executor, error) {
	e := &Executor{}
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
	if e.opts.Owner == "" {
		e.opts.Owner = "default"
	}
	if err := sandbox.CheckOwner(e.opts.Owner); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
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
			"owner: " + e.opts.Owner + " (Running and Kill see only its containers)",
		},
	}
	enf.Limits, enf.Missing = sandbox.WorkTreeEnforced(enf.Limits, enf.Missing)
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

func (e *Executor) containerName(name string) string {
	return e.opts.Prefix + e.opts.Owner + "-" + name
}

// Running lists this owner's runs in progress: this process's, and the
// engine's running containers that carry this owner's LabelOwner (runs of
// an earlier process). The stopped containers an earlier process of this
// owner left are removed on the way; nothing of another owner is looked
// at. After a restart, Kill each unfinished run: it removes the run's
// container whatever its state.
func (e *Executor) Running(ctx context.Context) ([]string, error) {
	list, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelJob).Add("label", LabelOwner+"="+e.opts.Owner)})
	if err != nil {
		return nil, fmt.Errorf("docker: listing the job containers: %w", err)
	}
	names := e.runs.Names()
	for _, c := range list.Items {
		name := c.Labels[LabelJob]
		if name == "" || c.Labels[LabelOwner] != e.opts.Owner || e.runs.Has(name) || !slices.Contains(c.Names, "/"+e.containerName(name)) {
			continue
		}
		switch c.State {
		case container.StateRunning, container.StatePaused, container.StateRestarting:
			names = append(names, name)
		case container.StateExited, container.StateDead, container.StateCreated:
			// A crash's leftover: nothing runs in it any more.
			if c.State != container.StateCreated || time.Since(time.Unix(c.Created, 0)) > time.Minute {
				e.remove(ctx, c.ID)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Kill stops the named run: through its Run in this process, else by
// killing and removing its container. A name with no container is not an
// error.
func (e *Executor) Kill(ctx context.Context, name string) error {
	done, err := e.runs.Kill(ctx, name)
	if done {
		return nil
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if err := e.remove(ctx, e.containerName(name)); err != nil {
		return fmt.Errorf("docker: kill %s: %w", name, err)
	}
	e.runs.Forget(name)
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
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no such container") || strings.Contains(msg, "no such image") || strings.Contains(msg, "not found")
}

// Run runs spec in a new container and waits for it to end.
func (e *Executor) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	if err := sandbox.CheckSpec(spec); err != nil {
		return sandbox.Result{}, err
	}
	if spec.Image == "" {
		return sandbox.Result{}, fmt.Errorf("docker: run %s: no image (the profile names none)", spec.Name)
	}
	r, err := e.runs.Add(spec.Name)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("docker: %w", err)
	}
	res, err := e.run(ctx, spec, r)
	if err != nil {
		err = fmt.Errorf("docker: run %s: %w", spec.Name, err)
	}
	e.runs.Done(spec.Name, r, err)
	return res, err
}

// engineWait bounds each call to the engine made after the run's context
// may have ended (kill, inspect, remove).
const engineWait = 20 * time.Second

func (e *Executor) run(ctx context.Context, spec sandbox.Spec, r *sandbox.Run) (res sandbox.Result, err error) {
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
	labels := maps.Clone(e.opts.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelJob], labels[LabelOwner] = spec.Name, e.opts.Owner
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
		Labels:          labels,
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
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "no such image") {
		return res, fmt.Errorf("%w: the engine has no image %s (removed since it was named?): %v", sandbox.ErrNoImage, spec.Image, err)
	}
	if err != nil {
		return res, fmt.Errorf("creating the container: %w", err)
	}
	id := created.ID
	started := false
	defer func() {
		if !started {
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
	p := &process{e: e, id: id, att: att, copied: make(chan struct{}), exited: make(chan struct{}), bg: bg}
	go func() {
		defer close(p.copied)
		stdcopy.StdCopy(stdout, stderr, att.Reader)
	}()
	waitCtx, stopWait := context.WithCancel(bg)
	defer stopWait()
	wait := e.cli.ContainerWait(waitCtx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := e.cli.ContainerStart(setup, id, client.ContainerStartOptions{}); err != nil {
		att.Close()
		<-p.copied
		return res, fmt.Errorf("starting the container: %w", err)
	}
	started = true
	// The engine's answer ends the wait; a lost answer too (the state is
	// read back by Confirm).
	go func() {
		select {
		case w := <-wait.Result:
			p.status, p.statusKnown = w.StatusCode, true
		case <-wait.Error:
		}
		close(p.exited)
	}()
	return sandbox.Supervise(ctx, p, sandbox.Watch{Limits: lim, Killed: r.Killed(), Writable: writable, Poll: e.opts.Poll, Stdout: stdout, Stderr: stderr})
}

// process is one started container, as sandbox.Supervise drives it.
type process struct {
	e      *Executor
	id     string
	bg     context.Context // the run's context, never cancelled
	att    client.ContainerAttachResult
	copied chan struct{} // closed when the streams are drained
	exited chan struct{} // closed when the engine's wait answered
	// status is the exit status from the wait, read after exited.
	status      int64
	statusKnown bool
	removed     bool // Kill had to remove the container
	killErr     error
}

func (p *process) Exited() <-chan struct{} { return p.exited }

// Kill kills the container; when the engine refuses, the forced removal
// kills it too, and only if that also fails is its end unknown.
func (p *process) Kill() {
	kctx, cancel := context.WithTimeout(p.bg, engineWait)
	defer cancel()
	_, err := p.e.cli.ContainerKill(kctx, p.id, client.ContainerKillOptions{Signal: "KILL"})
	if err == nil || strings.Contains(err.Error(), "is not running") {
		return
	}
	if rerr := p.e.remove(kctx, p.id); rerr != nil {
		p.killErr = fmt.Errorf("killing the container: %v; then %v", err, rerr)
		return
	}
	p.removed = true
}

// Confirm waits for the container to stop, reads its state, drains its
// streams and removes it: a not-found inspect after the removal is the
// confirmation.
func (p *process) Confirm(ctx context.Context) (sandbox.Exit, error) {
	if p.killErr != nil {
		return sandbox.Exit{}, p.killErr
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		return sandbox.Exit{}, fmt.Errorf("the container did not stop after SIGKILL (%v)", ctx.Err())
	}
	drain := func() {
		// The streams end with the container; the bound covers a lost attach.
		select {
		case <-p.copied:
		case <-ctx.Done():
		}
		p.att.Close()
		<-p.copied
	}
	if p.removed {
		drain()
		return sandbox.Exit{Code: -1, Signal: "SIGKILL"}, nil
	}
	ins, err := p.e.cli.ContainerInspect(ctx, p.id, client.ContainerInspectOptions{})
	if isNotFound(err) {
		// Removed under us (Kill of another process): gone, so killed.
		drain()
		return sandbox.Exit{Code: -1, Signal: "SIGKILL", Gone: true}, nil
	}
	if err != nil {
		return sandbox.Exit{}, fmt.Errorf("inspecting the container: %v", err)
	}
	st := ins.Container.State
	if st == nil || st.Running {
		return sandbox.Exit{}, errors.New("the container still runs")
	}
	status := p.status
	if !p.statusKnown {
		status = int64(st.ExitCode)
	}
	drain()
	if err := p.e.remove(ctx, p.id); err != nil {
		return sandbox.Exit{}, err
	}
	exit := sandbox.Exit{Code: int(status), OOM: st.OOMKilled}
	if status > 128 && status < 128+65 {
		exit.Code, exit.Signal = -1, signalName(syscall.Signal(status-128))
	}
	return exit, nil
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

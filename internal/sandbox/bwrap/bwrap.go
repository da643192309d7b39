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
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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
	// Logger gets what Close removed (debug) and what it could not
	// (warn); nil: slog.Default().
	Logger *slog.Logger
}

// Executor runs specs in bubblewrap sandboxes.
type Executor struct {
	opts Options
	uid  int // -1: run as the server's own user
	gid  int

	cgMu sync.Mutex
	cg   *cgroup.Hierarchy // made at first use

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
	e.cgMu.Lock()
	defer e.cgMu.Unlock()
	if e.cg == nil {
		if e.opts.NoCgroups {
			e.cg = cgroup.Disabled("memory, processes, cpu share: cgroups turned off")
		} else {
			e.cg = cgroup.Detect(e.opts.CgroupRoot, e.opts.CgroupName, e.opts.Owner)
		}
	}
	return e.cg
}

// Close removes this owner's cgroup folders (CgroupName/Owner in each
// hierarchy) where they are empty, and the CgroupName folder where no
// other owner's is left, so a stopped server leaves none behind. A folder
// that still holds a run, of this process or of another of the same
// owner, stays; Close neither waits for nor stops runs (the caller ends
// them first). It logs what it removed at debug and what it could not at
// warn, and returns the latter. The executor may be used again after:
// its next run makes the folders again.
func (e *Executor) Close() error {
	e.cgMu.Lock()
	cg := e.cg
	e.cgMu.Unlock()
	if cg == nil {
		return nil // never used: nothing was made
	}
	log := e.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	removed, err := cg.Close()
	if len(removed) > 0 {
		log.Debug("removed the owner's empty cgroup folders", "sandbox", "bwrap", "owner", e.opts.Owner, "folders", strings.Join(removed, " "))
	}
	if err != nil {
		log.Warn("the owner's cgroup folders could not all be removed", "sandbox", "bwrap", "owner", e.opts.Owner, "err", err)
		return fmt.Errorf("bwrap: %w", err)
	}
	return nil
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
	if err := supported(); err != nil {
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
	rand.Read(b[:])
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
	if err := supported(); err != nil {
		return sandbox.Result{}, fmt.Errorf("bwrap: %w", err)
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

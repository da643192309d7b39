package hubcmd

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/bwrap"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/docker"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/gvisor"
)

// jobFlags are hub serve's sandbox and job settings.
type jobFlags struct {
	sandbox     string // bwrap, docker, gvisor or auto
	dockerHost  string
	dockerImage string
	wheels      string
	npmCache    string
	dir         string        // the jobs' host folder (--jobs)
	lease       time.Duration // the replica's lease (--lease); 0: the default
}

// jobSetup is what startJobs made: the service, always, and what the
// runtime route reports.
type jobSetup struct {
	svc      *jobs.Service
	backends []api.Backend
	replica  string // this process's name among the replicas
	closers  []io.Closer
}

// Close releases the backends (after the service is closed): the Docker
// engine's client, the owner's empty cgroup folders of bubblewrap and
// gVisor, and gVisor's runsc folder of the owner, chosen or only checked.
func (js *jobSetup) Close() {
	for _, c := range js.closers {
		c.Close()
	}
}

// replicaFile holds the replica id in the jobs folder.
const replicaFile = "replica-id"

var replicaRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// replicaID returns the replica id kept in dir, making it on the first
// start: the host name and 8 random hex digits. It names this process's
// claims in the store, so it must outlive restarts; the folder is per
// host, like the prepared layers in it, so two hosts never share one.
func replicaID(dir string) (string, error) {
	name := filepath.Join(dir, replicaFile)
	b, err := os.ReadFile(name)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if !replicaRE.MatchString(id) {
			return "", fmt.Errorf("%s holds no replica id (%q); remove it to make a new one, but jobs this replica left running are then not recovered", name, id)
		}
		return id, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the replica id: %w", err)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", fmt.Errorf("the jobs folder %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, host)
	if host == "" || !replicaRE.MatchString(host) {
		host = "hub"
	}
	if len(host) > 100 {
		host = host[:100]
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	id := host + "-" + hex.EncodeToString(rnd[:])
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", fmt.Errorf("the jobs folder: %w", err)
	}
	if err := atomicfile.Write(name, 0o644, true, func(w io.Writer) error {
		_, err := io.WriteString(w, id+"\n")
		return err
	}); err != nil {
		return "", fmt.Errorf("saving the replica id: %w", err)
	}
	return id, nil
}

// lockFile, in the jobs folder, is locked by the hub serve that is the
// folder's replica, and holds its process id.
const lockFile = "replica.lock"

// lockReplica takes the jobs folder's lock for the life of this process:
// one hub serve at a time is the replica the folder names, so a second
// one (started by mistake) never sweeps the first's uploads nor recovers,
// and so kills, its running jobs. The lock is the kernel's (flock): it
// goes with the process, however it ends. Close the file to release it.
func lockReplica(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, fmt.Errorf("the jobs folder %s: %w", dir, err)
	}
	name := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the jobs folder's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another hub serve"
			if b, _ := os.ReadFile(name); len(b) < 16 {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					who += fmt.Sprintf(" (process %d)", pid)
				}
			}
			return nil, fmt.Errorf("%s is the replica of the jobs folder %s: stop it first, or give this one a folder of its own with --jobs", who, dir)
		}
		return nil, fmt.Errorf("locking the jobs folder %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// sandboxOwner is the owner name of this replica's sandboxes: the store's
// identity (random per store) and a digest of the replica id (random per
// jobs folder), so that hubs of other stores, and other replicas of this
// one, on the same host or Docker engine never take them for their own;
// short enough for container and cgroup names.
func sandboxOwner(storeID, replica string) string {
	sum := sha256.Sum256([]byte("skills-mcp sandbox owner\x00" + replica))
	return "hub-" + storeID[:min(len(storeID), 12)] + "-" + hex.EncodeToString(sum[:6])
}

// Labels of the containers of a hub's jobs, beside the backend's own.
const (
	labelStore   = "skills-mcp.store"
	labelReplica = "skills-mcp.replica"
)

// unavailable is the executor of a hub where no backend works: its Check
// says why each one failed, and it runs nothing.
type unavailable struct{ err error }

func (u unavailable) Name() string { return "none" }
func (u unavailable) Check(context.Context) (sandbox.Enforced, error) {
	return sandbox.Enforced{}, u.err
}
func (u unavailable) Run(context.Context, sandbox.Spec) (sandbox.Result, error) {
	return sandbox.Result{}, u.err
}
func (u unavailable) Running(context.Context) ([]string, error) { return nil, nil }
func (u unavailable) Kill(context.Context, string) error        { return nil }

// traversable reports the first folder from dir up to / that the
// sandbox's unprivileged uid cannot pass through (no o+x), or "".
func traversable(dir string) (string, os.FileMode) {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil && st.Mode().Perm()&0o001 == 0 {
			return d, st.Mode().Perm()
		}
		if d == filepath.Dir(d) {
			return "", 0
		}
	}
}

// startJobs picks the sandbox backend, starts the job service (which
// recovers this replica's unfinished jobs) and logs what it found. With
// no backend the service still serves what is stored; jobs and
// preparations are refused with sandbox_unavailable.
func startJobs(ctx context.Context, f jobFlags, db *store.DB, replica string, audit jobs.Auditor, logger *slog.Logger) (*jobSetup, error) {
	js := &jobSetup{}
	// The backends name, label and list their sandboxes by this owner, so
	// hubs that share a host or a Docker engine never touch each other's.
	owner := sandboxOwner(db.Identity(), replica)
	js.replica = replica
	var candidates []sandbox.Executor
	if f.sandbox == "auto" || f.sandbox == "bwrap" {
		bx := bwrap.New(&bwrap.Options{Owner: owner, Logger: logger})
		js.closers = append(js.closers, bx)
		candidates = append(candidates, bx)
	}
	if f.sandbox == "auto" || f.sandbox == "docker" {
		host := f.dockerHost
		if host == "" {
			host = "unix:///var/run/docker.sock"
		}
		dx, err := docker.New(&docker.Options{Host: host, Owner: owner,
			Labels: map[string]string{labelStore: db.Identity(), labelReplica: replica}})
		if err != nil {
			js.backends = append(js.backends, api.Backend{Name: "docker", Detail: err.Error()})
		} else {
			js.closers = append(js.closers, dx)
			candidates = append(candidates, dx)
		}
	}
	if f.sandbox == "auto" || f.sandbox == "gvisor" {
		gx := gvisor.New(&gvisor.Options{Owner: owner, Logger: logger})
		js.closers = append(js.closers, gx)
		candidates = append(candidates, gx)
	}
	chosen, enf, selErr := sandbox.Select(ctx, f.sandbox, candidates...)
	for _, c := range candidates {
		b := api.Backend{Name: c.Name(), Available: chosen != nil && c.Name() == chosen.Name(), Chosen: chosen != nil && c.Name() == chosen.Name()}
		if b.Chosen {
			b.Enforced, b.Missing = enf.Limits, enf.Missing
		} else if _, err := c.Check(ctx); err != nil {
			b.Detail = err.Error()
		} else {
			b.Available = true
		}
		js.backends = append(js.backends, b)
	}
	if chosen != nil && (chosen.Name() == "bwrap" || chosen.Name() == "gvisor") && os.Geteuid() == 0 {
		// The sandbox runs as an unprivileged uid, which must be able to
		// walk to the job folders (bwrap resolves mounts as that uid, and
		// gVisor's files are checked against it):
		// refused now, with the fix, rather than at every run.
		if d, mode := traversable(f.dir); d != "" {
			selErr = fmt.Errorf("%w: %s: the sandbox user (uid 65534) cannot reach the jobs folder %s: %s has mode %04o; "+
				"give --jobs a folder whose every parent is traversable (chmod o+x, e.g. 0711), such as /var/lib/skills-mcp-jobs "+
				"(a data folder the hub made is 0711 with hub.db 0600; do not open one that holds other people's files)", sandbox.ErrUnavailable, chosen.Name(), f.dir, d, mode)
			for i := range js.backends {
				if js.backends[i].Name == chosen.Name() {
					js.backends[i] = api.Backend{Name: chosen.Name(), Detail: selErr.Error()}
				}
			}
			chosen = nil
		}
	}
	var ex sandbox.Executor = unavailable{err: selErr}
	if chosen != nil {
		ex = chosen
	}
	svc, err := jobs.New(jobs.Options{Store: db, Executor: ex, Replica: replica, Dir: f.dir, Wheels: f.wheels, NpmCache: f.npmCache, DockerImage: f.dockerImage,
		Lease: f.lease, Audit: audit, Logger: logger})
	if err != nil {
		js.Close()
		return nil, fmt.Errorf("%w", err)
	}
	js.svc = svc
	_, rep, err := svc.Start(ctx)
	switch {
	case selErr != nil:
		logger.Warn("no sandbox backend works: skills are served, script jobs and preparations are refused (503 sandbox_unavailable)", "sandbox", f.sandbox, "why", selErr.Error())
	case err != nil:
		logger.Error("the job service did not start: jobs are refused", "backend", chosen.Name(), "err", err)
	default:
		logger.Info("script jobs run in a sandbox", "backend", chosen.Name(), "replica", replica,
			"enforced", strings.Join(enf.Limits, "; "), "missing", strings.Join(enf.Missing, "; "))
		logger.Info("recovery of this replica's unfinished jobs", "failed", strings.Join(rep.Failed, " "), "stopped", strings.Join(rep.Stopped, " "),
			"locked", strings.Join(rep.Locked, " "), "killed_sandboxes", strings.Join(rep.Killed, " "), "preparations", strings.Trim(fmt.Sprint(rep.Preparations), "[]"))
	}
	return js, nil
}

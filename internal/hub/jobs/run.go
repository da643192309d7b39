package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Sandbox name prefixes: a job's run, and a preparation (with the
// replica's tag).
const (
	jobPrefix  = "skjob-"
	prepPrefix = "skprep-"
)

// SandboxName is the name of a job's sandbox: the container's name under
// Docker.
func SandboxName(jobID string) string { return jobPrefix + jobID }

// finishTimeout bounds storing a run's end once the run is over, also
// when the service is closing.
const finishTimeout = 30 * time.Second

// worker claims queued jobs and runs them, one at a time, until Close.
// It waits for the job feed (or another worker) to wake it; a claim the
// database refused is tried again with backoff.
func (s *Service) worker() {
	backoff := 100 * time.Millisecond
	for {
		if s.ctx.Err() != nil {
			return
		}
		j, ok, err := s.st.ClaimJob(s.ctx, s.opts.Replica)
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			if backoff == 100*time.Millisecond {
				s.log.Warn("claiming a queued job", "err", err)
			}
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if ok {
			// Another job may be queued behind this one: wake another
			// worker rather than leave it for the feed's next look.
			s.kick()
			s.execute(j)
			continue
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
	}
}

// execute runs a claimed job and stores its end. Stops asked on other
// replicas, and settlements made elsewhere, arrive through the job feed
// (follow), which cancels the run.
func (s *Service) execute(j store.Job) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	h := &runHandle{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.runs[j.ID] = h
	close(s.runsChanged)
	s.runsChanged = make(chan struct{})
	s.mu.Unlock()
	defer func() {
		cancel(nil)
		s.mu.Lock()
		delete(s.runs, j.ID)
		s.mu.Unlock()
		close(h.done)
	}()
	// A stop asked between the claim and the registration above.
	if cur, err := s.st.GetJob(ctx, j.ID); err == nil && cur.StopRequested {
		cancel(stopCause(cur.Reason))
	}
	res, outputs, lockReason := s.runJob(ctx, j)
	h.ending.Store(true)
	cancel(nil)
	if lockReason != "" {
		s.keepTrying(j.ID, "locking a job whose sandbox may still run", func(ctx context.Context) error {
			_, err := s.st.LockJob(ctx, j.ID, s.opts.Replica, lockReason)
			return err
		})
		s.log.Error("job locked", "job", j.ID, "reason", lockReason)
		return
	}
	stored := s.keepTrying(j.ID, "storing the end of a run", func(ctx context.Context) error {
		_, err := s.st.FinishJob(ctx, j.ID, s.opts.Replica, res, outputs)
		if errors.Is(err, store.ErrJobLimit) {
			res.Reason = strings.TrimSpace(res.Reason + "; outputs not kept: " + err.Error())
			res.State, outputs = store.JobFailed, nil
			_, err = s.st.FinishJob(ctx, j.ID, s.opts.Replica, res, nil)
		}
		return err
	})
	if !stored {
		return
	}
	s.log.Info("run ended", "job", j.ID, "state", res.State, "outputs", len(outputs))
	s.audit(context.Background(), store.AuditEntry{Actor: runBy(j), Action: "job.run", ObjectKind: "job", ObjectID: j.ProjectID + "/" + j.ID, Result: string(res.State)})
}

// runBy is who asked for a job's run, for its audit entries.
func runBy(j store.Job) string {
	if j.RunBy != "" {
		return j.RunBy
	}
	return "project:" + j.ProjectID
}

// keepTrying runs op, which stores something of a run that is over, until
// it succeeds, the store refuses it for good (a state the job is no longer
// in: it was settled elsewhere), or Options.FinishRetry passes while the
// database is unavailable; each wait is logged once. It reports whether op
// succeeded. A closing service keeps trying for finishTimeout.
func (s *Service) keepTrying(jobID, doing string, op func(ctx context.Context) error) bool {
	start := time.Now()
	deadline := start.Add(s.opts.FinishRetry)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
		err := op(ctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				s.log.Info("the database took what waited for it", "job", jobID, "doing", doing, "attempts", attempt, "after", time.Since(start).Round(time.Millisecond))
			}
			return true
		}
		transient := errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
		if !transient {
			s.log.Error(doing+" was refused; it is lost", "job", jobID, "err", err)
			return false
		}
		if attempt == 1 {
			s.log.Warn(doing+" waits for the database; it is kept and retried", "job", jobID, "for", s.opts.FinishRetry, "err", err)
		}
		if s.ctx.Err() != nil && time.Since(start) > finishTimeout {
			deadline = start // closing: give up after finishTimeout
		}
		if time.Now().Add(backoff).After(deadline) {
			s.log.Error(doing+" is lost: the database stayed unavailable; recovery or another replica settles the job", "job", jobID, "after", time.Since(start).Round(time.Second), "err", err)
			return false
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

func failed(reason string) store.JobResult {
	return store.JobResult{State: store.JobFailed, Reason: reason}
}

// runJob runs a claimed job in its sandbox. It returns the end to store
// with its outputs, or a reason to lock the job when its sandbox could not
// be confirmed gone.
func (s *Service) runJob(ctx context.Context, j store.Job) (store.JobResult, []store.NewJobFile, string) {
	// A failure while the run is being set up is a stop when the run was
	// cancelled (a stop, the service closing).
	failed := func(reason string) store.JobResult {
		if ctx.Err() != nil {
			return store.JobResult{State: store.JobStopped, Reason: context.Cause(ctx).Error()}
		}
		return store.JobResult{State: store.JobFailed, Reason: reason}
	}
	// The setup reads the store: a database away for a while (a restart)
	// delays the run rather than failing it.
	var p store.Profile
	err := s.whileAway(ctx, func() (err error) { p, err = s.st.GetProfile(ctx, j.VersionID); return err })
	switch {
	case err != nil:
		return failed("reading the execution profile: " + err.Error()), nil, ""
	case p.Revision != j.ProfileRevision || !p.Prepared():
		return failed(fmt.Sprintf("the execution profile changed after the job was queued (revision %d, now %d): create another job", j.ProfileRevision, p.Revision)), nil, ""
	case !p.Enabled:
		return failed("the execution profile was disabled after the job was queued"), nil, ""
	case !p.Allows(j.Script):
		return failed("the script is no longer allowed by the execution profile"), nil, ""
	}
	if _, err := s.runImage(p); err != nil {
		return failed(err.Error()), nil, ""
	}
	var pkg string
	err = s.whileAway(ctx, func() (err error) { pkg, err = s.st.Materialize(ctx, j.VersionID, s.dir("packages")); return err })
	if err != nil {
		return failed("the package could not be laid out for the run: " + err.Error()), nil, ""
	}
	var layer string
	err = s.whileAway(ctx, func() (err error) { layer, err = s.layer(ctx, p); return err })
	if err != nil {
		return failed(err.Error()), nil, ""
	}
	work := s.dir("work", j.ID)
	// A sandbox not confirmed gone may still write there: its folder is
	// kept until Recover confirms it gone (and removes it).
	keepWork := false
	defer func() {
		if !keepWork {
			removeTree(work)
		}
	}()
	var inputs map[string][32]byte
	err = s.whileAway(ctx, func() (err error) { inputs, err = s.layOutInputs(ctx, j.ID, work); return err })
	if err != nil {
		return failed("the job's inputs could not be laid out: " + err.Error()), nil, ""
	}
	spec := s.spec(p, pkg, layer, work, j)
	r, err := s.ex.Run(ctx, spec)
	if errors.Is(err, sandbox.ErrUnconfirmed) {
		keepWork = true
		return store.JobResult{}, nil, "its sandbox could not be confirmed gone; its files are held until an operator or a restart confirms it: " + err.Error()
	}
	if err != nil {
		return failed(fmt.Sprintf("the sandbox (%s) failed: %v", s.ex.Name(), err)), nil, ""
	}
	res := s.result(ctx, p, r)
	outputs, note, err := collectOutputs(work, inputs)
	if err != nil {
		res.State, res.Reason = store.JobFailed, strings.TrimSpace(res.Reason+"; outputs not kept: "+err.Error())
		return res, nil, ""
	}
	if note != "" {
		res.Reason = strings.TrimSpace(strings.TrimPrefix(res.Reason+"; "+note, "; "))
	}
	return res, outputs, ""
}

// setupWait bounds how long a run's setup waits for the database.
const setupWait = time.Minute

// whileAway runs op, which reads the store to set a run up, again with
// backoff while the database is unavailable, for up to setupWait; another
// error, or ctx's end, is returned at once.
func (s *Service) whileAway(ctx context.Context, op func() error) error {
	deadline := time.Now().Add(setupWait)
	backoff := 100 * time.Millisecond
	for {
		err := op()
		if err == nil || !errors.Is(err, store.ErrUnavailable) || time.Now().Add(backoff).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// result turns the sandbox's result into the job's end.
func (s *Service) result(ctx context.Context, p store.Profile, r sandbox.Result) store.JobResult {
	out := store.JobResult{Stdout: r.Stdout, Stderr: r.Stderr, StdoutCut: r.StdoutCut, StderrCut: r.StderrCut}
	if len(out.Stdout) > store.MaxJobOutput {
		out.Stdout, out.StdoutCut = out.Stdout[:store.MaxJobOutput], true
	}
	if len(out.Stderr) > store.MaxJobOutput {
		out.Stderr, out.StderrCut = out.Stderr[:store.MaxJobOutput], true
	}
	switch r.Reason {
	case sandbox.ReasonExited:
		code := r.ExitCode
		out.ExitCode = &code
		if code == 0 {
			out.State = store.JobSucceeded
		} else {
			out.State, out.Reason = store.JobFailed, fmt.Sprintf("the script exited with status %d", code)
		}
	case sandbox.ReasonTimeout:
		out.State, out.Reason = store.JobTimedOut, fmt.Sprintf("the run passed its %d s timeout and was killed", p.TimeoutSeconds)
	case sandbox.ReasonMemory:
		out.State, out.Reason = store.JobFailed, fmt.Sprintf("killed: the run passed its memory limit (%d MiB)", s.limit.Memory>>20)
	case sandbox.ReasonQuota:
		out.State, out.Reason = store.JobFailed, fmt.Sprintf("stopped: the work folder passed its quota (%d MiB, %d files)", s.limit.WorkTree>>20, s.limit.WorkFiles)
	default: // killed
		out.State, out.Reason = store.JobStopped, "the sandbox was killed"
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			out.Reason = cause.Error()
		}
		if r.Signal != "" {
			out.Reason += " (signal " + r.Signal + ")"
		}
	}
	return out
}

// interpreter is the interpreter a run of p uses inside the sandbox: the
// profile's, else the one its preparation used in the image it pinned (so
// a hub started since with another image runs it as prepared), else
// preparationInterpreter's.
func (s *Service) interpreter(p store.Profile) string {
	if p.Interpreter == "" && p.ImageID != "" && p.ImageInterpreter != "" {
		return p.ImageInterpreter
	}
	return s.preparationInterpreter(p)
}

// preparationInterpreter is the interpreter for p in the image in force
// now, which a preparation uses and records: the profile's, else the one
// of the runtime's default image when the profile runs on it, else the
// Debian path.
func (s *Service) preparationInterpreter(p store.Profile) string {
	if p.Interpreter != "" {
		return p.Interpreter
	}
	if s.usesDefaultImage(p) {
		return defaultImages[p.Runtime].interpreter
	}
	switch p.Runtime {
	case store.RuntimePython:
		return "/usr/bin/python3"
	case store.RuntimeNode:
		return "/usr/bin/node"
	}
	return "/usr/bin/bash"
}

// Where things are inside a job's sandbox.
const (
	packageTarget = "/package"
	skillTarget   = "/skill" // the package again, beside a prepared layer
	workTarget    = "/work"
	layerTarget   = "/layer"        // a Python layer (PYTHONPATH)
	nodeTarget    = "/node_modules" // a Node layer: found from any folder
)

// spec is the sandbox of a job's run: the interpreter, the script and the
// arguments as they are (no shell), /work its own, the package read-only.
func (s *Service) spec(p store.Profile, pkg, layer, work string, j store.Job) sandbox.Spec {
	argv := append([]string{s.interpreter(p), path.Join(packageTarget, j.Script)}, j.Args...)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + workTarget, "LANG=C.UTF-8"}
	mounts := []sandbox.Mount{
		{Host: pkg, Target: packageTarget},
		{Host: work, Target: workTarget, Writable: true},
	}
	if layer != "" {
		mounts = append(mounts, sandbox.Mount{Host: pkg, Target: skillTarget})
		switch p.Runtime {
		case store.RuntimePython:
			mounts = append(mounts, sandbox.Mount{Host: layer, Target: layerTarget})
			env = append(env, "PYTHONPATH="+layerTarget, "PYTHONNOUSERSITE=1")
		case store.RuntimeNode:
			if nm := filepath.Join(layer, "node_modules"); exists(nm) {
				mounts = append(mounts, sandbox.Mount{Host: nm, Target: nodeTarget})
				env = append(env, "NODE_PATH="+nodeTarget)
			}
		}
	}
	if p.Runtime == store.RuntimePython {
		env = append(env, "PYTHONDONTWRITEBYTECODE=1")
	}
	lim := s.limit
	lim.Wall = time.Duration(p.TimeoutSeconds) * time.Second
	return sandbox.Spec{Name: SandboxName(j.ID), Argv: argv, Dir: workTarget, Env: env, Mounts: mounts,
		Image: p.ImageID, RootFS: p.RootFS, Network: p.Network, Limits: lim}
}

// layOutInputs writes the job's inputs into a fresh work folder, each
// verified against its digest, and returns their digests by path.
func (s *Service) layOutInputs(ctx context.Context, jobID, work string) (map[string][32]byte, error) {
	if err := removeTree(work); err != nil {
		return nil, err
	}
	if err := os.Mkdir(work, 0o777); err != nil {
		return nil, err
	}
	// A file system of its own with a hard size where the hub may mount
	// one (root): what the job writes never reaches the data volume, and
	// passing the quota is ENOSPC inside. Elsewhere the sandbox measures
	// the folder during the run.
	if err := sandbox.MountWorkspace(work, s.limit.WorkTree, s.limit.WorkFiles); err != nil && !errors.Is(err, sandbox.ErrNoWorkspace) {
		return nil, err
	}
	// The sandbox's uid writes here; the mode is not the umask's.
	if err := os.Chmod(work, 0o777); err != nil {
		return nil, err
	}
	files, err := s.st.JobFiles(ctx, jobID)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := map[string][32]byte{}
	for _, f := range files {
		if f.Kind != store.JobInput {
			continue
		}
		data, _, err := s.st.ReadRunInput(ctx, jobID, s.opts.Replica, f.Path)
		if err != nil {
			return nil, err
		}
		if sha256.Sum256(data) != f.Digest || int64(len(data)) != f.Size {
			return nil, &store.CorruptJobFileError{JobID: jobID, Path: f.Path}
		}
		if dir := path.Dir(f.Path); dir != "." {
			if err := mkdirAll(root, dir); err != nil {
				return nil, err
			}
		}
		if err := root.WriteFile(f.Path, data, 0o666); err != nil {
			return nil, err
		}
		if err := root.Chmod(f.Path, 0o666); err != nil {
			return nil, err
		}
		out[f.Path] = f.Digest
	}
	return out, nil
}

// mkdirAll makes dir and its parents under root, writable by all (the
// sandbox's uid).
func mkdirAll(root *os.Root, dir string) error {
	parts := strings.Split(dir, "/")
	for i := range parts {
		d := strings.Join(parts[:i+1], "/")
		if err := root.Mkdir(d, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := root.Chmod(d, 0o777); err != nil {
			return err
		}
	}
	return nil
}

// collectOutputs returns every regular file of the work folder that is
// new or differs from the input of its path. Symbolic links and special
// files are never followed or kept; note says what was left out. The
// folder is read through an os.Root, so nothing outside it is read.
func collectOutputs(work string, inputs map[string][32]byte) ([]store.NewJobFile, string, error) {
	root, err := os.OpenRoot(work)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	var (
		out              []store.NewJobFile
		skipped          []string
		entries, kept    int
		total, unchanged int64
	)
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		entries++
		if entries > 4*store.MaxJobFiles {
			return fmt.Errorf("the work folder holds more than %d entries", 4*store.MaxJobFiles)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() || store.CheckJobPath(p) != nil {
			skipped = append(skipped, p)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > store.MaxJobFileSize {
			return fmt.Errorf("%s is %d bytes, more than the %d MiB a file may hold", p, info.Size(), store.MaxJobFileSize>>20)
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(f, store.MaxJobFileSize+1))
		f.Close()
		if err != nil {
			return err
		}
		if len(data) > store.MaxJobFileSize {
			return fmt.Errorf("%s grew past the %d MiB a file may hold", p, store.MaxJobFileSize>>20)
		}
		if d, ok := inputs[p]; ok && d == sha256.Sum256(data) {
			unchanged += int64(len(data))
			kept++
			return nil
		}
		total += int64(len(data))
		if total+unchanged > store.MaxJobBytes || len(out)+kept >= store.MaxJobFiles+1 {
			return fmt.Errorf("the work folder holds more than %d files or %d MiB", store.MaxJobFiles, store.MaxJobBytes>>20)
		}
		out = append(out, store.NewJobFile{Path: p, Data: data})
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	note := ""
	if len(skipped) > 0 {
		slices.Sort(skipped)
		if len(skipped) > 10 {
			skipped = append(skipped[:10], "…")
		}
		note = fmt.Sprintf("left out %d entries that are not regular files or have names a job file may not have: %s", len(skipped), strings.Join(skipped, ", "))
	}
	return out, note, nil
}

// removeTree removes a folder whose parts a sandbox may have made
// read-only, and a work folder's own file system first.
func removeTree(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := sandbox.UnmountWorkspace(dir); err != nil {
		return err
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Recover reconciles the jobs this replica left running or locked (after a
// crash or a restart) with what its backend still runs: a sandbox still
// running is killed and its job stopped; a job whose sandbox is gone
// failed (its result was lost); a kill that cannot be confirmed leaves
// the job locked. No job is run again. Sandboxes of this host without a
// live job are killed too. Start calls it.
func (s *Service) Recover(ctx context.Context) (RecoverReport, error) {
	var rep RecoverReport
	if err := s.usable(); err != nil {
		return rep, err
	}
	// Build folders listed now, before the sandboxes, belong to
	// preparations that started before; if none runs and none started by
	// the end, and every orphaned build sandbox is confirmed gone, no
	// sandbox can write in them any more.
	s.mu.Lock()
	gen := s.prepGen
	s.mu.Unlock()
	builds, _ := filepath.Glob(filepath.Join(s.dir("layers"), s.buildPrefix()+"*"))
	buildsFree := true
	jobs, err := s.st.ReplicaJobs(ctx, s.opts.Replica)
	if err != nil {
		return rep, fmt.Errorf("recovering jobs: %w", err)
	}
	names, err := s.ex.Running(ctx)
	if err != nil {
		return rep, fmt.Errorf("recovering jobs: listing the sandboxes %s runs: %w", s.ex.Name(), err)
	}
	running := map[string]bool{}
	for _, n := range names {
		running[n] = true
	}
	var errs []error
	handled := map[string]bool{}
	lockedHere := map[string]bool{} // jobs whose sandbox may still write in their folder
	for _, j := range jobs {
		s.mu.Lock()
		live := s.runs[j.ID] != nil
		s.mu.Unlock()
		if live {
			continue
		}
		name := SandboxName(j.ID)
		handled[name] = true
		res := store.JobResult{State: store.JobFailed, Reason: "the hub stopped during the run (a crash or a restart) and its result was lost; create another job to run it again"}
		// Killed when it still runs; else what it left (its empty cgroup
		// folders, its stopped container) is removed with its job.
		if err := s.ex.Kill(ctx, name); err != nil {
			if j.State != store.JobLocked {
				if _, err := s.st.LockJob(ctx, j.ID, s.opts.Replica, "after a restart its sandbox could not be confirmed gone: "+err.Error()); err != nil {
					errs = append(errs, err)
				}
			}
			rep.Locked = append(rep.Locked, j.ID)
			lockedHere[j.ID] = true
			continue
		}
		switch {
		case running[name]:
			rep.Killed = append(rep.Killed, name)
			res = store.JobResult{State: store.JobStopped, Reason: "the hub restarted during the run; its sandbox was killed"}
		case j.State == store.JobLocked:
			res = store.JobResult{State: store.JobStopped, Reason: "its sandbox was confirmed gone after a restart; " + j.Reason}
		}
		if _, err := s.st.FinishJob(ctx, j.ID, s.opts.Replica, res, nil); err != nil {
			errs = append(errs, err)
			lockedHere[j.ID] = true // its folder stays until it is settled
			continue
		}
		if res.State == store.JobStopped {
			rep.Stopped = append(rep.Stopped, j.ID)
		} else {
			rep.Failed = append(rep.Failed, j.ID)
		}
		removeTree(s.dir("work", j.ID))
		s.log.Warn("recovered a job", "job", j.ID, "state", res.State, "reason", res.Reason)
	}
	// Sandboxes no live job owns: a job of this host that ended, was
	// deleted or never was, and this replica's preparations.
	for _, name := range names {
		if handled[name] {
			continue
		}
		if id, ok := strings.CutPrefix(name, jobPrefix); ok {
			s.mu.Lock()
			live := s.runs[id] != nil
			s.mu.Unlock()
			j, err := s.st.GetJob(ctx, id)
			if live || err == nil && j.State.Active() && j.ClaimedBy != s.opts.Replica {
				continue // another replica on this host runs it
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, err)
				continue
			}
		} else if !strings.HasPrefix(name, prepPrefix+s.tag+"-") || s.preparing(name) {
			continue
		}
		if err := s.ex.Kill(ctx, name); err != nil {
			errs = append(errs, fmt.Errorf("killing the orphaned sandbox %s: %w", name, err))
			if strings.HasPrefix(name, prepPrefix) {
				buildsFree = false
			}
			continue
		}
		rep.Killed = append(rep.Killed, name)
	}
	if buildsFree && !s.preparationsSince(gen) {
		for _, b := range builds {
			if err := removeTree(b); err != nil {
				errs = append(errs, fmt.Errorf("removing the build folder %s left by an unconfirmed preparation: %w", filepath.Base(b), err))
			}
		}
		// Preparations this replica claimed and no longer runs (it
		// stopped during them) are recorded failed, so that another may
		// start.
		vs, err := s.st.ReleasePreparations(ctx, s.opts.Replica, "the hub stopped during the preparation (a crash or a restart): prepare the version again")
		if err != nil {
			errs = append(errs, fmt.Errorf("releasing this replica's preparations: %w", err))
		}
		rep.Preparations = vs
	}
	// Work folders of jobs that no longer run here (settled elsewhere
	// while this replica was away, or left by a crash): no sandbox of
	// this replica writes there any more, unless the job is locked.
	if ents, err := os.ReadDir(s.dir("work")); err == nil {
		for _, e := range ents {
			s.mu.Lock()
			live := s.runs[e.Name()] != nil
			s.mu.Unlock()
			if live || lockedHere[e.Name()] {
				continue
			}
			if err := removeTree(s.dir("work", e.Name())); err != nil {
				errs = append(errs, fmt.Errorf("removing the work folder of job %s: %w", e.Name(), err))
			}
		}
	}
	return rep, errors.Join(errs...)
}

// logBytes renders a build's streams for its log.
func logBytes(argv []string, r sandbox.Result) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "$ %s\n", strings.Join(argv, " "))
	b.Write(r.Stdout)
	if r.StdoutCut {
		b.WriteString("\n… (stdout cut)\n")
	}
	b.Write(r.Stderr)
	if r.StderrCut {
		b.WriteString("\n… (stderr cut)\n")
	}
	fmt.Fprintf(&b, "\n(%s, exit status %d, %s)\n", r.Reason, r.ExitCode, r.Duration.Round(time.Millisecond))
	return b.String()
}

package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var skillTree = storetest.Tree{
	"SKILL.md":        "---\nname: copier\ndescription: copies\n---\nbody\n",
	"scripts/copy.py": "x:import sys\nopen(sys.argv[2], 'wb').write(open(sys.argv[1], 'rb').read())\nprint('copied')\n",
	"scripts/rm.sh":   "x:rm -rf /\n",
}

type env struct {
	t       *testing.T
	dataDir string
	st      *store.DB
	version int64
	fake    *fakeExec
	svc     *Service
}

// copyBehaviour emulates scripts/copy.py: args[0] is copied to args[1];
// the special first argument "mode:…" picks another ending.
func copyBehaviour(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
	if len(spec.Argv) == 2 && spec.Argv[1] == "--version" {
		return sandbox.Result{Reason: sandbox.ReasonExited, Stdout: []byte("Python 3.11\n")}, nil
	}
	args := spec.Argv[2:]
	if len(args) > 0 {
		switch args[0] {
		case "mode:timeout":
			return sandbox.Result{Reason: sandbox.ReasonTimeout, ExitCode: -1, Signal: "KILL"}, nil
		case "mode:memory":
			return sandbox.Result{Reason: sandbox.ReasonMemory, ExitCode: -1, Signal: "KILL"}, nil
		case "mode:exit3":
			return sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 3, Stderr: []byte("boom\n")}, nil
		case "mode:flood":
			return sandbox.Result{Reason: sandbox.ReasonExited, Stdout: bytes.Repeat([]byte("y"), 1<<20), StdoutCut: true}, nil
		case "mode:unconfirmed":
			return sandbox.Result{}, fmt.Errorf("kill of %s: %w", spec.Name, sandbox.ErrUnconfirmed)
		case "mode:vanish":
			return sandbox.Result{}, errors.New("the backend went away mid-run")
		case "mode:block":
			<-ctx.Done()
			return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1, Signal: "KILL"}, nil
		case "mode:escape":
			work := host("/work")
			os.Symlink("/etc/passwd", filepath.Join(work, "link"))
			os.WriteFile(filepath.Join(work, "made.txt"), []byte("new"), 0o644)
			return sandbox.Result{Reason: sandbox.ReasonExited}, nil
		}
	}
	if len(args) < 2 {
		// As the script would: a usage error, not a crash of the test.
		return sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 2, Stderr: []byte("usage: copy.py IN OUT\n")}, nil
	}
	data, err := os.ReadFile(filepath.Join(host("/work"), args[0]))
	if err != nil {
		return sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: []byte(err.Error())}, nil
	}
	dst := filepath.Join(host("/work"), args[1])
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: []byte(err.Error())}, nil
	}
	return sandbox.Result{Reason: sandbox.ReasonExited, Stdout: []byte("copied\n")}, nil
}

func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newService(t *testing.T, st *store.DB, fake *fakeExec, replica, dir string, mod func(*Options)) *Service {
	t.Helper()
	opts := Options{Store: st, Replica: replica, Dir: dir, RunWait: 10 * time.Second, Workers: 2}
	if fake != nil {
		opts.Executor = fake
	}
	if mod != nil {
		mod(&opts)
	}
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// setup installs the copier skill bound to project p, with a profile
// allowing scripts/copy.py, and starts a service; prepare prepares it.
func setup(t *testing.T, prepare bool) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, dataDir: filepath.Join(t.TempDir(), "data")}
	e.st = openStore(t, e.dataDir)
	v, _, err := e.st.Install(ctx, storetest.Version("copier", skillTree))
	if err != nil {
		t.Fatal(err)
	}
	e.version = v.ID
	for _, p := range []string{"p", "other"} {
		if err := e.st.CreateProject(ctx, p, "Project "+p); err != nil {
			t.Fatal(err)
		}
		if err := e.st.Bind(ctx, p, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	e.fake = newFake(copyBehaviour)
	e.svc = newService(t, e.st, e.fake, "replica-1", filepath.Join(t.TempDir(), "jobs"), nil)
	if _, _, err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 30, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if prepare {
		if _, err := e.svc.Prepare(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) job(input string) store.Job {
	e.t.Helper()
	ctx := context.Background()
	j, err := e.svc.Create(ctx, "p", e.version)
	if err != nil {
		e.t.Fatalf("Create: %v", err)
	}
	if input != "" {
		if _, err := e.svc.Upload(ctx, "p", j.ID, "in.txt", []byte(input), false); err != nil {
			e.t.Fatalf("Upload: %v", err)
		}
	}
	return j
}

func (e *env) run(j store.Job, args ...string) Status {
	e.t.Helper()
	st, err := e.svc.Run(context.Background(), "p", j.ID, "scripts/copy.py", args)
	if err != nil {
		e.t.Fatalf("Run: %v", err)
	}
	return st
}

// waitState waits, with a generous deadline, for the job to reach state.
func (e *env) waitState(id string, want store.JobState) store.Job {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := e.st.GetJob(context.Background(), id)
		if err == nil && j.State == want {
			return j
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s is %s (%v); want %s", id, j.State, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunCopiesInputToOutput(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	p, _ := e.svc.GetProfile(ctx, e.version)
	if p.Identity != identityNone || !strings.Contains(p.PrepareLog, "Python 3.11") {
		t.Fatalf("prepared profile = %+v; want identity none and the version check's log", p)
	}
	input := strings.Repeat("a line of input\n", 64) // 1 KiB
	j := e.job(input)
	st := e.run(j, "in.txt", "out/copy.txt")
	if st.Job.State != store.JobSucceeded || st.Job.ExitCode == nil || *st.Job.ExitCode != 0 || st.Stdout != "copied\n" {
		t.Fatalf("Run = %+v", st)
	}
	sum := sha256.Sum256([]byte(input))
	if len(st.Outputs) != 1 || st.Outputs[0].Path != "out/copy.txt" || st.Outputs[0].SHA256 != hex.EncodeToString(sum[:]) || st.Outputs[0].Size != int64(len(input)) {
		t.Fatalf("outputs = %+v; want out/copy.txt with the input's digest", st.Outputs)
	}
	if len(st.Inputs) != 1 || st.Inputs[0].Path != "in.txt" {
		t.Fatalf("inputs = %+v", st.Inputs)
	}
	// Read back in pieces, as read_skill_job_file does.
	var got []byte
	for off := int64(0); ; {
		c, err := e.svc.ReadFile(ctx, "p", j.ID, "out/copy.txt", off, 300)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Data...)
		off += int64(len(c.Data))
		if c.EOF {
			break
		}
	}
	if string(got) != input {
		t.Fatalf("downloaded %d bytes; want the input back", len(got))
	}
	// The sandbox got the interpreter, the script and the arguments as
	// they are, /work, a read-only package, no network, a minimal
	// environment, and the profile's timeout.
	spec := e.fake.lastSpec()
	if !slices.Equal(spec.Argv, []string{"/usr/bin/python3", "/package/scripts/copy.py", "in.txt", "out/copy.txt"}) || spec.Dir != "/work" || spec.Network {
		t.Errorf("spec = %+v", spec)
	}
	if !slices.Equal(spec.Env, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/work", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}) {
		t.Errorf("env = %q; want the minimal environment only", spec.Env)
	}
	if spec.Limits.Wall != 30*time.Second || spec.Limits.Output != 1<<20 || spec.Limits.Memory != 512<<20 || spec.Name != SandboxName(j.ID) {
		t.Errorf("limits = %+v, name %s", spec.Limits, spec.Name)
	}
	for _, m := range spec.Mounts {
		if (m.Target == "/work") != m.Writable {
			t.Errorf("mount %+v: only /work is writable", m)
		}
	}
	// The work folder is gone once the outputs are stored.
	if _, err := os.Stat(filepath.Join(e.svc.dir("work"), j.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work folder left behind: %v", err)
	}
	// At most once; no upload after the run.
	if _, err := e.svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"in.txt", "again"}); !errors.Is(err, store.ErrJobState) {
		t.Errorf("Run(twice) = %v; want ErrJobState", err)
	}
	if _, err := e.svc.Upload(ctx, "p", j.ID, "late.txt", []byte("x"), false); !errors.Is(err, store.ErrJobState) {
		t.Errorf("Upload(after the run) = %v; want ErrJobState", err)
	}
	if n := e.fake.runs[SandboxName(j.ID)]; n != 1 {
		t.Errorf("the job ran %d times", n)
	}
	if err := e.svc.Delete(ctx, "p", j.ID); err != nil {
		t.Fatal(err)
	}
}

func TestRefusals(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	j := e.job("x")
	if _, err := e.svc.Run(ctx, "p", j.ID, "scripts/rm.sh", nil); !errors.Is(err, store.ErrScriptNotAllowed) {
		t.Errorf("Run(script not allowed) = %v", err)
	}
	for _, raw := range []string{`"in.txt"`, `[1]`, `{"a":"b"}`, `["a", null]`, `["a", ["b"]]`, `[true]`, `[`} {
		if _, err := ParseArgs(json.RawMessage(raw)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ParseArgs(%s) = %v; want ErrInvalid", raw, err)
		}
	}
	if args, err := ParseArgs(json.RawMessage(`["in.csv", "out.txt", ""]`)); err != nil || !slices.Equal(args, []string{"in.csv", "out.txt", ""}) {
		t.Errorf("ParseArgs(strings) = %q, %v", args, err)
	}
	// A job of another project is not there for this one.
	for name, err := range map[string]error{
		"Get":    func() error { _, err := e.svc.Get(ctx, "other", j.ID); return err }(),
		"Upload": func() error { _, err := e.svc.Upload(ctx, "other", j.ID, "a", nil, false); return err }(),
		"Run":    func() error { _, err := e.svc.Run(ctx, "other", j.ID, "scripts/copy.py", nil); return err }(),
		"Read":   func() error { _, err := e.svc.ReadFile(ctx, "other", j.ID, "in.txt", 0, 10); return err }(),
		"Delete": e.svc.Delete(ctx, "other", j.ID),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s(job of another project) = %v; want ErrNotFound", name, err)
		}
	}
	for _, bad := range []string{"../escape", "/etc/passwd", "a/../../b", "caf\u0065\u0301"} {
		if _, err := e.svc.Upload(ctx, "p", j.ID, bad, []byte("x"), false); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Upload(%q) = %v; want ErrInvalid", bad, err)
		}
		if _, err := e.svc.ReadFile(ctx, "p", j.ID, bad, 0, 1); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ReadFile(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	if _, err := e.svc.Upload(ctx, "p", j.ID, "huge", make([]byte, store.MaxJobFileSize+1), false); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("Upload(over 32 MiB) = %v; want ErrJobLimit", err)
	}
	// The profile changes: the created job cannot run, and new jobs wait
	// for a preparation.
	if _, err := e.svc.SetProfile(ctx, e.version, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 60, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"in.txt", "o"}); !errors.Is(err, store.ErrProfileChanged) {
		t.Errorf("Run(changed profile) = %v; want ErrProfileChanged", err)
	}
	if _, err := e.svc.Create(ctx, "p", e.version); !errors.Is(err, store.ErrNotPrepared) {
		t.Errorf("Create(unprepared) = %v; want ErrNotPrepared", err)
	}
}

func TestNoBackendRefusesJobs(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "data"))
	for name, fake := range map[string]*fakeExec{"none": nil, "broken": {checkErr: errors.New("bwrap: not installed")}} {
		svc := newService(t, st, fake, "r", filepath.Join(t.TempDir(), "jobs"), nil)
		if _, _, err := svc.Start(ctx); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("%s: Start = %v; want ErrUnavailable", name, err)
		}
		if _, err := svc.Create(ctx, "p", 1); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("%s: Create = %v; want ErrUnavailable", name, err)
		}
		if _, err := svc.Prepare(ctx, 1); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("%s: Prepare = %v; want ErrUnavailable", name, err)
		}
	}
}

func TestEndings(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	for _, tc := range []struct {
		mode   string
		state  store.JobState
		reason string
	}{
		{"mode:timeout", store.JobTimedOut, "30 s timeout"},
		{"mode:memory", store.JobFailed, "memory limit"},
		{"mode:exit3", store.JobFailed, "status 3"},
		{"mode:vanish", store.JobFailed, "went away"},
		{"mode:escape", store.JobSucceeded, "left out 1 entries"},
	} {
		j := e.job("in")
		st := e.run(j, tc.mode)
		if st.Job.State != tc.state || !strings.Contains(st.Job.Reason, tc.reason) {
			t.Errorf("%s: %s, %q; want %s, %q", tc.mode, st.Job.State, st.Job.Reason, tc.state, tc.reason)
		}
		if tc.mode == "mode:escape" && (len(st.Outputs) != 1 || st.Outputs[0].Path != "made.txt") {
			t.Errorf("escape: outputs %+v; want made.txt only (no symlink)", st.Outputs)
		}
	}
	j := e.job("")
	st := e.run(j, "mode:flood")
	if len(st.Stdout) != 1<<20 || !st.Job.StdoutCut {
		t.Errorf("flood: %d bytes of stdout, cut %v; want exactly 1 MiB, cut", len(st.Stdout), st.Job.StdoutCut)
	}
	// An unconfirmed kill locks the job: nothing is served or deleted,
	// until recovery confirms the sandbox gone.
	j = e.job("secret")
	st = e.run(j, "mode:unconfirmed")
	if st.Job.State != store.JobLocked {
		t.Fatalf("unconfirmed: %s; want locked", st.Job.State)
	}
	if _, err := e.svc.ReadFile(ctx, "p", j.ID, "in.txt", 0, 10); !errors.Is(err, store.ErrJobState) {
		t.Errorf("ReadFile(locked) = %v", err)
	}
	if err := e.svc.Delete(ctx, "p", j.ID); !errors.Is(err, store.ErrJobState) {
		t.Errorf("Delete(locked) = %v", err)
	}
	if err := e.st.DeleteProject(ctx, "p"); !errors.Is(err, store.ErrJobsRunning) {
		t.Errorf("DeleteProject(locked job) = %v", err)
	}
	e.fake.mu.Lock()
	e.fake.running[SandboxName(j.ID)] = true
	e.fake.killErr = errors.New("still there")
	e.fake.mu.Unlock()
	if rep, _ := e.svc.Recover(ctx); !slices.Equal(rep.Locked, []string{j.ID}) {
		t.Errorf("Recover(kill fails) = %+v; want the job still locked", rep)
	}
	e.fake.mu.Lock()
	e.fake.killErr = nil
	e.fake.mu.Unlock()
	if rep, err := e.svc.Recover(ctx); err != nil || !slices.Equal(rep.Stopped, []string{j.ID}) {
		t.Errorf("Recover = %+v, %v; want the job stopped", rep, err)
	}
	if c, err := e.svc.ReadFile(ctx, "p", j.ID, "in.txt", 0, 10); err != nil || string(c.Data) != "secret" {
		t.Errorf("ReadFile(after recovery) = %q, %v", c.Data, err)
	}
}

func TestRunWaitsThenReportsRunning(t *testing.T) {
	e := setup(t, true)
	e.svc.opts.RunWait = 50 * time.Millisecond
	ctx := context.Background()
	j := e.job("x")
	st := e.run(j, "mode:block")
	// Not ended when the wait ends: running, or queued still on a loaded
	// machine.
	if st.Job.State != store.JobRunning && st.Job.State != store.JobQueued {
		t.Fatalf("Run(long) = %s; want running", st.Job.State)
	}
	e.waitState(j.ID, store.JobRunning)
	if _, err := e.svc.ReadFile(ctx, "p", j.ID, "in.txt", 0, 1); !errors.Is(err, store.ErrJobState) {
		t.Errorf("ReadFile(running) = %v", err)
	}
	if err := e.svc.Delete(ctx, "p", j.ID); !errors.Is(err, store.ErrJobState) {
		t.Errorf("Delete(running) = %v", err)
	}
	st, err := e.svc.Stop(ctx, "p", j.ID, "")
	if err != nil || st.Job.State != store.JobStopped {
		t.Fatalf("Stop = %+v, %v", st.Job, err)
	}
	// The client goes away while Run waits: the job is stopped.
	j = e.job("x")
	cctx, cancel := context.WithCancel(ctx)
	e.svc.opts.RunWait = time.Minute
	go func() {
		e.waitState(j.ID, store.JobRunning)
		cancel()
	}()
	st, err = e.svc.Run(cctx, "p", j.ID, "scripts/copy.py", []string{"mode:block"})
	if !errors.Is(err, context.Canceled) || st.Job.State != store.JobStopped || !strings.Contains(st.Job.Reason, "client went away") {
		t.Fatalf("Run(client gone) = %s %q, %v; want stopped", st.Job.State, st.Job.Reason, err)
	}
	// Close kills what still runs and stores it stopped.
	j = e.job("x")
	e.svc.opts.RunWait = 10 * time.Millisecond
	e.run(j, "mode:block")
	e.waitState(j.ID, store.JobRunning)
	e.svc.Close()
	if got, _ := e.st.GetJob(ctx, j.ID); got.State != store.JobStopped || !strings.Contains(got.Reason, "shut down") {
		t.Errorf("after Close: %s %q; want stopped", got.State, got.Reason)
	}
}

func TestCorruptPackageRefused(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	j := e.job("x")
	// Damage the stored script and the cached copy.
	db, err := sql.Open("sqlite", filepath.Join(e.dataDir, store.DatabaseFile)+"?_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`DROP TRIGGER blob_chunks_immutable`,
		`UPDATE blob_chunks SET data = X'00' WHERE digest = (SELECT digest FROM version_files WHERE path = 'scripts/copy.py')`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cache, err := e.st.Materialize(ctx, e.version, e.svc.dir("packages"))
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(cache, "scripts"), 0o755)
	os.Chmod(filepath.Join(cache, "scripts", "copy.py"), 0o644)
	if err := os.WriteFile(filepath.Join(cache, "scripts", "copy.py"), []byte("print('evil')"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := e.run(j, "in.txt", "out.txt")
	if st.Job.State != store.JobFailed || !strings.Contains(st.Job.Reason, "does not match its digest") {
		t.Errorf("Run(corrupt package) = %s %q; want failed naming the digest", st.Job.State, st.Job.Reason)
	}
	if _, err := e.svc.Prepare(ctx, e.version); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Errorf("Prepare(corrupt package) = %v", err)
	}
}

// A replica killed mid-run (SIGKILL: nothing of it ran its shutdown)
// leaves running jobs in the store. Its restart reconciles them with what
// the backend runs, never runs them again, and kills sandboxes no live
// job owns.
func TestRecoverAfterCrash(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	var crashed []store.Job
	for range 2 {
		crashed = append(crashed, e.job("x"))
	}
	// Queued once no worker of the live service can claim them.
	e.svc.Close()
	for _, j := range crashed {
		if _, err := e.st.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
			t.Fatal(err)
		}
	}
	// The "crashed process" claimed both; the first still runs.
	for range 2 {
		if _, ok, err := e.st.ClaimJob(ctx, "replica-9"); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	fake := newFake(copyBehaviour)
	fake.running[SandboxName(crashed[0].ID)] = true
	fake.running[SandboxName("j-ffffffffffffffffffff")] = true // a job long gone
	fake.running["skjob-j-other-replica"] = false
	svc := newService(t, e.st, fake, "replica-9", filepath.Join(t.TempDir(), "jobs"), nil)
	_, rep, err := svc.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Stopped, []string{crashed[0].ID}) || !slices.Equal(rep.Failed, []string{crashed[1].ID}) ||
		!slices.Contains(rep.Killed, SandboxName(crashed[0].ID)) || !slices.Contains(rep.Killed, SandboxName("j-ffffffffffffffffffff")) {
		t.Fatalf("Recover = %+v", rep)
	}
	for _, j := range crashed {
		got, _ := e.st.GetJob(ctx, j.ID)
		if !got.State.Final() || got.Reason == "" || fake.runs[SandboxName(j.ID)] != 0 {
			t.Errorf("job %s after recovery: %s %q, ran %d times; want ended with a reason, never run again", j.ID, got.State, got.Reason, fake.runs[SandboxName(j.ID)])
		}
	}
}

// Two replicas on one database run each queued job exactly once.
func TestTwoReplicasRunEachJobOnce(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	second := newService(t, e.st, e.fake, "replica-2", filepath.Join(t.TempDir(), "jobs2"), nil)
	if _, _, err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 12 {
		j := e.job("x")
		if _, err := e.st.QueueJob(ctx, j.ID, "scripts/copy.py", []string{"in.txt", "out.txt"}, "tester"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	e.svc.kick()
	second.kick()
	by := map[string]int{}
	for _, id := range ids {
		j := e.waitState(id, store.JobSucceeded)
		by[j.ClaimedBy]++
	}
	e.fake.mu.Lock()
	defer e.fake.mu.Unlock()
	for _, id := range ids {
		if n := e.fake.runs[SandboxName(id)]; n != 1 {
			t.Errorf("job %s ran %d times", id, n)
		}
	}
	t.Logf("jobs run by replica: %v", by)
}

func TestParallelJobsAcrossProjects(t *testing.T) {
	e := setup(t, true)
	e.svc.Close()
	ctx := context.Background()
	svc := newService(t, e.st, e.fake, "replica-p", filepath.Join(t.TempDir(), "jobs"), func(o *Options) { o.Workers, o.RunWait = 20, time.Minute })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		project := fmt.Sprintf("par-%d", i)
		if err := e.st.CreateProject(ctx, project, project); err != nil {
			t.Fatal(err)
		}
		if err := e.st.Bind(ctx, project, e.version); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			j, err := svc.Create(ctx, project, e.version)
			if err == nil {
				_, err = svc.Upload(ctx, project, j.ID, "in.txt", []byte(project), false)
			}
			var st Status
			if err == nil {
				st, err = svc.Run(ctx, project, j.ID, "scripts/copy.py", []string{"in.txt", "out.txt"})
			}
			if err != nil || st.Job.State != store.JobSucceeded {
				t.Errorf("%s: %+v, %v", project, st.Job, err)
			}
		})
	}
	wg.Wait()
}

// Preparation installs requirements.txt with the real pip from a local
// wheel folder, offline, into a layer named by its digest, and a run sees
// it on PYTHONPATH. The commands run on the host through hostExec: they
// are the test's own.
func TestPreparePythonOffline(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("SKIPPING: %s -m pip is not available: %v", py, err)
	}
	ctx := context.Background()
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "tinydep")
	os.MkdirAll(filepath.Join(proj, "tinydep"), 0o755)
	os.WriteFile(filepath.Join(proj, "tinydep", "__init__.py"), []byte("def shout(s):\n    return s.upper()\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "setup.py"), []byte("from setuptools import setup\nsetup(name='tinydep', version='1.0', packages=['tinydep'])\n"), 0o644)
	wheels := filepath.Join(tmp, "wheels")
	cmd := exec.Command(py, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels, proj)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("SKIPPING: building a local wheel failed (setuptools/wheel missing?): %v\n%s", err, out)
	}
	st := openStore(t, filepath.Join(tmp, "data"))
	tree := storetest.Tree{
		"SKILL.md":         "---\nname: shouter\ndescription: shouts\n---\n",
		"requirements.txt": "tinydep==1.0\n",
		"scripts/shout.py": "import sys, tinydep\nopen(sys.argv[2], 'w').write(tinydep.shout(open(sys.argv[1]).read()))\n",
	}
	v, _, err := st.Install(ctx, storetest.Version("shouter", tree))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	fake := newFake(hostExec)
	svc := newService(t, st, fake, "r", filepath.Join(tmp, "jobs"), func(o *Options) { o.Wheels = wheels })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/shout.py"}, TimeoutSeconds: 60, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Prepare(ctx, v.ID)
	if err != nil {
		t.Fatalf("Prepare: %v\n%s", err, p.PrepareLog)
	}
	spec := fake.lastSpec()
	if !slices.Contains(spec.Argv, "--no-index") || !slices.Contains(spec.Argv, "--target") || spec.Network {
		t.Errorf("pip ran as %q (network %v); want --no-index --target, offline", spec.Argv, spec.Network)
	}
	digest, ok := strings.CutPrefix(p.Identity, "sha256:")
	if !ok || !strings.Contains(p.PrepareLog, "tinydep") {
		t.Fatalf("identity %q; log:\n%s", p.Identity, p.PrepareLog)
	}
	if got, err := treeDigest(svc.dir("layers", digest)); err != nil || got != digest {
		t.Fatalf("layer digest %s, %v; want %s", got, err, digest)
	}
	if _, err := os.Stat(svc.dir("layers", digest, "tinydep", "__init__.py")); err != nil {
		t.Fatalf("the layer lacks the installed package: %v", err)
	}
	j, err := svc.Create(ctx, "p", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Upload(ctx, "p", j.ID, "in.txt", []byte("quiet"), false); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, "p", j.ID, "scripts/shout.py", []string{"in.txt", "out.txt"})
	if err != nil || res.Job.State != store.JobSucceeded {
		t.Fatalf("Run = %+v %s, %v", res.Job, res.Stderr, err)
	}
	c, err := svc.ReadFile(ctx, "p", j.ID, "out.txt", 0, 100)
	if err != nil || string(c.Data) != "QUIET" {
		t.Fatalf("output %q, %v", c.Data, err)
	}
	// The run saw the layer where module resolution needs it.
	run := fake.lastSpec()
	if !slices.Contains(run.Env, "PYTHONPATH=/layer") {
		t.Errorf("run env %q lacks PYTHONPATH=/layer", run.Env)
	}
	var targets []string
	for _, m := range run.Mounts {
		targets = append(targets, m.Target)
	}
	slices.Sort(targets)
	if !slices.Equal(targets, []string{"/layer", "/package", "/skill", "/work"}) {
		t.Errorf("mounts %v", targets)
	}
	// Without wheels or network, a requirement cannot be prepared.
	svc2 := newService(t, st, fake, "r2", filepath.Join(tmp, "jobs2"), nil)
	if _, _, err := svc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc2.Prepare(ctx, v.ID); !errors.Is(err, ErrPrepareFailed) {
		t.Errorf("Prepare(no wheels, no network) = %v", err)
	}
}

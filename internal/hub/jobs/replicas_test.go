package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// flaky is the real store with failures injected at the layer of the
// bugs: the database going away under a run's end, a read, a queueing.
type flaky struct {
	*store.DB
	finishFails atomic.Int32 // FinishJob answers unavailable this many times
	getFails    atomic.Bool  // GetJob answers unavailable while set
	queueLost   atomic.Bool  // QueueJob commits, then answers unavailable
	// awayAfterQueue sets getFails once a run is queued: the database
	// goes away while the client waits.
	awayAfterQueue atomic.Bool
	finishCalls    atomic.Int32
}

var errGone = fmt.Errorf("test: %w: the connection was lost", store.ErrUnavailable)

func (f *flaky) FinishJob(ctx context.Context, id, replica string, r store.JobResult, out []store.NewJobFile) (store.Job, error) {
	f.finishCalls.Add(1)
	if f.finishFails.Add(-1) >= 0 {
		return store.Job{}, errGone
	}
	return f.DB.FinishJob(ctx, id, replica, r, out)
}

func (f *flaky) GetJob(ctx context.Context, id string) (store.Job, error) {
	if f.getFails.Load() {
		return store.Job{}, errGone
	}
	return f.DB.GetJob(ctx, id)
}

func (f *flaky) QueueJob(ctx context.Context, id, script string, args []string, by string) (store.Job, error) {
	j, err := f.DB.QueueJob(ctx, id, script, args, by)
	if err == nil && f.awayAfterQueue.Load() {
		f.getFails.Store(true)
	}
	if err == nil && f.queueLost.Load() {
		return store.Job{}, errGone
	}
	return j, err
}

// recorder is an Auditor that keeps what it is given.
type recorder struct {
	mu      sync.Mutex
	entries []store.AuditEntry
}

func (r *recorder) Record(_ context.Context, e store.AuditEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
}

func (r *recorder) find(action, result string) []store.AuditEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []store.AuditEntry
	for _, e := range r.entries {
		if e.Action == action && (result == "" || e.Result == result) {
			out = append(out, e)
		}
	}
	return out
}

// fixture installs the copier skill bound to project p with a prepared
// profile, on the SQLite store in dir.
func fixture(t *testing.T, st *store.DB, timeout int) int64 {
	t.Helper()
	ctx := context.Background()
	v, _, err := st.Install(ctx, storetest.Version("copier", skillTree))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	p, err := st.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: timeout, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetPrepared(ctx, v.ID, p.Revision, identityNone, "ok"); err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// A run whose end cannot be stored (the database is away) keeps its
// result and retries: the script that exited 0 is stored as succeeded,
// with its output, once the database takes it.
func TestRunEndKeptWhileStoreIsAway(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "data"))
	v := fixture(t, st, 30)
	fl := &flaky{DB: st}
	fl.finishFails.Store(3)
	rec := &recorder{}
	svc := newService(t, st, newFake(copyBehaviour), "r1", filepath.Join(t.TempDir(), "jobs"), func(o *Options) { o.Store = fl; o.Audit = rec })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := svc.Create(ctx, "p", v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Upload(ctx, "p", j.ID, "in.txt", []byte("kept"), false); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(WithActor(ctx, "tok1"), "p", j.ID, "scripts/copy.py", []string{"in.txt", "out.txt"})
	if err != nil || res.Job.State != store.JobSucceeded || len(res.Outputs) != 1 {
		t.Fatalf("Run = %+v, %v; want succeeded with its output", res.Job, err)
	}
	if n := fl.finishCalls.Load(); n != 4 {
		t.Errorf("FinishJob called %d times; want 3 refused, then 1", n)
	}
	c, err := svc.ReadFile(ctx, "p", j.ID, "out.txt", 0, 10)
	if err != nil || string(c.Data) != "kept" {
		t.Fatalf("output = %q, %v", c.Data, err)
	}
	// job.run is recorded when queued and when ended, by whom and where.
	waitFor(t, "the end's audit entry", func() bool { return len(rec.find("job.run", "succeeded")) == 1 })
	for _, e := range append(rec.find("job.run", "queued"), rec.find("job.run", "succeeded")...) {
		if e.Actor != "tok1" || e.Replica != "r1" || e.ObjectID != "p/"+j.ID {
			t.Errorf("audit entry %+v; want actor tok1, replica r1, object p/%s", e, j.ID)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client waiting on Run while the database is away is told the job's
// last state, marked stale, never an error inviting a second run; and a
// queueing whose answer was lost is found queued and waited for.
func TestRunTellsTheTruthDuringAnOutage(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "data"))
	v := fixture(t, st, 30)
	fl := &flaky{DB: st}
	release := make(chan struct{})
	fake := newFake(func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return sandbox.Result{Reason: sandbox.ReasonExited}, nil
	})
	svc := newService(t, st, fake, "r1", filepath.Join(t.TempDir(), "jobs"), func(o *Options) { o.Store = fl; o.RunWait = 300 * time.Millisecond })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := svc.Create(ctx, "p", v)
	if err != nil {
		t.Fatal(err)
	}
	fl.awayAfterQueue.Store(true)
	res, err := svc.Run(ctx, "p", j.ID, "scripts/copy.py", nil)
	if err != nil || !res.Stale || res.Note == "" || (res.Job.State != store.JobQueued && res.Job.State != store.JobRunning) {
		t.Fatalf("Run during an outage = %+v (stale %v), %v; want the last state known, marked stale", res.Job, res.Stale, err)
	}
	fl.awayAfterQueue.Store(false)
	fl.getFails.Store(false)
	close(release)
	waitFor(t, "the run ends", func() bool { j, _ := st.GetJob(ctx, j.ID); return j.State == store.JobSucceeded })

	// The queueing committed, but its answer was lost.
	k, err := svc.Create(ctx, "p", v)
	if err != nil {
		t.Fatal(err)
	}
	fl.queueLost.Store(true)
	svc.opts.RunWait = 10 * time.Second
	res, err = svc.Run(ctx, "p", k.ID, "scripts/copy.py", nil)
	if err != nil || res.Job.State != store.JobSucceeded || res.Stale {
		t.Fatalf("Run whose queueing answer was lost = %+v, %v; want it waited for and succeeded", res.Job, err)
	}
	if n := fake.runs[SandboxName(k.ID)]; n != 1 {
		t.Errorf("the job ran %d times", n)
	}
}

// A replica whose lease lapses (it died, or its pod was replaced by one
// with another id) has its jobs settled by another replica: the locked
// one at once, the running one once its timeout and a lease have passed,
// within a bounded time; deleting the job then works.
func TestLapsedReplicaJobsAreSettled(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "data"))
	v := fixture(t, st, 1)
	// The dead replica: it claimed two jobs and stopped heartbeating.
	if _, err := st.Heartbeat(ctx, "dead", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		j, err := st.CreateJob(ctx, "p", v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.ClaimJob(ctx, "dead"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if _, err := st.LockJob(ctx, ids[1], "dead", "the kill was not confirmed"); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	start := time.Now()
	svc := newService(t, st, newFake(copyBehaviour), "alive", filepath.Join(t.TempDir(), "jobs"), func(o *Options) {
		o.Lease = 200 * time.Millisecond
		o.Audit = rec
	})
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both jobs settle", func() bool {
		a, _ := st.GetJob(ctx, ids[0])
		b, _ := st.GetJob(ctx, ids[1])
		return a.State == store.JobFailed && b.State == store.JobStopped
	})
	took := time.Since(start)
	t.Logf("settled in %v (lease 200 ms, job timeout 1 s)", took)
	// Bound: three leases, plus the job's timeout, plus slack for a
	// loaded machine.
	if took > 1*time.Second+3*200*time.Millisecond+10*time.Second {
		t.Errorf("settling took %v", took)
	}
	if got := rec.find("job.settle", ""); len(got) != 2 || got[0].Replica != "alive" {
		t.Errorf("audit of the settlements: %+v", got)
	}
	for _, id := range ids {
		if err := svc.Delete(ctx, "p", id); err != nil {
			t.Errorf("Delete(%s) after the settlement = %v", id, err)
		}
	}
}

// A job settled by force elsewhere while this replica runs it has its run
// cancelled through the job feed; the replica cannot store an end over
// the settlement.
func TestSettledElsewhereStopsTheRun(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	st := openStore(t, dir)
	v := fixture(t, st, 30)
	started := make(chan struct{}, 1)
	fake := newFake(func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1, Signal: "KILL"}, nil
	})
	svc := newService(t, st, fake, "runner", filepath.Join(t.TempDir(), "jobs"), func(o *Options) { o.RunWait = time.Millisecond })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := svc.Create(ctx, "p", v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, "p", j.ID, "scripts/copy.py", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	// Another process (the CLI) settles it: a store of its own.
	other := openStore(t, dir)
	if _, err := other.SettleJob(ctx, j.ID, store.Settlement{By: "cli", Reason: "stuck"}); !errors.Is(err, store.ErrLiveReplica) {
		t.Fatalf("SettleJob(live, no force) = %v", err)
	}
	got, err := other.SettleJob(ctx, j.ID, store.Settlement{By: "cli", Reason: "stuck", Force: true})
	if err != nil || got.State != store.JobStopped {
		t.Fatalf("SettleJob(force) = %+v, %v", got, err)
	}
	waitFor(t, "the sandbox is cancelled", func() bool {
		fake.mu.Lock()
		defer fake.mu.Unlock()
		return !fake.running[SandboxName(j.ID)]
	})
	after, _ := st.GetJob(ctx, j.ID)
	if after.State != store.JobStopped || !strings.Contains(after.Reason, "cli") {
		t.Errorf("the job after its run ended: %+v", after)
	}
}

// A preparation runs once at a time across replicas, its state is the
// same on every replica, and a run on another replica lays the layer out
// from the store.
func TestPreparationVisibleEverywhere(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	st := openStore(t, dir)
	v := fixture(t, st, 30)
	release := make(chan struct{})
	fake := newFake(func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
		if strings.HasPrefix(spec.Name, prepPrefix) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return copyBehaviour(ctx, spec, host)
	})
	a := newService(t, st, fake, "a", filepath.Join(t.TempDir(), "jobs-a"), nil)
	b := newService(t, openStore(t, dir), fake, "b", filepath.Join(t.TempDir(), "jobs-b"), nil)
	for _, s := range []*Service{a, b} {
		if _, _, err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p, err := a.StartPrepare(ctx, v)
	if err != nil || p.State != PrepRunning || p.Replica != "a" {
		t.Fatalf("StartPrepare = %+v, %v", p, err)
	}
	if _, err := b.StartPrepare(ctx, v); !errors.Is(err, store.ErrPreparing) {
		t.Errorf("a second preparation on another replica = %v; want ErrPreparing", err)
	}
	if got, err := b.Preparation(ctx, v); err != nil || got.State != PrepRunning || got.Replica != "a" {
		t.Errorf("the other replica sees %+v, %v", got, err)
	}
	close(release)
	waitFor(t, "the preparation ends", func() bool { got, _ := b.Preparation(ctx, v); return got.State == PrepPrepared })
}

// failingReader hands out n bytes, then fails, as a client cut off does.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("connection reset by peer")
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// An upload cut off mid-way is marked incomplete and the job refuses to
// run on it until it is uploaded again, whole.
func TestUploadCutOffIsIncomplete(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	j := e.job("")
	_, err := e.svc.UploadStream(ctx, "p", j.ID, "big.bin", &failingReader{n: UploadPiece + 1000})
	var pe *PartialUploadError
	if !errors.As(err, &pe) || pe.Stored != UploadPiece {
		t.Fatalf("UploadStream(cut off) = %v; want a partial upload of %d bytes", err, UploadPiece)
	}
	st, _ := e.svc.Get(ctx, "p", j.ID)
	if len(st.Inputs) != 1 || !st.Inputs[0].Incomplete {
		t.Fatalf("inputs = %+v; want big.bin incomplete", st.Inputs)
	}
	if _, err := e.svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"big.bin", "out"}); !errors.Is(err, store.ErrIncompleteInput) {
		t.Fatalf("Run(cut-off input) = %v; want ErrIncompleteInput", err)
	}
	whole := bytes.Repeat([]byte("y"), 2*UploadPiece+5)
	f, err := e.svc.UploadStream(ctx, "p", j.ID, "big.bin", bytes.NewReader(whole))
	if err != nil || f.Incomplete || f.Size != int64(len(whole)) {
		t.Fatalf("UploadStream(whole) = %+v, %v", f, err)
	}
	if res := e.run(j, "big.bin", "out"); res.Job.State != store.JobSucceeded {
		t.Fatalf("Run = %+v", res.Job)
	}
	// An empty file, and one of exactly one piece, are whole.
	k := e.job("")
	for _, n := range []int{0, UploadPiece} {
		f, err := e.svc.UploadStream(ctx, "p", k.ID, fmt.Sprintf("f%d", n), io.LimitReader(&failingReader{n: n}, int64(n)))
		if err != nil || f.Incomplete || f.Size != int64(n) {
			t.Errorf("UploadStream(%d bytes) = %+v, %v", n, f, err)
		}
	}
}

// No job of a paused project is created, uploaded to or run.
func TestPausedProject(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	j := e.job("x")
	if _, err := e.st.PauseProject(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Create(ctx, "p", e.version); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("Create(paused) = %v", err)
	}
	if _, err := e.svc.Upload(ctx, "p", j.ID, "a", []byte("x"), false); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("Upload(paused) = %v", err)
	}
	if _, err := e.svc.Run(ctx, "p", j.ID, "scripts/copy.py", nil); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("Run(paused) = %v", err)
	}
}

// Preparing the same version and profile on two replicas gives the same
// identity (no compiled caches, fixed times and seeds), and a third
// replica runs a job on the layer laid out from the store. pip runs for
// real on the host, offline from a local wheel (hostExec: the test's own
// commands).
func TestPreparedLayerReproducibleAndShared(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s -m pip is not available: %v", py, err)
		}
		t.Skipf("SKIPPED LOUDLY: %s -m pip is not available: %v", py, err)
	}
	ctx := context.Background()
	tmp := t.TempDir()
	wheels := buildWheel(t, tmp)
	dir := filepath.Join(tmp, "data")
	st := openStore(t, dir)
	v, _, err := st.Install(ctx, storetest.Version("shouter", storetest.Tree{
		"SKILL.md":         "---\nname: shouter\ndescription: shouts\n---\n",
		"requirements.txt": "tinydep==1.0\n",
		"scripts/shout.py": "import sys, tinydep\nopen(sys.argv[2], 'w').write(tinydep.shout(open(sys.argv[1]).read()))\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	svcs := map[string]*Service{}
	for _, r := range []string{"a", "b", "c"} {
		svcs[r] = newService(t, openStore(t, dir), newFake(hostExec), r, filepath.Join(tmp, "jobs-"+r), func(o *Options) { o.Wheels = wheels })
		if _, _, err := svcs[r].Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svcs["a"].SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/shout.py"}, TimeoutSeconds: 60, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range []string{"a", "b"} {
		p, err := svcs[r].Prepare(ctx, v.ID)
		if err != nil {
			t.Fatalf("Prepare on %s: %v\n%s", r, err, p.PrepareLog)
		}
		ids = append(ids, p.Identity)
	}
	if ids[0] != ids[1] || !strings.HasPrefix(ids[0], "sha256:") {
		t.Fatalf("identities %v: the same version and profile must prepare alike on every replica", ids)
	}
	digest := strings.TrimPrefix(ids[0], "sha256:")
	if err := filepathWalkNoPyc(svcs["a"].dir("layers", digest)); err != nil {
		t.Error(err)
	}
	// c never prepared: it lays the layer out from the store. (a and b
	// stop, so that c runs the job.)
	svcs["a"].Close()
	svcs["b"].Close()
	c := svcs["c"]
	if _, err := os.Stat(c.dir("layers", digest)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("c has the layer before its first run: %v", err)
	}
	j, err := c.Create(ctx, "p", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upload(ctx, "p", j.ID, "in.txt", []byte("quiet"), false); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx, "p", j.ID, "scripts/shout.py", []string{"in.txt", "out.txt"})
	if err != nil || res.Job.State != store.JobSucceeded {
		t.Fatalf("Run on c = %+v %s, %v", res.Job, res.Stderr, err)
	}
	if got, err := treeDigest(c.dir("layers", digest)); err != nil || got != digest {
		t.Errorf("c's layer digest %s, %v; want %s", got, err, digest)
	}
}

// buildWheel builds the tinydep wheel into tmp/wheels.
func buildWheel(t *testing.T, tmp string) string {
	t.Helper()
	proj := filepath.Join(tmp, "tinydep")
	os.MkdirAll(filepath.Join(proj, "tinydep"), 0o755)
	os.WriteFile(filepath.Join(proj, "tinydep", "__init__.py"), []byte("def shout(s):\n    return s.upper()\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "setup.py"), []byte("from setuptools import setup\nsetup(name='tinydep', version='1.0', packages=['tinydep'])\n"), 0o644)
	wheels := filepath.Join(tmp, "wheels")
	cmd := exec.Command("/usr/bin/python3", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels, proj)
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("building a local wheel failed: %v\n%s", err, out)
		}
		t.Skipf("SKIPPED LOUDLY: building a local wheel failed (setuptools/wheel missing?): %v\n%s", err, out)
	}
	return wheels
}

func filepathWalkNoPyc(dir string) error {
	return filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".pyc") || fi.Name() == "__pycache__" {
			return fmt.Errorf("the layer keeps a compiled cache: %s", p)
		}
		if !fi.ModTime().Equal(store.FixedTime) && fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("%s has time %v, not the fixed one", p, fi.ModTime())
		}
		return nil
	})
}

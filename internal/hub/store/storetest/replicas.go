package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// replicaTests are the suite's tests of leases, settlements, the job feed,
// paused projects, cut-off uploads, preparations and layers (issue 27).
var replicaTests = []struct {
	name string
	fn   func(t *testing.T, open Opener)
}{
	{"Leases", testLeases},
	{"SettleOrphans", testSettleOrphans},
	{"SettleJob", testSettleJob},
	{"JobFeed", testJobFeed},
	{"CatalogFeed", testCatalogFeed},
	{"PausedProjectJobs", testPausedJobs},
	{"IncompleteInput", testIncompleteInput},
	{"PreparationClaims", testPreparationClaims},
	{"Layers", testLayers},
}

// waitFor polls cond, which reads the store, until it holds: a state the
// test waits for (a lease to lapse in the database's time), never a fixed
// sleep.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaseOf(t *testing.T, s *store.DB, replica string) (store.Lease, bool) {
	t.Helper()
	ls, _, err := s.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Replica == replica {
			return l, true
		}
	}
	return store.Lease{}, false
}

func testLeases(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	before, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Heartbeat(ctx, "r1", time.Hour)
	if err != nil || now.Before(before) {
		t.Fatalf("Heartbeat = %v, %v (database time before: %v)", now, err, before)
	}
	l, ok := leaseOf(t, s, "r1")
	if !ok || l.Lapsed || l.Until.Sub(now) != time.Hour || l.HeartbeatAt != now {
		t.Fatalf("lease = %+v (%v); want current until an hour after %v", l, ok, now)
	}
	if _, err := s.Heartbeat(ctx, "r2", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a 1 ms lease lapses", func() bool { l, _ := leaseOf(t, s, "r2"); return l.Lapsed })
	for _, bad := range []time.Duration{0, -time.Second, 2 * time.Hour} {
		if _, err := s.Heartbeat(ctx, "r3", bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Heartbeat(%v) = %v; want ErrInvalid", bad, err)
		}
	}
	if _, err := s.Heartbeat(ctx, "bad\nid", time.Minute); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Heartbeat(bad id) = %v", err)
	}
}

// running makes a job of project that replica runs.
func (f jobFixture) running(t *testing.T, project, replica string) store.Job {
	t.Helper()
	j := f.create(t, project)
	if _, err := f.s.QueueJob(context.Background(), j.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	got := f.claim(t, replica)
	if got.ID != j.ID {
		t.Fatalf("claimed %s, want %s", got.ID, j.ID)
	}
	return got
}

func testSettleOrphans(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	// The fixture's profile: a 30 s timeout. A 1 s one lets the test see
	// a run past its timeout.
	p, err := s.SetProfile(ctx, f.version, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 1, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPrepared(ctx, f.version, p.Revision, "none", "ok"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Heartbeat(ctx, "dead", time.Hour); err != nil {
		t.Fatal(err)
	}
	run := f.running(t, "p", "dead")
	locked := f.running(t, "p", "dead")
	if _, err := s.LockJob(ctx, locked.ID, "dead", "the kill was not confirmed"); err != nil {
		t.Fatal(err)
	}
	// A current lease: nothing is settled.
	got, err := s.SettleOrphans(ctx, "dead", "alive", 0)
	if err != nil || len(got.Jobs) != 0 || got.Waiting != 0 {
		t.Fatalf("SettleOrphans(current lease) = %+v, %v", got, err)
	}
	// The lease lapses: the locked job is settled at once; the running
	// one once its timeout and the grace have passed since it started.
	if _, err := s.Heartbeat(ctx, "dead", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease lapses", func() bool { l, _ := leaseOf(t, s, "dead"); return l.Lapsed })
	got, err = s.SettleOrphans(ctx, "dead", "alive", time.Hour)
	if err != nil || len(got.Jobs) != 1 || got.Jobs[0].ID != locked.ID || got.Jobs[0].State != store.JobStopped || got.Waiting != 1 {
		t.Fatalf("SettleOrphans(grace an hour) = %+v, %v; want the locked job stopped, the running one waiting", got, err)
	}
	if !strings.Contains(got.Jobs[0].Reason, "dead") || !strings.Contains(got.Jobs[0].Reason, "alive") {
		t.Errorf("settled reason %q names neither replica", got.Jobs[0].Reason)
	}
	var settled store.Job
	waitFor(t, "the running job's timeout passes", func() bool {
		got, err := s.SettleOrphans(ctx, "dead", "alive", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Jobs) == 1 {
			settled = got.Jobs[0]
		}
		return len(got.Jobs) == 1
	})
	if settled.ID != run.ID || settled.State != store.JobFailed || !strings.Contains(settled.Reason, "lease") {
		t.Fatalf("settled %+v; want %s failed for its lapsed lease", settled, run.ID)
	}
	// Its replica cannot store an end over the settlement, and the job no
	// longer holds its project.
	if _, err := s.FinishJob(ctx, run.ID, "dead", store.JobResult{State: store.JobSucceeded}, nil); !errors.Is(err, store.ErrJobState) {
		t.Errorf("FinishJob after the settlement = %v; want ErrJobState", err)
	}
	if err := s.DeleteJob(ctx, run.ID); err != nil {
		t.Errorf("DeleteJob(settled) = %v", err)
	}
	// Nothing is left of the replica: it is forgotten.
	if _, ok := leaseOf(t, s, "dead"); ok {
		t.Error("a replica with nothing left is still listed")
	}
	// A replica that never held a lease (jobs claimed before leases) is
	// lapsed.
	old := f.running(t, "p", "legacy")
	if l, ok := leaseOf(t, s, "legacy"); !ok || !l.Lapsed || l.ActiveJobs != 1 {
		t.Fatalf("legacy lease = %+v, %v", l, ok)
	}
	waitFor(t, "the legacy job settles", func() bool {
		got, err := s.SettleOrphans(ctx, "legacy", "alive", 0)
		return err == nil && len(got.Jobs) == 1 && got.Jobs[0].ID == old.ID
	})
}

func testSettleJob(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	if _, err := s.Heartbeat(ctx, "alive", time.Hour); err != nil {
		t.Fatal(err)
	}
	j := f.running(t, "p", "alive")
	_, err := s.SettleJob(ctx, j.ID, store.Settlement{By: "admin-token", Reason: "stuck"})
	var live *store.LiveReplicaError
	if !errors.As(err, &live) || live.Replica != "alive" || !errors.Is(err, store.ErrLiveReplica) {
		t.Fatalf("SettleJob(live replica, no force) = %v", err)
	}
	got, err := s.SettleJob(ctx, j.ID, store.Settlement{By: "admin-token", Reason: "stuck", Force: true})
	if err != nil || got.State != store.JobStopped || !strings.Contains(got.Reason, "admin-token") || !strings.Contains(got.Reason, "stuck") {
		t.Fatalf("SettleJob(force) = %+v, %v", got, err)
	}
	if err := s.DeleteProject(ctx, "p"); err != nil {
		t.Errorf("DeleteProject after the settlement = %v", err)
	}
	if _, err := s.SettleJob(ctx, "j-00000000000000000000", store.Settlement{By: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SettleJob(missing) = %v", err)
	}
}

func nextJob(t *testing.T, ch <-chan store.JobChange, want func(store.JobChange) bool) store.JobChange {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("the job feed closed")
			}
			if want(c) {
				return c
			}
		case <-deadline:
			t.Fatal("the job feed announced nothing wanted within 30 s")
		}
	}
}

func testJobFeed(t *testing.T, open Opener) {
	for _, poll := range []time.Duration{time.Hour, 50 * time.Millisecond} {
		t.Run(map[bool]string{true: "notifications", false: "fallback"}[poll == time.Hour], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := mustOpen(t, open, store.Options{ChangePoll: poll})
			// b is another process's store: on the fallback run it
			// announces nothing to a (the poll does the work).
			b := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
			project := "feed-" + map[bool]string{true: "n", false: "f"}[poll == time.Hour]
			f := newJobFixture(t, b, project)
			feed := a.JobChanges(ctx)
			j := f.create(t, project)
			if _, err := b.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
				t.Fatal(err)
			}
			nextJob(t, feed, func(c store.JobChange) bool {
				return c.Kind == store.JobChanged && c.JobID == j.ID && c.State == store.JobQueued && c.ProjectID == project
			})
			if poll != time.Hour {
				nextJob(t, feed, func(c store.JobChange) bool { return c.Kind == store.JobsWaiting })
			}
			f.claim(t, "r")
			nextJob(t, feed, func(c store.JobChange) bool {
				return c.JobID == j.ID && c.State == store.JobRunning && c.ClaimedBy == "r"
			})
			if _, err := b.StopJob(ctx, j.ID, "asked"); err != nil {
				t.Fatal(err)
			}
			nextJob(t, feed, func(c store.JobChange) bool { return c.JobID == j.ID && c.StopRequested })
			if _, err := b.FinishJob(ctx, j.ID, "r", store.JobResult{State: store.JobStopped}, nil); err != nil {
				t.Fatal(err)
			}
			nextJob(t, feed, func(c store.JobChange) bool { return c.JobID == j.ID && c.State == store.JobStopped })
			if poll == time.Hour {
				// Deletions and profile changes come by notification.
				if err := b.DeleteJob(ctx, j.ID); err != nil {
					t.Fatal(err)
				}
				nextJob(t, feed, func(c store.JobChange) bool { return c.Kind == store.JobGone && c.JobID == j.ID })
			}
			if _, err := b.SetProfile(ctx, f.version, store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"scripts/other.sh"}, TimeoutSeconds: 5, Enabled: true}); err != nil {
				t.Fatal(err)
			}
			nextJob(t, feed, func(c store.JobChange) bool {
				return c.Kind == store.ProfileChanged && c.VersionID == f.version && c.Revision == f.profile.Revision+1
			})
		})
	}
}

func testCatalogFeed(t *testing.T, open Opener) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
	b := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
	if err := b.PutIndexSnapshot(ctx, []byte(`{"first":1}`), "test"); err != nil {
		t.Fatal(err)
	}
	feed := a.CatalogChanges(ctx)
	if err := b.PutIndexSnapshot(ctx, []byte(`{"second":2}`), "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-feed:
	case <-time.After(30 * time.Second):
		t.Fatal("a snapshot stored through another store was not announced")
	}
	// The fallback sees another process's snapshot too.
	c := mustOpen(t, open, store.Options{ChangePoll: 50 * time.Millisecond})
	slow := c.CatalogChanges(ctx)
	if err := b.PutIndexSnapshot(ctx, []byte(`{"third":3}`), "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow:
	case <-time.After(30 * time.Second):
		t.Fatal("the fallback did not see a new snapshot")
	}
}

func testPausedJobs(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	queued := f.create(t, "p")
	if _, err := s.PutJobInput(ctx, queued.ID, "in.txt", []byte("x"), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueJob(ctx, queued.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	open2 := f.create(t, "p")
	if _, err := s.PauseProject(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateJob(ctx, "p", f.version); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("CreateJob(paused) = %v; want ErrProjectPaused", err)
	}
	if _, err := s.PutJobInput(ctx, open2.ID, "in.txt", []byte("x"), store.InputWrite{}); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("PutJobInput(paused) = %v; want ErrProjectPaused", err)
	}
	if _, err := s.QueueJob(ctx, open2.ID, "scripts/copy.py", nil, "tester"); !errors.Is(err, store.ErrProjectPaused) {
		t.Errorf("QueueJob(paused) = %v; want ErrProjectPaused", err)
	}
	if j, ok, err := s.ClaimJob(ctx, "r"); ok || err != nil {
		t.Fatalf("ClaimJob(paused project) = %+v, %v, %v; want nothing", j, ok, err)
	}
	if _, err := s.ResumeProject(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if j := f.claim(t, "r"); j.ID != queued.ID {
		t.Fatalf("after the resume, claimed %s; want %s", j.ID, queued.ID)
	}
}

func testIncompleteInput(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	j := f.create(t, "p")
	if fi, err := s.PutJobInput(ctx, j.ID, "big.bin", []byte("first piece"), store.InputWrite{More: true}); err != nil || !fi.Incomplete {
		t.Fatalf("PutJobInput(more) = %+v, %v", fi, err)
	}
	files, err := s.JobFiles(ctx, j.ID)
	if err != nil || len(files) != 1 || !files[0].Incomplete {
		t.Fatalf("JobFiles = %+v, %v; want big.bin incomplete", files, err)
	}
	_, err = s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester")
	var ie *store.IncompleteInputError
	if !errors.As(err, &ie) || !errors.Is(err, store.ErrIncompleteInput) || len(ie.Paths) != 1 || ie.Paths[0] != "big.bin" {
		t.Fatalf("QueueJob(cut-off input) = %v", err)
	}
	// The upload goes on and ends: whole again.
	if fi, err := s.PutJobInput(ctx, j.ID, "big.bin", []byte(", last piece"), store.InputWrite{Append: true}); err != nil || fi.Incomplete || fi.Size != 23 {
		t.Fatalf("PutJobInput(last piece) = %+v, %v", fi, err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatalf("QueueJob(whole input) = %v", err)
	}
	// A new upload cut off, then sent again whole, replaces it.
	k := f.create(t, "p")
	s.PutJobInput(ctx, k.ID, "a.txt", []byte("par"), store.InputWrite{More: true})
	if fi, err := s.PutJobInput(ctx, k.ID, "a.txt", []byte("whole"), store.InputWrite{}); err != nil || fi.Incomplete || fi.Size != 5 {
		t.Fatalf("PutJobInput(again whole) = %+v, %v", fi, err)
	}
	if got, err := s.QueueJob(ctx, k.ID, "scripts/copy.py", nil, "who"); err != nil || got.RunBy != "who" {
		t.Fatalf("QueueJob = %+v, %v", got, err)
	}
}

func testPreparationClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	if _, err := s.Heartbeat(ctx, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	p, err := s.BeginPreparation(ctx, f.version, "a")
	if err != nil || p.PreparingBy != "a" || p.PreparingSince.IsZero() {
		t.Fatalf("BeginPreparation = %+v, %v", p, err)
	}
	for _, r := range []string{"a", "b"} {
		if _, err := s.BeginPreparation(ctx, f.version, r); !errors.Is(err, store.ErrPreparing) {
			t.Errorf("BeginPreparation(%s, while a prepares) = %v; want ErrPreparing", r, err)
		}
	}
	got, err := s.EndPreparation(ctx, f.version, p.Revision, store.PreparationEnd{Replica: "a", Log: "pip failed", Error: "exit 1"})
	if err != nil || got.PreparingBy != "" || got.Prepared() || got.PrepareError != "exit 1" || got.PrepareLog != "pip failed" {
		t.Fatalf("EndPreparation(failed) = %+v, %v", got, err)
	}
	// A profile changed under a preparation: refused, the claim released.
	p, err = s.BeginPreparation(ctx, f.version, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetProfile(ctx, f.version, store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"scripts/other.sh"}, TimeoutSeconds: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndPreparation(ctx, f.version, p.Revision, store.PreparationEnd{Replica: "a", Identity: "none"}); !errors.Is(err, store.ErrProfileChanged) {
		t.Errorf("EndPreparation(changed profile) = %v", err)
	}
	if cur, _ := s.GetProfile(ctx, f.version); cur.PreparingBy != "" || cur.Prepared() {
		t.Errorf("after a refused end: %+v", cur)
	}
	// A claim of a replica whose lease lapsed is taken over; a
	// restarted replica releases its own.
	if _, err := s.Heartbeat(ctx, "gone", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginPreparation(ctx, f.version, "gone"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease lapses", func() bool { l, _ := leaseOf(t, s, "gone"); return l.Lapsed })
	if p, err := s.BeginPreparation(ctx, f.version, "b"); err != nil || p.PreparingBy != "b" {
		t.Fatalf("BeginPreparation(over a lapsed claim) = %+v, %v", p, err)
	}
	if vs, err := s.ReleasePreparations(ctx, "b", "b restarted"); err != nil || len(vs) != 1 || vs[0] != f.version {
		t.Fatalf("ReleasePreparations = %v, %v", vs, err)
	}
	if cur, _ := s.GetProfile(ctx, f.version); cur.PreparingBy != "" || cur.PrepareError != "b restarted" {
		t.Errorf("after the release: %+v", cur)
	}
}

// memLayer is a layer of files held in memory.
func memLayer(files map[string]string, dirs ...string) *store.Layer {
	var entries []store.LayerEntry
	for _, d := range dirs {
		entries = append(entries, store.LayerEntry{Path: d, Kind: store.LayerDir})
	}
	for p, content := range files {
		data := []byte(content)
		e := store.LayerEntry{Path: p, Kind: store.LayerFile, Size: int64(len(data)), Digest: sha256.Sum256(data),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
		if strings.HasPrefix(p, "link") {
			e = store.LayerEntry{Path: p, Kind: store.LayerLink, Target: content}
		}
		entries = append(entries, e)
	}
	sortLayer(entries)
	return &store.Layer{Digest: store.LayerDigest(entries), Entries: entries}
}

func sortLayer(es []store.LayerEntry) {
	for i := 1; i < len(es); i++ {
		for k := i; k > 0 && store.WalkLess(es[k-1].Path, es[k].Path) > 0; k-- {
			es[k-1], es[k] = es[k], es[k-1]
		}
	}
}

func testLayers(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	// A layer shares a blob with the version (scripts/copy.py's content).
	shared := strings.TrimPrefix(jobSkill["scripts/copy.py"], "x:")
	l := memLayer(map[string]string{"pkg/__init__.py": "print('hi')\n", "pkg/shared.py": shared, "pkg-data/x": "x", "link-py": "pkg/__init__.py"}, "pkg", "pkg-data")
	var order []string
	for _, e := range l.Entries {
		order = append(order, e.Path)
	}
	if got := strings.Join(order, " "); got != "link-py pkg pkg/__init__.py pkg/shared.py pkg-data pkg-data/x" {
		t.Fatalf("walk order: %s", got)
	}
	p, err := s.BeginPreparation(ctx, f.version, "a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EndPreparation(ctx, f.version, p.Revision, store.PreparationEnd{Replica: "a", Identity: "sha256:" + l.Digest, Log: "ok", Layer: l})
	if err != nil || got.Identity != "sha256:"+l.Digest {
		t.Fatalf("EndPreparation(layer) = %+v, %v", got, err)
	}
	// Another store (replica) lays it out.
	b := mustOpen(t, open, store.Options{})
	dir := t.TempDir()
	out, err := b.LayOutLayer(ctx, l.Digest, dir)
	if err != nil || out != filepath.Join(dir, l.Digest) {
		t.Fatalf("LayOutLayer = %q, %v", out, err)
	}
	t.Cleanup(func() { makeWritable(out) })
	if data, err := os.ReadFile(filepath.Join(out, "pkg", "__init__.py")); err != nil || string(data) != "print('hi')\n" {
		t.Fatalf("laid-out file = %q, %v", data, err)
	}
	if target, err := os.Readlink(filepath.Join(out, "link-py")); err != nil || target != "pkg/__init__.py" {
		t.Fatalf("laid-out link = %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "pkg", "shared.py")); err != nil || fi.Mode().Perm() != 0o444 || !fi.ModTime().Equal(store.FixedTime) {
		t.Fatalf("laid-out file: %v, %v; want 0444 at the fixed time", fi, err)
	}
	entries, err := b.LayerEntries(ctx, l.Digest)
	if err != nil || store.LayerDigest(entries) != l.Digest {
		t.Fatalf("LayerEntries: digest %s, %v; want %s", store.LayerDigest(entries), err, l.Digest)
	}
	// A layer whose entries do not give its digest is refused.
	bad := memLayer(map[string]string{"a": "1"})
	bad.Digest = l.Digest
	if _, err := s.EndPreparation(ctx, f.version, p.Revision, store.PreparationEnd{Identity: "sha256:" + l.Digest, Layer: bad}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("EndPreparation(wrong digest) = %v; want ErrInvalid", err)
	}
	// Unbound and uninstalled, the version's shared blob goes with the
	// layer; nothing is left dangling.
	before := stats(t, s)
	if _, err := s.SetProfile(ctx, f.version, store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"scripts/other.sh"}, TimeoutSeconds: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LayerEntries(ctx, l.Digest); !errors.Is(err, store.ErrLayerMissing) {
		t.Errorf("a layer no profile names is kept: %v", err)
	}
	after := stats(t, s)
	if after.Blobs != before.Blobs-2 {
		t.Errorf("blobs %d → %d; the layer's own two should go, the shared one stay", before.Blobs, after.Blobs)
	}
	if err := s.Unbind(ctx, "p", f.version); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVersion(ctx, f.version); err != nil {
		t.Fatalf("DeleteVersion = %v", err)
	}
	if st := stats(t, s); st.Blobs != 0 {
		t.Errorf("%d blobs left", st.Blobs)
	}
	if _, err := s.LayOutLayer(ctx, l.Digest, t.TempDir()); !errors.Is(err, store.ErrLayerMissing) {
		t.Errorf("LayOutLayer(dropped) = %v", err)
	}
}

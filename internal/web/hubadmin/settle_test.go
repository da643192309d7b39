package hubadmin_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// strays are jobs that replicas other than the env's own run, made
// through the store before the env's job service starts: one on a
// replica whose lease lapsed (as after a pod was replaced), one on a
// replica that holds its lease, and one the lapsed replica left locked.
type strays struct {
	project, skill             string
	lapsed, live, locked       string // job ids
	lapsedReplica, liveReplica string
}

// newStrays names the stray jobs' project and replicas, long as a
// cluster's are.
func newStrays() *strays {
	return &strays{
		project:       "data-platform-nightly-exports-eu-central",
		lapsedReplica: "skills-hub-5f8d2c7b9-x4kqz-eu-central-1b",
		liveReplica:   "skills-hub-5f8d2c7b9-m2jtw-eu-central-1a",
	}
}

// seed makes the stray jobs in h; it is an envOptions.seed.
func (s *strays) seed(t testing.TB) func(h *hub.Hub, st *store.DB) {
	return func(h *hub.Hub, st *store.DB) {
		t.Helper()
		ctx := context.Background()
		zip := zipOf(t, map[string]string{
			"SKILL.md":          "---\nname: nightly-export\ndescription: Exports the day's tables to CSV files for the data platform.\n---\n\n# Nightly export\n\nRun `scripts/export.py`.\n",
			"scripts/export.py": "#!/usr/bin/env python3\nimport time\ntime.sleep(3600)\n",
		})
		inst, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(zip), Size: int64(len(zip)), FileName: "nightly-export.zip"})
		if err != nil {
			t.Fatal(err)
		}
		s.skill = inst.Version.ID
		v, err := h.Resolve(ctx, s.skill)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateProject(ctx, s.project, "Data platform: nightly exports (EU central)"); err != nil {
			t.Fatal(err)
		}
		if err := st.Bind(ctx, s.project, v.StoreID()); err != nil {
			t.Fatal(err)
		}
		p, err := st.SetProfile(ctx, v.StoreID(), store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/export.py"}, TimeoutSeconds: 300, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetPrepared(ctx, v.StoreID(), p.Revision, "none", ""); err != nil {
			t.Fatal(err)
		}
		run := func(replica string) string {
			j, err := st.CreateJob(ctx, s.project, v.StoreID())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PutJobInput(ctx, j.ID, "in/tables.txt", []byte("orders\ncustomers\n"), store.InputWrite{}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.QueueJob(ctx, j.ID, "scripts/export.py", []string{"in/tables.txt"}, "token tester"); err != nil {
				t.Fatal(err)
			}
			got, ok, err := st.ClaimJob(ctx, replica)
			if err != nil || !ok || got.ID != j.ID {
				t.Fatalf("claiming %s for %s: %v, %v, %v", j.ID, replica, got.ID, ok, err)
			}
			return j.ID
		}
		if _, err := st.Heartbeat(ctx, s.liveReplica, time.Hour); err != nil {
			t.Fatal(err)
		}
		s.live = run(s.liveReplica)
		if _, err := st.Heartbeat(ctx, s.lapsedReplica, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		s.lapsed = run(s.lapsedReplica)
		s.locked = run(s.lapsedReplica)
		if _, err := st.LockJob(ctx, s.locked, s.lapsedReplica, "its sandbox could not be confirmed gone: the cgroup still lists a process"); err != nil {
			t.Fatal(err)
		}
		// A 1 ms lease: wait, by the database's clock, for it to lapse.
		for deadline := time.Now().Add(30 * time.Second); ; {
			leases, _, err := st.Leases(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lapsed := false
			for _, l := range leases {
				lapsed = lapsed || l.Replica == s.lapsedReplica && l.Lapsed
			}
			if lapsed {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the lease of %s did not lapse: %+v", s.lapsedReplica, leases)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// jobOf reads a job through the API.
func (e *env) jobOf(project, id string) store.Job {
	e.t.Helper()
	var st struct {
		Job store.Job `json:"job"`
	}
	e.apiGet("/api/projects/"+project+"/skill-jobs/"+id, &st)
	return st.Job
}

// TestSettleJob: a running job's page says whether its replica holds its
// lease and, for an admin, offers to settle it: at once when the lease
// lapsed, by force (saying what that does) while the replica lives. The
// settlement goes through the API, which refuses a live replica's job
// without force and writes every attempt to the audit log; a read or
// write token is shown no control and refused. The dashboard lists the
// replicas by their leases and the lapsed one holding jobs as needing
// attention.
func TestSettleJob(t *testing.T) {
	s := newStrays()
	e := newEnvWith(t, envOptions{jobs: true, lease: time.Hour, seed: s.seed(t)})
	admin := e.signIn(e.admin)
	reader := e.signIn(e.read)

	// The dashboard: replicas from their leases.
	_, body := admin.get("/")
	for _, want := range []string{`href="#lapsed"`, s.lapsedReplica, s.liveReplica, "ui-test</code> (this one)", "last heartbeat", ">lapsed<", ">live<",
		"holds 2 running or locked jobs"} {
		if !strings.Contains(body, want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}

	lapsedPage := jpath(s.project, s.lapsed)
	livePage := jpath(s.project, s.live)
	_, body = admin.get(lapsedPage)
	for _, want := range []string{"stopped renewing its lease", "The other replicas settle the job on their own", "Settle the job now", `action="` + lapsedPage + `/settle"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the lapsed replica's job page lacks %q", want)
		}
	}
	if strings.Contains(body, "by force") {
		t.Error("the lapsed replica's job page offers to settle by force")
	}
	_, body = admin.get(livePage)
	for _, want := range []string{"holds its lease", "Settle the job by force", "may be running this job now", "kills the job's sandbox", `name="force" value="yes"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the live replica's job page lacks %q", want)
		}
	}
	_, body = reader.get(livePage)
	if strings.Contains(body, "/settle") || !strings.Contains(body, "An admin token can settle the job") {
		t.Error("a read token's job page offers to settle")
	}

	// Refusals change nothing: no confirmation; no force while the
	// replica holds its lease (a page from before it renewed it); a
	// token too small.
	if code, body := admin.post(livePage+"/settle", url.Values{"reason": {"stuck"}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("settle without confirmation answered %d:\n%s", code, body)
	}
	if code, body := admin.post(livePage+"/settle", url.Values{"confirm": {"yes"}}); code != http.StatusConflict || !strings.Contains(body, "holds its lease") || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("settle of a live replica's job without force answered %d:\n%s", code, body)
	}
	if code, _ := reader.post(livePage+"/settle", url.Values{"confirm": {"yes"}, "force": {"yes"}}); code != http.StatusForbidden {
		t.Errorf("settle with a read token answered %d", code)
	}
	if j := e.jobOf(s.project, s.live); j.State != store.JobRunning {
		t.Fatalf("after the refusals the live replica's job is %s", j.State)
	}

	// Settled: by force, then at once.
	code, body := admin.post(livePage+"/settle", url.Values{"confirm": {"yes"}, "force": {"yes"}, "reason": {"the node was drained"}})
	if code != http.StatusOK || !strings.Contains(body, "Settled") {
		t.Fatalf("settle by force answered %d:\n%s", code, body)
	}
	if j := e.jobOf(s.project, s.live); j.State != store.JobStopped || !strings.Contains(j.Reason, "the node was drained") || !strings.Contains(j.Reason, "by force") {
		t.Errorf("the live replica's job after its settlement: %s, %q", j.State, j.Reason)
	}
	if strings.Contains(body, "/settle") || !strings.Contains(body, "Delete the job") {
		t.Error("a settled job's page still offers to settle it, or not to delete it")
	}
	if code, body := admin.post(lapsedPage+"/settle", url.Values{"confirm": {"yes"}}); code != http.StatusOK || !strings.Contains(body, "Settled") {
		t.Fatalf("settle answered %d:\n%s", code, body)
	}
	if j := e.jobOf(s.project, s.lapsed); j.State != store.JobStopped || !strings.Contains(j.Reason, "holds no current lease") {
		t.Errorf("the lapsed replica's job after its settlement: %s, %q", j.State, j.Reason)
	}

	// Every attempt after the token check is in the audit log.
	var audit struct {
		Entries []store.AuditEntry `json:"entries"`
	}
	e.apiGet("/api/audit?action=job.settle", &audit)
	results := map[string]int{}
	for _, a := range audit.Entries {
		results[a.Result]++
	}
	if results["ok"] != 2 || len(audit.Entries) != 4 {
		t.Errorf("job.settle audit entries: %+v; want 2 done and 2 refused (no force; a read token)", audit.Entries)
	}
}

// jpath is a job page's path.
func jpath(project, job string) string { return "/projects/" + project + "/jobs/" + job }

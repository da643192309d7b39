package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// consoleTests are the suite's tests of what the administration's
// dashboard and job list read.
var consoleTests = []struct {
	name string
	fn   func(t *testing.T, open Opener)
}{
	{"QueryJobs", testQueryJobs},
	{"Overview", testOverview},
}

func openConsole(t *testing.T, open Opener, opts store.Options) *store.DB {
	t.Helper()
	return mustOpen(t, open, opts)
}

func ids(jobs []store.ListedJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// testQueryJobs: jobs across projects, newest first, filtered by state,
// project, version and package, paged without gaps or repeats, each with
// the version it runs.
func testQueryJobs(t *testing.T, open Opener) {
	ctx := context.Background()
	s := openConsole(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	mustProject(t, s, "q", "Project q")
	if err := s.Bind(ctx, "q", f.version); err != nil {
		t.Fatal(err)
	}
	other := install(t, s, Version("other", Tree{"SKILL.md": "---\nname: other\ndescription: test\n---\n", "run.sh": "x:echo\n"}))
	if err := s.Bind(ctx, "q", other.ID); err != nil {
		t.Fatal(err)
	}
	p, err := s.SetProfile(ctx, other.ID, store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"run.sh"}, TimeoutSeconds: 5, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPrepared(ctx, other.ID, p.Revision, "none", "ok"); err != nil {
		t.Fatal(err)
	}
	var made []string // newest last
	for i := range 7 {
		project, version := "p", f.version
		if i%2 == 1 {
			project = "q"
		}
		if i == 6 {
			project, version = "q", other.ID
		}
		j, err := s.CreateJob(ctx, project, version)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, j.ID)
	}
	// One job queued, so that the state filter has something to tell.
	if _, err := s.QueueJob(ctx, made[0], "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}

	all, err := s.QueryJobs(ctx, store.JobQuery{})
	if err != nil || len(all) != 7 {
		t.Fatalf("QueryJobs(all) = %d jobs, %v; want 7", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.After(all[i-1].CreatedAt) {
			t.Fatalf("QueryJobs is not newest first: %v after %v", all[i].CreatedAt, all[i-1].CreatedAt)
		}
	}
	for _, j := range all {
		want := "jobs"
		if j.ID == made[6] {
			want = "other"
		}
		if j.Package != want || j.TreeDigest == "" || j.Stdout != nil {
			t.Errorf("job %s: package %q digest %q (logs %d bytes); want %s, a digest and no logs", j.ID, j.Package, j.TreeDigest, len(j.Stdout), want)
		}
	}
	// Pages of two cover the list exactly once, in order.
	var paged []string
	q := store.JobQuery{Limit: 2}
	for range 10 {
		page, err := s.QueryJobs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, ids(page)...)
		last := page[len(page)-1]
		q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
	}
	if !slices.Equal(paged, ids(all)) {
		t.Errorf("pages of two gave %v; want %v", paged, ids(all))
	}
	for _, tc := range []struct {
		name string
		q    store.JobQuery
		want int
	}{
		{"project", store.JobQuery{Project: "q"}, 4},
		{"state", store.JobQuery{States: []store.JobState{store.JobQueued}}, 1},
		{"states", store.JobQuery{States: []store.JobState{store.JobQueued, store.JobCreated}}, 7},
		{"version", store.JobQuery{VersionID: other.ID}, 1},
		{"package", store.JobQuery{Package: "jobs"}, 6},
		{"package and project", store.JobQuery{Package: "jobs", Project: "q"}, 3},
		{"nothing", store.JobQuery{Project: "none"}, 0},
	} {
		got, err := s.QueryJobs(ctx, tc.q)
		if err != nil || len(got) != tc.want {
			t.Errorf("QueryJobs(%s) = %d jobs, %v; want %d", tc.name, len(got), err, tc.want)
		}
	}
	counts, err := s.CountJobs(ctx)
	if err != nil || counts[store.JobCreated] != 6 || counts[store.JobQueued] != 1 {
		t.Errorf("CountJobs = %v, %v; want 6 created, 1 queued", counts, err)
	}
}

// testOverview: the counts (remnants too), failed preparations,
// unapproved bound versions and the catalog's time. (The replicas are
// their leases: testLeases.)
func testOverview(t *testing.T, open Opener) {
	ctx := context.Background()
	s := openConsole(t, open, store.Options{})
	o, err := s.Overview(ctx)
	if err != nil || o.Versions != 0 || o.Projects != 0 || !o.CatalogStoredAt.IsZero() {
		t.Fatalf("Overview(empty) = %+v, %v", o, err)
	}
	f := newJobFixture(t, s, "p") // bound, not approved
	mustProject(t, s, "paused", "Paused")
	if _, err := s.PauseProject(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(ctx, "paused", f.version); err != nil {
		t.Fatal(err)
	}
	failing := install(t, s, Version("failing", Tree{"SKILL.md": "---\nname: failing\ndescription: test\n---\n", "x.py": "x:print()\n"}))
	p, err := s.SetProfile(ctx, failing.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"x.py"}, TimeoutSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPrepared(ctx, failing.ID, p.Revision, "", "pip: no such package\n"); err != nil {
		t.Fatal(err)
	}
	approved := install(t, s, Version("approved", Tree{"SKILL.md": "---\nname: approved\ndescription: test\n---\n"}))
	if _, err := s.Approve(ctx, approved.ID, "tester"); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(ctx, "p", approved.ID); err != nil {
		t.Fatal(err)
	}
	j := f.create(t, "p")
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	f.claim(t, "replica-a")
	if err := s.PutIndexSnapshot(ctx, []byte(`{"schema_version":1,"items":[]}`), "upload"); err != nil {
		t.Fatal(err)
	}

	o, err = s.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o.Backend != "sqlite" && o.Backend != "postgres" {
		t.Errorf("backend %q", o.Backend)
	}
	if o.Packages != 3 || o.Versions != 3 || o.Projects != 2 || o.PausedProjects != 1 || o.Jobs[store.JobRunning] != 1 {
		t.Errorf("counts: %+v", o)
	}
	if len(o.FailedPreparations) != 1 || o.FailedPreparations[0].Package != "failing" || o.FailedPreparations[0].Log != "pip: no such package\n" {
		t.Errorf("failed preparations: %+v", o.FailedPreparations)
	}
	if len(o.UnapprovedBound) != 1 || o.UnapprovedBound[0].Package != "jobs" || !slices.Equal(o.UnapprovedBound[0].Projects, []string{"p", "paused"}) {
		t.Errorf("unapproved bound versions: %+v", o.UnapprovedBound)
	}
	if o.CatalogStoredAt.IsZero() {
		t.Error("the stored catalog's time is missing")
	}
	if o.Remnants != 0 {
		t.Errorf("remnants %d before any project was deleted", o.Remnants)
	}
	// A deleted project's job with files is a remnant.
	mustProject(t, s, "gone", "Gone")
	if err := s.Bind(ctx, "gone", f.version); err != nil {
		t.Fatal(err)
	}
	g := f.create(t, "gone")
	if _, err := s.PutJobInput(ctx, g.ID, "in.txt", []byte("x"), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProject(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if o, err = s.Overview(ctx); err != nil || o.Remnants != 1 {
		t.Errorf("Overview after a project with a job's files was deleted: %d remnants, %v; want 1", o.Remnants, err)
	}
	origins, err := s.VersionOrigins(ctx)
	if err != nil || len(origins) != 3 || origins[0].Package != "approved" || origins[2].Package != "jobs" ||
		!strings.Contains(string(origins[2].Origin), `"jobs.zip"`) || origins[2].TreeDigest == "" {
		t.Errorf("VersionOrigins = %+v, %v", origins, err)
	}
}

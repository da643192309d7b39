package api_test

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree/githubtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// prepared sets an enabled profile allowing scripts/copy.py on version id
// and prepares it through the API.
func (e *env) prepared(t *testing.T, id string) {
	t.Helper()
	spec := map[string]any{"runtime": "python", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 30, "enabled": true}
	e.want(e.do("PUT", "/api/skills/"+id+"/profile", e.admin, spec), 200, "")
	e.want(e.do("POST", "/api/skills/"+id+"/prepare", e.admin, nil), 202, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		var prep api.Preparation
		e.do("GET", "/api/skills/"+id+"/prepare", e.read, nil).decode(t, &prep)
		if prep.State == "prepared" {
			return
		}
		if prep.State != "running" || time.Now().After(deadline) {
			t.Fatalf("preparation of %s: %+v", id, prep)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJobListAndOverview: GET /api/jobs lists jobs across projects, each
// naming the version it runs, filtered by state, project and skill and
// paged; the job routes name the version too; GET /api/overview counts
// them and lists what needs an administrator.
func TestJobListAndOverview(t *testing.T) {
	jobBackends(t, func(t *testing.T, e *env, svc *jobs.Service) {
		copier := e.install(map[string]string{"SKILL.md": copierMD, "scripts/copy.py": "print('copy')\n"})
		other := e.install(map[string]string{"SKILL.md": strings.Replace(copierMD, "name: copier", "name: other", 1), "scripts/copy.py": "print('other')\n"})
		for _, p := range []string{"p", "q"} {
			e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": p, "name": p}), 201, "")
		}
		for _, b := range [][2]string{{"p", copier}, {"q", copier}, {"q", other}} {
			e.want(e.do("PUT", "/api/projects/"+b[0]+"/skills/"+b[1], e.admin, nil), 200, "")
		}
		e.prepared(t, copier)
		e.prepared(t, other)
		var created []string
		for _, c := range [][2]string{{"p", copier}, {"q", copier}, {"q", other}, {"p", copier}, {"q", other}} {
			var j api.Job
			a := e.do("POST", "/api/projects/"+c[0]+"/skill-jobs", e.write, map[string]string{"skill_id": c[1]})
			e.want(a, 201, "")
			a.decode(t, &j)
			if j.SkillID != c[1] || j.Package == "" {
				t.Fatalf("a created job names %q (%q), want %s", j.SkillID, j.Package, c[1])
			}
			created = append(created, j.ID)
		}
		// One job fails, one succeeds.
		var st api.JobStatus
		e.do("POST", "/api/projects/p/skill-jobs/"+created[0]+"/run", e.write, map[string]any{"script": "scripts/copy.py", "args": []string{"fail"}}).decode(t, &st)
		if st.Job.State != store.JobFailed || st.Job.SkillID != copier {
			t.Fatalf("the failing run: %+v", st.Job)
		}
		e.do("POST", "/api/projects/q/skill-jobs/"+created[2]+"/run", e.write, map[string]any{"script": "scripts/copy.py"}).decode(t, &st)
		if st.Job.State != store.JobSucceeded || st.Job.SkillID != other {
			t.Fatalf("the run: %+v", st.Job)
		}
		e.do("GET", "/api/projects/q/skill-jobs/"+created[2], e.read, nil).decode(t, &st)
		if st.Job.SkillID != other || st.Job.Package != "other" {
			t.Fatalf("a job's status names %q (%q), want %s", st.Job.SkillID, st.Job.Package, other)
		}
		var pl struct{ Jobs []api.Job }
		e.do("GET", "/api/projects/q/skill-jobs", e.read, nil).decode(t, &pl)
		if len(pl.Jobs) != 3 || pl.Jobs[0].SkillID != other || pl.Jobs[2].SkillID != copier {
			t.Fatalf("a project's jobs: %+v", pl.Jobs)
		}

		type list struct {
			Jobs       []api.Job `json:"jobs"`
			NextCursor string    `json:"next_cursor"`
		}
		get := func(q string) list {
			t.Helper()
			var l list
			a := e.do("GET", "/api/jobs"+q, e.read, nil)
			e.want(a, 200, "")
			a.decode(t, &l)
			return l
		}
		ids := func(js []api.Job) []string {
			var out []string
			for _, j := range js {
				out = append(out, j.ID)
			}
			return out
		}
		all := get("")
		if len(all.Jobs) != 5 || all.NextCursor != "" {
			t.Fatalf("every job: %+v", all)
		}
		for _, j := range all.Jobs {
			if j.SkillID == "" || j.Package == "" || j.ProjectID == "" {
				t.Errorf("job %s does not say what it runs where: %+v", j.ID, j)
			}
		}
		var paged []string
		for cursor := ""; ; {
			l := get("?limit=2&cursor=" + url.QueryEscape(cursor))
			paged = append(paged, ids(l.Jobs)...)
			if cursor = l.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(paged, ids(all.Jobs)) {
			t.Errorf("pages of two: %v, want %v", paged, ids(all.Jobs))
		}
		for _, tc := range []struct {
			q    string
			want int
		}{
			{"?project=q", 3},
			{"?state=failed", 1},
			{"?state=failed,succeeded", 2},
			{"?skill=other", 2},
			{"?skill=" + url.QueryEscape(copier), 3},
			{"?skill=copier&project=q", 1},
			{"?skill=nothing", 0},
		} {
			if got := get(tc.q); len(got.Jobs) != tc.want {
				t.Errorf("GET /api/jobs%s: %d jobs, want %d", tc.q, len(got.Jobs), tc.want)
			}
		}
		e.want(e.do("GET", "/api/jobs?state=lost", e.read, nil), 422, api.CodeInvalid)
		e.want(e.do("GET", "/api/jobs?skill=copier@ffffffffffff", e.read, nil), 404, api.CodeNotFound)
		e.want(e.do("GET", "/api/jobs?cursor=YWJj", e.read, nil), 400, api.CodeBadRequest)
		e.want(e.do("GET", "/api/jobs", "", nil), 401, api.CodeUnauthorized)

		// The overview: counts, the failed job, the unapproved bindings
		// (nothing is approved here), the sandbox and the catalog.
		var o api.OverviewAnswer
		a := e.do("GET", "/api/overview", e.read, nil)
		e.want(a, 200, "")
		a.decode(t, &o)
		if o.Counts.Versions != 2 || o.Counts.Projects != 2 || o.Counts.Jobs["created"] != 3 || o.Counts.Jobs["failed"] != 1 || o.Counts.Jobs["succeeded"] != 1 {
			t.Errorf("counts: %+v", o.Counts)
		}
		if len(o.FailedJobs) != 1 || o.FailedJobs[0].ID != created[0] || o.FailedJobs[0].SkillID != copier {
			t.Errorf("failed jobs: %+v", o.FailedJobs)
		}
		if len(o.UnapprovedBound) != 2 || o.UnapprovedBound[0].SkillID != copier || !slices.Equal(o.UnapprovedBound[0].Projects, []string{"p", "q"}) {
			t.Errorf("unapproved bound versions: %+v", o.UnapprovedBound)
		}
		if o.Sandbox.Chosen != "fake" || o.Store.Backend == "" || len(o.Store.Replicas) != 1 || o.Store.Replicas[0].Name != "api-test" {
			t.Errorf("sandbox and store: %+v %+v", o.Sandbox, o.Store)
		}
		// The replicas are their leases, judged by the database's time.
		if r := o.Store.Replicas[0]; !r.Live || r.HeartbeatAt.IsZero() || !r.LeaseUntil.After(r.HeartbeatAt) || r.HeartbeatAt.After(o.Store.CheckedAt) {
			t.Errorf("this replica's lease: %+v (checked at %v); want live, renewed before the check", r, o.Store.CheckedAt)
		}
		if o.Counts.Remnants != 0 {
			t.Errorf("remnants: %d, want 0", o.Counts.Remnants)
		}
		if o.Catalog.Source != "bundled" || o.Catalog.Items == 0 || o.Catalog.GeneratedAt.IsZero() {
			t.Errorf("catalog: %+v", o.Catalog)
		}
		if len(o.FailedPreparations) != 0 {
			t.Errorf("failed preparations: %+v", o.FailedPreparations)
		}
		e.want(e.do("GET", "/api/overview", "", nil), 401, api.CodeUnauthorized)

		// GET /api/replicas: a replica whose lease lapsed is listed lapsed
		// with its last heartbeat; this one live.
		ctx := context.Background()
		if _, err := e.db.Heartbeat(ctx, "replica-gone", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var rs api.ReplicasAnswer
		for deadline := time.Now().Add(30 * time.Second); ; {
			a = e.do("GET", "/api/replicas", e.read, nil)
			e.want(a, 200, "")
			a.decode(t, &rs)
			if len(rs.Replicas) == 2 && !rs.Replicas[1].Live {
				break
			}
			if len(rs.Replicas) != 2 || rs.Replicas[1].Name != "replica-gone" || time.Now().After(deadline) {
				t.Fatalf("replicas: %+v", rs)
			}
			time.Sleep(time.Millisecond) // a 1 ms lease, in the database's time
		}
		if rs.Replica != "api-test" || rs.Replicas[0].Name != "api-test" || !rs.Replicas[0].Live || rs.Replicas[1].HeartbeatAt.IsZero() ||
			!rs.Replicas[1].LeaseUntil.Before(rs.CheckedAt) {
			t.Errorf("replicas: %+v", rs)
		}
		e.do("GET", "/api/overview", e.read, nil).decode(t, &o)
		if len(o.Store.Replicas) != 2 || o.Store.Replicas[1].Live {
			t.Errorf("the overview's replicas: %+v", o.Store.Replicas)
		}
		e.want(e.do("GET", "/api/replicas", "", nil), 401, api.CodeUnauthorized)
	})
}

// TestCatalogFacetsAndInstalled: a catalog page lists every category and
// author for its filters, and marks the items installed with their
// versions, from the item itself or from its repository folder.
func TestCatalogFacetsAndInstalled(t *testing.T) {
	gh := githubtest.New(t)
	_, repo := gh.Add("acme", "skills", map[string]string{"pdf/SKILL.md": strings.Replace(skillMD, "pdf-tools", "pdf", 1), "xlsx/SKILL.md": strings.Replace(skillMD, "pdf-tools", "xlsx", 1)})
	run := func(name string, o store.Options) {
		t.Run(name, func(t *testing.T) {
			testCatalogFacets(t, newEnv(t, o, func(ho *hub.Options) { ho.GitHub = gh.Options() }), repo)
		})
	}
	run("sqlite", store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	run("postgres", store.Options{Database: pg.Database(t)})
}

func testCatalogFacets(t *testing.T, e *env, repo string) {
	{
		items := []index.Item{
			{ID: "acme/pdf", Name: "pdf", Description: "PDF forms.", Author: "Acme", Category: "documents", Repository: repo, Path: "pdf"},
			{ID: "acme/xlsx", Name: "xlsx", Description: "Spreadsheets.", Author: "acme", Category: "Documents", Repository: repo, Path: "xlsx"},
			{ID: "zed/web", Name: "web", Description: "Browse the web.", Author: "Zed", Category: "web", Repository: repo, Path: "web"},
		}
		raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		e.want(e.do("POST", "/api/skills/catalog/sync", e.admin, map[string]json.RawMessage{"content": raw}), 200, "")
		var inst struct {
			Version struct{ ID string } `json:"version"`
		}
		e.do("POST", "/api/skills/install", e.admin, map[string]any{"catalog_id": "acme/pdf"}).decode(t, &inst)
		var byHand struct {
			Version struct{ ID string } `json:"version"`
		}
		a := e.do("POST", "/api/skills/install", e.admin, map[string]any{"source": map[string]string{"repository": repo + "/", "path": "xlsx"}})
		e.want(a, 200, "")
		a.decode(t, &byHand)

		var page struct {
			Items []struct {
				ID        string   `json:"id"`
				Installed []string `json:"installed"`
			} `json:"items"`
			Categories []index.Category `json:"categories"`
			Authors    []index.Author   `json:"authors"`
		}
		e.do("GET", "/api/skills/catalog", e.read, nil).decode(t, &page)
		if want := []index.Category{{Name: "documents", Items: 2}, {Name: "web", Items: 1}}; !slices.Equal(page.Categories, want) {
			t.Errorf("categories %v, want %v", page.Categories, want)
		}
		if want := []index.Author{{Name: "Acme", Items: 2}, {Name: "Zed", Items: 1}}; !slices.Equal(page.Authors, want) {
			t.Errorf("authors %v, want %v", page.Authors, want)
		}
		got := map[string][]string{}
		for _, it := range page.Items {
			got[it.ID] = it.Installed
		}
		if !slices.Equal(got["acme/pdf"], []string{inst.Version.ID}) || !slices.Equal(got["acme/xlsx"], []string{byHand.Version.ID}) || got["zed/web"] != nil {
			t.Errorf("installed: %v (pdf %s, xlsx %s)", got, inst.Version.ID, byHand.Version.ID)
		}
		// A page filtered by author still lists every facet.
		e.do("GET", "/api/skills/catalog?author=zed", e.read, nil).decode(t, &page)
		if len(page.Items) != 1 || len(page.Authors) != 2 {
			t.Errorf("by author: %+v", page)
		}
	}
}

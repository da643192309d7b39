package hubadmin

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The dashboard at / (GET /api/overview) and the job list across projects
// (GET /api/jobs).

// backend is one sandbox backend as /api/overview and /api/skills/runtime
// report it.
type backend struct {
	Name      string   `json:"name"`
	Available bool     `json:"available"`
	Detail    string   `json:"detail"`
	Chosen    bool     `json:"chosen"`
	Enforced  []string `json:"enforced"`
	Missing   []string `json:"missing"`
}

// listedJob is a job of a list: the store's record and the version it
// runs.
type listedJob struct {
	store.Job
	SkillID string `json:"skill_id"`
	Package string `json:"package"`
}

// overview is GET /api/overview's answer.
type overview struct {
	Sandbox struct {
		Chosen   string    `json:"chosen"`
		Backends []backend `json:"backends"`
	} `json:"sandbox"`
	Store struct {
		Backend         string `json:"backend"`
		RequireApproval bool   `json:"require_approval"`
		Replica         string `json:"replica"`
		Replicas        []struct {
			Name      string    `json:"name"`
			LastJobAt time.Time `json:"last_job_at"`
			Running   int       `json:"running"`
		} `json:"replicas"`
	} `json:"store"`
	Counts struct {
		Packages       int            `json:"packages"`
		Versions       int            `json:"versions"`
		Projects       int            `json:"projects"`
		PausedProjects int            `json:"paused_projects"`
		Jobs           map[string]int `json:"jobs"`
	} `json:"counts"`
	FailedJobs         []listedJob `json:"failed_jobs"`
	FailedPreparations []struct {
		SkillID string    `json:"skill_id"`
		At      time.Time `json:"at"`
		Message string    `json:"message"`
	} `json:"failed_preparations"`
	UnapprovedBound []struct {
		SkillID  string   `json:"skill_id"`
		Projects []string `json:"projects"`
	} `json:"unapproved_bound"`
	Catalog struct {
		Source      string    `json:"source"`
		Items       int       `json:"items"`
		GeneratedAt time.Time `json:"generated_at"`
		StoredAt    time.Time `json:"stored_at"`
	} `json:"catalog"`
}

// jobStates are the job states in their life's order.
var jobStates = []store.JobState{store.JobCreated, store.JobUploading, store.JobQueued, store.JobRunning,
	store.JobSucceeded, store.JobFailed, store.JobTimedOut, store.JobStopped, store.JobLocked}

// problemStates are the states the dashboard links as failures.
const problemStates = "failed,timed_out,locked"

// catalogStale is the age past which the dashboard calls the catalog old.
const catalogStale = 30 * 24 * time.Hour

type stateCount struct {
	State string
	N     int
}

type dashboardData struct {
	Overview overview
	Jobs     []stateCount
	JobTotal int
	Problems int
	// CatalogAge is the catalog's age for people ("3 days"); Stale says it
	// is older than catalogStale.
	CatalogAge string
	Stale      bool
}

func (a *Admin) dashboard(w http.ResponseWriter, r *http.Request) {
	var d dashboardData
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/overview", nil, nil, "", &d.Overview); err != nil {
		a.fail(w, r, err)
		return
	}
	for _, st := range jobStates {
		n := d.Overview.Counts.Jobs[string(st)]
		d.Jobs = append(d.Jobs, stateCount{State: string(st), N: n})
		d.JobTotal += n
		if st == store.JobFailed || st == store.JobTimedOut || st == store.JobLocked {
			d.Problems += n
		}
	}
	c := d.Overview.Catalog
	// The data's age is the document's; a sync only says when it came.
	if at := cmpTime(c.GeneratedAt, c.StoredAt); !at.IsZero() {
		age := time.Since(at)
		d.CatalogAge, d.Stale = ago(age), age > catalogStale
	}
	a.render(w, r, "dashboard.html", "Dashboard", "dashboard", d)
}

// cmpTime returns the first of ts that is not zero.
func cmpTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// ago says how long d is for people: "5 minutes", "3 days".
func ago(d time.Duration) string {
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.Itoa(n) + " " + unit + "s"
	}
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

// ---- jobs across projects

type jobsData struct {
	State, Project, Skill string
	// StateChoices are the state filter's options; a combination from a
	// link (the dashboard's failures) is one of them.
	StateChoices []string
	Projects     []string
	Skills       []string
	Jobs         []listedJob
	Next         string
	Unavailable  string
}

func (a *Admin) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := jobsData{State: q.Get("state"), Project: q.Get("project"), Skill: q.Get("skill")}
	c, ctx := a.client(r), r.Context()
	aq := url.Values{"limit": {"100"}}
	for _, k := range []string{"state", "project", "skill", "cursor"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			aq.Set(k, v)
		}
	}
	var out struct {
		Jobs       []listedJob `json:"jobs"`
		NextCursor string      `json:"next_cursor"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/jobs", aq, nil, "", &out); err != nil {
		a.fail(w, r, err)
		return
	}
	d.Jobs = out.Jobs
	if out.NextCursor != "" {
		nq := url.Values{"cursor": {out.NextCursor}}
		for _, k := range []string{"state", "project", "skill"} {
			if v := q.Get(k); v != "" {
				nq.Set(k, v)
			}
		}
		d.Next = "/jobs?" + nq.Encode()
	}
	for _, st := range jobStates {
		d.StateChoices = append(d.StateChoices, string(st))
	}
	d.StateChoices = append(d.StateChoices, problemStates)
	if d.State != "" && !slices.Contains(d.StateChoices, d.State) {
		d.StateChoices = append(d.StateChoices, d.State)
	}
	// The filters' choices: every project and package (a hub has at most
	// a few thousand; the lists are bounded by the API's page).
	var pl struct {
		Projects []store.Project `json:"projects"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/projects", url.Values{"limit": {"1000"}}, nil, "", &pl); err != nil {
		a.fail(w, r, err)
		return
	}
	for _, p := range pl.Projects {
		d.Projects = append(d.Projects, p.ID)
	}
	var sk struct {
		Packages []struct {
			Name string `json:"name"`
		} `json:"packages"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/skills", url.Values{"limit": {"1000"}}, nil, "", &sk); err != nil {
		a.fail(w, r, err)
		return
	}
	for _, p := range sk.Packages {
		d.Skills = append(d.Skills, p.Name)
	}
	for _, keep := range []struct {
		v    string
		list *[]string
	}{{d.Project, &d.Projects}, {d.Skill, &d.Skills}} {
		if keep.v != "" && !slices.Contains(*keep.list, keep.v) {
			*keep.list = append(*keep.list, keep.v)
		}
	}
	a.render(w, r, "jobs.html", "Jobs", "jobs", d)
}

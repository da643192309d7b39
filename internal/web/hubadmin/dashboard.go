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
		Backend         string    `json:"backend"`
		RequireApproval bool      `json:"require_approval"`
		Replica         string    `json:"replica"`
		Replicas        []replica `json:"replicas"`
		CheckedAt       time.Time `json:"checked_at"`
	} `json:"store"`
	Counts struct {
		Packages       int            `json:"packages"`
		Versions       int            `json:"versions"`
		Projects       int            `json:"projects"`
		PausedProjects int            `json:"paused_projects"`
		Remnants       int            `json:"remnants"`
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

// replica is a replica's lease as /api/overview and /api/replicas report
// it, judged by the database's time.
type replica struct {
	Name         string    `json:"name"`
	Live         bool      `json:"live"`
	HeartbeatAt  time.Time `json:"heartbeat_at"`
	LeaseUntil   time.Time `json:"lease_until"`
	Running      int       `json:"running"`
	Preparations int       `json:"preparations"`
}

// replicaView is a replica as the pages show it: its ages by the
// database's clock, never the web server's.
type replicaView struct {
	replica
	This bool // the replica serving the page
	// Beat is how long ago it last renewed its lease ("" if it never
	// held one); Lapsed how long ago its lease lapsed, if it did.
	Beat, Lapsed string
}

// viewReplica judges r at the database's time now; this names the
// replica serving the page.
func viewReplica(r replica, now time.Time, this string) replicaView {
	v := replicaView{replica: r, This: r.Name == this}
	if !r.HeartbeatAt.IsZero() {
		v.Beat = since(now.Sub(r.HeartbeatAt))
	}
	if !r.Live && !r.LeaseUntil.IsZero() {
		v.Lapsed = since(now.Sub(r.LeaseUntil))
	}
	return v
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
	// Replicas are the leases, this replica first, then the live ones;
	// Orphaning are the lapsed ones still holding jobs or preparations.
	Replicas, Orphaning []replicaView
	Jobs                []stateCount
	JobTotal            int
	Problems            int
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
	st := d.Overview.Store
	for _, r := range st.Replicas {
		v := viewReplica(r, st.CheckedAt, st.Replica)
		d.Replicas = append(d.Replicas, v)
		if !r.Live && r.Running+r.Preparations > 0 {
			d.Orphaning = append(d.Orphaning, v)
		}
	}
	slices.SortStableFunc(d.Replicas, func(x, y replicaView) int {
		rank := func(v replicaView) int {
			switch {
			case v.This:
				return 0
			case v.Live:
				return 1
			}
			return 2
		}
		return rank(x) - rank(y)
	})
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

// since says how long d is for people, to the second under a minute (a
// heartbeat's age): "4 seconds", "3 minutes".
func since(d time.Duration) string {
	switch {
	case d < time.Second:
		return "less than a second"
	case d < 2*time.Second:
		return "1 second"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " seconds"
	}
	return ago(d)
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

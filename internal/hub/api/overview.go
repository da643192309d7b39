package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The routes the administration's dashboard and job list read: GET
// /api/overview and GET /api/jobs, and the version every job answer names.

// JobStatus is a job with its logs and files.
type JobStatus struct {
	Job     Job       `json:"job"`
	Stdout  string    `json:"stdout"`
	Stderr  string    `json:"stderr"`
	Inputs  []JobFile `json:"inputs"`
	Outputs []JobFile `json:"outputs"`
	// Stale marks a status that could not be read fresh (the database was
	// away during a run's wait): Job is its last state known.
	Stale bool   `json:"stale,omitempty" doc:"The job could not be read fresh: this is its last state known; read it again"`
	Note  string `json:"note,omitempty" doc:"What to do, when the status is stale"`
}

// versionNames names the versions of jobs, asking the store once per
// version within one answer.
type versionNames struct {
	a     *API
	names map[int64]named
}

// named is a version's id and package; empty for one that is gone.
type named struct{ ID, Package string }

func (a *API) versionNames() *versionNames {
	return &versionNames{a: a, names: map[int64]named{}}
}

// job returns j with the version it runs; a version gone leaves the name
// empty, any other failure to read it is the answer's.
func (n *versionNames) job(ctx context.Context, j store.Job) (Job, error) {
	v, ok := n.names[j.VersionID]
	if !ok {
		var err error
		sv, err := n.a.st.GetVersion(ctx, j.VersionID)
		switch {
		case err == nil:
			v = named{ID: hub.VersionID(sv.Package, sv.TreeDigest), Package: sv.Package}
		case !errors.Is(err, store.ErrNotFound):
			return Job{}, err
		}
		n.names[j.VersionID] = v
	}
	return wireJob(j, v.ID, v.Package), nil
}

// allJobsQuery filters GET /api/jobs.
type allJobsQuery struct {
	State   []string `query:"state" maxItems:"9" enum:"created,uploading,queued,running,succeeded,failed,timed_out,stopped,locked" doc:"Keep the jobs in any of these states (comma-separated)"`
	Project string   `query:"project" maxLength:"63" doc:"Keep one project's jobs"`
	Skill   string   `query:"skill" maxLength:"300" doc:"Keep the jobs of a package (its name) or of one version (its id, NAME@…)"`
	Limit   int      `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"The page's size"`
	Cursor  string   `query:"cursor" maxLength:"1024" doc:"The next_cursor of the previous page"`
}

type allJobsOutput struct {
	Body struct {
		Jobs       []Job  `json:"jobs"`
		NextCursor string `json:"next_cursor,omitempty" doc:"The cursor of the next page; absent on the last"`
	}
}

// OverviewAnswer is GET /api/overview's answer: the hub's state at a
// glance, and what needs an administrator.
type OverviewAnswer struct {
	Sandbox struct {
		Chosen   string    `json:"chosen,omitempty" doc:"The backend jobs run in; absent when none works"`
		Backends []Backend `json:"backends" doc:"The backends this hub tried, with the limits the chosen one enforces and misses"`
	} `json:"sandbox"`
	Store struct {
		Backend         string    `json:"backend" enum:"sqlite,postgres"`
		RequireApproval bool      `json:"require_approval" doc:"Whether only approved versions may be bound"`
		Replica         string    `json:"replica,omitempty" doc:"This replica's name, when it runs jobs"`
		Replicas        []Replica `json:"replicas" doc:"The replicas holding a lease, or jobs or preparations, by name (as GET /api/replicas)"`
		CheckedAt       time.Time `json:"checked_at" doc:"The database's time the leases were judged at"`
	} `json:"store"`
	Counts struct {
		Packages       int            `json:"packages"`
		Versions       int            `json:"versions"`
		Projects       int            `json:"projects"`
		PausedProjects int            `json:"paused_projects"`
		Remnants       int            `json:"remnants" doc:"Job remnants of deleted projects, kept until purged"`
		Jobs           map[string]int `json:"jobs" doc:"Jobs in each state"`
	} `json:"counts"`
	FailedJobs         []Job                `json:"failed_jobs" doc:"The latest jobs that failed, timed out or are locked"`
	FailedPreparations []FailedPreparation  `json:"failed_preparations" doc:"Versions whose last preparation failed"`
	UnapprovedBound    []UnapprovedBinding  `json:"unapproved_bound" doc:"Versions bound to projects without being approved"`
	Catalog            OverviewCatalogState `json:"catalog"`
}

// Replica is a replica as its lease in the database says, judged by the
// database's time (every replica's clock is the database's, so that
// hosts whose clocks differ judge alike).
type Replica struct {
	Name string `json:"name"`
	// Live says it holds a current lease; a lapsed replica's jobs are
	// settled by the others.
	Live         bool      `json:"live" doc:"It holds a current lease; once it lapses, the other replicas settle its jobs"`
	FirstSeen    time.Time `json:"first_seen,omitzero" doc:"Its first heartbeat"`
	HeartbeatAt  time.Time `json:"heartbeat_at,omitzero" doc:"Its last heartbeat; absent for a replica that holds jobs but never held a lease"`
	LeaseUntil   time.Time `json:"lease_until,omitzero" doc:"When its lease lapses, or lapsed, unless renewed"`
	Running      int       `json:"running" doc:"Its running and locked jobs"`
	Preparations int       `json:"preparations" doc:"Its preparations under way"`
}

// ReplicasAnswer is GET /api/replicas's answer.
type ReplicasAnswer struct {
	Replica   string    `json:"replica,omitempty" doc:"This replica's name, when it runs jobs"`
	Replicas  []Replica `json:"replicas" doc:"The replicas holding a lease, or jobs or preparations, by name"`
	CheckedAt time.Time `json:"checked_at" doc:"The database's time the leases were judged at"`
}

type replicasOutput struct {
	Body ReplicasAnswer
}

// FailedPreparation is a version whose last preparation failed.
type FailedPreparation struct {
	SkillID string    `json:"skill_id"`
	At      time.Time `json:"at,omitzero"`
	Message string    `json:"message" doc:"Why, or the end of the preparation's log"`
}

// UnapprovedBinding is a version bound without approval.
type UnapprovedBinding struct {
	SkillID  string   `json:"skill_id"`
	Projects []string `json:"projects"`
}

// OverviewCatalogState says which catalog is served and how old it is.
type OverviewCatalogState struct {
	Source      string    `json:"source" doc:"bundled, a URL or an upload"`
	Items       int       `json:"items"`
	GeneratedAt time.Time `json:"generated_at,omitzero" doc:"When the document was made, as it says"`
	StoredAt    time.Time `json:"stored_at,omitzero" doc:"When it was synced into the hub; absent for the bundled one"`
}

type overviewOutput struct {
	Body OverviewAnswer
}

// failedStates are the states the overview lists jobs of.
var failedStates = []store.JobState{store.JobFailed, store.JobTimedOut, store.JobLocked}

// maxFailedJobs is how many failed jobs the overview lists.
const maxFailedJobs = 10

// listReplicas answers GET /api/replicas: the replicas' leases, and this
// replica's name.
func (a *API) listReplicas(ctx context.Context, _ *struct{}) (*replicasOutput, error) {
	out := &replicasOutput{}
	var err error
	out.Body.Replicas, out.Body.CheckedAt, err = a.replicas(ctx)
	out.Body.Replica = a.opts.Replica
	return out, err
}

func (a *API) listAllJobs(ctx context.Context, in *allJobsQuery) (*allJobsOutput, error) {
	q := store.JobQuery{Project: in.Project, Limit: in.Limit + 1}
	for _, s := range in.State {
		q.States = append(q.States, store.JobState(s))
	}
	switch skill := strings.TrimSpace(in.Skill); {
	case skill == "":
	case strings.Contains(skill, "@") || strings.HasPrefix(skill, "sha256:"):
		v, err := a.hub.Resolve(ctx, skill)
		if err != nil {
			return nil, err
		}
		q.VersionID = v.StoreID()
	default:
		q.Package = skill
	}
	key, err := decodeCursor("jobs", in.Cursor)
	if err != nil {
		return nil, err
	}
	if key != "" {
		at, id, ok := strings.Cut(key, "/")
		us, perr := strconv.ParseInt(at, 10, 64)
		if !ok || perr != nil || id == "" {
			return nil, newError(http.StatusBadRequest, CodeBadRequest, "the cursor is not one this list gave; start again without it")
		}
		q.AfterCreated, q.AfterID = time.UnixMicro(us), id
	}
	list, err := a.st.QueryJobs(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &allJobsOutput{}
	if len(list) > in.Limit {
		list = list[:in.Limit]
		last := list[len(list)-1]
		out.Body.NextCursor = encodeCursor("jobs", strconv.FormatInt(last.CreatedAt.UnixMicro(), 10)+"/"+last.ID)
	}
	out.Body.Jobs = make([]Job, len(list))
	for i, lj := range list {
		out.Body.Jobs[i] = listedJob(lj)
	}
	return out, nil
}

// listedJob is a job of the store's list, named by the version the list
// joined.
func listedJob(lj store.ListedJob) Job {
	var skillID string
	if lj.Package != "" {
		skillID = hub.VersionID(lj.Package, lj.TreeDigest)
	}
	return wireJob(lj.Job, skillID, lj.Package)
}

// replicas reads the replicas' leases, with the database's time they were
// judged at.
func (a *API) replicas(ctx context.Context) ([]Replica, time.Time, error) {
	leases, now, err := a.st.Leases(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	out := make([]Replica, len(leases))
	for i, l := range leases {
		out[i] = Replica{Name: l.Replica, Live: !l.Lapsed, FirstSeen: l.FirstSeen, HeartbeatAt: l.HeartbeatAt, LeaseUntil: l.Until,
			Running: l.ActiveJobs, Preparations: l.Preparations}
	}
	return out, now, nil
}

func (a *API) overview(ctx context.Context, _ *struct{}) (*overviewOutput, error) {
	o, err := a.st.Overview(ctx)
	if err != nil {
		return nil, err
	}
	out := &overviewOutput{}
	b := &out.Body
	b.Sandbox.Backends = []Backend{}
	if a.opts.Runtime != nil {
		if bs := a.opts.Runtime(ctx); bs != nil {
			b.Sandbox.Backends = bs
		}
	}
	for _, be := range b.Sandbox.Backends {
		if be.Chosen {
			b.Sandbox.Chosen = be.Name
		}
	}
	b.Store.Backend, b.Store.RequireApproval, b.Store.Replica = o.Backend, o.RequireApproval, a.opts.Replica
	if b.Store.Replicas, b.Store.CheckedAt, err = a.replicas(ctx); err != nil {
		return nil, err
	}
	c := &b.Counts
	c.Packages, c.Versions, c.Projects, c.PausedProjects, c.Remnants = o.Packages, o.Versions, o.Projects, o.PausedProjects, o.Remnants
	c.Jobs = map[string]int{}
	for _, st := range []store.JobState{store.JobCreated, store.JobUploading, store.JobQueued, store.JobRunning,
		store.JobSucceeded, store.JobFailed, store.JobTimedOut, store.JobStopped, store.JobLocked} {
		c.Jobs[string(st)] = o.Jobs[st]
	}
	failed, err := a.st.QueryJobs(ctx, store.JobQuery{States: failedStates, Limit: maxFailedJobs})
	if err != nil {
		return nil, err
	}
	b.FailedJobs = make([]Job, len(failed))
	for i, lj := range failed {
		b.FailedJobs[i] = listedJob(lj)
	}
	b.FailedPreparations = []FailedPreparation{}
	for _, f := range o.FailedPreparations {
		b.FailedPreparations = append(b.FailedPreparations, FailedPreparation{SkillID: hub.VersionID(f.Package, f.TreeDigest), At: f.At, Message: f.Log})
	}
	// Every replica's failures are in the store, those that left no log
	// (a backend refused, the package could not be laid out) with their
	// error.
	slices.SortStableFunc(b.FailedPreparations, func(x, y FailedPreparation) int { return y.At.Compare(x.At) })
	b.UnapprovedBound = make([]UnapprovedBinding, len(o.UnapprovedBound))
	for i, u := range o.UnapprovedBound {
		b.UnapprovedBound[i] = UnapprovedBinding{SkillID: hub.VersionID(u.Package, u.TreeDigest), Projects: u.Projects}
	}
	cat, err := a.hub.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ix := cat.Current()
	b.Catalog = OverviewCatalogState{Source: ix.Source(), Items: ix.Len(), GeneratedAt: ix.Snapshot().GeneratedAt, StoredAt: o.CatalogStoredAt}
	if ix.Source() == "bundled" {
		b.Catalog.StoredAt = time.Time{} // a snapshot stored earlier is not the one served
	}
	return out, nil
}

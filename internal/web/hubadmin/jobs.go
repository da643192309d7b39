package hubadmin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web"
)

// The pages of execution profiles and jobs, over the API's job routes
// (/api/skills/{id}/profile, …/prepare, /api/projects/{id}/skill-jobs…).

// profileAnswer is GET /api/skills/{id}/profile's answer.
type profileAnswer struct {
	SkillID    string        `json:"skill_id"`
	Profile    store.Profile `json:"profile"`
	Authorizes []string      `json:"authorizes"`
	Note       string        `json:"note"`
}

// preparation is GET /api/skills/{id}/prepare's answer.
type preparation struct {
	State      string    `json:"state"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Error      *struct {
		Message string `json:"message"`
	} `json:"error"`
	Identity string `json:"identity"`
	ImageID  string `json:"image_id"`
	Log      string `json:"log"`
	Revision int64  `json:"revision"`
}

// jobStatus is GET /api/projects/{id}/skill-jobs/{job_id}'s answer.
type jobStatus struct {
	Job     listedJob       `json:"job"`
	Stdout  string          `json:"stdout"`
	Stderr  string          `json:"stderr"`
	Inputs  []store.JobFile `json:"inputs"`
	Outputs []store.JobFile `json:"outputs"`
}

type profileData struct {
	Note     string
	ID       string
	Has      bool
	Profile  profileAnswer
	Prep     *prepView
	Scripts  []scriptChoice
	Runtimes []runtimeChoice
	Runtime  string // the runtime chosen
	Image    string // the image field's value
	// SuggestedImage is the chosen runtime's suggested image while the
	// field holds it, so that choosing another runtime changes it.
	SuggestedImage string
	Backend        string // the sandbox jobs run in, if any
	Summary        string // what the profile allows, for people
	NoJobs         string // why there is no job service, if there is none
	Unavailable    bool
}

// scriptChoice is one script the profile form offers.
type scriptChoice struct {
	Path, Interpreter string
	Detected          bool // the inspection found it
	Allowed           bool // the profile allows it (or, without a profile, suggests it)
}

// runtimeChoice is a runtime with the base image the seed suggests for it.
type runtimeChoice struct{ Name, Label, Image string }

// runtimes are the profile's runtimes, each with the base image the seed
// suggests (python:3.12-slim, node:22-bookworm-slim, debian:bookworm-slim
// for Bash).
var runtimes = []runtimeChoice{
	{string(store.RuntimePython), "Python", "python:3.12-slim"},
	{string(store.RuntimeNode), "Node.js", "node:22-bookworm-slim"},
	{string(store.RuntimeBash), "Bash", "debian:bookworm-slim"},
}

func suggestedImage(runtime string) string {
	for _, rt := range runtimes {
		if rt.Name == runtime {
			return rt.Image
		}
	}
	return ""
}

// prepView is a preparation as the profile page and its status route show
// it, in the shape hub.js follows.
type prepView struct {
	State      string    `json:"state"`
	Seconds    float64   `json:"seconds"`
	Lines      []string  `json:"lines"`
	Identity   string    `json:"-"`
	ImageID    string    `json:"-"` // the Docker image the runs use
	FinishedAt time.Time `json:"-"`
}

// maxPrepLines bounds the log lines a preparation's view carries (its end).
const maxPrepLines = 400

func viewOf(p preparation, now time.Time) *prepView {
	v := &prepView{State: p.State, Identity: p.Identity, ImageID: p.ImageID, FinishedAt: p.FinishedAt}
	if !p.StartedAt.IsZero() {
		end := now
		if !p.FinishedAt.IsZero() {
			end = p.FinishedAt
		}
		v.Seconds = end.Sub(p.StartedAt).Round(100 * time.Millisecond).Seconds()
	}
	if p.State == "running" {
		v.Lines = append(v.Lines, "Preparing the environment in a build sandbox…")
	}
	if p.Log != "" {
		v.Lines = append(v.Lines, strings.Split(strings.TrimRight(p.Log, "\n"), "\n")...)
	}
	if p.Error != nil {
		v.Lines = append(v.Lines, "Failed: "+p.Error.Message)
	}
	if p.State == "prepared" {
		v.Lines = append(v.Lines, "Prepared: "+p.Identity)
		if p.ImageID != "" {
			v.Lines = append(v.Lines, "Docker image: "+p.ImageID)
		}
	}
	if len(v.Lines) > maxPrepLines {
		v.Lines = append([]string{"…"}, v.Lines[len(v.Lines)-maxPrepLines:]...)
	}
	return v
}

func (a *Admin) profile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, ctx := a.client(r), r.Context()
	d := profileData{ID: id, Note: note(r), Runtimes: runtimes}
	var ins hub.Inspected
	if err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(id), nil, nil, "", &ins); err != nil {
		a.fail(w, r, err)
		return
	}
	d.ID = ins.Version.ID
	var rt struct {
		Chosen string `json:"chosen"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/skills/runtime", nil, nil, "", &rt); err != nil {
		a.fail(w, r, err)
		return
	}
	d.Backend = rt.Chosen
	err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(d.ID)+"/profile", nil, nil, "", &d.Profile)
	var ae *apiError
	switch {
	case err == nil:
		d.Has = true
		var p preparation
		if err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(d.ID)+"/prepare", nil, nil, "", &p); err == nil {
			d.Prep = viewOf(p, time.Now())
		}
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		d.Profile.Profile.Runtime, d.Profile.Profile.TimeoutSeconds = store.RuntimePython, 60
		for _, s := range ins.Inspection.Scripts {
			if strings.Contains(s.Interpreter, "node") {
				d.Profile.Profile.Runtime = store.RuntimeNode
			} else if strings.Contains(s.Interpreter, "bash") || strings.HasSuffix(s.Interpreter, "sh") {
				d.Profile.Profile.Runtime = store.RuntimeBash
			}
			if strings.Contains(s.Interpreter, "python") || s.PEP723 {
				d.Profile.Profile.Runtime = store.RuntimePython
				break
			}
		}
	case errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable:
		d.Unavailable, d.NoJobs = true, ae.Message
	default:
		a.fail(w, r, err)
		return
	}
	p := d.Profile.Profile
	d.Runtime = string(p.Runtime)
	allowed := map[string]bool{}
	for _, s := range p.Scripts {
		allowed[s] = true
	}
	for _, s := range ins.Inspection.Scripts {
		d.Scripts = append(d.Scripts, scriptChoice{Path: s.Path, Interpreter: s.Interpreter, Detected: true, Allowed: allowed[s.Path] || !d.Has})
		delete(allowed, s.Path)
	}
	for _, s := range p.Scripts {
		if allowed[s] {
			d.Scripts = append(d.Scripts, scriptChoice{Path: s, Allowed: true})
		}
	}
	d.Image = p.Image
	if d.Image == "" && d.Backend == "docker" {
		d.Image = suggestedImage(d.Runtime)
	}
	if sug := suggestedImage(d.Runtime); d.Image == "" || d.Image == sug {
		d.SuggestedImage = sug
	}
	d.Summary = profileSummary(d)
	a.render(w, r, "profile.html", "Execution profile of "+d.ID, "packages", d)
}

// profileSummary says what the profile allows, in the page's words (the
// API's note is for API clients).
func profileSummary(d profileData) string {
	p := d.Profile.Profile
	who := "no project is connected to this version yet"
	if n := len(d.Profile.Authorizes); n > 0 {
		who = "the projects connected to this version (" + strings.Join(d.Profile.Authorizes, ", ") + ") may run its allowed scripts"
	}
	switch {
	case !d.Has:
		return "This version has no execution profile yet: no project can run its scripts. Tick the scripts it may run, choose the runtime and save; then prepare the environment."
	case !p.Enabled:
		return "Not enabled: no project can run this version's scripts."
	case d.Prep == nil || d.Prep.State != "prepared":
		return "Enabled, but the environment is not prepared: no job can run until it is (below). Then " + who + "."
	}
	return "Enabled and prepared: " + who + "."
}

// setProfile saves the profile form through PUT /api/skills/{id}/profile.
func (a *Admin) setProfile(w http.ResponseWriter, r *http.Request, id string) error {
	timeout, _ := strconv.Atoi(strings.TrimSpace(r.PostFormValue("timeout_seconds")))
	scripts := []string{}
	for _, v := range r.PostForm["scripts"] {
		for _, s := range strings.Split(v, "\n") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(scripts, s) {
				scripts = append(scripts, s)
			}
		}
	}
	body := map[string]any{
		"runtime":         r.PostFormValue("runtime"),
		"scripts":         scripts,
		"timeout_seconds": timeout,
		"network":         r.PostFormValue("network") == "on",
		"enabled":         r.PostFormValue("enabled") == "on",
	}
	for _, k := range []string{"image", "rootfs", "interpreter"} {
		if v := strings.TrimSpace(r.PostFormValue(k)); v != "" {
			body[k] = v
		}
	}
	return a.client(r).do(r.Context(), http.MethodPut, "/api/skills/"+url.PathEscape(id)+"/profile", nil, body, "", nil)
}

// prepare starts a preparation and goes back to the profile page, whose
// preparation box follows it in place.
func (a *Admin) prepare(w http.ResponseWriter, r *http.Request, id string) {
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/skills/"+url.PathEscape(id)+"/prepare", nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/packages/"+url.PathEscape(id)+"/profile?ok=preparing#preparation", http.StatusSeeOther)
}

// prepareStatus answers the preparation box's polls: the preparation's
// state, time and log.
func (a *Admin) prepareStatus(w http.ResponseWriter, r *http.Request) {
	var p preparation
	w.Header().Set("Content-Type", "application/json")
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/skills/"+url.PathEscape(r.PathValue("id"))+"/prepare", nil, nil, "", &p); err != nil {
		status, msg := http.StatusBadGateway, err.Error()
		var ae *apiError
		if errors.As(err, &ae) {
			status = ae.Status
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "unavailable", "message": msg}})
		return
	}
	json.NewEncoder(w).Encode(viewOf(p, time.Now()))
}

type jobsList struct {
	Jobs        []listedJob
	Total       int
	More        bool // more than the page shows
	Unavailable string
}

// projectJobsShown is how many jobs a project's page lists.
const projectJobsShown = 10

// projectJobs reads a project's latest jobs for its page; a hub without a
// job service says so instead.
func (a *Admin) projectJobs(r *http.Request, id string) (jobsList, error) {
	var out struct {
		Jobs []listedJob `json:"jobs"`
	}
	err := a.client(r).do(r.Context(), http.MethodGet, "/api/projects/"+url.PathEscape(id)+"/skill-jobs", nil, nil, "", &out)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusNotFound && ae.Code == "not_found" && strings.Contains(ae.Message, "no such route")) {
		return jobsList{Unavailable: ae.Message}, nil
	}
	l := jobsList{Jobs: out.Jobs, Total: len(out.Jobs)}
	if len(l.Jobs) > projectJobsShown {
		l.Jobs, l.More = l.Jobs[:projectJobsShown], true
	}
	return l, err
}

func (a *Admin) createJob(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	id := r.PathValue("id")
	var j store.Job
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/projects/"+url.PathEscape(id)+"/skill-jobs", nil, map[string]string{"skill_id": r.PostFormValue("skill_id")}, "", &j); err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, jobPath(id, j.ID), "created")
}

func jobPath(project, job string) string {
	return "/projects/" + url.PathEscape(project) + "/jobs/" + url.PathEscape(job)
}

type jobData struct {
	Note    string
	Project string
	Status  jobStatus
	Scripts []string // the allowed scripts of the job's version
	Args    string
	Open    bool // inputs may still be uploaded and the job run
	// Lease is the lease of the replica running the job, while it runs
	// or is locked; nil otherwise.
	Lease *jobLease
	// CanSettle says the signed-in token may settle the job (admin).
	CanSettle bool
}

// jobLease is what a job's page says of the replica running it: whether
// it holds its lease and, if not, when the other replicas settle the job
// on their own; times by the database's clock.
type jobLease struct {
	Replica replicaView
	// Timeout is the job's timeout in seconds (its profile's, else the
	// longest a profile allows).
	Timeout int
	// EndsBy is when a live replica's run ends at the latest (its
	// timeout).
	EndsBy time.Time
	// SettlesAt is about when the other replicas settle a lapsed
	// replica's job (its lease seen lapsed for a lease more and, for a
	// running job, its timeout and a lease past its start); Due says that
	// time has passed: at their next heartbeat.
	SettlesAt time.Time
	Due       bool
	// OthersLive counts the live replicas other than the job's.
	OthersLive int
}

// defaultLease is a replica's lease when the page cannot tell its length
// (the replica never held one): the hub's default.
const defaultLease = 20 * time.Second

// leaseOf reads the lease of the replica running job j (running or
// locked), by the database's time.
func (a *Admin) leaseOf(r *http.Request, j listedJob) (*jobLease, error) {
	var rs struct {
		Replicas  []replica `json:"replicas"`
		CheckedAt time.Time `json:"checked_at"`
		Replica   string    `json:"replica"`
	}
	c, ctx := a.client(r), r.Context()
	if err := c.do(ctx, http.MethodGet, "/api/replicas", nil, nil, "", &rs); err != nil {
		return nil, err
	}
	l := &jobLease{Replica: replicaView{replica: replica{Name: j.ClaimedBy}}, Timeout: store.MaxTimeoutSeconds}
	for _, rp := range rs.Replicas {
		switch {
		case rp.Name == j.ClaimedBy:
			l.Replica = viewReplica(rp, rs.CheckedAt, rs.Replica)
		case rp.Live:
			l.OthersLive++
		}
	}
	if j.SkillID != "" {
		var p profileAnswer
		if c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(j.SkillID)+"/profile", nil, nil, "", &p) == nil && p.Profile.TimeoutSeconds > 0 {
			l.Timeout = p.Profile.TimeoutSeconds
		}
	}
	timeout := time.Duration(l.Timeout) * time.Second
	rp := l.Replica.replica
	if rp.Live {
		if !j.StartedAt.IsZero() && j.State == store.JobRunning {
			l.EndsBy = j.StartedAt.Add(timeout)
		}
		return l, nil
	}
	// A replica's lease is its length past its last heartbeat; the others
	// hold leases as long, as replicas of one hub are set alike.
	lease := defaultLease
	if !rp.HeartbeatAt.IsZero() && rp.LeaseUntil.After(rp.HeartbeatAt) {
		lease = rp.LeaseUntil.Sub(rp.HeartbeatAt)
	}
	l.SettlesAt = rs.CheckedAt
	if !rp.LeaseUntil.IsZero() {
		l.SettlesAt = rp.LeaseUntil.Add(lease)
	}
	if j.State == store.JobRunning && !j.StartedAt.IsZero() {
		if t := j.StartedAt.Add(timeout + lease); t.After(l.SettlesAt) {
			l.SettlesAt = t
		}
	}
	l.Due = !l.SettlesAt.After(rs.CheckedAt)
	return l, nil
}

// isAdmin reports whether the request's session holds an admin-scoped
// token.
func isAdmin(r *http.Request) bool {
	s := web.SessionFrom(r.Context())
	return s != nil && slices.Contains(s.Identity.Scopes, string(store.ScopeAdmin))
}

func (a *Admin) job(w http.ResponseWriter, r *http.Request) {
	pid, jid := r.PathValue("id"), r.PathValue("jid")
	c, ctx := a.client(r), r.Context()
	d := jobData{Project: pid, Note: note(r), Args: "[]"}
	if err := c.do(ctx, http.MethodGet, "/api/projects/"+url.PathEscape(pid)+"/skill-jobs/"+url.PathEscape(jid), nil, nil, "", &d.Status); err != nil {
		a.fail(w, r, err)
		return
	}
	st := d.Status.Job.State
	d.Open = st == store.JobCreated || st == store.JobUploading
	if d.Open && d.Status.Job.SkillID != "" {
		var p profileAnswer
		if c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(d.Status.Job.SkillID)+"/profile", nil, nil, "", &p) == nil {
			d.Scripts = p.Profile.Scripts
		}
	}
	if args, err := json.Marshal(d.Status.Job.Args); err == nil && len(d.Status.Job.Args) > 0 {
		d.Args = string(args)
	}
	if st.Active() && d.Status.Job.ClaimedBy != "" {
		l, err := a.leaseOf(r, d.Status.Job)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		d.Lease, d.CanSettle = l, isAdmin(r)
	}
	a.render(w, r, "job.html", "Job "+jid, "jobs", d)
}

func (a *Admin) jobAction(w http.ResponseWriter, r *http.Request) {
	pid, jid := r.PathValue("id"), r.PathValue("jid")
	base := "/api/projects/" + url.PathEscape(pid) + "/skill-jobs/" + url.PathEscape(jid)
	c := a.client(r)
	switch r.PathValue("action") {
	case "files":
		ct := r.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "multipart/form-data") {
			a.site.Error(w, r, http.StatusUnsupportedMediaType, "Not an upload", "Send the file with the upload form. Nothing was changed.")
			return
		}
		if err := c.do(r.Context(), http.MethodPost, base+"/files", nil, uploadOf(r), ct, nil); err != nil {
			a.fail(w, r, err)
			return
		}
		redirect(w, r, jobPath(pid, jid), "uploaded")
	case "run":
		form(w, r)
		script := strings.TrimSpace(r.PostFormValue("script"))
		raw := strings.TrimSpace(r.PostFormValue("args"))
		if raw == "" {
			raw = "[]"
		}
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			a.site.Error(w, r, http.StatusUnprocessableEntity, "Arguments are not a JSON array of strings",
				`Write the arguments as a JSON array of strings, such as ["in/data.csv", "--verbose"]. Nothing was changed.`)
			return
		}
		a.runJob(w, r, pid, jid, base, script, args)
	case "settle":
		// An administrator's decision, through the API, which refuses a
		// job whose replica holds its lease unless forced, and writes the
		// settlement to the audit log.
		form(w, r)
		force := r.PostFormValue("force") == "yes"
		what := "settle the job"
		if force {
			what = "settle the job by force"
		}
		if !confirmed(w, r, a, what) {
			return
		}
		body := map[string]any{"reason": strings.TrimSpace(r.PostFormValue("reason")), "force": force}
		if err := c.do(r.Context(), http.MethodPost, base+"/settle", nil, body, "", nil); err != nil {
			a.fail(w, r, err)
			return
		}
		redirect(w, r, jobPath(pid, jid), "settled")
	case "delete":
		form(w, r)
		if !confirmed(w, r, a, "delete the job") {
			return
		}
		if err := c.do(r.Context(), http.MethodDelete, base, nil, nil, "", nil); err != nil {
			a.fail(w, r, err)
			return
		}
		redirect(w, r, "/projects/"+url.PathEscape(pid), "deleted")
	default:
		a.site.NotFound(w, r, "A job has no such action.")
	}
}

// runJob runs a job as a task: the API's run waits a bounded time; a job
// still running then is followed until it ends.
func (a *Admin) runJob(w http.ResponseWriter, r *http.Request, pid, jid, base, script string, args []string) {
	c := a.client(r)
	t := a.tasks.start(owner(r), "Run "+web.Shorten(script, 80)+" in job "+jid, func(ctx context.Context, t *task) (string, error) {
		t.say("Queued: " + script + " " + strings.Join(args, " "))
		var st jobStatus
		if err := c.do(ctx, http.MethodPost, base+"/run", nil, map[string]any{"script": script, "args": args}, "", &st); err != nil {
			return "", err
		}
		last := st.Job.State
		t.say("State: " + string(last))
		for !st.Job.State.Final() {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
			if err := c.do(ctx, http.MethodGet, base, nil, nil, "", &st); err != nil {
				return "", err
			}
			if st.Job.State != last {
				last = st.Job.State
				t.say("State: " + string(last))
			}
		}
		if st.Job.ExitCode != nil {
			t.say(fmt.Sprintf("Exit code %d.", *st.Job.ExitCode))
		}
		if st.Job.Reason != "" {
			t.say(st.Job.Reason)
		}
		t.say(fmt.Sprintf("%d output files.", len(st.Outputs)))
		if st.Job.State != store.JobSucceeded {
			return "", errors.New("the job " + string(st.Job.State) + "; its page shows the logs: " + jobPath(pid, jid))
		}
		return jobPath(pid, jid), nil
	})
	http.Redirect(w, r, "/tasks/"+t.id, http.StatusSeeOther)
}

// jobFile passes a job's file on as the API serves it: an attachment with
// its digest.
func (a *Admin) jobFile(w http.ResponseWriter, r *http.Request) {
	pid, jid := r.PathValue("id"), r.PathValue("jid")
	body, h, err := a.client(r).raw(r.Context(), http.MethodGet, "/api/projects/"+url.PathEscape(pid)+"/skill-jobs/"+url.PathEscape(jid)+"/file",
		url.Values{"path": {r.URL.Query().Get("path")}}, nil, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	for _, k := range []string{"Content-Disposition", "X-Content-Digest", "X-Job-File-Kind"} {
		if v := h.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

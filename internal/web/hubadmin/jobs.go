package hubadmin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	Log      string `json:"log"`
	Revision int64  `json:"revision"`
}

// jobStatus is GET /api/projects/{id}/skill-jobs/{job_id}'s answer.
type jobStatus struct {
	Job     store.Job       `json:"job"`
	Stdout  string          `json:"stdout"`
	Stderr  string          `json:"stderr"`
	Inputs  []store.JobFile `json:"inputs"`
	Outputs []store.JobFile `json:"outputs"`
}

type profileData struct {
	Note        string
	ID          string
	Has         bool
	Profile     profileAnswer
	Prep        *preparation
	Scripts     string // one a line, for the form
	Suggested   []string
	NoJobs      string // why there is no job service, if there is none
	Unavailable bool
}

func (a *Admin) profile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, ctx := a.client(r), r.Context()
	d := profileData{ID: id, Note: note(r)}
	var ins hub.Inspected
	if err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(id), nil, nil, "", &ins); err != nil {
		a.fail(w, r, err)
		return
	}
	d.ID = ins.Version.ID
	for _, s := range ins.Inspection.Scripts {
		d.Suggested = append(d.Suggested, s.Path)
	}
	err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(d.ID)+"/profile", nil, nil, "", &d.Profile)
	var ae *apiError
	switch {
	case err == nil:
		d.Has = true
		var p preparation
		if err := c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(d.ID)+"/prepare", nil, nil, "", &p); err == nil {
			d.Prep = &p
		}
		d.Scripts = strings.Join(d.Profile.Profile.Scripts, "\n")
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		d.Profile.Profile.Runtime, d.Profile.Profile.TimeoutSeconds = store.RuntimePython, 60
		d.Scripts = strings.Join(d.Suggested, "\n")
	case errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable:
		d.Unavailable, d.NoJobs = true, ae.Message
	default:
		a.fail(w, r, err)
		return
	}
	a.render(w, r, "profile.html", "Execution profile of "+d.ID, "packages", d)
}

// setProfile saves the profile form through PUT /api/skills/{id}/profile.
func (a *Admin) setProfile(w http.ResponseWriter, r *http.Request, id string) error {
	timeout, _ := strconv.Atoi(strings.TrimSpace(r.PostFormValue("timeout_seconds")))
	var scripts []string
	for _, s := range strings.Split(r.PostFormValue("scripts"), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			scripts = append(scripts, s)
		}
	}
	if scripts == nil {
		scripts = []string{}
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

// prepare starts a preparation and follows it as a task until it ends.
func (a *Admin) prepare(w http.ResponseWriter, r *http.Request, id string) {
	c := a.client(r)
	base := "/api/skills/" + url.PathEscape(id) + "/prepare"
	if err := c.do(r.Context(), http.MethodPost, base, nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	t := a.tasks.start(owner(r), "Prepare "+id, func(ctx context.Context, t *task) (string, error) {
		t.say("Preparing the environment in a build sandbox…")
		for {
			var p preparation
			if err := c.do(ctx, http.MethodGet, base, nil, nil, "", &p); err != nil {
				return "", err
			}
			if p.State != "running" {
				for _, l := range strings.Split(strings.TrimRight(p.Log, "\n"), "\n") {
					if l != "" {
						t.say(l)
					}
				}
				switch {
				case p.State == "prepared":
					t.say("Prepared: " + p.Identity)
					return "/packages/" + url.PathEscape(id) + "/profile", nil
				case p.Error != nil:
					return "", errors.New(p.Error.Message)
				}
				return "", errors.New("the preparation ended without a prepared environment (state " + p.State + ")")
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	http.Redirect(w, r, "/tasks/"+t.id, http.StatusSeeOther)
}

type jobsList struct {
	Jobs        []store.Job
	Unavailable string
}

// projectJobs reads a project's jobs for its page; a hub without a job
// service says so instead.
func (a *Admin) projectJobs(r *http.Request, id string) (jobsList, error) {
	var out struct {
		Jobs []store.Job `json:"jobs"`
	}
	err := a.client(r).do(r.Context(), http.MethodGet, "/api/projects/"+url.PathEscape(id)+"/skill-jobs", nil, nil, "", &out)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusNotFound && ae.Code == "not_found" && strings.Contains(ae.Message, "no such route")) {
		return jobsList{Unavailable: ae.Message}, nil
	}
	return jobsList{Jobs: out.Jobs}, err
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
	Scripts []string // the allowed scripts of the project's bound versions
	Args    string
	Open    bool // inputs may still be uploaded and the job run
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
	if d.Open {
		var sk struct {
			Skills []hub.Bound `json:"skills"`
		}
		if err := c.do(ctx, http.MethodGet, "/api/projects/"+url.PathEscape(pid)+"/skills", url.Values{"limit": {"1000"}}, nil, "", &sk); err == nil {
			seen := map[string]bool{}
			for _, b := range sk.Skills {
				var p profileAnswer
				if c.do(ctx, http.MethodGet, "/api/skills/"+url.PathEscape(b.Version.ID)+"/profile", nil, nil, "", &p) != nil || !p.Profile.Enabled {
					continue
				}
				for _, s := range p.Profile.Scripts {
					if !seen[s] {
						seen[s] = true
						d.Scripts = append(d.Scripts, s)
					}
				}
			}
		}
	}
	if args, err := json.Marshal(d.Status.Job.Args); err == nil && len(d.Status.Job.Args) > 0 {
		d.Args = string(args)
	}
	a.render(w, r, "job.html", "Job "+jid, "projects", d)
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
	case "delete":
		form(w, r)
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

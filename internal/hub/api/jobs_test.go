package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/auditlog"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/fake"
)

// copier is the fake backend's behaviour: a run copies /work/in.txt to
// /work/out.txt and prints "copied"; a run whose first argument is
// "block" waits until it is killed, one whose first argument is "fail"
// exits 3.
func copier(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	work := ""
	for _, m := range spec.Mounts {
		if m.Target == "/work" {
			work = m.Host
		}
	}
	args := spec.Argv[min(2, len(spec.Argv)):]
	if len(args) > 0 && args[0] == "block" {
		<-ctx.Done()
		return sandbox.Result{}, nil
	}
	if len(args) > 0 && args[0] == "fail" {
		return sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 3, Stderr: []byte("failed on purpose\n")}, nil
	}
	if work != "" {
		if data, err := os.ReadFile(filepath.Join(work, "in.txt")); err == nil {
			if err := os.WriteFile(filepath.Join(work, "out.txt"), append([]byte("copy: "), data...), 0o644); err != nil {
				return sandbox.Result{}, err
			}
		}
	}
	return sandbox.Result{Reason: sandbox.ReasonExited, Stdout: []byte("copied\n")}, nil
}

// newJobEnv is an API with a job service on the fake backend (checkErr:
// the backend "does not work here").
func newJobEnv(t *testing.T, o store.Options, checkErr error) (*env, *jobs.Service) {
	t.Helper()
	ctx := context.Background()
	db := openStore(t, o)
	ex := fake.New()
	ex.CheckErr = checkErr
	ex.Respond = copier
	audit := auditlog.New(db, &auditlog.Options{Replica: "api-test"})
	t.Cleanup(func() { audit.Close(context.Background()) })
	svc, err := jobs.New(jobs.Options{Store: db, Executor: ex, Replica: "api-test", Dir: filepath.Join(t.TempDir(), "jobs"),
		RunWait: time.Minute, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.Start(ctx) // a failing backend is the test's subject
	return newEnvHub(t, db, o, newHub(db), func(ao *api.Options) {
		ao.Jobs = svc
		ao.Audit, ao.Replica = audit, "api-test"
		ao.Runtime = func(context.Context) []api.Backend {
			return []api.Backend{{Name: "fake", Available: checkErr == nil, Chosen: checkErr == nil, Enforced: []string{"nothing: a test fake"}}}
		}
	}), svc
}

func jobBackends(t *testing.T, f func(t *testing.T, e *env, svc *jobs.Service)) {
	t.Run("sqlite", func(t *testing.T) {
		e, svc := newJobEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")}, nil)
		f(t, e, svc)
	})
	t.Run("postgres", func(t *testing.T) {
		e, svc := newJobEnv(t, store.Options{Database: pg.Database(t)}, nil)
		f(t, e, svc)
	})
}

// form is a multipart body of (path, content) pairs.
func form(t testing.TB, files ...[2]string) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		if f[0] != "" {
			mw.WriteField("path", f[0])
		}
		w, err := mw.CreateFormFile("file", "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	mw.Close()
	return mw.FormDataContentType(), &buf
}

const copierMD = "---\nname: copier\ndescription: Copies a file.\n---\n# Copier\n"

func TestJobRoutes(t *testing.T) {
	jobBackends(t, func(t *testing.T, e *env, svc *jobs.Service) {
		id := e.install(map[string]string{"SKILL.md": copierMD, "scripts/copy.py": "print('copy')\n"})
		for _, p := range []string{"p", "other"} {
			e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": p, "name": p}), 201, "")
		}
		e.want(e.do("PUT", "/api/projects/p/skills/"+id, e.admin, nil), 200, "")
		prof := "/api/skills/" + id + "/profile"

		// The runtime says which backend runs jobs.
		var rt struct {
			Backends []api.Backend `json:"backends"`
			Chosen   string        `json:"chosen"`
		}
		e.do("GET", "/api/skills/runtime", e.read, nil).decode(t, &rt)
		if rt.Chosen != "fake" || len(rt.Backends) != 1 || len(rt.Backends[0].Enforced) == 0 {
			t.Fatalf("runtime: %+v", rt)
		}

		// Profiles: admin only, validated, and the answer names the projects
		// an enabled profile authorises.
		e.want(e.do("GET", prof, e.read, nil), 404, api.CodeNotFound)
		spec := map[string]any{"runtime": "python", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 30, "enabled": true}
		e.want(e.do("PUT", prof, e.write, spec), 403, api.CodeForbidden)
		for _, bad := range []map[string]any{
			{"runtime": "python", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 0},
			{"runtime": "python", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 301},
			{"runtime": "ruby", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 30},
			{"runtime": "python", "scripts": []string{"scripts/missing.py"}, "timeout_seconds": 30},
		} {
			e.want(e.do("PUT", prof, e.admin, bad), 422, api.CodeInvalid)
		}
		var pa api.ProfileAnswer
		a := e.do("PUT", prof, e.admin, spec)
		e.want(a, 200, "")
		a.decode(t, &pa)
		if !pa.Profile.Enabled || !slices.Equal(pa.Authorizes, []string{"p"}) || !strings.Contains(pa.Note, "every project bound") || pa.Profile.Prepared() {
			t.Fatalf("set profile: %s", a.body)
		}
		e.do("GET", prof, e.read, nil).decode(t, &pa)
		if pa.SkillID != id || pa.Profile.TimeoutSeconds != 30 {
			t.Fatalf("get profile: %+v", pa)
		}

		// Jobs need a prepared profile.
		jobsPath := "/api/projects/p/skill-jobs"
		e.want(e.do("POST", jobsPath, e.write, map[string]string{"skill_id": id}), 409, api.CodeProfile)
		e.want(e.do("POST", "/api/skills/"+id+"/prepare", e.write, nil), 403, api.CodeForbidden)
		var prep api.Preparation
		a = e.do("POST", "/api/skills/"+id+"/prepare", e.admin, nil)
		e.want(a, 202, "")
		if a.header.Get("Location") != "/api/skills/"+id+"/prepare" {
			t.Fatalf("prepare: no Location: %v", a.header)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			e.do("GET", "/api/skills/"+id+"/prepare", e.read, nil).decode(t, &prep)
			if prep.State != "running" || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if prep.State != "prepared" || prep.Identity != "none" {
			t.Fatalf("preparation: %+v", prep)
		}

		// Create (write), upload, run, download.
		e.want(e.do("POST", jobsPath, e.read, map[string]string{"skill_id": id}), 403, api.CodeForbidden)
		e.want(e.do("POST", "/api/projects/other/skill-jobs", e.write, map[string]string{"skill_id": id}), 404, "")
		var j store.Job
		a = e.do("POST", jobsPath, e.write, map[string]string{"skill_id": id})
		e.want(a, 201, "")
		a.decode(t, &j)
		jp := jobsPath + "/" + j.ID
		ct, body := form(t, [2]string{"in.txt", "hello"}, [2]string{"", "named by the part"})
		a = e.raw("POST", jp+"/files", e.write, ct, body)
		e.want(a, 200, "")
		var up struct{ Files []store.JobFile }
		a.decode(t, &up)
		if len(up.Files) != 2 || up.Files[0].Path != "in.txt" || up.Files[1].Path != "upload.bin" || up.Files[0].Size != 5 {
			t.Fatalf("upload: %s", a.body)
		}
		ct, body = form(t, [2]string{"../escape.txt", "x"})
		e.want(e.raw("POST", jp+"/files", e.write, ct, body), 422, api.CodeInvalid)
		e.want(e.raw("POST", jp+"/files", e.write, "application/json", strings.NewReader("{}")), 415, api.CodeUnsupportedFormat)
		ct, body = form(t, [2]string{"big.bin", strings.Repeat("x", api.MaxJobFile+1)})
		e.want(e.raw("POST", jp+"/files", e.write, ct, body), 413, "")
		// What arrived of it is kept, marked incomplete: the job does not
		// run on it until it is uploaded again whole.
		var got jobs.Status
		e.do("GET", jp, e.read, nil).decode(t, &got)
		if len(got.Inputs) != 3 || got.Inputs[0].Path != "big.bin" || !got.Inputs[0].Incomplete {
			t.Fatalf("inputs after an upload over the limit: %+v", got.Inputs)
		}
		e.want(e.do("POST", jp+"/run", e.write, map[string]any{"script": "scripts/copy.py", "args": []string{"in.txt"}}), 409, api.CodeInputIncomplete)
		ct, body = form(t, [2]string{"big.bin", "small now"})
		e.want(e.raw("POST", jp+"/files", e.write, ct, body), 200, "")
		ct, body = form(t, [2]string{"in.txt", "x"})
		e.want(e.raw("POST", "/api/projects/other/skill-jobs/"+j.ID+"/files", e.write, ct, body), 404, api.CodeNotFound)

		run := jp + "/run"
		e.want(e.do("POST", run, e.write, map[string]any{"script": "scripts/copy.py", "args": "in.txt"}), 422, api.CodeInvalid)
		e.want(e.do("POST", run, e.write, map[string]any{"script": "scripts/copy.py", "args": []any{1}}), 422, api.CodeInvalid)
		e.want(e.do("POST", run, e.write, map[string]any{"script": "SKILL.md"}), 422, api.CodeScriptNotAllowed)
		var st jobs.Status
		a = e.do("POST", run, e.write, map[string]any{"script": "scripts/copy.py", "args": []string{"in.txt"}})
		e.want(a, 200, "")
		a.decode(t, &st)
		if st.Job.State != store.JobSucceeded || st.Stdout != "copied\n" || len(st.Outputs) != 1 || st.Outputs[0].Path != "out.txt" {
			t.Fatalf("run: %s", a.body)
		}
		e.want(e.do("POST", run, e.write, map[string]any{"script": "scripts/copy.py"}), 409, api.CodeJobState)
		ct, body = form(t, [2]string{"late.txt", "x"})
		e.want(e.raw("POST", jp+"/files", e.write, ct, body), 409, api.CodeJobState)

		a = e.do("GET", jp+"/file?path=out.txt", e.read, nil)
		e.want(a, 200, "")
		sum := sha256.Sum256([]byte("copy: hello"))
		if string(a.body) != "copy: hello" || a.header.Get("Content-Type") != "application/octet-stream" ||
			a.header.Get("X-Content-Digest") != "sha256:"+hex.EncodeToString(sum[:]) ||
			!strings.HasPrefix(a.header.Get("Content-Disposition"), "attachment") || a.header.Get("X-Job-File-Kind") != "output" {
			t.Fatalf("download: %q %v", a.body, a.header)
		}
		e.want(e.do("GET", jp+"/file?path=in.txt", e.read, nil), 200, "")
		for _, p := range []string{"../../etc/passwd", "/etc/passwd", "missing.txt"} {
			a := e.do("GET", jp+"/file?path="+url.QueryEscape(p), e.read, nil)
			if a.status != 404 && a.status != 422 {
				t.Fatalf("download %q: %d %s", p, a.status, a.body)
			}
		}
		e.want(e.do("GET", "/api/projects/other/skill-jobs/"+j.ID+"/file?path=out.txt", e.read, nil), 404, api.CodeNotFound)
		e.want(e.do("GET", "/api/projects/other/skill-jobs/"+j.ID, e.read, nil), 404, api.CodeNotFound)

		var list struct{ Jobs []store.Job }
		e.do("GET", jobsPath, e.read, nil).decode(t, &list)
		if len(list.Jobs) != 1 || list.Jobs[0].ID != j.ID {
			t.Fatalf("list: %+v", list)
		}

		// Unbinding is refused while the project keeps jobs of the version.
		a = e.do("DELETE", "/api/projects/p/skills/"+id, e.admin, nil)
		e.want(a, 409, api.CodeJobs)
		if !strings.Contains(string(a.body), j.ID) {
			t.Fatalf("unbind refusal does not name the job: %s", a.body)
		}

		// A running job: its files are not served, it and its project are
		// not deleted.
		var j2 store.Job
		e.do("POST", jobsPath, e.write, map[string]string{"skill_id": id}).decode(t, &j2)
		done := make(chan answer, 1)
		go func() {
			// Run waits until the job is stopped below.
			done <- e.do("POST", jobsPath+"/"+j2.ID+"/run", e.write, map[string]any{"script": "scripts/copy.py", "args": []string{"block"}})
		}()
		waitJob(t, svc, j2.ID, store.JobRunning)
		e.want(e.do("GET", jobsPath+"/"+j2.ID+"/file?path=in.txt", e.read, nil), 409, api.CodeJobState)
		e.want(e.do("DELETE", jobsPath+"/"+j2.ID, e.admin, nil), 409, api.CodeJobState)
		a = e.do("DELETE", "/api/projects/p", e.admin, nil)
		e.want(a, 409, api.CodeJobs)
		if !strings.Contains(string(a.body), j2.ID) {
			t.Fatalf("project deletion refusal does not name the job: %s", a.body)
		}
		if _, err := svc.Stop(context.Background(), "p", j2.ID, ""); err != nil {
			t.Fatal(err)
		}
		waitJob(t, svc, j2.ID, store.JobStopped)
		if got := <-done; got.status != 200 || !strings.Contains(string(got.body), `"stopped"`) {
			t.Fatalf("a stopped run: %d %s", got.status, got.body)
		}

		// Deletion: admin only.
		e.want(e.do("DELETE", jp, e.write, nil), 403, api.CodeForbidden)
		e.want(e.do("DELETE", jp, e.admin, nil), 204, "")
		e.want(e.do("DELETE", jobsPath+"/"+j2.ID, e.admin, nil), 204, "")
		e.want(e.do("GET", jp, e.read, nil), 404, api.CodeNotFound)
		e.want(e.do("DELETE", "/api/projects/p/skills/"+id, e.admin, nil), 200, "")

		// Every change was audited, refusals included.
		var audit struct{ Entries []store.AuditEntry }
		e.do("GET", "/api/audit?limit=1000", e.read, nil).decode(t, &audit)
		seen := map[string]bool{}
		for _, en := range audit.Entries {
			seen[en.Action+" "+en.Result] = true
		}
		for _, want := range []string{"skill.profile ok", "skill.profile forbidden", "skill.prepare ok", "job.create ok", "job.create profile_not_ready",
			"job.upload ok", "job.upload job_limit", "job.run queued", "job.run succeeded", "job.run job_state", "job.run script_not_allowed", "job.delete ok", "job.delete job_state"} {
			if !seen[want] {
				t.Errorf("no audit entry %q (have %v)", want, seen)
			}
		}
	})
}

func waitJob(t *testing.T, svc *jobs.Service, id string, want store.JobState) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := svc.Get(context.Background(), "p", id)
		if err == nil && st.Job.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %s, want %s (%v)", id, st.Job.State, want, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJobsWithoutBackend: with no working backend the skills are served
// and job operations answer 503 sandbox_unavailable with the reason; with
// no service at all, the same code.
func TestJobsWithoutBackend(t *testing.T) {
	e, _ := newJobEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")}, errors.New("bwrap: not installed"))
	id := e.install(map[string]string{"SKILL.md": copierMD, "scripts/copy.py": "print('copy')\n"})
	e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": "p", "name": "p"}), 201, "")
	e.want(e.do("PUT", "/api/projects/p/skills/"+id, e.admin, nil), 200, "")
	e.want(e.do("PUT", "/api/skills/"+id+"/profile", e.admin, map[string]any{"runtime": "bash", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 5, "enabled": true}), 200, "")
	a := e.do("POST", "/api/skills/"+id+"/prepare", e.admin, nil)
	e.want(a, 503, api.CodeSandboxUnavailable)
	if !strings.Contains(string(a.body), "not installed") {
		t.Fatalf("the refusal does not say why: %s", a.body)
	}
	e.want(e.do("POST", "/api/projects/p/skill-jobs", e.write, map[string]string{"skill_id": id}), 503, api.CodeSandboxUnavailable)
	e.want(e.do("GET", "/api/projects/p/skill-jobs", e.read, nil), 200, "")
	e.want(e.do("GET", "/api/skills/"+id, e.read, nil), 200, "")

	plain := newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	plain.want(plain.do("GET", "/api/projects/p/skill-jobs", plain.read, nil), 503, api.CodeSandboxUnavailable)
}

// TestPrepareRacesClose: preparations asked for while the job service
// closes are either started before Close waits, and so waited for, or
// refused with 503; none is left running once Close has returned.
func TestPrepareRacesClose(t *testing.T) {
	e, svc := newJobEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")}, nil)
	id := e.install(map[string]string{"SKILL.md": copierMD, "scripts/copy.py": "print('copy')\n"})
	e.want(e.do("PUT", "/api/skills/"+id+"/profile", e.admin, map[string]any{"runtime": "bash", "scripts": []string{"scripts/copy.py"}, "timeout_seconds": 5, "enabled": true}), 200, "")
	prepare := func() int {
		r := httptest.NewRequest("POST", "/api/skills/"+id+"/prepare", nil)
		r.Header.Set("Authorization", "Bearer "+e.admin)
		rec := httptest.NewRecorder()
		e.a.ServeHTTP(rec, r)
		return rec.Code
	}
	var wg sync.WaitGroup
	codes := make([]int, 40)
	for i := range codes {
		wg.Go(func() { codes[i] = prepare() })
	}
	svc.Close()
	wg.Wait()
	for _, c := range codes {
		if c != 202 && c != 409 && c != 503 {
			t.Fatalf("prepare while closing: %d", c)
		}
	}
	if c := prepare(); c != 503 {
		t.Fatalf("prepare after Close: %d, want 503", c)
	}
	var prep api.Preparation
	e.do("GET", "/api/skills/"+id+"/prepare", e.read, nil).decode(t, &prep)
	if prep.State == "running" {
		t.Fatalf("a preparation still runs after Close: %+v", prep)
	}
}

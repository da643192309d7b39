package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// The job routes' limits.
const (
	// MaxJobFile bounds one file uploaded to a job (the seed's 32 MiB).
	MaxJobFile = store.MaxJobFileSize
	// maxJobForm bounds an upload's whole form: one file at its limit and
	// the fields around it.
	maxJobForm = MaxJobFile + 64<<10
)

// JobPath names a job of a project.
type JobPath struct {
	ProjectPath
	JobID string `path:"job_id" maxLength:"64" pattern:"^[A-Za-z0-9_-]+$" doc:"The job's id"`
}

// ProfileInput is the execution profile an administrator sets.
type ProfileInput struct {
	Runtime        store.Runtime `json:"runtime" enum:"python,node,bash" doc:"The interpreter family"`
	Image          string        `json:"image,omitempty" maxLength:"512" doc:"The Docker image (an id or a local tag); Docker only"`
	RootFS         string        `json:"rootfs,omitempty" maxLength:"1024" doc:"bubblewrap's root tree on the server; empty: the host's /usr, read-only"`
	Interpreter    string        `json:"interpreter,omitempty" maxLength:"1024" doc:"The interpreter's absolute path in the sandbox; empty for the runtime's default"`
	Scripts        []string      `json:"scripts" maxItems:"256" doc:"The paths, in the package, of the only scripts jobs may run"`
	TimeoutSeconds int           `json:"timeout_seconds" minimum:"1" maximum:"300" doc:"The wall time of a run"`
	Network        bool          `json:"network,omitempty" doc:"Give runs and the preparation the host's network (off by default)"`
	Enabled        bool          `json:"enabled,omitempty" doc:"Authorise jobs for every project bound to the version"`
}

type profileInput struct {
	SkillPath
	Body ProfileInput
}

// ProfileAnswer is a version's profile with what it authorises.
type ProfileAnswer struct {
	SkillID string  `json:"skill_id"`
	Profile Profile `json:"profile"`
	// Authorizes lists the projects bound to the version: while the
	// profile is enabled, each of them may run its allowed scripts.
	Authorizes []string `json:"authorizes" doc:"The projects bound to the version, which the enabled profile authorises to run its scripts"`
	Note       string   `json:"note" doc:"What the profile allows, for people"`
}

type profileOutput struct {
	Body ProfileAnswer
}

// Preparation is the state of a version's environment preparation, the
// same on every replica.
type Preparation struct {
	SkillID string `json:"skill_id"`
	// State is running while a preparation runs on any replica (Replica
	// says which); else prepared, failed (the last preparation failed:
	// Error and Log say why) or none.
	State      string     `json:"state" enum:"running,prepared,failed,none"`
	Replica    string     `json:"replica,omitempty" doc:"The replica running the preparation"`
	StartedAt  time.Time  `json:"started_at,omitzero"`
	FinishedAt time.Time  `json:"finished_at,omitzero"`
	Error      *ErrorBody `json:"error,omitempty" doc:"Why the last preparation failed"`
	// Identity and Log are the stored profile's.
	Identity string `json:"identity,omitempty" doc:"The prepared environment's immutable identity: sha256:… of the layer, a Docker image id, or none"`
	ImageID  string `json:"image_id,omitempty" doc:"The Docker image the preparation pinned (sha256:…), which every run uses until the version is prepared again, whatever its tag names since; empty on other backends"`
	Log      string `json:"log,omitempty" doc:"The last preparation's output"`
	Revision int64  `json:"revision" doc:"The profile's revision"`
}

type preparationOutput struct {
	Location string `header:"Location"`
	Body     Preparation
}

type jobsOutput struct {
	Body struct {
		Jobs []Job `json:"jobs"`
	}
}

type createJobInput struct {
	ProjectPath
	Body struct {
		SkillID string `json:"skill_id" minLength:"1" maxLength:"300" doc:"A version bound to the project, whose profile is enabled and prepared"`
	}
}

type jobOutput struct {
	Body Job
}

type statusOutput struct {
	Body JobStatus
}

type runInput struct {
	JobPath
	Body struct {
		Script string          `json:"script" minLength:"1" maxLength:"1024" doc:"One of the profile's allowed scripts" example:"scripts/extract.py"`
		Args   json.RawMessage `json:"args,omitempty" doc:"A JSON array of strings, passed to the interpreter as they are (never through a shell)"`
	}
}

type settleInput struct {
	JobPath
	Body struct {
		Reason string `json:"reason,omitempty" maxLength:"500" doc:"Why, kept in the job's reason"`
		Force  bool   `json:"force,omitempty" doc:"Settle even while the replica running the job holds its lease (it may still run it: its sandbox is killed if it does)"`
	}
}

type runOutput struct {
	Status   int    `json:"-"`
	Location string `header:"Location"`
	Body     JobStatus
}

type uploadOutput struct {
	Body struct {
		Files []JobFile `json:"files"`
	}
}

type jobFileInput struct {
	JobPath
	Path string `query:"path" required:"true" minLength:"1" maxLength:"1024" doc:"The file's path in the job's /work: an output, else an input" example:"out.txt"`
}

type jobFileOutput struct {
	ContentType string `header:"Content-Type"`
	Disposition string `header:"Content-Disposition"`
	Digest      string `header:"X-Content-Digest" doc:"sha256: and the hex of the file's bytes"`
	Kind        string `header:"X-Job-File-Kind" doc:"input or output"`
	NoSniff     string `header:"X-Content-Type-Options"`
	Body        []byte
}

// service returns the job service, or the 503 that says there is none.
func (a *API) service() (*jobs.Service, error) {
	if a.opts.Jobs == nil {
		return nil, newError(http.StatusServiceUnavailable, CodeSandboxUnavailable, "this hub runs no job service: scripts cannot run here")
	}
	return a.opts.Jobs, nil
}

// version resolves a skill id to the hub's version.
func (a *API) version(ctx context.Context, id string) (hub.Version, error) {
	v, err := a.hub.Resolve(ctx, id)
	if err != nil {
		return hub.Version{}, err
	}
	setObject(ctx, v.ID)
	return v, nil
}

// serviceVersion is the job service and the version skill id names, for
// the routes of a version's profile and preparation.
func (a *API) serviceVersion(ctx context.Context, id string) (*jobs.Service, hub.Version, error) {
	svc, err := a.service()
	if err != nil {
		return nil, hub.Version{}, err
	}
	v, err := a.version(ctx, id)
	return svc, v, err
}

func (a *API) profileAnswer(ctx context.Context, v hub.Version, p store.Profile) (*profileOutput, error) {
	ins, err := a.hub.Inspect(ctx, v.ID)
	if err != nil {
		return nil, err
	}
	out := &profileOutput{Body: ProfileAnswer{SkillID: v.ID, Profile: wireProfile(p), Authorizes: ins.Bindings}}
	if out.Body.Authorizes == nil {
		out.Body.Authorizes = []string{}
	}
	if out.Body.Profile.Scripts == nil {
		out.Body.Profile.Scripts = []string{}
	}
	switch {
	case !p.Enabled:
		out.Body.Note = "the profile is not enabled: no project can run this version's scripts"
	case len(ins.Bindings) == 0:
		out.Body.Note = "the profile is enabled: every project bound to this version may run its allowed scripts (none is bound now)"
	default:
		out.Body.Note = "the profile is enabled: every project bound to this version may run its allowed scripts: " + strings.Join(ins.Bindings, ", ")
	}
	if !p.Prepared() {
		out.Body.Note += "; the environment is not prepared: POST /api/skills/" + v.ID + "/prepare"
	}
	return out, nil
}

func (a *API) getSkillProfile(ctx context.Context, in *SkillPath) (*profileOutput, error) {
	svc, v, err := a.serviceVersion(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	p, err := svc.GetProfile(ctx, v.StoreID())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, newError(http.StatusNotFound, CodeNotFound, v.ID+" has no execution profile: an administrator sets one with PUT /api/skills/"+v.ID+"/profile")
		}
		return nil, err
	}
	return a.profileAnswer(ctx, v, p)
}

func (a *API) setSkillProfile(ctx context.Context, in *profileInput) (*profileOutput, error) {
	svc, v, err := a.serviceVersion(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	b := in.Body
	p, err := svc.SetProfile(ctx, v.StoreID(), store.ProfileSpec{
		Runtime: b.Runtime, Image: b.Image, RootFS: b.RootFS, Interpreter: b.Interpreter, Scripts: b.Scripts,
		TimeoutSeconds: b.TimeoutSeconds, Network: b.Network, Enabled: b.Enabled,
	})
	if err != nil {
		return nil, err
	}
	return a.profileAnswer(ctx, v, p)
}

func (a *API) getSkillPreparation(ctx context.Context, in *SkillPath) (*preparationOutput, error) {
	svc, v, err := a.serviceVersion(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return a.preparation(ctx, svc, v)
}

func (a *API) listSkillJobs(ctx context.Context, in *ProjectPath) (*jobsOutput, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	if _, err := a.st.GetProject(ctx, in.ID); err != nil {
		return nil, err
	}
	list, err := svc.List(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &jobsOutput{}
	out.Body.Jobs = make([]Job, len(list))
	names := a.versionNames()
	for i, j := range list {
		if out.Body.Jobs[i], err = names.job(ctx, j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (a *API) createSkillJob(ctx context.Context, in *createJobInput) (*jobOutput, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	v, err := a.hub.Resolve(ctx, in.Body.SkillID)
	if err != nil {
		return nil, err
	}
	j, err := svc.Create(ctx, in.ID, v.StoreID())
	if err != nil {
		return nil, err
	}
	setObject(ctx, in.ID+"/"+j.ID)
	named, err := a.versionNames().job(ctx, j)
	if err != nil {
		return nil, err
	}
	return &jobOutput{Body: named}, nil
}

func (a *API) getSkillJob(ctx context.Context, in *JobPath) (*statusOutput, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	st, err := svc.Get(ctx, in.ID, in.JobID)
	if err != nil {
		return nil, err
	}
	return a.statusOutput(ctx, st)
}

func (a *API) deleteSkillJob(ctx context.Context, in *JobPath) (*struct{}, error) {
	setObject(ctx, in.ID+"/"+in.JobID)
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	if err := svc.Delete(ctx, in.ID, in.JobID); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

func (a *API) runSkillJob(ctx context.Context, in *runInput) (*runOutput, error) {
	setObject(ctx, in.ID+"/"+in.JobID)
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	args, err := jobs.ParseArgs(in.Body.Args)
	if err != nil {
		return nil, err
	}
	st, err := svc.Run(jobs.WithActor(ctx, tokenOf(ctx).ID), in.ID, in.JobID, in.Body.Script, args)
	if err != nil {
		return nil, err
	}
	// The service recorded the run, queued and at its end.
	if c := callOf(ctx); c != nil {
		c.audited = true
	}
	so, err := a.statusOutput(ctx, st)
	if err != nil {
		return nil, err
	}
	out := &runOutput{Status: http.StatusOK, Body: so.Body}
	if st.Stale {
		out.Status, out.Location = http.StatusAccepted, "/api/projects/"+in.ID+"/skill-jobs/"+in.JobID
	}
	return out, nil
}

func (a *API) settleSkillJob(ctx context.Context, in *settleInput) (*statusOutput, error) {
	setObject(ctx, in.ID+"/"+in.JobID)
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	by := "token " + tokenOf(ctx).ID
	st, err := svc.Settle(ctx, in.ID, in.JobID, store.Settlement{By: by, Reason: auditText(in.Body.Reason), Force: in.Body.Force})
	if err != nil {
		return nil, err
	}
	return a.statusOutput(ctx, st)
}

func (a *API) downloadSkillJobFile(ctx context.Context, in *jobFileInput) (*jobFileOutput, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	ch, err := svc.ReadFile(ctx, in.ID, in.JobID, in.Path, 0, jobs.MaxRead)
	if err != nil {
		return nil, err
	}
	if !ch.EOF {
		// A file is at most MaxRead bytes; one that is not read whole
		// is never served as if it were.
		return nil, fmt.Errorf("job %s: file %s was not read whole (%d of %d bytes)", in.JobID, in.Path, len(ch.Data), ch.Size)
	}
	name := path.Base(ch.Path)
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if disp == "" {
		disp = "attachment"
	}
	return &jobFileOutput{ContentType: "application/octet-stream", Disposition: disp, Digest: "sha256:" + ch.SHA256,
		Kind: string(ch.Kind), NoSniff: "nosniff", Body: ch.Data}, nil
}

// statusOutput is a job's status as the API shows it: named by its
// version, with its lists in their empty form for the schema.
func (a *API) statusOutput(ctx context.Context, st jobs.Status) (*statusOutput, error) {
	j, err := a.versionNames().job(ctx, st.Job)
	if err != nil {
		return nil, err
	}
	return &statusOutput{Body: JobStatus{Job: j, Stdout: st.Stdout, Stderr: st.Stderr, Inputs: wireJobFiles(st.Inputs), Outputs: wireJobFiles(st.Outputs), Stale: st.Stale, Note: st.Note}}, nil
}

func (a *API) startPrepare(ctx context.Context, in *SkillPath) (*preparationOutput, error) {
	svc, v, err := a.serviceVersion(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	p, err := svc.StartPrepare(jobs.WithActor(ctx, tokenOf(ctx).ID), v.StoreID())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, newError(http.StatusNotFound, CodeNotFound, v.ID+" has no execution profile to prepare: set one with PUT /api/skills/"+v.ID+"/profile")
		}
		if errors.Is(err, store.ErrPreparing) {
			return nil, newError(http.StatusConflict, CodeConflict, err.Error()+" (GET /api/skills/"+v.ID+"/prepare)")
		}
		return nil, err
	}
	return &preparationOutput{Location: "/api/skills/" + v.ID + "/prepare", Body: preparationBody(v.ID, p)}, nil
}

// preparationBody is the answer of a version's preparation state.
func preparationBody(skillID string, p jobs.Preparation) Preparation {
	b := Preparation{SkillID: skillID, State: p.State, Replica: p.Replica, StartedAt: p.StartedAt, FinishedAt: p.FinishedAt,
		Identity: p.Identity, ImageID: p.ImageID, Log: p.Log, Revision: p.Revision}
	if p.State == jobs.PrepFailed && p.Error != "" {
		b.Error = &ErrorBody{Code: CodePrepareFailed, Message: p.Error}
	}
	return b
}

// preparation reports a version's preparation as the store has it: the
// same answer on every replica.
func (a *API) preparation(ctx context.Context, svc *jobs.Service, v hub.Version) (*preparationOutput, error) {
	p, err := svc.Preparation(ctx, v.StoreID())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, newError(http.StatusNotFound, CodeNotFound, v.ID+" has no execution profile: set one with PUT /api/skills/"+v.ID+"/profile")
		}
		return nil, err
	}
	return &preparationOutput{Location: "/api/skills/" + v.ID + "/prepare", Body: preparationBody(v.ID, p)}, nil
}

// uploadFiles streams a multipart form's files into a job's inputs, a
// piece at a time.
func (a *API) uploadFiles(ctx context.Context, in *JobPath) (*uploadOutput, error) {
	setObject(ctx, in.ID+"/"+in.JobID)
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	c := callOf(ctx)
	if c == nil || c.req == nil {
		return nil, errors.New("upload: no request")
	}
	mt, params, err := mime.ParseMediaType(c.req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedFormat, "send the files as multipart/form-data: a path field, then a file field, for each file")
	}
	// The job must be this project's before anything is read.
	if _, err := svc.Get(ctx, in.ID, in.JobID); err != nil {
		return nil, err
	}
	mr := multipart.NewReader(c.req.Body, params["boundary"])
	out := &uploadOutput{}
	out.Body.Files = []JobFile{}
	pending := ""
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, a.formError(c, err)
		}
		switch part.FormName() {
		case "path":
			b, err := io.ReadAll(io.LimitReader(part, store.MaxJobPath+1))
			if err != nil {
				return nil, a.formError(c, err)
			}
			if len(b) > store.MaxJobPath {
				return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, fmt.Sprintf("the path field is over %d bytes", store.MaxJobPath))
			}
			pending = string(b)
		case "file":
			p := pending
			pending = ""
			if p == "" {
				p = part.FileName()
			}
			if p == "" {
				return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "a file part has no path: send a path field before it, or give the part a file name")
			}
			f, err := a.uploadOne(ctx, svc, c, in, p, part)
			if err != nil {
				return nil, err
			}
			out.Body.Files = append(out.Body.Files, wireJobFiles([]store.JobFile{f})...)
		default:
			// Other fields are read and ignored.
			if _, err := io.Copy(io.Discard, part); err != nil {
				return nil, a.formError(c, err)
			}
		}
		part.Close()
	}
	if len(out.Body.Files) == 0 {
		return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "the form has no file: send each file as a file field, after a path field naming it")
	}
	return out, nil
}

// uploadOne stores one file part as it arrives (the service's
// UploadStream: a piece at a time, the file marked incomplete until its
// last piece is stored).
func (a *API) uploadOne(ctx context.Context, svc *jobs.Service, c *call, in *JobPath, p string, r io.Reader) (store.JobFile, error) {
	f, err := svc.UploadStream(ctx, in.ID, in.JobID, p, &formReader{r: r})
	var pe *jobs.PartialUploadError
	switch {
	case err == nil:
		return f, nil
	case errors.As(err, &pe):
		var e *Error
		if errors.Is(pe.Err, errFormRead) {
			e = a.formError(c, pe.Err).(*Error)
		} else {
			e = a.errorOf(ctx, pe.Err)
		}
		cp := *e
		cp.Body.Message += fmt.Sprintf(" (the upload stopped: %s holds only its first %d bytes and is marked incomplete, so the job will not run until it is uploaded again)", p, pe.Stored)
		return store.JobFile{}, &cp
	case errors.Is(err, errFormRead):
		return store.JobFile{}, a.formError(c, err)
	}
	return store.JobFile{}, err
}

// errFormRead marks a failure to read the form itself (the client's).
var errFormRead = errors.New("reading the form")

// formReader reads a form's part, marking its read errors as the form's.
type formReader struct{ r io.Reader }

func (f *formReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", errFormRead, err)
	}
	return n, err
}

// formError says why a form could not be read: over its bound (413), or
// malformed (400).
func (a *API) formError(c *call, err error) error {
	if c.tooLarge.Load() || errors.Is(err, errTooLarge) {
		return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the upload is over the 32 MiB a job's file may have")
	}
	return newError(http.StatusBadRequest, CodeBadRequest, "the multipart form could not be read: "+err.Error())
}

// jobError maps the job service's and the sandbox's errors; nil when err
// is none of them.
func jobError(err error) *Error {
	msg := err.Error()
	var je *store.JobsError
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		return newError(http.StatusServiceUnavailable, CodeSandboxUnavailable, msg)
	case errors.Is(err, jobs.ErrRunUnknown):
		return newError(http.StatusServiceUnavailable, CodeRunStateUnknown, msg)
	case errors.Is(err, store.ErrProjectPaused):
		return newError(http.StatusConflict, CodeProjectPaused, msg)
	case errors.Is(err, store.ErrIncompleteInput):
		return newError(http.StatusConflict, CodeInputIncomplete, msg)
	case errors.Is(err, store.ErrLiveReplica):
		return newError(http.StatusConflict, CodeReplicaAlive, msg)
	case errors.Is(err, store.ErrPreparing):
		return newError(http.StatusConflict, CodeConflict, msg)
	case errors.Is(err, jobs.ErrClosed):
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the hub is shutting down: try again on another replica or once it is back")
	case errors.As(err, &je):
		e := newError(http.StatusConflict, CodeJobs, msg)
		for _, id := range je.Jobs {
			e.Body.Details = append(e.Body.Details, ErrorDetail{Location: "jobs", Message: id})
		}
		return e
	case errors.Is(err, store.ErrJobState):
		return newError(http.StatusConflict, CodeJobState, msg)
	case errors.Is(err, store.ErrJobLimit):
		return newError(http.StatusRequestEntityTooLarge, CodeJobLimit, msg)
	case errors.Is(err, store.ErrProfileDisabled), errors.Is(err, store.ErrNotPrepared), errors.Is(err, store.ErrProfileChanged):
		return newError(http.StatusConflict, CodeProfile, msg)
	case errors.Is(err, store.ErrScriptNotAllowed):
		return newError(http.StatusUnprocessableEntity, CodeScriptNotAllowed, msg)
	case errors.Is(err, jobs.ErrPrepareFailed):
		return newError(http.StatusUnprocessableEntity, CodePrepareFailed, msg)
	}
	return nil
}

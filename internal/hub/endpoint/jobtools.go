package endpoint

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Jobs is what the job tools call of the hub's job service; *jobs.Service
// is one. Every call names the project: a job of another project is not
// found.
type Jobs interface {
	Create(ctx context.Context, projectID string, versionID int64) (store.Job, error)
	Upload(ctx context.Context, projectID, jobID, path string, data []byte, appendTo bool) (store.JobFile, error)
	Run(ctx context.Context, projectID, jobID, script string, args []string) (jobs.Status, error)
	Get(ctx context.Context, projectID, jobID string) (jobs.Status, error)
	ReadFile(ctx context.Context, projectID, jobID, path string, offset, limit int64) (jobs.Chunk, error)
}

var _ Jobs = (*jobs.Service)(nil)

// Limits of the job tools' calls.
const (
	// MaxUploadBytes is the most one upload_skill_file call takes, decoded;
	// larger files are sent in pieces with append.
	MaxUploadBytes = 1 << 20
	// MaxJobReadBytes is the most one read_skill_job_file call returns.
	MaxJobReadBytes = 256 << 10
)

// The job tools, listed while a bound version has an enabled profile.
const (
	toolCreateJob = "create_skill_job"
	toolUpload    = "upload_skill_file"
	toolRun       = "run_skill_script"
	toolGetJob    = "get_skill_job"
	toolReadJob   = "read_skill_job_file"
)

var jobToolNames = []string{toolCreateJob, toolUpload, toolRun, toolGetJob, toolReadJob}

// ProfileInfo is a version's execution profile as get_skill and
// create_skill_job show it (never its image or root tree: host details).
type ProfileInfo struct {
	Runtime        string   `json:"runtime" jsonschema:"python, node or bash"`
	Scripts        []string `json:"scripts" jsonschema:"the only scripts run_skill_script may run, paths inside the package"`
	TimeoutSeconds int      `json:"timeout_seconds" jsonschema:"the wall-time limit of a run"`
	Network        bool     `json:"network" jsonschema:"whether runs reach the network"`
	Enabled        bool     `json:"enabled" jsonschema:"whether this project may run the skill's scripts"`
	Prepared       bool     `json:"prepared" jsonschema:"whether the environment is prepared; jobs need it"`
	Revision       int64    `json:"revision"`
}

func profileInfo(p *store.Profile) *ProfileInfo {
	if p == nil {
		return nil
	}
	return &ProfileInfo{Runtime: string(p.Runtime), Scripts: append([]string{}, p.Scripts...), TimeoutSeconds: p.TimeoutSeconds,
		Network: p.Network, Enabled: p.Enabled, Prepared: p.Prepared(), Revision: p.Revision}
}

// CreateJobIn is create_skill_job's input.
type CreateJobIn struct {
	SkillID string `json:"skill_id" jsonschema:"the version id from list_skills (NAME@hex) of a skill whose profile is enabled"`
}

// JobOut is a job as create_skill_job, run_skill_script and get_skill_job
// report it.
type JobOut struct {
	JobID   string       `json:"job_id"`
	SkillID string       `json:"skill_id"`
	State   string       `json:"state" jsonschema:"created, uploading, queued, running, succeeded, failed, timed_out, stopped or locked"`
	Profile *ProfileInfo `json:"profile,omitempty"`
	Script  string       `json:"script,omitempty"`
	Args    []string     `json:"args"`
	// ExitCode is set once the script ended by itself.
	ExitCode  *int         `json:"exit_code,omitempty" jsonschema:"the script's exit status; absent before the end or when it was killed"`
	Reason    string       `json:"reason,omitempty" jsonschema:"why the job is in its state, when that needs saying"`
	Stdout    string       `json:"stdout"`
	Stderr    string       `json:"stderr"`
	StdoutCut bool         `json:"stdout_cut" jsonschema:"stdout was longer than the 1 MiB kept"`
	StderrCut bool         `json:"stderr_cut" jsonschema:"stderr was longer than the 1 MiB kept"`
	Inputs    []JobFileOut `json:"inputs"`
	Outputs   []JobFileOut `json:"outputs" jsonschema:"the output manifest: files of /work the run made or changed"`
	CreatedAt time.Time    `json:"created_at"`
	StartedAt *time.Time   `json:"started_at,omitempty"`
	EndedAt   *time.Time   `json:"finished_at,omitempty"`
	Next      string       `json:"next,omitempty" jsonschema:"what to call next"`
}

// JobFileOut is one file of a job.
type JobFileOut struct {
	Path   string `json:"path" jsonschema:"relative to the job's /work"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256" jsonschema:"lowercase hex of the file's bytes"`
}

// UploadIn is upload_skill_file's input.
type UploadIn struct {
	JobID         string `json:"job_id"`
	Path          string `json:"path" jsonschema:"where the file lands, relative to the job's /work, e.g. input.csv or data/a.txt"`
	ContentBase64 string `json:"content_base64" jsonschema:"the file's bytes (or the next piece of them, with append) in standard base64; at most 1 MiB decoded per call"`
	Append        bool   `json:"append,omitempty" jsonschema:"add to the end of the file uploaded so far instead of replacing it (for files over 1 MiB)"`
}

// UploadOut is upload_skill_file's output.
type UploadOut struct {
	JobID  string `json:"job_id"`
	Path   string `json:"path"`
	Size   int64  `json:"size" jsonschema:"the file's whole size so far"`
	SHA256 string `json:"sha256" jsonschema:"of the whole file so far"`
}

// RunIn is run_skill_script's input.
type RunIn struct {
	JobID  string   `json:"job_id"`
	Script string   `json:"script" jsonschema:"one of the profile's allowed scripts, e.g. scripts/extract.py"`
	Args   []string `json:"args,omitempty" jsonschema:"the script's arguments, a JSON array of strings passed as they are (never through a shell); paths are relative to /work"`
}

// GetJobIn is get_skill_job's input.
type GetJobIn struct {
	JobID string `json:"job_id"`
}

// ReadJobIn is read_skill_job_file's input.
type ReadJobIn struct {
	JobID  string `json:"job_id"`
	Path   string `json:"path" jsonschema:"a path from get_skill_job's outputs (or inputs)"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the first byte to read"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"at most this many bytes (default and most 262144)"`
}

// ReadJobOut is read_skill_job_file's output.
type ReadJobOut struct {
	JobID         string `json:"job_id"`
	Path          string `json:"path"`
	Kind          string `json:"kind" jsonschema:"output or input"`
	Offset        int64  `json:"offset"`
	Length        int    `json:"length" jsonschema:"bytes in this chunk"`
	Size          int64  `json:"size" jsonschema:"the whole file's size"`
	SHA256        string `json:"sha256" jsonschema:"of the whole file: check it once every chunk is read"`
	EOF           bool   `json:"eof" jsonschema:"this chunk reaches the end of the file"`
	ContentBase64 string `json:"content_base64"`
}

// wantJobTools returns the job service when v has a version with an
// enabled profile (the job tools are listed), else nil.
func (e *Endpoint) wantJobTools(v *projects.View) Jobs {
	if e.opts.Jobs == nil {
		return nil
	}
	for _, b := range v.Bound {
		if b.Profile != nil && b.Profile.Enabled {
			return e.opts.Jobs
		}
	}
	return nil
}

// jobInstructions is what the instructions add while the job tools are
// listed.
func (p *project) jobInstructions() string {
	p.smu.Lock()
	on := p.jobTools
	p.smu.Unlock()
	if !on {
		return ""
	}
	return " Some skills' scripts can run on the hub, in a sandbox: with the user's approval, create_skill_job, " +
		"upload_skill_file the inputs, run_skill_script once, then get_skill_job and read_skill_job_file for the outputs."
}

// addJobTools registers the job tools on ms, reading p's current view.
func addJobTools(ms *mcp.Server, p *project, js Jobs) {
	closed := new(false)
	mcp.AddTool(ms, &mcp.Tool{Name: toolCreateJob, Title: "Create a skill job",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: closed},
		Description: "Create a job to run one of a skill's allowed scripts on the hub, in a sandbox. Upload its inputs with upload_skill_file, then run it once with run_skill_script."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in CreateJobIn) (*mcp.CallToolResult, JobOut, error) {
			out, err := p.createJob(ctx, js, in)
			return nil, out, err
		})
	mcp.AddTool(ms, &mcp.Tool{Name: toolUpload, Title: "Upload a job input",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: closed, IdempotentHint: false},
		Description: fmt.Sprintf("Upload an input file to a job before its run, in base64 (at most %d bytes decoded per call; send a larger file in pieces with append, up to %d MiB a file).", MaxUploadBytes, store.MaxJobFileSize>>20)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in UploadIn) (*mcp.CallToolResult, UploadOut, error) {
			out, err := p.upload(ctx, js, in)
			return nil, out, err
		})
	mcp.AddTool(ms, &mcp.Tool{Name: toolRun, Title: "Run a skill script",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: closed, DestructiveHint: closed},
		Description: "Run the job's single run: an allowed script of the skill with a JSON array of string arguments, in a sandbox whose working directory is the job's /work (the inputs; the package is at /package, read-only). Waits a while for the end; a longer run is reported running: ask get_skill_job later."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RunIn) (*mcp.CallToolResult, JobOut, error) {
			out, err := p.run(ctx, js, in)
			return nil, out, err
		})
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: closed}
	mcp.AddTool(ms, &mcp.Tool{Name: toolGetJob, Title: "Get a skill job", Annotations: ro,
		Description: "A job's state, exit code, stdout and stderr (1 MiB each at most, the cut marked), and its output manifest with sizes and sha256."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in GetJobIn) (*mcp.CallToolResult, JobOut, error) {
			out, err := p.getJob(ctx, js, in)
			return nil, out, err
		})
	mcp.AddTool(ms, &mcp.Tool{Name: toolReadJob, Title: "Read a job file", Annotations: ro,
		Description: fmt.Sprintf("Read a chunk of a job's output (or input) file in base64: at most %d bytes from offset; read on from offset+length until eof, then check the sha256.", MaxJobReadBytes)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ReadJobIn) (*mcp.CallToolResult, ReadJobOut, error) {
			out, err := p.readJobFile(ctx, js, in)
			return nil, out, err
		})
}

func (p *project) createJob(ctx context.Context, js Jobs, in CreateJobIn) (JobOut, error) {
	b, err := p.resolve(in.SkillID)
	if err != nil {
		return JobOut{}, err
	}
	switch {
	case b.Profile == nil:
		return JobOut{}, fmt.Errorf("%s has no execution profile: its scripts cannot run on this hub (an administrator sets and enables one)", b.ID)
	case !b.Profile.Enabled:
		return JobOut{}, fmt.Errorf("%s: its execution profile is not enabled: an administrator enables it before its scripts can run", b.ID)
	}
	j, err := js.Create(ctx, p.ID(), b.Stored.ID)
	if err != nil {
		return JobOut{}, jobError(err, "")
	}
	out := p.jobOut(jobs.Status{Job: j})
	out.Next = "upload_skill_file the inputs (paths relative to /work), then run_skill_script once"
	return out, nil
}

func (p *project) upload(ctx context.Context, js Jobs, in UploadIn) (UploadOut, error) {
	if err := checkJobID(in.JobID); err != nil {
		return UploadOut{}, err
	}
	// Refuse an oversize piece before decoding it.
	if base64.StdEncoding.DecodedLen(len(in.ContentBase64)) > MaxUploadBytes+2 {
		return UploadOut{}, fmt.Errorf("content_base64 is over %d bytes (1 MiB) decoded, the most one call takes: send the file in pieces of at most 1 MiB, the later ones with append: true", MaxUploadBytes)
	}
	data, err := base64.StdEncoding.DecodeString(in.ContentBase64)
	if err != nil {
		return UploadOut{}, fmt.Errorf("content_base64 is not standard base64 (%v): encode the file's bytes with the alphabet A-Z a-z 0-9 + / and = padding", err)
	}
	if len(data) > MaxUploadBytes {
		return UploadOut{}, fmt.Errorf("content_base64 is %d bytes decoded, over the %d (1 MiB) one call takes: send the file in pieces, the later ones with append: true", len(data), MaxUploadBytes)
	}
	f, err := js.Upload(ctx, p.ID(), in.JobID, in.Path, data, in.Append)
	if err != nil {
		return UploadOut{}, jobError(err, in.JobID)
	}
	return UploadOut{JobID: in.JobID, Path: f.Path, Size: f.Size, SHA256: f.SHA256}, nil
}

func (p *project) run(ctx context.Context, js Jobs, in RunIn) (JobOut, error) {
	if err := checkJobID(in.JobID); err != nil {
		return JobOut{}, err
	}
	if strings.TrimSpace(in.Script) == "" {
		return JobOut{}, errors.New("script is required: one of the profile's allowed scripts, as get_skill shows them")
	}
	args := in.Args
	if args == nil {
		args = []string{}
	}
	st, err := js.Run(jobs.WithActor(ctx, actor(ctx)), p.ID(), in.JobID, in.Script, args)
	if err != nil {
		return JobOut{}, jobError(err, in.JobID)
	}
	return p.jobOut(st), nil
}

func (p *project) getJob(ctx context.Context, js Jobs, in GetJobIn) (JobOut, error) {
	if err := checkJobID(in.JobID); err != nil {
		return JobOut{}, err
	}
	st, err := js.Get(ctx, p.ID(), in.JobID)
	if err != nil {
		return JobOut{}, jobError(err, in.JobID)
	}
	return p.jobOut(st), nil
}

func (p *project) readJobFile(ctx context.Context, js Jobs, in ReadJobIn) (ReadJobOut, error) {
	if err := checkJobID(in.JobID); err != nil {
		return ReadJobOut{}, err
	}
	if err := store.CheckJobPath(in.Path); err != nil {
		return ReadJobOut{}, fmt.Errorf("path %q: %w", in.Path, err)
	}
	if in.Offset < 0 || in.Limit < 0 {
		return ReadJobOut{}, errors.New("offset and limit must not be negative")
	}
	limit := in.Limit
	if limit == 0 || limit > MaxJobReadBytes {
		limit = MaxJobReadBytes
	}
	c, err := js.ReadFile(ctx, p.ID(), in.JobID, in.Path, in.Offset, limit)
	if errors.Is(err, store.ErrNotFound) {
		// The job, or only the file?
		if _, gerr := js.Get(ctx, p.ID(), in.JobID); gerr == nil {
			return ReadJobOut{}, fmt.Errorf("job %s has no file %q: get_skill_job lists its outputs and inputs", in.JobID, in.Path)
		}
	}
	if err != nil {
		return ReadJobOut{}, jobError(err, in.JobID)
	}
	return ReadJobOut{JobID: in.JobID, Path: c.Path, Kind: string(c.Kind), Offset: c.Offset, Length: len(c.Data), Size: c.Size,
		SHA256: c.SHA256, EOF: c.EOF, ContentBase64: base64.StdEncoding.EncodeToString(c.Data)}, nil
}

// jobOut reports a job with its skill's version id and profile.
func (p *project) jobOut(st jobs.Status) JobOut {
	j := st.Job
	out := JobOut{JobID: j.ID, State: string(j.State), Script: j.Script, Args: j.Args, ExitCode: j.ExitCode, Reason: j.Reason,
		Stdout: st.Stdout, Stderr: st.Stderr, StdoutCut: j.StdoutCut, StderrCut: j.StderrCut,
		Inputs: files(st.Inputs), Outputs: files(st.Outputs), CreatedAt: j.CreatedAt}
	if out.Args == nil {
		out.Args = []string{}
	}
	if !j.StartedAt.IsZero() {
		out.StartedAt = &j.StartedAt
	}
	if !j.FinishedAt.IsZero() {
		out.EndedAt = &j.FinishedAt
	}
	for _, b := range p.View().Bound {
		if b.Stored.ID == j.VersionID {
			out.SkillID, out.Profile = b.ID, profileInfo(b.Profile)
		}
	}
	switch j.State {
	case store.JobQueued, store.JobRunning:
		out.Next = "the run goes on: call get_skill_job later"
	case store.JobSucceeded, store.JobFailed, store.JobTimedOut, store.JobStopped:
		if len(out.Outputs) > 0 {
			out.Next = "read the outputs with read_skill_job_file; a job runs once: create another job to run again"
		} else {
			out.Next = "a job runs once: create another job to run again"
		}
	case store.JobLocked:
		out.Next = "its sandbox could not be confirmed gone: its files are held until an operator or a restart confirms it"
	}
	if st.Stale {
		out.Next = st.Note
	}
	return out
}

func files(fs []store.JobFile) []JobFileOut {
	out := make([]JobFileOut, len(fs))
	for i, f := range fs {
		out[i] = JobFileOut{Path: f.Path, Size: f.Size, SHA256: f.SHA256}
	}
	return out
}

// actor names who calls, for the audit log: the project token's id, or
// the OAuth subject.
func actor(ctx context.Context) string {
	ti := auth.TokenInfoFromContext(ctx)
	if ti == nil {
		return ""
	}
	id := strings.TrimPrefix(ti.UserID, "token:")
	if len(id) > 128 {
		id = id[:128]
	}
	return id
}

// checkJobID refuses an empty job id with what to pass.
func checkJobID(id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("job_id is required: create_skill_job returns one")
	}
	return nil
}

// jobError is the text of a refused job call: the service's and the
// store's errors say what and why; a job that is not this project's (or
// does not exist) is "no such job", whatever the reason.
func jobError(err error, jobID string) error {
	var corrupt *store.CorruptJobFileError
	switch {
	case jobID != "" && errors.Is(err, store.ErrNotFound) && strings.HasPrefix(err.Error(), "job "):
		return fmt.Errorf("no such job %q in this project: create_skill_job makes one", jobID)
	case errors.As(err, &corrupt):
		return fmt.Errorf("job %s: the stored bytes of %s do not match their digest, so they are not served: create another job", corrupt.JobID, corrupt.Path)
	case errors.Is(err, sandbox.ErrUnavailable):
		// Its detail (a backend's probe, its stderr) may name host paths:
		// the hub's log has it.
		return errors.New("scripts cannot run on this hub now: no sandbox backend (bubblewrap or Docker) works here; the hub's operator sees why in its log")
	case errors.Is(err, jobs.ErrClosed):
		return errors.New("the hub is shutting down: retry on another replica or later")
	case errors.Is(err, store.ErrUnavailable):
		return errors.New("the hub's database is unavailable now: retry later")
	}
	return err
}

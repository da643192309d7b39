// Package jobs is the skill hub's job service: execution profiles and
// their prepared environments, and jobs, a single sandboxed run of an
// allowed script of a bound version with the inputs a project uploaded,
// whose outputs are kept in the store.
//
// The state of every job is the store's (package store); the service runs
// what a replica claimed through a sandbox.Executor and never any other
// way. The admin API and the project endpoint's MCP tools call the
// service; administrators alone call SetProfile and Prepare (the callers
// check scopes), and no argument of a model reaches a profile.
//
// Host folders, under Options.Dir: packages/ (store.Materialize's
// read-only copies, verified against their digests), layers/ (prepared
// environments, named by their content digest), work/ (each running job's
// /work, removed once its outputs are stored).
package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Store is what the service needs of the hub's store; *store.DB is one.
type Store interface {
	Materialize(ctx context.Context, id int64, cacheDir string) (string, error)
	SetProfile(ctx context.Context, versionID int64, ps store.ProfileSpec) (store.Profile, error)
	GetProfile(ctx context.Context, versionID int64) (store.Profile, error)
	SetPrepared(ctx context.Context, versionID, revision int64, identity, log string) (store.Profile, error)
	CreateJob(ctx context.Context, projectID string, versionID int64) (store.Job, error)
	GetJob(ctx context.Context, id string) (store.Job, error)
	ListJobs(ctx context.Context, projectID string) ([]store.Job, error)
	ReplicaJobs(ctx context.Context, replica string) ([]store.Job, error)
	JobFiles(ctx context.Context, id string) ([]store.JobFile, error)
	PutJobInput(ctx context.Context, id, path string, data []byte, appendTo bool) (store.JobFile, error)
	QueueJob(ctx context.Context, id, script string, args []string) (store.Job, error)
	ClaimJob(ctx context.Context, replica string) (store.Job, bool, error)
	FinishJob(ctx context.Context, id, replica string, r store.JobResult, outputs []store.NewJobFile) (store.Job, error)
	LockJob(ctx context.Context, id, replica, reason string) (store.Job, error)
	StopJob(ctx context.Context, id, reason string) (store.Job, error)
	ReadJobFile(ctx context.Context, id string, kind store.FileKind, path string, offset, limit int64) ([]byte, store.JobFile, error)
	ReadRunInput(ctx context.Context, id, replica, path string) ([]byte, store.JobFile, error)
	DeleteJob(ctx context.Context, id string) error
}

// Defaults of Options.
const (
	DefaultRunWait = 20 * time.Second
	DefaultPoll    = time.Second
	DefaultWorkers = 8
	// MaxRead bounds one ReadFile.
	MaxRead = store.MaxJobFileSize
)

// Options configure a Service.
type Options struct {
	Store Store
	// Executor runs every sandbox. If nil, or when its Check fails, jobs
	// and preparations are refused with an error matching
	// sandbox.ErrUnavailable that says why.
	Executor sandbox.Executor
	// Replica names this process among the replicas sharing the store. It
	// must stay the same across restarts: recovery looks for the jobs the
	// replica claimed before.
	Replica string
	// Dir is the host folder for packages, prepared layers and work
	// folders. Required.
	Dir string
	// Wheels is the folder pip finds Python distributions in during a
	// preparation (--no-index --find-links); empty: pip uses its index,
	// which needs the profile's network.
	Wheels string
	// NpmCache is an npm cache holding the tarballs a package-lock.json
	// names, for npm ci --offline; empty: npm uses its registry, which
	// needs the profile's network.
	NpmCache string
	// RunWait is how long Run waits for the job to end before it answers
	// that it is running. If zero, DefaultRunWait.
	RunWait time.Duration
	// Poll is how often idle workers look for jobs queued by other
	// replicas, and running jobs for stops asked elsewhere. If zero,
	// DefaultPoll.
	Poll time.Duration
	// Workers bounds the jobs this replica runs at once. If zero,
	// DefaultWorkers.
	Workers int
	// Limits are the sandbox limits of a run but its wall time (the
	// profile's timeout). If zero, sandbox.DefaultLimits, the seed's.
	Limits sandbox.Limits
	// Logger receives what the service does. If nil, nothing is logged.
	Logger *slog.Logger
}

var (
	// ErrPrepareFailed is matched by the error of a preparation whose
	// build failed; the profile keeps its log.
	ErrPrepareFailed = errors.New("preparing the environment failed")
	// ErrClosed is returned by a closed service.
	ErrClosed = errors.New("the job service is closed")
)

// Service runs jobs and prepares environments.
type Service struct {
	st    Store
	ex    sandbox.Executor
	opts  Options
	log   *slog.Logger
	tag   string // names this replica's preparation sandboxes
	limit sandbox.Limits

	ctx    context.Context // ended by Close: every worker and run stops
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}

	mu       sync.Mutex
	started  bool
	closed   bool
	ready    error                 // why no backend works; nil once Start checked it
	enforced sandbox.Enforced      // what the backend enforces
	runs     map[string]*runHandle // jobs this replica runs now
	prepGen  int64                 // counts the preparations started
	// runsChanged is closed (and replaced) when a run is added to runs,
	// so a Run waiting for its job's handle sees it at once.
	runsChanged chan struct{}
	layers      map[string]bool // layers verified by this process
}

// runHandle is one run this replica owns.
type runHandle struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// errStopped and errShutdown are the causes a run is cancelled with.
var (
	errStopped  = errors.New("stopped")
	errShutdown = errors.New("the hub shut down during the run")
)

// New makes a service. It starts nothing: Start checks the backend,
// recovers this replica's unfinished jobs and starts the workers.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("jobs: no store")
	}
	if opts.Dir == "" || !filepath.IsAbs(opts.Dir) {
		return nil, fmt.Errorf("jobs: the data folder %q must be an absolute path", opts.Dir)
	}
	if opts.Replica == "" {
		return nil, errors.New("jobs: no replica id: name this process (it must stay the same across restarts)")
	}
	if opts.RunWait <= 0 {
		opts.RunWait = DefaultRunWait
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	limit := opts.Limits
	if limit == (sandbox.Limits{}) {
		limit = sandbox.DefaultLimits
	}
	// Never more than the store keeps.
	limit.Output = min(max(limit.Output, 1), store.MaxJobOutput)
	if limit.WorkTree <= 0 || limit.WorkTree > store.MaxJobBytes {
		limit.WorkTree = store.MaxJobBytes
	}
	if limit.WorkFiles <= 0 || limit.WorkFiles > store.MaxJobFiles {
		limit.WorkFiles = store.MaxJobFiles
	}
	if limit.FileSize <= 0 || limit.FileSize > store.MaxJobFileSize {
		limit.FileSize = store.MaxJobFileSize
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sum := sha256.Sum256([]byte(opts.Replica))
	s := &Service{st: opts.Store, ex: opts.Executor, opts: opts, log: log, limit: limit,
		tag:  hex.EncodeToString(sum[:4]),
		wake: make(chan struct{}, 1), runs: map[string]*runHandle{}, runsChanged: make(chan struct{}), layers: map[string]bool{},
		ready: errors.New("the job service has not been started")}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, d := range []string{opts.Dir, s.dir("packages"), s.dir("layers"), s.dir("work")} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		// Traversable by the sandbox's unprivileged uid, listable by none.
		if err := os.Chmod(d, 0o711); err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
	}
	return s, nil
}

func (s *Service) dir(parts ...string) string {
	return filepath.Join(append([]string{s.opts.Dir}, parts...)...)
}

// RecoverReport says what recovery did with each unfinished job of this
// replica, by job id.
type RecoverReport struct {
	Failed  []string `json:"failed,omitempty"`  // its sandbox was gone: its result was lost
	Stopped []string `json:"stopped,omitempty"` // its sandbox was killed, or confirmed gone
	Locked  []string `json:"locked,omitempty"`  // its sandbox could not be confirmed gone
	// Killed names the sandboxes killed that no live job owned.
	Killed []string `json:"killed,omitempty"`
}

// Start checks the sandbox backend, recovers the unfinished jobs this
// replica left (Recover) and starts the workers that claim queued jobs.
// Without a working backend it starts no worker and returns the check's
// error (matching sandbox.ErrUnavailable); jobs are then refused.
func (s *Service) Start(ctx context.Context) (sandbox.Enforced, RecoverReport, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return sandbox.Enforced{}, RecoverReport{}, ErrClosed
	}
	if s.started {
		s.mu.Unlock()
		return s.enforced, RecoverReport{}, errors.New("jobs: the service is started already")
	}
	s.started = true
	s.mu.Unlock()
	var (
		enf sandbox.Enforced
		err error
	)
	if s.ex == nil {
		err = fmt.Errorf("%w: none is configured (the hub runs scripts only in bubblewrap or Docker)", sandbox.ErrUnavailable)
	} else if enf, err = s.ex.Check(ctx); err != nil && !errors.Is(err, sandbox.ErrUnavailable) {
		err = fmt.Errorf("%w: %s: %w", sandbox.ErrUnavailable, s.ex.Name(), err)
	}
	s.mu.Lock()
	s.ready, s.enforced = err, enf
	s.mu.Unlock()
	if err != nil {
		return enf, RecoverReport{}, err
	}
	rep, err := s.Recover(ctx)
	if err != nil {
		// Jobs left unreconciled must not be joined by new ones that no
		// worker here would run: refuse jobs until a restart recovers.
		err = fmt.Errorf("%w: recovering this replica's unfinished jobs failed: %w", sandbox.ErrUnavailable, err)
		s.mu.Lock()
		s.ready = err
		s.mu.Unlock()
		return enf, rep, err
	}
	for range s.opts.Workers {
		s.wg.Go(s.worker)
	}
	return enf, rep, nil
}

// usable reports why jobs cannot run here, or nil.
func (s *Service) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.ready
}

// Close stops the workers and kills the runs this replica owns; each job
// is stored as stopped ("the hub shut down during the run"), or locked
// when its kill was not confirmed, and each preparation fails. It waits
// for all of them.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	runs := make([]*runHandle, 0, len(s.runs))
	for _, h := range s.runs {
		runs = append(runs, h)
	}
	s.mu.Unlock()
	for _, h := range runs {
		h.cancel(errShutdown)
	}
	s.cancel()
	s.wg.Wait()
	return nil
}

// kick wakes an idle worker.
func (s *Service) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SetProfile sets a version's execution profile. Administrators only: the
// caller checks the scope. A change of the environment clears the
// prepared state; enabling a profile authorises jobs for every project
// bound to the version.
func (s *Service) SetProfile(ctx context.Context, versionID int64, ps store.ProfileSpec) (store.Profile, error) {
	return s.st.SetProfile(ctx, versionID, ps)
}

// GetProfile returns a version's execution profile, or an error matching
// store.ErrNotFound.
func (s *Service) GetProfile(ctx context.Context, versionID int64) (store.Profile, error) {
	return s.st.GetProfile(ctx, versionID)
}

// Status is a job as Get reports it: its record with logs, and its files.
type Status struct {
	Job     store.Job       `json:"job"`
	Stdout  string          `json:"stdout"`
	Stderr  string          `json:"stderr"`
	Inputs  []store.JobFile `json:"inputs"`
	Outputs []store.JobFile `json:"outputs"`
}

// job returns a job of project, or ErrNotFound for a job of another one.
func (s *Service) job(ctx context.Context, projectID, jobID string) (store.Job, error) {
	j, err := s.st.GetJob(ctx, jobID)
	if err != nil {
		return store.Job{}, err
	}
	if j.ProjectID != projectID {
		return store.Job{}, fmt.Errorf("job %s: %w in project %s", jobID, store.ErrNotFound, projectID)
	}
	return j, nil
}

// Create makes a job of project for a version bound to it, whose profile
// is enabled and prepared.
func (s *Service) Create(ctx context.Context, projectID string, versionID int64) (store.Job, error) {
	if err := s.usable(); err != nil {
		return store.Job{}, err
	}
	return s.st.CreateJob(ctx, projectID, versionID)
}

// Upload writes an input of a job that has not run, whole or appended to
// (appendTo). Paths are store.CheckJobPath's (no traversal, not absolute,
// NFC); the limits are the store's.
func (s *Service) Upload(ctx context.Context, projectID, jobID, path string, data []byte, appendTo bool) (store.JobFile, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return store.JobFile{}, err
	}
	return s.st.PutJobInput(ctx, jobID, path, data, appendTo)
}

// ParseArgs reads a run's arguments as they arrive from a client: a JSON
// array of strings (absent or null: none). Anything else is refused with
// an error matching store.ErrInvalid.
func ParseArgs(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%w: args must be a JSON array of strings, e.g. [\"input.csv\", \"output.txt\"]", store.ErrInvalid)
	}
	out := make([]string, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i]); err != nil || len(it) == 0 || it[0] != '"' {
			return nil, fmt.Errorf("%w: args[%d] is not a string; args must be a JSON array of strings", store.ErrInvalid, i)
		}
	}
	if err := store.CheckArgs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Run asks for the job's single run of script (one of the profile's
// allowed scripts) with args, passed to the interpreter as they are, and
// waits up to Options.RunWait for it to end. A run that takes longer goes
// on, owned by the service: the Status then says running, and Get tells
// the rest. If ctx ends while Run waits (the client went away), the job is
// stopped.
func (s *Service) Run(ctx context.Context, projectID, jobID, script string, args []string) (Status, error) {
	if err := s.usable(); err != nil {
		return Status{}, err
	}
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return Status{}, err
	}
	if _, err := s.st.QueueJob(ctx, jobID, script, args); err != nil {
		return Status{}, err
	}
	s.kick()
	return s.wait(ctx, projectID, jobID, s.opts.RunWait)
}

// wait waits up to d for the job to leave queued and running.
func (s *Service) wait(ctx context.Context, projectID, jobID string, d time.Duration) (Status, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	// Jobs claimed elsewhere are seen by polling; ours by their handle.
	tick := time.NewTicker(min(s.opts.Poll, 250*time.Millisecond))
	defer tick.Stop()
	for {
		j, err := s.st.GetJob(ctx, jobID)
		if err != nil && ctx.Err() == nil {
			return Status{}, err
		}
		if err == nil && j.State != store.JobQueued && j.State != store.JobRunning {
			return s.Get(ctx, projectID, jobID)
		}
		var done, claimed chan struct{}
		s.mu.Lock()
		if h := s.runs[jobID]; h != nil {
			done = h.done
		} else {
			claimed = s.runsChanged // a worker here may be about to run it
		}
		s.mu.Unlock()
		select {
		case <-done:
		case <-claimed:
		case <-tick.C:
		case <-timer.C:
			return s.Get(ctx, projectID, jobID)
		case <-ctx.Done():
			// The client went away while it waited: the run is stopped.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			st, err := s.Stop(sctx, projectID, jobID, "stopped: the client went away while it waited for the run")
			if err != nil {
				return Status{}, errors.Join(ctx.Err(), err)
			}
			return st, ctx.Err()
		}
	}
}

// Get returns a job of project with its logs and files.
func (s *Service) Get(ctx context.Context, projectID, jobID string) (Status, error) {
	j, err := s.job(ctx, projectID, jobID)
	if err != nil {
		return Status{}, err
	}
	files, err := s.st.JobFiles(ctx, jobID)
	if err != nil {
		return Status{}, err
	}
	st := Status{Job: j, Stdout: string(j.Stdout), Stderr: string(j.Stderr), Inputs: []store.JobFile{}, Outputs: []store.JobFile{}}
	for _, f := range files {
		if f.Kind == store.JobInput {
			st.Inputs = append(st.Inputs, f)
		} else {
			st.Outputs = append(st.Outputs, f)
		}
	}
	return st, nil
}

// List lists a project's jobs, newest first, without logs.
func (s *Service) List(ctx context.Context, projectID string) ([]store.Job, error) {
	return s.st.ListJobs(ctx, projectID)
}

// Chunk is a piece of a job file.
type Chunk struct {
	Kind   store.FileKind `json:"kind"`
	Path   string         `json:"path"`
	Offset int64          `json:"offset"`
	Data   []byte         `json:"-"`
	Size   int64          `json:"size"` // the whole file's
	SHA256 string         `json:"sha256"`
	EOF    bool           `json:"eof"` // the chunk reaches the file's end
}

// ReadFile reads up to limit bytes (at most MaxRead) at offset of a job's
// file: its output of that path, else its input. Refused while the job
// runs or is locked (its files are not served then).
func (s *Service) ReadFile(ctx context.Context, projectID, jobID, path string, offset, limit int64) (Chunk, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return Chunk{}, err
	}
	limit = min(limit, MaxRead)
	data, f, err := s.st.ReadJobFile(ctx, jobID, store.JobOutput, path, offset, limit)
	if errors.Is(err, store.ErrNotFound) {
		data, f, err = s.st.ReadJobFile(ctx, jobID, store.JobInput, path, offset, limit)
	}
	if err != nil {
		return Chunk{}, err
	}
	return Chunk{Kind: f.Kind, Path: f.Path, Offset: offset, Data: data, Size: f.Size, SHA256: f.SHA256,
		EOF: offset+int64(len(data)) >= f.Size}, nil
}

// Stop stops a job of project: one that has not run never will; a
// running one is killed by the replica that runs it.
func (s *Service) Stop(ctx context.Context, projectID, jobID, reason string) (Status, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return Status{}, err
	}
	if reason == "" {
		reason = "stopped on request"
	}
	j, err := s.st.StopJob(ctx, jobID, reason)
	if err != nil {
		return Status{}, err
	}
	if j.State.Active() {
		s.mu.Lock()
		h := s.runs[jobID]
		s.mu.Unlock()
		if h != nil {
			h.cancel(fmt.Errorf("%w: %s", errStopped, reason))
			select {
			case <-h.done:
			case <-ctx.Done():
			}
		}
	}
	return s.Get(ctx, projectID, jobID)
}

// Delete removes a job of project and its files; refused while it runs
// or is locked.
func (s *Service) Delete(ctx context.Context, projectID, jobID string) error {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return err
	}
	return s.st.DeleteJob(ctx, jobID)
}

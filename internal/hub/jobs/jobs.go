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
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Store is what the service needs of the hub's store; *store.DB is one.
type Store interface {
	Materialize(ctx context.Context, id int64, cacheDir string) (string, error)
	SetProfile(ctx context.Context, versionID int64, ps store.ProfileSpec) (store.Profile, error)
	GetProfile(ctx context.Context, versionID int64) (store.Profile, error)
	BeginPreparation(ctx context.Context, versionID int64, replica string) (store.Profile, error)
	EndPreparation(ctx context.Context, versionID, revision int64, end store.PreparationEnd) (store.Profile, error)
	ReleasePreparations(ctx context.Context, replica, why string) ([]int64, error)
	LayOutLayer(ctx context.Context, digest, parent string) (string, error)
	CreateJob(ctx context.Context, projectID string, versionID int64) (store.Job, error)
	GetJob(ctx context.Context, id string) (store.Job, error)
	ListJobs(ctx context.Context, projectID string) ([]store.Job, error)
	ReplicaJobs(ctx context.Context, replica string) ([]store.Job, error)
	JobFiles(ctx context.Context, id string) ([]store.JobFile, error)
	PutJobInput(ctx context.Context, id, path string, data []byte, w store.InputWrite) (store.JobFile, error)
	QueueJob(ctx context.Context, id, script string, args []string, by string) (store.Job, error)
	ClaimJob(ctx context.Context, replica string) (store.Job, bool, error)
	FinishJob(ctx context.Context, id, replica string, r store.JobResult, outputs []store.NewJobFile) (store.Job, error)
	LockJob(ctx context.Context, id, replica, reason string) (store.Job, error)
	StopJob(ctx context.Context, id, reason string) (store.Job, error)
	SettleJob(ctx context.Context, id string, st store.Settlement) (store.Job, error)
	ReadJobFile(ctx context.Context, id string, kind store.FileKind, path string, offset, limit int64) ([]byte, store.JobFile, error)
	ReadRunInput(ctx context.Context, id, replica, path string) ([]byte, store.JobFile, error)
	DeleteJob(ctx context.Context, id string) error
	JobChanges(ctx context.Context) <-chan store.JobChange
	Heartbeat(ctx context.Context, replica string, ttl time.Duration) (time.Time, error)
	Leases(ctx context.Context) ([]store.Lease, time.Time, error)
	SettleOrphans(ctx context.Context, replica, settler string, grace time.Duration) (store.Settled, error)
}

// Auditor records audit entries; *auditlog.Log is one.
type Auditor interface {
	Record(ctx context.Context, e store.AuditEntry)
}

// Defaults of Options.
const (
	DefaultRunWait = 20 * time.Second
	DefaultWorkers = 8
	// DefaultLease is a replica's lease: it heartbeats every quarter of
	// it, and once it has lapsed and another replica has seen it lapsed
	// for as long again, that replica settles its jobs.
	DefaultLease = 20 * time.Second
	// DefaultFinishRetry bounds how long a worker keeps a run's end while
	// the database refuses it.
	DefaultFinishRetry = 10 * time.Minute
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
	// should stay the same across restarts: recovery looks for the jobs the
	// replica claimed before (a replica that never returns has its jobs
	// settled by the others once its lease lapses).
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
	// DockerImage is the image of the profiles that name none, whatever
	// their runtime; empty: the runtime's default (DefaultImage). Only a
	// backend that runs images (the Docker engine) uses one. A preparation
	// pins the image's id, which its runs use.
	DockerImage string
	// RunWait is how long Run waits for the job to end before it answers
	// that it is running. If zero, DefaultRunWait.
	RunWait time.Duration
	// Workers bounds the jobs this replica runs at once. If zero,
	// DefaultWorkers.
	Workers int
	// Lease is this replica's lease in the database (see DefaultLease). If
	// zero, DefaultLease.
	Lease time.Duration
	// FinishRetry bounds how long the end of a run is retried while the
	// database is unavailable. If zero, DefaultFinishRetry.
	FinishRetry time.Duration
	// Limits are the sandbox limits of a run but its wall time (the
	// profile's timeout). If zero, sandbox.DefaultLimits, the seed's.
	Limits sandbox.Limits
	// Audit, if not nil, records each run queued and ended, each
	// preparation, and each settlement, with this replica's id.
	Audit Auditor
	// Logger receives what the service does. If nil, nothing is logged.
	Logger *slog.Logger
}

var (
	// ErrPrepareFailed is matched by the error of a preparation whose
	// build failed; the profile keeps its log.
	ErrPrepareFailed = errors.New("preparing the environment failed")
	// ErrClosed is returned by a closed service.
	ErrClosed = errors.New("the job service is closed")
	// ErrRunUnknown is returned by Run when the database went away while
	// the run was being queued, and did not come back within RunWait: the
	// run may or may not have been queued.
	ErrRunUnknown = errors.New("whether the run was queued is unknown")
)

// Service runs jobs and prepares environments. It owns every goroutine of
// both (workers, runs, preparations, the job feed's reader, the lease's
// heartbeat); Close stops them and waits.
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
	runs     map[string]*runHandle // jobs and preparations this replica runs now
	preps    map[int64]*prepHandle // preparations this replica runs, by version
	prepGen  int64                 // counts the preparations started
	// runsChanged is closed (and replaced) when a run is added to runs,
	// so a Run waiting for its job's handle sees it at once.
	runsChanged chan struct{}
	// changed holds, per job someone waits for, a channel closed (and
	// dropped) when the job feed announces a change of the job.
	changed map[string]chan struct{}
	layers  map[string]bool // layers verified by this process
}

// runHandle is one run this replica owns.
type runHandle struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	// ending is set once the run is over and its end is being stored: a
	// change of the job then is this replica's own.
	ending atomic.Bool
}

// prepHandle is one preparation this replica runs.
type prepHandle struct {
	runHandle
	revision int64
}

// errStopped and errShutdown are the causes a run is cancelled with.
var (
	errStopped  = errors.New("stopped")
	errShutdown = errors.New("the hub shut down during the run")
)

// stopCause is the cause a run stopped for reason is cancelled with: the
// same whether this replica's Stop or the job feed cancels it first.
func stopCause(reason string) error {
	if reason == "" {
		reason = "stopped on request"
	}
	return stopError(reason)
}

// stopError is a stop's reason as it is stored: it is errStopped.
type stopError string

func (e stopError) Error() string        { return string(e) }
func (e stopError) Is(target error) bool { return target == errStopped }

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
		return nil, errors.New("jobs: no replica id: name this process (it should stay the same across restarts)")
	}
	if opts.RunWait <= 0 {
		opts.RunWait = DefaultRunWait
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Lease > store.MaxLease {
		return nil, fmt.Errorf("jobs: a lease of %v is longer than the %v a replica may hold one", opts.Lease, store.MaxLease)
	}
	if opts.FinishRetry <= 0 {
		opts.FinishRetry = DefaultFinishRetry
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
		wake: make(chan struct{}, 1), runs: map[string]*runHandle{}, preps: map[int64]*prepHandle{},
		runsChanged: make(chan struct{}), changed: map[string]chan struct{}{}, layers: map[string]bool{},
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

// Replica returns this replica's id.
func (s *Service) Replica() string { return s.opts.Replica }

// RecoverReport says what recovery did with each unfinished job of this
// replica, by job id.
type RecoverReport struct {
	Failed  []string `json:"failed,omitempty"`  // its sandbox was gone: its result was lost
	Stopped []string `json:"stopped,omitempty"` // its sandbox was killed, or confirmed gone
	Locked  []string `json:"locked,omitempty"`  // its sandbox could not be confirmed gone
	// Killed names the sandboxes killed that no live job owned.
	Killed []string `json:"killed,omitempty"`
	// Preparations are the versions whose preparation this replica left
	// (it stopped during them); each is recorded failed.
	Preparations []int64 `json:"preparations,omitempty"`
}

// Start checks the sandbox backend, takes this replica's lease in the
// database, recovers the unfinished jobs and preparations this replica
// left (Recover), and starts the workers, the reader of the job feed and
// the heartbeat that keeps the lease and settles the jobs of replicas
// whose lease lapsed. Without a working backend it starts no worker and
// returns the check's error (matching sandbox.ErrUnavailable); jobs are
// then refused, and no lease is held.
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
	refuse := func(err error) error {
		// Jobs left unreconciled must not be joined by new ones that no
		// worker here would run: refuse jobs until a restart recovers.
		s.mu.Lock()
		s.ready = err
		s.mu.Unlock()
		return err
	}
	// The lease first: from now on no other replica settles this one's
	// jobs, which recovery reconciles itself.
	if _, err := s.st.Heartbeat(ctx, s.opts.Replica, s.opts.Lease); err != nil {
		return enf, RecoverReport{}, refuse(fmt.Errorf("%w: taking this replica's lease in the database failed: %w", sandbox.ErrUnavailable, err))
	}
	rep, err := s.Recover(ctx)
	if err != nil {
		return enf, rep, refuse(fmt.Errorf("%w: recovering this replica's unfinished jobs failed: %w", sandbox.ErrUnavailable, err))
	}
	// The feed before the workers: a job queued from now on is announced.
	changes := s.st.JobChanges(s.ctx)
	s.wg.Go(func() { s.follow(changes) })
	s.wg.Go(s.keepLease)
	for range s.opts.Workers {
		s.wg.Go(s.worker)
	}
	s.kick()
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

// Close stops the workers and kills the runs and preparations this
// replica owns; each job is stored as stopped ("the hub shut down during
// the run"), or locked when its kill was not confirmed, and each
// preparation failed. It waits for all of them.
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

// actorKey carries who asks for a run, for the store and the audit log.
type actorKey struct{}

// WithActor returns ctx naming who makes the calls made with it (a token
// id, "cli"): Run records it as who asked for the run.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// actorOf returns the actor ctx names, else a name for the project's
// endpoint.
func actorOf(ctx context.Context, projectID string) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	if projectID == "" {
		return "hub"
	}
	return "project:" + projectID
}

// audit records an entry with this replica's id, if the service has an
// audit log.
func (s *Service) audit(ctx context.Context, e store.AuditEntry) {
	if s.opts.Audit == nil {
		return
	}
	e.Replica = s.opts.Replica
	s.opts.Audit.Record(ctx, e)
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
	// Stale marks a status that could not be read fresh (the database was
	// away): Job is its last state known; Note says what to do.
	Stale bool   `json:"stale,omitempty"`
	Note  string `json:"note,omitempty"`
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
// is enabled and prepared. Refused for a paused project.
func (s *Service) Create(ctx context.Context, projectID string, versionID int64) (store.Job, error) {
	if err := s.usable(); err != nil {
		return store.Job{}, err
	}
	return s.st.CreateJob(ctx, projectID, versionID)
}

// Upload writes an input of a job that has not run, whole or appended to
// (appendTo), in one call. Paths are store.CheckJobPath's (no traversal,
// not absolute, NFC); the limits are the store's.
func (s *Service) Upload(ctx context.Context, projectID, jobID, path string, data []byte, appendTo bool) (store.JobFile, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return store.JobFile{}, err
	}
	return s.st.PutJobInput(ctx, jobID, path, data, store.InputWrite{Append: appendTo})
}

// UploadPiece is how much of a streamed upload is held at once.
const UploadPiece = 1 << 20

// PartialUploadError says that a streamed upload stopped after part of
// the file was stored; the file is marked incomplete, and the job does not
// run until it is uploaded again.
type PartialUploadError struct {
	Path   string
	Stored int64 // the bytes stored
	Err    error
}

func (e *PartialUploadError) Error() string {
	return fmt.Sprintf("%v (the upload stopped: %s holds only its first %d bytes and is marked incomplete, so the job will not run on it: upload it again)", e.Err, e.Path, e.Stored)
}

func (e *PartialUploadError) Unwrap() error { return e.Err }

// UploadStream stores r as the input path of a job that has not run, as it
// arrives: in pieces of UploadPiece bytes, each appended in its own
// transaction, so that a request holds at most two pieces whatever the
// file's size. Until the last piece is stored the file is marked
// incomplete: an upload cut off (a client gone, a crash) is never taken
// for the whole file. A file over store.MaxJobFileSize is refused with an
// error matching store.ErrJobLimit. An error after the first piece was
// stored is a *PartialUploadError.
func (s *Service) UploadStream(ctx context.Context, projectID, jobID, path string, r io.Reader) (store.JobFile, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return store.JobFile{}, err
	}
	r = cutReader{r}
	// A piece that arrived is stored even if the client went away since:
	// the file is then marked incomplete, never lost in silence.
	sctx := context.WithoutCancel(ctx)
	var (
		cur, next = make([]byte, UploadPiece), make([]byte, UploadPiece)
		f         store.JobFile
		stored    int64
		written   bool
	)
	fill := func(buf []byte) (int, bool, error) {
		n, err := io.ReadFull(r, buf)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return n, true, nil
		case err != nil:
			return n, false, err
		}
		return n, false, nil
	}
	partial := func(err error) error {
		if written {
			return &PartialUploadError{Path: path, Stored: stored, Err: err}
		}
		return err
	}
	n, eof, rerr := fill(cur)
	for {
		if rerr != nil {
			return store.JobFile{}, partial(rerr)
		}
		more := false
		var m int
		var nextEOF bool
		if !eof {
			// Read ahead: is this piece the last?
			m, nextEOF, rerr = fill(next)
			more = m > 0 || rerr != nil
		}
		if stored+int64(n) > store.MaxJobFileSize {
			return store.JobFile{}, partial(fmt.Errorf("%s is over the %d MiB a job's file may have: %w", path, store.MaxJobFileSize>>20, store.ErrJobLimit))
		}
		pctx, cancel := context.WithTimeout(sctx, finishTimeout)
		var err error
		f, err = s.st.PutJobInput(pctx, jobID, path, cur[:n], store.InputWrite{Append: written, More: more})
		cancel()
		if err != nil {
			return store.JobFile{}, partial(err)
		}
		written = true
		stored += int64(n)
		if !more {
			if rerr != nil {
				return store.JobFile{}, partial(rerr)
			}
			return f, nil
		}
		cur, next = next, cur
		n, eof = m, nextEOF
	}
}

// errCut is an upload's reader failing with io.ErrUnexpectedEOF, which
// io.ReadFull would take for a short last piece.
var errCut = errors.New("the upload was cut off before its end")

// cutReader tells a reader's own io.ErrUnexpectedEOF (a stream cut off)
// from the end of the data.
type cutReader struct{ r io.Reader }

func (c cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.ErrUnexpectedEOF {
		err = errCut
	}
	return n, err
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
// stopped. Who asks is WithActor's actor, recorded with the run.
//
// Run tells the truth when the database goes away under it: a run that
// was queued is never reported as an error that invites a second run. If
// the job cannot be read when the wait ends, the Status is the last state
// known, marked Stale (read the job again later). If the database went
// away while the run was being queued and stays away through RunWait, the
// error matches ErrRunUnknown: read the job before running it again (a job
// runs at most once, so running the same job again is always safe; a new
// job would run the script twice).
func (s *Service) Run(ctx context.Context, projectID, jobID, script string, args []string) (Status, error) {
	if err := s.usable(); err != nil {
		return Status{}, err
	}
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return Status{}, err
	}
	actor := actorOf(ctx, projectID)
	j, err := s.st.QueueJob(ctx, jobID, script, args, actor)
	if errors.Is(err, store.ErrUnavailable) {
		// The commit may have happened before the connection was lost:
		// look again until the database answers.
		j, err = s.queuedAfterOutage(ctx, projectID, jobID, err, time.Now().Add(s.opts.RunWait))
	}
	if err != nil {
		return Status{}, err
	}
	deadline := time.Now().Add(s.opts.RunWait)
	s.audit(ctx, store.AuditEntry{Actor: actor, Action: "job.run", ObjectKind: "job", ObjectID: projectID + "/" + jobID, Result: "queued"})
	s.kick()
	return s.wait(ctx, projectID, j, deadline)
}

// queuedAfterOutage finds out whether a QueueJob that failed with the
// database unavailable (qerr) committed: it reads the job until the
// database answers or deadline passes.
func (s *Service) queuedAfterOutage(ctx context.Context, projectID, jobID string, qerr error, deadline time.Time) (store.Job, error) {
	backoff := 100 * time.Millisecond
	for {
		j, err := s.job(ctx, projectID, jobID)
		switch {
		case err == nil && (j.State == store.JobCreated || j.State == store.JobUploading):
			// Not queued: the refusal stands, and running again is safe.
			return store.Job{}, qerr
		case err == nil:
			return j, nil
		case !errors.Is(err, store.ErrUnavailable):
			return store.Job{}, err
		}
		if time.Now().Add(backoff).After(deadline) {
			return store.Job{}, fmt.Errorf("%w: the hub's database went away while job %s's run was being queued and is still away: read the job once it is back before running it again (a job runs at most once, so running the same job again is safe; a new job would run the script twice): %w", ErrRunUnknown, jobID, qerr)
		}
		select {
		case <-time.After(backoff):
			backoff = min(2*backoff, 2*time.Second)
		case <-ctx.Done():
			return store.Job{}, errors.Join(qerr, ctx.Err())
		}
	}
}

// signal returns a channel closed when the job feed next announces a
// change of job id.
func (s *Service) signal(id string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.changed[id]
	if ch == nil {
		ch = make(chan struct{})
		s.changed[id] = ch
	}
	return ch
}

// announce wakes whoever waits for a change of job id.
func (s *Service) announce(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch := s.changed[id]; ch != nil {
		close(ch)
		delete(s.changed, id)
	}
}

// wait waits until deadline for the job (queued as j) to leave queued and
// running: its own runs by their handles, others' by the job feed; while
// the database is away, by reading again with backoff.
func (s *Service) wait(ctx context.Context, projectID string, j store.Job, deadline time.Time) (Status, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	last, lastErr := j, error(nil)
	backoff := 100 * time.Millisecond
	for {
		changed := s.signal(j.ID) // before the read: a change after it wakes us
		cur, err := s.st.GetJob(ctx, j.ID)
		switch {
		case err == nil:
			last, lastErr, backoff = cur, nil, 100*time.Millisecond
			if cur.State != store.JobQueued && cur.State != store.JobRunning {
				return s.status(ctx, projectID, last)
			}
		case ctx.Err() == nil && !errors.Is(err, store.ErrUnavailable):
			return Status{}, err
		default:
			lastErr = err
		}
		var done, claimed <-chan struct{}
		var retry <-chan time.Time
		s.mu.Lock()
		if h := s.runs[j.ID]; h != nil {
			done = h.done
		} else {
			claimed = s.runsChanged // a worker here may be about to run it
		}
		s.mu.Unlock()
		if lastErr != nil {
			retry = time.After(backoff)
			backoff = min(2*backoff, 2*time.Second)
		}
		select {
		case <-done:
		case <-claimed:
		case <-changed:
		case <-retry:
		case <-timer.C:
			return s.status(ctx, projectID, last)
		case <-ctx.Done():
			// The client went away while it waited: the run is stopped.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			st, err := s.Stop(sctx, projectID, j.ID, "stopped: the client went away while it waited for the run")
			if err != nil {
				return Status{}, errors.Join(ctx.Err(), err)
			}
			return st, ctx.Err()
		}
	}
}

// status is Get, or, when the database cannot be read, the last state
// known of the job, marked stale.
func (s *Service) status(ctx context.Context, projectID string, last store.Job) (Status, error) {
	st, err := s.Get(ctx, projectID, last.ID)
	if err == nil {
		return st, nil
	}
	if !errors.Is(err, store.ErrUnavailable) {
		return Status{}, err
	}
	return Status{Job: last, Stdout: string(last.Stdout), Stderr: string(last.Stderr), Inputs: []store.JobFile{}, Outputs: []store.JobFile{},
		Stale: true, Note: "the hub's database is unavailable now: this is the job's last state known; its run goes on: read the job again later (do not create another job: this one runs, at most once)"}, nil
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
// running one is killed by the replica that runs it (this one at once,
// another when the job feed tells it).
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
			h.cancel(stopCause(reason))
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

// Settle ends a running or locked job of project by an administrator's
// decision (st.By names who, for the job's reason and the audit log): see
// store.DB.SettleJob. A job whose replica holds a current lease is refused
// unless st.Force. If this replica runs it, its sandbox is killed now;
// another replica's is killed when the job feed tells it.
func (s *Service) Settle(ctx context.Context, projectID, jobID string, st store.Settlement) (Status, error) {
	if _, err := s.job(ctx, projectID, jobID); err != nil {
		return Status{}, err
	}
	// The caller (the admin API, the command line) records the
	// settlement in the audit log, refusals included.
	j, err := s.st.SettleJob(ctx, jobID, st)
	if err != nil {
		return Status{}, err
	}
	s.mu.Lock()
	h := s.runs[jobID]
	s.mu.Unlock()
	if h != nil {
		h.cancel(fmt.Errorf("%w: %s", errStopped, j.Reason))
	}
	return s.Get(ctx, projectID, jobID)
}

package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// JobState is where a job is in its life:
//
//	created ─upload→ uploading ─run→ queued ─claim→ running ─→ succeeded | failed | timed_out | stopped
//	   └────────────run─────────────┘                  └─kill not confirmed→ locked ─recovery→ stopped
//
// created, uploading and queued jobs may also be stopped before they run.
type JobState string

// The job states.
const (
	JobCreated   JobState = "created"
	JobUploading JobState = "uploading"
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
	JobTimedOut  JobState = "timed_out"
	JobStopped   JobState = "stopped"
	JobLocked    JobState = "locked"
)

// Final reports whether the job has ended: its outputs, logs and exit code
// are what they will stay.
func (s JobState) Final() bool {
	return s == JobSucceeded || s == JobFailed || s == JobTimedOut || s == JobStopped
}

// Active reports whether the job's sandbox may be running: its files are
// not served and neither it nor its project can be deleted.
func (s JobState) Active() bool { return s == JobRunning || s == JobLocked }

// Limits of jobs, enforced by the store (the seed's).
const (
	MaxJobFileSize    = 32 << 20  // bytes per file
	MaxJobBytes       = 128 << 20 // bytes of a job's files as they stand
	MaxJobFiles       = 2000      // files of a job as they stand
	MaxProjectJobs    = 100       // jobs a project retains
	MaxJobOutput      = 1 << 20   // bytes kept of stdout and of stderr, each
	MaxJobPath        = 1024      // bytes of a job file's path
	MaxJobArgs        = 256       // arguments of a run
	MaxJobArgsBytes   = 64 << 10  // bytes of a run's arguments together
	MaxJobReason      = 4096      // bytes of a job's reason
	maxReplicaIDBytes = 200
)

// FileKind says whether a job file was uploaded or produced by the run.
type FileKind string

// The kinds of job file.
const (
	JobInput  FileKind = "input"
	JobOutput FileKind = "output"
)

// Job is one job: a single run of an allowed script of a bound version in
// a project, with its inputs before and its outputs after.
type Job struct {
	ID              string   `json:"id"`
	ProjectID       string   `json:"project_id"`
	VersionID       int64    `json:"version_id"`
	State           JobState `json:"state"`
	ProfileRevision int64    `json:"profile_revision"`
	Script          string   `json:"script,omitempty"`
	Args            []string `json:"args"`
	// ExitCode is the script's exit status once it has ended by itself;
	// nil before, or when it was killed.
	ExitCode *int `json:"exit_code,omitempty"`
	// Reason says why the job is in its state, when that needs saying (a
	// timeout, a limit, a recovery).
	Reason string `json:"reason,omitempty"`
	// Stdout and Stderr are the first MaxJobOutput bytes of each stream;
	// the Cut flags say more was written. Lists leave them out.
	Stdout    []byte `json:"-"`
	Stderr    []byte `json:"-"`
	StdoutCut bool   `json:"stdout_cut"`
	StderrCut bool   `json:"stderr_cut"`
	// ClaimedBy names the replica that runs (or ran) the job.
	ClaimedBy string `json:"claimed_by,omitempty"`
	// RunBy names who asked for the run (a token id, or a name such as
	// cli), for the audit entry of its end.
	RunBy         string    `json:"run_by,omitempty"`
	StopRequested bool      `json:"stop_requested,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	QueuedAt      time.Time `json:"queued_at,omitzero"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// JobFile is one file of a job, without its content.
type JobFile struct {
	Kind   FileKind `json:"kind"`
	Path   string   `json:"path"`
	Size   int64    `json:"size"`
	Digest [32]byte `json:"-"`
	// SHA256 is Digest in lowercase hex.
	SHA256 string `json:"sha256"`
	// Incomplete marks an input whose upload was cut off: it holds only
	// what arrived, and the job does not run until it is uploaded again.
	Incomplete bool `json:"incomplete,omitempty"`
}

// InputWrite says how PutJobInput writes an input.
type InputWrite struct {
	// Append adds the data to the end of the file so far instead of
	// replacing it (a missing file is made).
	Append bool
	// More says more pieces of the same upload follow: until a write
	// without it, the file is marked incomplete, so that an upload cut
	// off (a client gone, a crash) is never taken for the whole file.
	More bool
}

// NewJobFile is an output the run left, stored with the job's end.
type NewJobFile struct {
	Path string
	Data []byte
}

// JobResult is how a run ended, stored by FinishJob.
type JobResult struct {
	State     JobState // a final state
	ExitCode  *int
	Reason    string
	Stdout    []byte
	Stderr    []byte
	StdoutCut bool
	StderrCut bool
}

// JobRemnant is what is left of a job whose project was deleted: its
// files, kept for the operator's recovery until PurgeJobRemnant.
type JobRemnant struct {
	JobID      string    `json:"job_id"`
	ProjectID  string    `json:"project_id"`
	VersionID  int64     `json:"version_id"`
	Package    string    `json:"package"`
	TreeDigest string    `json:"tree_digest"`
	State      JobState  `json:"state"`
	CreatedAt  time.Time `json:"created_at"`
	DeletedAt  time.Time `json:"deleted_at"`
}

var (
	// ErrJobState is matched by a *JobStateError.
	ErrJobState = errors.New("the job's state does not allow this")
	// ErrJobLimit is returned when a job would pass one of its limits.
	ErrJobLimit = errors.New("a job limit would be passed")
	// ErrProjectPaused is returned for a job of a paused project: none is
	// created, uploaded to or run until the project is resumed.
	ErrProjectPaused = errors.New("the project is paused")
	// ErrIncompleteInput is matched by an *IncompleteInputError.
	ErrIncompleteInput = errors.New("an input's upload was cut off")
)

// pausedError refuses a job operation of a paused project.
type pausedError struct{ project, doing string }

func (e *pausedError) Error() string {
	return fmt.Sprintf("project %s is paused: %s refused until an administrator resumes it", e.project, e.doing)
}
func (e *pausedError) Is(target error) bool { return target == ErrProjectPaused }
func (e *pausedError) storeOwn()            {}

// IncompleteInputError refuses to run a job one of whose inputs was cut
// off during its upload.
type IncompleteInputError struct {
	JobID string
	Paths []string
}

func (e *IncompleteInputError) Error() string {
	return fmt.Sprintf("job %s: the upload of %s was cut off, so it holds only part of the file: upload it again (whole) before running the job", e.JobID, strings.Join(e.Paths, ", "))
}

// Is makes errors.Is(err, ErrIncompleteInput) true.
func (e *IncompleteInputError) Is(target error) bool { return target == ErrIncompleteInput }
func (e *IncompleteInputError) storeOwn()            {}

// checkNotPaused refuses, inside tx, an operation on a job of a paused
// project.
func (s *DB) checkNotPaused(ctx context.Context, tx *sql.Tx, projectID, doing string) error {
	var paused sql.NullInt64
	err := tx.QueryRowContext(ctx, s.d.rebind(`SELECT paused_at FROM projects WHERE id = ?`), projectID).Scan(&paused)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if paused.Valid {
		return &pausedError{project: projectID, doing: doing}
	}
	return nil
}

// JobStateError refuses an operation the job's state does not allow.
type JobStateError struct {
	JobID string
	State JobState
	// Doing is what was refused ("uploading", "running", …); Hint says
	// what to do instead.
	Doing, Hint string
}

func (e *JobStateError) Error() string {
	return fmt.Sprintf("job %s is %s: %s refused: %s", e.JobID, e.State, e.Doing, e.Hint)
}

// Is makes errors.Is(err, ErrJobState) true.
func (e *JobStateError) Is(target error) bool { return target == ErrJobState }
func (e *JobStateError) storeOwn()            {}

type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrJobLimit }
func (e *limitError) storeOwn()            {}

func limitf(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

// CheckJobPath reports whether p may name a job file: a clean relative
// slash-separated path (no "..", no leading "/", no "\"), valid UTF-8 in
// NFC without control characters, at most MaxJobPath bytes, and no
// segment starting with ".." or named ".git".
func CheckJobPath(p string) error {
	switch {
	case p == "" || p == ".":
		return invalidf("job file path is empty: name a file, e.g. input.csv")
	case len(p) > MaxJobPath:
		return invalidf("job file path is longer than %d bytes", MaxJobPath)
	case !utf8.ValidString(p) || !norm.NFC.IsNormalString(p):
		return invalidf("job file path %q is not UTF-8 in NFC: normalise it to NFC", truncate(p, 80))
	case strings.IndexFunc(p, unicode.IsControl) >= 0 || strings.ContainsAny(p, "\\"):
		return invalidf("job file path %q has a control character or a backslash", truncate(p, 80))
	case !fs.ValidPath(p):
		return invalidf("job file path %q must be relative, without '.' or '..' segments or empty segments", truncate(p, 80))
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".git" {
			return invalidf("job file path %q has a .git segment", truncate(p, 80))
		}
	}
	return nil
}

func newJobID() string {
	var b [10]byte
	rand.Read(b[:])
	return "j-" + hex.EncodeToString(b[:])
}

func validJobID(id string) bool {
	if len(id) != 22 || !strings.HasPrefix(id, "j-") {
		return false
	}
	for _, c := range id[2:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func jobNotFound(id string) error {
	return fmt.Errorf("job %s: %w", truncate(id, 40), ErrNotFound)
}

const jobColumns = `id, project_id, version_id, state, profile_revision, script, args, exit_code, reason,
	stdout_cut, stderr_cut, claimed_by, run_by, stop_requested, created_at, queued_at, started_at, finished_at, updated_at`

func scanJob(r scanner, logs bool) (Job, error) {
	var (
		j                     Job
		args                  string
		exit                  sql.NullInt64
		outCut, errCut, stop  int
		claimed               sql.NullString
		created, updated      int64
		queued, started, done sql.NullInt64
	)
	dest := []any{&j.ID, &j.ProjectID, &j.VersionID, &j.State, &j.ProfileRevision, &j.Script, &args, &exit, &j.Reason,
		&outCut, &errCut, &claimed, &j.RunBy, &stop, &created, &queued, &started, &done, &updated}
	if logs {
		dest = append(dest, &j.Stdout, &j.Stderr)
	}
	if err := r.Scan(dest...); err != nil {
		return Job{}, err
	}
	if err := json.Unmarshal([]byte(args), &j.Args); err != nil {
		return Job{}, fmt.Errorf("job %s: its stored arguments are not a JSON list: %w", j.ID, err)
	}
	if exit.Valid {
		c := int(exit.Int64)
		j.ExitCode = &c
	}
	j.StdoutCut, j.StderrCut, j.StopRequested = outCut != 0, errCut != 0, stop != 0
	j.ClaimedBy = claimed.String
	j.CreatedAt, j.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	for _, t := range []struct {
		v   sql.NullInt64
		dst *time.Time
	}{{queued, &j.QueuedAt}, {started, &j.StartedAt}, {done, &j.FinishedAt}} {
		if t.v.Valid {
			*t.dst = time.UnixMicro(t.v.Int64).UTC()
		}
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	return j, nil
}

// lockJob reads a job with its logs, locking its row until tx ends.
func (s *DB) lockJob(ctx context.Context, tx *sql.Tx, id string) (Job, error) {
	j, err := scanJob(tx.QueryRowContext(ctx, s.d.rebind(`SELECT `+jobColumns+`, stdout, stderr FROM jobs WHERE id = ?`+s.d.lockRow()), id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, jobNotFound(id)
	}
	return j, err
}

func (s *DB) readJobTx(ctx context.Context, tx *sql.Tx, id string) (Job, error) {
	return scanJob(tx.QueryRowContext(ctx, s.d.rebind(`SELECT `+jobColumns+`, stdout, stderr FROM jobs WHERE id = ?`), id), true)
}

// usableProfile checks, inside tx, that version's profile lets jobs be
// created (revision 0) or run at revision.
func (s *DB) usableProfile(ctx context.Context, tx *sql.Tx, versionID, revision int64) (Profile, error) {
	p, err := scanProfile(tx.QueryRowContext(ctx, s.d.rebind(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`), versionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, profileErr(ErrProfileDisabled, "version %d has no execution profile: an administrator sets and prepares one before jobs can run", versionID)
	}
	if err != nil {
		return Profile{}, err
	}
	switch {
	case !p.Enabled:
		return Profile{}, profileErr(ErrProfileDisabled, "version %d: its execution profile is not enabled: an administrator enables it", versionID)
	case revision != 0 && p.Revision != revision:
		return Profile{}, profileErr(ErrProfileChanged, "version %d: its execution profile changed since the job was created (revision %d, now %d): create another job", versionID, revision, p.Revision)
	case !p.Prepared():
		return Profile{}, profileErr(ErrNotPrepared, "version %d: its execution profile is not prepared (it is new or changed): an administrator prepares its environment", versionID)
	}
	return p, nil
}

// CreateJob makes a job of project for a version bound to it, under the
// version's profile, which must be enabled and prepared. A project keeps
// at most MaxProjectJobs jobs; delete old ones to make room.
func (s *DB) CreateJob(ctx context.Context, projectID string, versionID int64) (Job, error) {
	var out Job
	doing := fmt.Sprintf("creating a job of version %d in project %s", versionID, projectID)
	_, err := s.projectTx(ctx, projectID, doing, func(tx *sql.Tx, lp *lockedProject) (bool, error) {
		q := s.d.rebind
		if lp.Paused {
			return false, &pausedError{project: projectID, doing: "creating a job"}
		}
		if ok, err := exists(ctx, tx, q(`SELECT 1 FROM bindings WHERE project_id = ? AND version_id = ?`), projectID, versionID); err != nil {
			return false, err
		} else if !ok {
			return false, fmt.Errorf("project %s: version %d is not bound to it: %w (bind it first)", projectID, versionID, ErrNotFound)
		}
		p, err := s.usableProfile(ctx, tx, versionID, 0)
		if err != nil {
			return false, err
		}
		var n int
		if err := tx.QueryRowContext(ctx, q(`SELECT COUNT(*) FROM jobs WHERE project_id = ?`), projectID).Scan(&n); err != nil {
			return false, err
		}
		if n >= MaxProjectJobs {
			return false, limitf("project %s keeps %d jobs, the most it may: delete old jobs to create another", projectID, n)
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return false, err
		}
		id := newJobID()
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO jobs (id, project_id, version_id, state, profile_revision, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`), id, projectID, versionID, string(JobCreated), p.Revision, now, now); err != nil {
			return false, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return false, err
	})
	return out, err
}

// GetJob returns a job with its logs, or ErrNotFound.
func (s *DB) GetJob(ctx context.Context, id string) (Job, error) {
	if !validJobID(id) {
		return Job{}, jobNotFound(id)
	}
	j, err := scanJob(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+jobColumns+`, stdout, stderr FROM jobs WHERE id = ?`), id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, jobNotFound(id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("reading job %s: %w", id, s.d.wrap(err))
	}
	return j, nil
}

func (s *DB) listJobs(ctx context.Context, doing, where string, args ...any) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT `+jobColumns+` FROM jobs WHERE `+where+` ORDER BY created_at DESC, id`), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doing, s.d.wrap(err))
	}
	defer rows.Close()
	out := []Job{}
	for rows.Next() {
		j, err := scanJob(rows, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doing, s.d.wrap(err))
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, s.d.wrap(err))
	}
	return out, nil
}

// ListJobs lists a project's jobs, newest first, without their logs.
func (s *DB) ListJobs(ctx context.Context, projectID string) ([]Job, error) {
	return s.listJobs(ctx, "listing the jobs of project "+projectID, `project_id = ?`, projectID)
}

// ReplicaJobs lists the running and locked jobs a replica claimed, for its
// recovery at start-up.
func (s *DB) ReplicaJobs(ctx context.Context, replica string) ([]Job, error) {
	return s.listJobs(ctx, "listing the jobs of replica "+replica, `claimed_by = ? AND state IN ('running', 'locked')`, replica)
}

// JobFiles lists a job's files (or a remnant's): inputs, then outputs,
// each by path.
func (s *DB) JobFiles(ctx context.Context, id string) ([]JobFile, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT kind, path, size, digest, incomplete FROM job_files WHERE job_id = ?`), id)
	if err != nil {
		return nil, fmt.Errorf("listing the files of job %s: %w", id, s.d.wrap(err))
	}
	defer rows.Close()
	out := []JobFile{}
	for rows.Next() {
		var f JobFile
		var d []byte
		var incomplete int
		if err := rows.Scan(&f.Kind, &f.Path, &f.Size, &d, &incomplete); err != nil {
			return nil, fmt.Errorf("listing the files of job %s: %w", id, s.d.wrap(err))
		}
		copy(f.Digest[:], d)
		f.SHA256 = hex.EncodeToString(f.Digest[:])
		f.Incomplete = incomplete != 0
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the files of job %s: %w", id, s.d.wrap(err))
	}
	slices.SortFunc(out, func(a, b JobFile) int {
		if a.Kind != b.Kind {
			if a.Kind == JobInput {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// writeChunks stores data as chunks of file (job, kind, path) from seq and
// offset off on.
func (s *DB) writeChunks(ctx context.Context, tx *sql.Tx, job string, kind FileKind, path string, seq int, off int64, data []byte) (int, error) {
	for len(data) > 0 {
		n := min(len(data), ChunkSize)
		sum := sha256.Sum256(data[:n])
		if _, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO job_chunks (job_id, kind, path, seq, off, digest, data) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			job, string(kind), path, seq, off, sum[:], data[:n]); err != nil {
			return seq, err
		}
		seq++
		off += int64(n)
		data = data[n:]
	}
	return seq, nil
}

// PutJobInput writes an input file of a job that has not run: the whole
// file, or with w.Append data added to its end (a missing file is made);
// with w.More the file stays marked incomplete until a later write without
// it. Path rules are CheckJobPath's; the limits are MaxJobFileSize per
// file, and MaxJobFiles and MaxJobBytes for the job. The job becomes
// uploading. Refused for a job of a paused project.
func (s *DB) PutJobInput(ctx context.Context, id, path string, data []byte, w InputWrite) (JobFile, error) {
	appendTo := w.Append
	if err := CheckJobPath(path); err != nil {
		return JobFile{}, err
	}
	if len(data) > MaxJobFileSize {
		return JobFile{}, limitf("input %s: %d bytes is more than a file may hold (%d MiB)", path, len(data), MaxJobFileSize>>20)
	}
	var out JobFile
	err := s.write(ctx, "uploading "+path+" to job "+id, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if j.State != JobCreated && j.State != JobUploading {
			return nil, &JobStateError{JobID: id, State: j.State, Doing: "uploading " + path,
				Hint: "a job takes inputs only before its run; create another job"}
		}
		if err := s.checkNotPaused(ctx, tx, j.ProjectID, "uploading "+path+" to job "+id); err != nil {
			return nil, err
		}
		var (
			size   int64
			chunks int
			state  []byte
			found  bool
		)
		err = tx.QueryRowContext(ctx, q(`SELECT size, chunks, hash_state FROM job_files WHERE job_id = ? AND kind = 'input' AND path = ?`), id, path).Scan(&size, &chunks, &state)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
		h := sha256.New()
		if found && appendTo {
			if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
				return nil, fmt.Errorf("input %s of job %s: its stored hash state is damaged: upload the file again whole: %w", path, id, err)
			}
		} else {
			size, chunks = 0, 0
		}
		if size+int64(len(data)) > MaxJobFileSize {
			return nil, limitf("input %s: %d bytes would pass the %d MiB a file may hold", path, size+int64(len(data)), MaxJobFileSize>>20)
		}
		var others int
		var otherBytes int64
		if err := tx.QueryRowContext(ctx, q(`SELECT COUNT(*), COALESCE(SUM(size), 0) FROM job_files WHERE job_id = ? AND kind = 'input' AND path <> ?`), id, path).Scan(&others, &otherBytes); err != nil {
			return nil, err
		}
		if others+1 > MaxJobFiles {
			return nil, limitf("job %s has %d inputs, the most a job may hold", id, others)
		}
		if otherBytes+size+int64(len(data)) > MaxJobBytes {
			return nil, limitf("job %s: %d bytes of inputs would pass the %d MiB a job may hold", id, otherBytes+size+int64(len(data)), MaxJobBytes>>20)
		}
		h.Write(data)
		newState, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return nil, err
		}
		digest := h.Sum(nil)
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		if found && !appendTo {
			if _, err := tx.ExecContext(ctx, q(`DELETE FROM job_files WHERE job_id = ? AND kind = 'input' AND path = ?`), id, path); err != nil {
				return nil, err
			}
			found = false
		}
		if !found {
			if _, err := tx.ExecContext(ctx, q(`INSERT INTO job_files (job_id, kind, path, size, digest, hash_state, chunks, created_at)
				VALUES (?, 'input', ?, 0, ?, ?, 0, ?)`), id, path, digest, newState, now); err != nil {
				return nil, err
			}
		}
		seq, err := s.writeChunks(ctx, tx, id, JobInput, path, chunks, size, data)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE job_files SET size = ?, digest = ?, hash_state = ?, chunks = ?, incomplete = ? WHERE job_id = ? AND kind = 'input' AND path = ?`),
			size+int64(len(data)), digest, newState, seq, b2i(w.More), id, path); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE jobs SET state = 'uploading', updated_at = ? WHERE id = ?`), now, id); err != nil {
			return nil, err
		}
		out = JobFile{Kind: JobInput, Path: path, Size: size + int64(len(data)), Incomplete: w.More}
		copy(out.Digest[:], digest)
		out.SHA256 = hex.EncodeToString(digest)
		return nil, nil
	})
	return out, err
}

// CheckArgs checks a run's arguments: at most MaxJobArgs strings of valid
// UTF-8 without NUL, MaxJobArgsBytes together.
func CheckArgs(args []string) error {
	if len(args) > MaxJobArgs {
		return invalidf("%d arguments: a run takes at most %d", len(args), MaxJobArgs)
	}
	total := 0
	for i, a := range args {
		if !utf8.ValidString(a) || strings.ContainsRune(a, 0) {
			return invalidf("argument %d is not UTF-8 text without NUL bytes", i)
		}
		total += len(a)
	}
	if total > MaxJobArgsBytes {
		return invalidf("arguments of %d bytes: a run takes at most %d KiB of them", total, MaxJobArgsBytes>>10)
	}
	return nil
}

// QueueJob asks for the job's one run: script, one of the profile's
// allowed scripts, with args, asked for by (a token id, or a name such as
// cli). The job must be created or uploading, of a project that is not
// paused, with no input cut off during its upload, and its version's
// profile enabled, prepared and of the revision the job was created
// under. The job becomes queued, for ClaimJob, in the database's time.
func (s *DB) QueueJob(ctx context.Context, id, script string, args []string, by string) (Job, error) {
	if err := CheckArgs(args); err != nil {
		return Job{}, err
	}
	if args == nil {
		args = []string{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return Job{}, err
	}
	var out Job
	err = s.write(ctx, "queueing job "+id, func(tx *sql.Tx) ([]string, error) {
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if j.State != JobCreated && j.State != JobUploading {
			return nil, &JobStateError{JobID: id, State: j.State, Doing: "running it",
				Hint: "a job runs at most once; create another job to run again"}
		}
		p, err := s.usableProfile(ctx, tx, j.VersionID, j.ProfileRevision)
		if err != nil {
			return nil, err
		}
		if !p.Allows(script) {
			return nil, profileErr(ErrScriptNotAllowed, "script %q is not allowed by the execution profile of version %d: the allowed scripts are %v", truncate(script, 80), j.VersionID, p.Scripts)
		}
		if err := s.checkNotPaused(ctx, tx, j.ProjectID, "running job "+id); err != nil {
			return nil, err
		}
		cut, err := queryStrings(ctx, tx, s.d.rebind(`SELECT path FROM job_files WHERE job_id = ? AND kind = 'input' AND incomplete = 1 ORDER BY path`), id)
		if err != nil {
			return nil, err
		}
		if len(cut) > 0 {
			return nil, &IncompleteInputError{JobID: id, Paths: cut}
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE jobs SET state = 'queued', script = ?, args = ?, run_by = ?, queued_at = ?, updated_at = ? WHERE id = ?`),
			script, string(raw), clipLog(by, 128), now, now, id); err != nil {
			return nil, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return []string{jobHint + id}, err
	})
	return out, err
}

func checkReplica(replica string) error {
	if replica == "" || len(replica) > maxReplicaIDBytes || strings.IndexFunc(replica, unicode.IsControl) >= 0 {
		return invalidf("replica id %q: 1 to %d characters without control characters", truncate(replica, 80), maxReplicaIDBytes)
	}
	return nil
}

// ClaimJob takes the oldest queued job for replica, which must then run
// it: the job becomes running, claimed by replica. Among any number of
// replicas claiming at once, each queued job goes to exactly one (on
// PostgreSQL by FOR UPDATE SKIP LOCKED, so claims do not queue behind one
// another; on SQLite by its single writer). ok is false when no job is
// queued.
func (s *DB) ClaimJob(ctx context.Context, replica string) (j Job, ok bool, err error) {
	if err := checkReplica(replica); err != nil {
		return Job{}, false, err
	}
	// Idle workers poll: a read finds nothing queued without taking a
	// write lock.
	var one int
	switch err := s.db.QueryRowContext(ctx, `SELECT 1 FROM jobs j JOIN projects p ON p.id = j.project_id
		WHERE j.state = 'queued' AND p.paused_at IS NULL LIMIT 1`).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return Job{}, false, nil
	case err != nil:
		return Job{}, false, fmt.Errorf("looking for queued jobs: %w", s.d.wrap(err))
	}
	err = s.write(ctx, "claiming a queued job", func(tx *sql.Tx) ([]string, error) {
		var id string
		// A paused project's jobs wait in the queue until it is resumed.
		err := tx.QueryRowContext(ctx, s.d.rebind(`SELECT id FROM jobs j WHERE state = 'queued'
			AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = j.project_id AND p.paused_at IS NOT NULL)
			ORDER BY queued_at, id LIMIT 1`+s.d.skipLocked())).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE jobs SET state = 'running', claimed_by = ?, started_at = ?, updated_at = ? WHERE id = ? AND state = 'queued'`),
			replica, now, now, id)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return nil, err
		}
		j, err = s.readJobTx(ctx, tx, id)
		ok = err == nil
		return []string{jobHint + id}, err
	})
	if err != nil {
		return Job{}, false, err
	}
	return j, ok, nil
}

// FinishJob stores how the run of a job claimed by replica ended, with its
// outputs, in one transaction: the final state and the outputs become
// visible together. The job must be running or locked under replica. The
// job's files as they stand (outputs over the inputs they replace) must
// keep within MaxJobFiles and MaxJobBytes, and each output within
// MaxJobFileSize; stdout and stderr within MaxJobOutput.
func (s *DB) FinishJob(ctx context.Context, id, replica string, r JobResult, outputs []NewJobFile) (Job, error) {
	if !r.State.Final() {
		return Job{}, invalidf("job %s: %q is not a final state", id, r.State)
	}
	if len(r.Stdout) > MaxJobOutput || len(r.Stderr) > MaxJobOutput {
		return Job{}, limitf("job %s: stdout and stderr are kept up to %d MiB each; cut them first", id, MaxJobOutput>>20)
	}
	seen := make(map[string]bool, len(outputs))
	var outBytes int64
	for _, f := range outputs {
		if err := CheckJobPath(f.Path); err != nil {
			return Job{}, err
		}
		if seen[f.Path] {
			return Job{}, invalidf("job %s: output %s is listed twice", id, f.Path)
		}
		seen[f.Path] = true
		if len(f.Data) > MaxJobFileSize {
			return Job{}, limitf("job %s: output %s of %d bytes passes the %d MiB a file may hold", id, f.Path, len(f.Data), MaxJobFileSize>>20)
		}
		outBytes += int64(len(f.Data))
	}
	reason := clipLog(r.Reason, MaxJobReason)
	var out Job
	err := s.write(ctx, "finishing job "+id, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if !j.State.Active() || j.ClaimedBy != replica {
			return nil, &JobStateError{JobID: id, State: j.State, Doing: "finishing it as replica " + replica,
				Hint: "only the replica running a job ends it (claimed by " + j.ClaimedBy + ")"}
		}
		if len(outputs) > 0 {
			in, err := s.jobFilesTx(ctx, tx, id)
			if err != nil {
				return nil, err
			}
			files, total := len(outputs), outBytes
			for _, f := range in {
				if f.Kind == JobInput && !seen[f.Path] {
					files++
					total += f.Size
				}
			}
			if files > MaxJobFiles || total > MaxJobBytes {
				return nil, limitf("job %s: its files would be %d files of %d bytes; a job holds at most %d files and %d MiB", id, files, total, MaxJobFiles, MaxJobBytes>>20)
			}
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		for _, f := range outputs {
			sum := sha256.Sum256(f.Data)
			if _, err := tx.ExecContext(ctx, q(`INSERT INTO job_files (job_id, kind, path, size, digest, chunks, created_at) VALUES (?, 'output', ?, ?, ?, 0, ?)`),
				id, f.Path, len(f.Data), sum[:], now); err != nil {
				return nil, err
			}
			seq, err := s.writeChunks(ctx, tx, id, JobOutput, f.Path, 0, 0, f.Data)
			if err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, q(`UPDATE job_files SET chunks = ? WHERE job_id = ? AND kind = 'output' AND path = ?`), seq, id, f.Path); err != nil {
				return nil, err
			}
		}
		var exit sql.NullInt64
		if r.ExitCode != nil {
			exit = sql.NullInt64{Int64: int64(*r.ExitCode), Valid: true}
		}
		stdout, stderr := r.Stdout, r.Stderr
		if stdout == nil {
			stdout = []byte{}
		}
		if stderr == nil {
			stderr = []byte{}
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE jobs SET state = ?, exit_code = ?, reason = ?, stdout = ?, stderr = ?,
			stdout_cut = ?, stderr_cut = ?, finished_at = ?, updated_at = ? WHERE id = ?`),
			string(r.State), exit, reason, stdout, stderr, b2i(r.StdoutCut), b2i(r.StderrCut), now, now, id); err != nil {
			return nil, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return []string{jobHint + id}, err
	})
	return out, err
}

// jobFilesTx lists a job's files, without digests, inside tx.
func (s *DB) jobFilesTx(ctx context.Context, tx *sql.Tx, id string) ([]JobFile, error) {
	rows, err := tx.QueryContext(ctx, s.d.rebind(`SELECT kind, path, size FROM job_files WHERE job_id = ?`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []JobFile
	for rows.Next() {
		var f JobFile
		if err := rows.Scan(&f.Kind, &f.Path, &f.Size); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// LockJob marks a running job of replica locked: its sandbox could not be
// confirmed gone, so its files are not served until a recovery confirms
// it. A locked job stays locked.
func (s *DB) LockJob(ctx context.Context, id, replica, reason string) (Job, error) {
	reason = clipLog(reason, MaxJobReason)
	var out Job
	err := s.write(ctx, "locking job "+id, func(tx *sql.Tx) ([]string, error) {
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if !j.State.Active() || j.ClaimedBy != replica {
			return nil, &JobStateError{JobID: id, State: j.State, Doing: "locking it as replica " + replica,
				Hint: "only the replica running a job locks it (claimed by " + j.ClaimedBy + ")"}
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE jobs SET state = 'locked', reason = ?, updated_at = ? WHERE id = ?`), reason, now, id); err != nil {
			return nil, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return []string{jobHint + id}, err
	})
	return out, err
}

// StopJob stops a job: one that has not run (created, uploading, queued)
// becomes stopped and will never run; for a running or locked one the
// stop is requested (StopRequested), and the replica running it kills its
// sandbox. A job that has ended is returned as it is.
func (s *DB) StopJob(ctx context.Context, id, reason string) (Job, error) {
	reason = clipLog(reason, MaxJobReason)
	var out Job
	err := s.write(ctx, "stopping job "+id, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		switch {
		case j.State.Final():
			out = j
			return nil, nil
		case j.State.Active():
			// A running job keeps the stop's reason for whichever replica
			// kills it; a locked one keeps why it was locked.
			_, err = tx.ExecContext(ctx, q(`UPDATE jobs SET stop_requested = 1, reason = CASE WHEN state = 'running' THEN ? ELSE reason END, updated_at = ? WHERE id = ?`), reason, now, id)
		default:
			_, err = tx.ExecContext(ctx, q(`UPDATE jobs SET state = 'stopped', reason = ?, finished_at = ?, updated_at = ? WHERE id = ?`), reason, now, now, id)
		}
		if err != nil {
			return nil, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return []string{jobHint + id}, err
	})
	return out, err
}

// ReadJobFile reads up to limit bytes at offset of a job's file (of a
// remnant's too), verifying every chunk it reads against its digest. A
// job's files are not served while it runs or is locked. The file's entry
// is returned with the bytes; reading at or past its end returns none.
func (s *DB) ReadJobFile(ctx context.Context, id string, kind FileKind, path string, offset, limit int64) ([]byte, JobFile, error) {
	return s.readJobFile(ctx, id, "", kind, path, offset, limit)
}

// ReadRunInput reads a whole input of a job running under replica, which
// lays it out for the run, verified chunk by chunk.
func (s *DB) ReadRunInput(ctx context.Context, id, replica, path string) ([]byte, JobFile, error) {
	if err := checkReplica(replica); err != nil {
		return nil, JobFile{}, err
	}
	return s.readJobFile(ctx, id, replica, JobInput, path, 0, MaxJobFileSize)
}

// readJobFile reads a range of a job file; replica, when set, is the one
// whose running job may be read.
func (s *DB) readJobFile(ctx context.Context, id, replica string, kind FileKind, path string, offset, limit int64) ([]byte, JobFile, error) {
	if offset < 0 || limit < 0 {
		return nil, JobFile{}, invalidf("offset %d, limit %d: neither may be negative", offset, limit)
	}
	if err := CheckJobPath(path); err != nil {
		return nil, JobFile{}, err
	}
	if kind != JobInput && kind != JobOutput {
		return nil, JobFile{}, invalidf("job file kind %q: input or output", kind)
	}
	q := s.d.rebind
	// Read-only: on SQLite a deferred transaction, one snapshot that takes
	// no write lock.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
	}
	defer tx.Rollback()
	var state string
	var claimed sql.NullString
	err = tx.QueryRowContext(ctx, q(`SELECT state, claimed_by FROM jobs WHERE id = ?`), id).Scan(&state, &claimed)
	if errors.Is(err, sql.ErrNoRows) && replica == "" {
		err = tx.QueryRowContext(ctx, q(`SELECT state FROM job_remnants WHERE job_id = ?`), id).Scan(&state)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, JobFile{}, jobNotFound(id)
	}
	if err != nil {
		return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
	}
	if replica != "" && (JobState(state) != JobRunning || claimed.String != replica) {
		return nil, JobFile{}, &JobStateError{JobID: id, State: JobState(state), Doing: "laying out " + path + " for replica " + replica,
			Hint: "only the replica running a job reads its inputs for the run"}
	}
	if replica == "" && JobState(state).Active() {
		return nil, JobFile{}, &JobStateError{JobID: id, State: JobState(state), Doing: "reading " + path,
			Hint: "a job's files are served once it has ended (a locked job needs its sandbox confirmed gone)"}
	}
	var f JobFile
	var d []byte
	err = tx.QueryRowContext(ctx, q(`SELECT size, digest FROM job_files WHERE job_id = ? AND kind = ? AND path = ?`), id, string(kind), path).Scan(&f.Size, &d)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, JobFile{}, fmt.Errorf("job %s has no %s %s: %w", id, kind, truncate(path, 80), ErrNotFound)
	}
	if err != nil {
		return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
	}
	f.Kind, f.Path = kind, path
	copy(f.Digest[:], d)
	f.SHA256 = hex.EncodeToString(d)
	end := min(f.Size, offset+min(limit, MaxJobFileSize))
	if offset >= end {
		return []byte{}, f, nil
	}
	rows, err := tx.QueryContext(ctx, q(`SELECT off, digest, data FROM job_chunks
		WHERE job_id = ? AND kind = ? AND path = ? AND off < ? AND off + length(data) > ? ORDER BY seq`),
		id, string(kind), path, end, offset)
	if err != nil {
		return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
	}
	defer rows.Close()
	buf := make([]byte, 0, end-offset)
	next := offset
	for rows.Next() {
		var off int64
		var cd, data []byte
		if err := rows.Scan(&off, &cd, &data); err != nil {
			return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
		}
		if sum := sha256.Sum256(data); string(sum[:]) != string(cd) || off > next {
			return nil, JobFile{}, &CorruptJobFileError{JobID: id, Path: path}
		}
		lo, hi := next-off, min(int64(len(data)), end-off)
		buf = append(buf, data[lo:hi]...)
		next = off + hi
	}
	if err := rows.Err(); err != nil {
		return nil, JobFile{}, fmt.Errorf("reading %s of job %s: %w", path, id, s.d.wrap(err))
	}
	if next != end {
		return nil, JobFile{}, &CorruptJobFileError{JobID: id, Path: path}
	}
	return buf, f, nil
}

// CorruptJobFileError is returned when a job file's stored bytes do not
// match their digests.
type CorruptJobFileError struct {
	JobID, Path string
}

func (e *CorruptJobFileError) Error() string {
	return fmt.Sprintf("job %s: stored content of %s does not match its digest: the database is damaged; restore it from a backup", e.JobID, e.Path)
}
func (e *CorruptJobFileError) storeOwn() {}

// DeleteJob removes a job with its files. A running or locked job is
// refused with a *JobStateError.
func (s *DB) DeleteJob(ctx context.Context, id string) error {
	defer s.reclaim(ctx)
	return s.write(ctx, "deleting job "+id, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if j.State.Active() {
			return nil, &JobStateError{JobID: id, State: j.State, Doing: "deleting it",
				Hint: "wait for the run to end (a locked job needs an operator to confirm its sandbox is gone)"}
		}
		if _, err := tx.ExecContext(ctx, q(`DELETE FROM jobs WHERE id = ?`), id); err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, q(`DELETE FROM job_files WHERE job_id = ?`), id)
		return []string{jobHint + id}, err
	})
}

// JobRemnants lists the jobs removed with their projects whose files are
// kept, oldest first.
func (s *DB) JobRemnants(ctx context.Context) ([]JobRemnant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, project_id, version_id, package, tree_digest, state, created_at, deleted_at
		FROM job_remnants ORDER BY deleted_at, job_id`)
	if err != nil {
		return nil, fmt.Errorf("listing job remnants: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := []JobRemnant{}
	for rows.Next() {
		var r JobRemnant
		var created, deleted int64
		if err := rows.Scan(&r.JobID, &r.ProjectID, &r.VersionID, &r.Package, &r.TreeDigest, &r.State, &created, &deleted); err != nil {
			return nil, fmt.Errorf("listing job remnants: %w", s.d.wrap(err))
		}
		r.CreatedAt, r.DeletedAt = time.UnixMicro(created).UTC(), time.UnixMicro(deleted).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// GetJobRemnant returns the remnant of job id, or ErrNotFound (a live
// job is not a remnant).
func (s *DB) GetJobRemnant(ctx context.Context, id string) (JobRemnant, error) {
	var r JobRemnant
	var created, deleted int64
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT job_id, project_id, version_id, package, tree_digest, state, created_at, deleted_at
		FROM job_remnants WHERE job_id = ?`), id).Scan(&r.JobID, &r.ProjectID, &r.VersionID, &r.Package, &r.TreeDigest, &r.State, &created, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return JobRemnant{}, fmt.Errorf("job remnant %s: %w", truncate(id, 40), ErrNotFound)
	}
	if err != nil {
		return JobRemnant{}, fmt.Errorf("reading the remnant of job %s: %w", truncate(id, 40), s.d.wrap(err))
	}
	r.CreatedAt, r.DeletedAt = time.UnixMicro(created).UTC(), time.UnixMicro(deleted).UTC()
	return r, nil
}

// PurgeJobRemnant removes a remnant and its files for good.
func (s *DB) PurgeJobRemnant(ctx context.Context, jobID string) error {
	defer s.reclaim(ctx)
	return s.write(ctx, "purging the remnant of job "+jobID, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		res, err := tx.ExecContext(ctx, q(`DELETE FROM job_remnants WHERE job_id = ?`), jobID)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			return nil, fmt.Errorf("job remnant %s: %w", truncate(jobID, 40), ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, q(`DELETE FROM job_files WHERE job_id = ?`), jobID)
		return nil, err
	})
}

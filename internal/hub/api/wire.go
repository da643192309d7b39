package api

import (
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The API's own shapes of what the store keeps, and the one place they are
// made from its rows: a column added to the store reaches the wire only
// when it is added here too, and the OpenAPI document (pinned in
// testdata/openapi.json) shows it. Each type keeps the field order and the
// JSON names the API has always answered with. The store's vocabularies
// (a token's kind and scope, a job's state, a file's kind, a runtime) are
// values, not rows, and are kept as the store names them.

// Project is a project as the API answers it.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Paused      bool      `json:"paused"`
	PausedAt    time.Time `json:"paused_at,omitzero"`
	WellKnown   bool      `json:"well_known"`
	WellKnownAt time.Time `json:"well_known_at,omitzero"`
	Generation  int64     `json:"generation"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func wireProject(p store.Project) Project {
	return Project{ID: p.ID, Name: p.Name, Paused: p.Paused, PausedAt: p.PausedAt, WellKnown: p.WellKnown, WellKnownAt: p.WellKnownAt,
		Generation: p.Generation, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// Token is a token as the API answers it, never with its secret.
type Token struct {
	ID         string          `json:"id"`
	Kind       store.TokenKind `json:"kind"`
	ProjectID  string          `json:"project_id,omitempty"`
	Scope      store.Scope     `json:"scope,omitempty"`
	Name       string          `json:"name,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	ExpiresAt  time.Time       `json:"expires_at,omitzero"`
	RevokedAt  time.Time       `json:"revoked_at,omitzero"`
	LastUsedAt time.Time       `json:"last_used_at,omitzero"`
}

func wireToken(t store.Token) Token {
	return Token{ID: t.ID, Kind: t.Kind, ProjectID: t.ProjectID, Scope: t.Scope, Name: t.Name,
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt, LastUsedAt: t.LastUsedAt}
}

// Job is a job as the API answers it: its record and the version it runs.
// Its logs are in a JobStatus.
type Job struct {
	SkillID         string         `json:"skill_id" doc:"The version the job runs, NAME@ and 12 hex digits; empty if it was uninstalled"`
	Package         string         `json:"package" doc:"The version's package"`
	ID              string         `json:"id"`
	ProjectID       string         `json:"project_id"`
	VersionID       int64          `json:"version_id"`
	State           store.JobState `json:"state"`
	ProfileRevision int64          `json:"profile_revision"`
	Script          string         `json:"script,omitempty"`
	Args            []string       `json:"args"`
	ExitCode        *int           `json:"exit_code,omitempty"`
	Reason          string         `json:"reason,omitempty"`
	StdoutCut       bool           `json:"stdout_cut"`
	StderrCut       bool           `json:"stderr_cut"`
	ClaimedBy       string         `json:"claimed_by,omitempty"`
	RunBy           string         `json:"run_by,omitempty"`
	StopRequested   bool           `json:"stop_requested,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	QueuedAt        time.Time      `json:"queued_at,omitzero"`
	StartedAt       time.Time      `json:"started_at,omitzero"`
	FinishedAt      time.Time      `json:"finished_at,omitzero"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// wireJob is j as the API answers it, running the version skillID of
// package pkg (both empty for a version gone).
func wireJob(j store.Job, skillID, pkg string) Job {
	args := j.Args
	if args == nil {
		args = []string{}
	}
	return Job{SkillID: skillID, Package: pkg, ID: j.ID, ProjectID: j.ProjectID, VersionID: j.VersionID, State: j.State,
		ProfileRevision: j.ProfileRevision, Script: j.Script, Args: args, ExitCode: j.ExitCode, Reason: j.Reason,
		StdoutCut: j.StdoutCut, StderrCut: j.StderrCut, ClaimedBy: j.ClaimedBy, RunBy: j.RunBy, StopRequested: j.StopRequested,
		CreatedAt: j.CreatedAt, QueuedAt: j.QueuedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt, UpdatedAt: j.UpdatedAt}
}

// JobFile is one file of a job (or of a remnant), without its content.
type JobFile struct {
	Kind       store.FileKind `json:"kind"`
	Path       string         `json:"path"`
	Size       int64          `json:"size"`
	SHA256     string         `json:"sha256"`
	Incomplete bool           `json:"incomplete,omitempty"`
}

// wireJobFiles converts files; never nil, so that a list without files is
// [] on the wire.
func wireJobFiles(files []store.JobFile) []JobFile {
	out := make([]JobFile, 0, len(files))
	for _, f := range files {
		out = append(out, JobFile{Kind: f.Kind, Path: f.Path, Size: f.Size, SHA256: f.SHA256, Incomplete: f.Incomplete})
	}
	return out
}

// JobRemnant is what is left of a job whose project was deleted.
type JobRemnant struct {
	JobID      string         `json:"job_id"`
	ProjectID  string         `json:"project_id"`
	VersionID  int64          `json:"version_id"`
	Package    string         `json:"package"`
	TreeDigest string         `json:"tree_digest"`
	State      store.JobState `json:"state"`
	CreatedAt  time.Time      `json:"created_at"`
	DeletedAt  time.Time      `json:"deleted_at"`
}

func wireJobRemnant(r store.JobRemnant) JobRemnant {
	return JobRemnant{JobID: r.JobID, ProjectID: r.ProjectID, VersionID: r.VersionID, Package: r.Package,
		TreeDigest: r.TreeDigest, State: r.State, CreatedAt: r.CreatedAt, DeletedAt: r.DeletedAt}
}

// Remnant is a remnant with its files' manifest.
type Remnant struct {
	Files      []JobFile      `json:"files"`
	JobID      string         `json:"job_id"`
	ProjectID  string         `json:"project_id"`
	VersionID  int64          `json:"version_id"`
	Package    string         `json:"package"`
	TreeDigest string         `json:"tree_digest"`
	State      store.JobState `json:"state"`
	CreatedAt  time.Time      `json:"created_at"`
	DeletedAt  time.Time      `json:"deleted_at"`
}

func wireRemnant(r store.JobRemnant, files []store.JobFile) Remnant {
	w := wireJobRemnant(r)
	return Remnant{Files: wireJobFiles(files), JobID: w.JobID, ProjectID: w.ProjectID, VersionID: w.VersionID, Package: w.Package,
		TreeDigest: w.TreeDigest, State: w.State, CreatedAt: w.CreatedAt, DeletedAt: w.DeletedAt}
}

// AuditEntry is one entry of the audit log.
type AuditEntry struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	Action     string    `json:"action"`
	ObjectKind string    `json:"object_kind"`
	ObjectID   string    `json:"object_id"`
	Result     string    `json:"result"`
	Replica    string    `json:"replica,omitempty"`
}

func wireAuditEntry(e store.AuditEntry) AuditEntry {
	return AuditEntry{ID: e.ID, At: e.At, Actor: e.Actor, Action: e.Action, ObjectKind: e.ObjectKind, ObjectID: e.ObjectID, Result: e.Result, Replica: e.Replica}
}

// Profile is a version's execution profile with its prepared state.
type Profile struct {
	VersionID      int64         `json:"version_id"`
	Revision       int64         `json:"revision"`
	Identity       string        `json:"identity,omitempty"`
	PreparedAt     time.Time     `json:"prepared_at,omitzero"`
	PrepareLog     string        `json:"prepare_log,omitempty"`
	PrepareError   string        `json:"prepare_error,omitempty"`
	PreparingBy    string        `json:"preparing_by,omitempty"`
	PreparingSince time.Time     `json:"preparing_since,omitzero"`
	UpdatedAt      time.Time     `json:"updated_at"`
	Runtime        store.Runtime `json:"runtime"`
	Image          string        `json:"image,omitempty"`
	RootFS         string        `json:"rootfs,omitempty"`
	Interpreter    string        `json:"interpreter,omitempty"`
	Scripts        []string      `json:"scripts"`
	TimeoutSeconds int           `json:"timeout_seconds"`
	Network        bool          `json:"network"`
	Enabled        bool          `json:"enabled"`
}

// Prepared reports whether the profile's environment has been prepared
// since it last changed.
func (p Profile) Prepared() bool { return p.Identity != "" }

func wireProfile(p store.Profile) Profile {
	return Profile{VersionID: p.VersionID, Revision: p.Revision, Identity: p.Identity, PreparedAt: p.PreparedAt,
		PrepareLog: p.PrepareLog, PrepareError: p.PrepareError, PreparingBy: p.PreparingBy, PreparingSince: p.PreparingSince,
		UpdatedAt: p.UpdatedAt, Runtime: p.Runtime, Image: p.Image, RootFS: p.RootFS, Interpreter: p.Interpreter,
		Scripts: p.Scripts, TimeoutSeconds: p.TimeoutSeconds, Network: p.Network, Enabled: p.Enabled}
}

// wireList converts a list of rows with conv; never nil, so that an empty
// list is [] on the wire.
func wireList[R, W any](rows []R, conv func(R) W) []W {
	out := make([]W, 0, len(rows))
	for _, r := range rows {
		out = append(out, conv(r))
	}
	return out
}

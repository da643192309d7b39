// Package store keeps the skill hub's state: immutable skill versions with
// their files, the files' contents as content-addressed chunked blobs, the
// versions' labels (approval, notes), projects and the versions bound to
// them, tokens, the audit log, the raw snapshots of the installable
// catalog, execution profiles, and jobs with their files. Changes to
// projects and bindings are announced to every store on the same database
// (Changes).
//
// The database is the only state. It is an embedded SQLite file in a data
// directory, or a PostgreSQL database; both are reached through one code
// path over database/sql, and one conformance suite (package storetest)
// holds them to the same behaviour. The schema is versioned by embedded
// migrations, applied when a store is opened, under a lock, so two
// processes opening the same empty database both succeed.
//
// The store imports no other hub package: its inputs are its own plain
// types (NewVersion, NewFile), filled by the package readers.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// NewVersion is what Install stores: a package tree already read, digested
// and inspected by the package readers.
type NewVersion struct {
	Package     string          // the skill package's name (frontmatter name)
	TreeDigest  string          // "sha256:<hex>", computed by pkgtree
	Frontmatter json.RawMessage // parsed frontmatter, key order kept
	Origin      json.RawMessage // pkgtree.Origin as JSON
	Inspection  json.RawMessage // pkgtree.Inspection as JSON
	Files       []NewFile       // sorted by Path, unique
}

// NewFile is one file of a NewVersion. Digest is the sha256 of Data; the
// store checks it for every blob it writes.
type NewFile struct {
	Path   string
	Mode   uint32 // 0o644 or 0o755
	Size   int64
	Digest [32]byte
	Data   []byte
}

// File is one stored file of a version, without its content.
type File struct {
	Path   string   `json:"path"`
	Mode   uint32   `json:"mode"`
	Size   int64    `json:"size"`
	Digest [32]byte `json:"-"`
}

// Version is an installed, immutable version. Only Labels change.
type Version struct {
	ID          int64           `json:"id"`
	Package     string          `json:"package"`
	TreeDigest  string          `json:"tree_digest"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Origin      json.RawMessage `json:"origin"`
	Inspection  json.RawMessage `json:"inspection"`
	FileCount   int             `json:"file_count"`
	Size        int64           `json:"size"`
	CreatedAt   time.Time       `json:"created_at"`
	Labels      Labels          `json:"labels"`
}

// Labels are a version's mutable annotations.
type Labels struct {
	ApprovedBy string    `json:"approved_by,omitempty"` // empty when not approved
	ApprovedAt time.Time `json:"approved_at,omitzero"`
	Notes      string    `json:"notes,omitempty"`
}

// Approved reports whether the version has been approved.
func (v Version) Approved() bool { return v.Labels.ApprovedBy != "" }

// Package is one package name and its versions.
type Package struct {
	Name     string `json:"name"`
	Versions int    `json:"versions"`
	// Latest is the most recently installed version.
	Latest Version `json:"latest"`
}

// Stats counts what a store holds.
type Stats struct {
	Packages  int   `json:"packages"`
	Versions  int   `json:"versions"`
	Blobs     int   `json:"blobs"`
	Chunks    int   `json:"chunks"`
	BlobBytes int64 `json:"blob_bytes"` // the stored file contents, each once
}

// ChunkSize is the largest piece a blob is stored in.
const ChunkSize = 1 << 20

// MaxIndexSnapshot bounds a stored catalog snapshot.
const MaxIndexSnapshot = 64 << 20

// keptIndexSnapshots is how many catalog snapshots are kept; older ones
// are deleted when a new one is stored.
const keptIndexSnapshots = 3

var (
	// ErrNotFound is returned for a version, package or project that does
	// not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists is returned when creating something whose id is taken.
	ErrExists = errors.New("already exists")
	// ErrNotApproved is returned by Bind for an unapproved version when the
	// store requires approval.
	ErrNotApproved = errors.New("version is not approved: an administrator must approve it before it can be bound (the hub runs with --require-approval)")
	// ErrStorageFull is returned when the database or its disk has no room
	// left. Nothing of the failed operation was stored.
	ErrStorageFull = errors.New("the database is full (disk or size limit reached)")
	// ErrUnavailable is returned when the database server cannot be reached
	// or went away during an operation, which was rolled back.
	ErrUnavailable = errors.New("the database is unavailable")
	// ErrInvalid is returned for input the store refuses to keep.
	ErrInvalid = errors.New("invalid input")
	// ErrBackupUnsupported is returned by Backup on PostgreSQL.
	ErrBackupUnsupported = errors.New("the hub backs up only its SQLite database itself: back up a PostgreSQL hub with `pg_dump -Fc -f hub.dump URL` and restore it into an empty database with `pg_restore --no-owner -d URL hub.dump`")
)

// BoundError is returned when deleting a version bound to projects. It
// matches ErrVersionBound with errors.Is.
type BoundError struct {
	VersionID int64
	Projects  []string // the projects it is bound to, by id
}

// ErrVersionBound is matched by every *BoundError.
var ErrVersionBound = errors.New("version is bound to a project")

func (e *BoundError) Error() string {
	return fmt.Sprintf("version %d is bound to project(s) %v: unbind it from them before uninstalling", e.VersionID, e.Projects)
}

// Is makes errors.Is(err, ErrVersionBound) true.
func (e *BoundError) Is(target error) bool { return target == ErrVersionBound }

// JobsError is returned when a project's jobs forbid a change: deleting a
// project while one of its jobs runs (VersionID 0, matching
// ErrJobsRunning), or unbinding a version the project keeps jobs for
// (matching ErrJobsKept).
type JobsError struct {
	ProjectID string
	VersionID int64    // the binding refused; 0 for a project deletion
	Jobs      []string // the jobs in the way, by id
}

var (
	// ErrJobsRunning is matched by a *JobsError refusing a deletion.
	ErrJobsRunning = errors.New("project has running jobs")
	// ErrJobsKept is matched by a *JobsError refusing an unbinding.
	ErrJobsKept = errors.New("project keeps jobs for the version")
)

func (e *JobsError) Error() string {
	if e.VersionID == 0 {
		return fmt.Sprintf("project %s has running job(s) %v: wait for them to finish (a locked job needs an operator) before deleting the project", e.ProjectID, e.Jobs)
	}
	return fmt.Sprintf("project %s keeps job(s) %v for version %d: download what you need and delete those jobs before unbinding it", e.ProjectID, e.Jobs, e.VersionID)
}

// Is makes errors.Is match ErrJobsRunning or ErrJobsKept.
func (e *JobsError) Is(target error) bool {
	if e.VersionID == 0 {
		return target == ErrJobsRunning
	}
	return target == ErrJobsKept
}

// CorruptError is returned when stored content does not match its digest.
type CorruptError struct {
	VersionID int64
	Path      string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("version %d: stored content of %s does not match its digest: the database is damaged; restore it from a backup or reinstall the version", e.VersionID, e.Path)
}

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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Store is the hub's state. *DB implements it for both backends; the
// interface exists so that later hub packages and the conformance suite
// can take either.
type Store interface {
	// Install stores a version in one transaction. When a version with the
	// same tree digest exists, Install returns it with created false and
	// writes nothing.
	Install(ctx context.Context, nv NewVersion) (v Version, created bool, err error)
	// GetVersion returns the version with the given id, or ErrNotFound.
	GetVersion(ctx context.Context, id int64) (Version, error)
	// FindVersion returns the version with the given tree digest, or
	// ErrNotFound.
	FindVersion(ctx context.Context, treeDigest string) (Version, error)
	// ListPackages lists every package that has a version, by name.
	ListPackages(ctx context.Context) ([]Package, error)
	// ListVersions lists a package's versions, oldest first, or returns
	// ErrNotFound when the package has none.
	ListVersions(ctx context.Context, pkg string) ([]Version, error)
	// VersionFiles lists a version's files in path order.
	VersionFiles(ctx context.Context, id int64) ([]File, error)
	// ReadFile returns one file of a version, verified against its digest.
	ReadFile(ctx context.Context, id int64, path string) ([]byte, error)
	// Materialize writes a version's files into a read-only folder under
	// cacheDir, verified against their digests, and returns the folder.
	Materialize(ctx context.Context, id int64, cacheDir string) (string, error)
	// DeleteVersion removes a version and the blobs no other version
	// shares. A version bound to a project is refused with *BoundError.
	DeleteVersion(ctx context.Context, id int64) error

	// Approve records who approved a version and when.
	Approve(ctx context.Context, id int64, by string) (Version, error)
	// Unapprove withdraws a version's approval.
	Unapprove(ctx context.Context, id int64) (Version, error)
	// SetNotes replaces a version's notes.
	SetNotes(ctx context.Context, id int64, notes string) (Version, error)

	// CreateProject adds a project; ErrExists when the id or the name is
	// taken.
	CreateProject(ctx context.Context, id, name string) error
	// GetProject returns a project, or ErrNotFound.
	GetProject(ctx context.Context, id string) (Project, error)
	// ListProjects lists projects by id, a page at a time.
	ListProjects(ctx context.Context, page ProjectPage) (ProjectList, error)
	// RenameProject changes a project's name; its id stays.
	RenameProject(ctx context.Context, id, name string) (Project, error)
	// PauseProject pauses a project; pausing a paused one changes nothing.
	PauseProject(ctx context.Context, id string) (Project, error)
	// ResumeProject resumes a paused project.
	ResumeProject(ctx context.Context, id string) (Project, error)
	// SetWellKnown turns a project's well-known index on or off; setting
	// it as it is changes nothing.
	SetWellKnown(ctx context.Context, id string, on bool) (Project, error)
	// DuplicateProject makes a new project with the bindings of another,
	// never its jobs or tokens.
	DuplicateProject(ctx context.Context, srcID, id, name string) (Project, error)
	// DeleteProject removes a project with its bindings, tokens and job
	// records; refused with *JobsError while one of its jobs runs.
	DeleteProject(ctx context.Context, id string) error

	// Bind binds a version to a project. With Options.RequireApproval an
	// unapproved version is refused with ErrNotApproved.
	Bind(ctx context.Context, projectID string, versionID int64) error
	// BindVersion is Bind reporting whether anything changed.
	BindVersion(ctx context.Context, projectID string, versionID int64) (BindResult, error)
	// Unbind removes a binding; it is not an error when there is none.
	Unbind(ctx context.Context, projectID string, versionID int64) error
	// UnbindVersion is Unbind reporting whether anything changed. A binding
	// the project keeps jobs for is refused with *JobsError.
	UnbindVersion(ctx context.Context, projectID string, versionID int64) (BindResult, error)
	// Bindings lists the projects a version is bound to, by id.
	Bindings(ctx context.Context, versionID int64) ([]string, error)
	// ProjectBindings lists the versions bound to a project, with its
	// binding generation, from one snapshot.
	ProjectBindings(ctx context.Context, projectID string) (BindingList, error)

	// CreateToken makes a token and returns it with its secret, which is
	// not kept and cannot be shown again.
	CreateToken(ctx context.Context, nt NewToken) (Token, string, error)
	// VerifyToken returns the token a secret belongs to, or an error
	// matching ErrTokenInvalid.
	VerifyToken(ctx context.Context, secret string) (Token, error)
	// GetToken returns a token by id, or ErrNotFound.
	GetToken(ctx context.Context, id string) (Token, error)
	// ListTokens lists tokens, newest first.
	ListTokens(ctx context.Context, f TokenFilter) ([]Token, error)
	// RevokeToken revokes a token; revoking it again changes nothing.
	RevokeToken(ctx context.Context, id string) (Token, error)

	// AppendAudit records one audit entry.
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// AuditList lists audit entries, newest first, a page at a time.
	AuditList(ctx context.Context, f AuditFilter) (AuditPage, error)

	// Changes announces project and binding changes, made through any
	// store on the same database, until ctx is done or the store closes.
	Changes(ctx context.Context) <-chan Change

	// PutIndexSnapshot stores a raw catalog snapshot the index package has
	// validated, with where it came from.
	PutIndexSnapshot(ctx context.Context, raw []byte, source string) error
	// LatestIndexSnapshot returns the last snapshot stored and its source,
	// or a nil slice and a nil error when none has been.
	LatestIndexSnapshot(ctx context.Context) (raw []byte, source string, err error)

	// SetProfile sets a version's execution profile (administrators only);
	// a change of its environment clears the prepared state.
	SetProfile(ctx context.Context, versionID int64, ps ProfileSpec) (Profile, error)
	// GetProfile returns a version's execution profile, or ErrNotFound.
	GetProfile(ctx context.Context, versionID int64) (Profile, error)
	// SetPrepared records a preparation of the profile at revision.
	SetPrepared(ctx context.Context, versionID, revision int64, identity, log string) (Profile, error)
	// BeginPreparation claims a version's preparation for a replica, one
	// at a time across every replica.
	BeginPreparation(ctx context.Context, versionID int64, replica string) (Profile, error)
	// EndPreparation records a preparation's end with its layer and
	// releases the claim.
	EndPreparation(ctx context.Context, versionID, revision int64, end PreparationEnd) (Profile, error)
	// ReleasePreparations drops a replica's claims on preparations.
	ReleasePreparations(ctx context.Context, replica, why string) ([]int64, error)
	// LayerEntries lists a stored prepared layer's entries.
	LayerEntries(ctx context.Context, digest string) ([]LayerEntry, error)
	// LayOutLayer writes a stored prepared layer into a host folder.
	LayOutLayer(ctx context.Context, digest, parent string) (string, error)

	// CreateJob makes a job of a project for a version bound to it.
	CreateJob(ctx context.Context, projectID string, versionID int64) (Job, error)
	// GetJob returns a job with its logs, or ErrNotFound.
	GetJob(ctx context.Context, id string) (Job, error)
	// ListJobs lists a project's jobs, newest first, without logs.
	ListJobs(ctx context.Context, projectID string) ([]Job, error)
	// ReplicaJobs lists the running and locked jobs a replica claimed.
	ReplicaJobs(ctx context.Context, replica string) ([]Job, error)
	// JobFiles lists a job's (or a remnant's) inputs and outputs.
	JobFiles(ctx context.Context, id string) ([]JobFile, error)
	// PutJobInput writes or appends to an input of a job that has not run.
	PutJobInput(ctx context.Context, id, path string, data []byte, w InputWrite) (JobFile, error)
	// QueueJob asks for the job's one run of an allowed script.
	QueueJob(ctx context.Context, id, script string, args []string, by string) (Job, error)
	// ClaimJob takes the oldest queued job for a replica, exactly once.
	ClaimJob(ctx context.Context, replica string) (Job, bool, error)
	// FinishJob stores a run's end and its outputs in one transaction.
	FinishJob(ctx context.Context, id, replica string, r JobResult, outputs []NewJobFile) (Job, error)
	// LockJob marks a running job whose kill was not confirmed.
	LockJob(ctx context.Context, id, replica, reason string) (Job, error)
	// StopJob stops a job that has not run, or asks its replica to.
	StopJob(ctx context.Context, id, reason string) (Job, error)
	// ReadJobFile reads a range of a job's file, verified chunk by chunk.
	ReadJobFile(ctx context.Context, id string, kind FileKind, path string, offset, limit int64) ([]byte, JobFile, error)
	// ReadRunInput reads a whole input of a job running under a replica.
	ReadRunInput(ctx context.Context, id, replica, path string) ([]byte, JobFile, error)
	// DeleteJob removes a job with its files; not while it runs.
	DeleteJob(ctx context.Context, id string) error
	// JobRemnants lists the kept files' records of deleted projects' jobs.
	JobRemnants(ctx context.Context) ([]JobRemnant, error)
	// GetJobRemnant returns one remnant.
	GetJobRemnant(ctx context.Context, id string) (JobRemnant, error)
	// PurgeJobRemnant removes a remnant and its files.
	PurgeJobRemnant(ctx context.Context, jobID string) error
	// JobChanges announces job, preparation and profile changes.
	JobChanges(ctx context.Context) <-chan JobChange
	// CatalogChanges announces catalog snapshots stored.
	CatalogChanges(ctx context.Context) <-chan struct{}
	// SettleJob ends a running or locked job by an administrator's
	// decision.
	SettleJob(ctx context.Context, id string, st Settlement) (Job, error)

	// Now returns the database's time.
	Now(ctx context.Context) (time.Time, error)
	// Heartbeat renews a replica's lease.
	Heartbeat(ctx context.Context, replica string, ttl time.Duration) (time.Time, error)
	// Leases lists the replicas' leases.
	Leases(ctx context.Context) ([]Lease, time.Time, error)
	// SettleOrphans settles what a replica whose lease lapsed left.
	SettleOrphans(ctx context.Context, replica, settler string, grace time.Duration) (Settled, error)
	// DiskSize measures the database's room on disk.
	DiskSize(ctx context.Context) (Size, error)

	// Stats counts what the store holds.
	Stats(ctx context.Context) (Stats, error)

	// Backup writes a consistent copy of the whole state to w. Only the
	// SQLite backend does; PostgreSQL is backed up with pg_dump.
	Backup(ctx context.Context, w io.Writer) error
	// Close releases the database.
	Close() error
}

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

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Runtime is the interpreter family a profile runs scripts with.
type Runtime string

// The runtimes.
const (
	RuntimePython Runtime = "python"
	RuntimeNode   Runtime = "node"
	RuntimeBash   Runtime = "bash"
)

// Valid reports whether r is one of the runtimes.
func (r Runtime) Valid() bool { return r == RuntimePython || r == RuntimeNode || r == RuntimeBash }

// Bounds of a profile's timeout, in seconds, and of its allowed scripts.
const (
	MinTimeoutSeconds = 1
	MaxTimeoutSeconds = 300
	maxScripts        = 100
	// MaxPrepareLog bounds the preparation log kept with a profile; a
	// longer log keeps its first and last halves.
	MaxPrepareLog = 256 << 10
)

// ProfileSpec is what an administrator sets on a version: how its scripts
// may run. It is never taken from a model's arguments.
type ProfileSpec struct {
	Runtime Runtime `json:"runtime"`
	// Image is the Docker image (an id or a local tag); RootFS is
	// bubblewrap's root tree (empty: the host's /usr, read-only).
	Image  string `json:"image,omitempty"`
	RootFS string `json:"rootfs,omitempty"`
	// Interpreter is the interpreter's absolute path inside the sandbox;
	// empty for the runtime's default (/usr/bin/python3, /usr/bin/node,
	// /usr/bin/bash).
	Interpreter string `json:"interpreter,omitempty"`
	// Scripts are the paths, inside the package, of the only scripts
	// jobs may run.
	Scripts        []string `json:"scripts"`
	TimeoutSeconds int      `json:"timeout_seconds"`
	// Network gives runs (and the preparation) the host's network.
	Network bool `json:"network"`
	// Enabled authorises jobs for every project bound to the version.
	Enabled bool `json:"enabled"`
}

// sameEnvironment reports whether a and b prepare and run alike; only
// Enabled may differ.
func (a ProfileSpec) sameEnvironment(b ProfileSpec) bool {
	return a.Runtime == b.Runtime && a.Image == b.Image && a.RootFS == b.RootFS &&
		a.Interpreter == b.Interpreter && slices.Equal(a.Scripts, b.Scripts) &&
		a.TimeoutSeconds == b.TimeoutSeconds && a.Network == b.Network
}

// Profile is a version's stored execution profile with its prepared state.
type Profile struct {
	VersionID int64 `json:"version_id"`
	ProfileSpec
	// Revision counts the changes of the environment (every field but
	// Enabled); a job runs only under the revision it was created with.
	Revision int64 `json:"revision"`
	// Identity names the prepared environment: the content digest of the
	// prepared layer ("sha256:…"), or "none" when there was nothing to
	// install. Empty when the profile is not prepared.
	Identity string `json:"identity,omitempty"`
	// ImageID is the id of the Docker image the preparation ran on
	// ("sha256:…"), resolved from Image (or the runtime's default image)
	// when it was prepared: every run uses it, so a tag moved since never
	// changes a prepared profile; preparing again resolves the tag anew.
	// Empty when prepared on another backend, or not prepared.
	ImageID string `json:"image_id,omitempty"`
	// ImageInterpreter is the interpreter's path in that image when the
	// preparation ran, which its runs use with it; empty with no ImageID.
	ImageInterpreter string    `json:"image_interpreter,omitempty"`
	PreparedAt       time.Time `json:"prepared_at,omitzero"`
	// PrepareLog is the last preparation's output, kept whether it
	// succeeded or not.
	PrepareLog string `json:"prepare_log,omitempty"`
	// PrepareError says why the last preparation failed; empty when it
	// succeeded or none ended yet.
	PrepareError string `json:"prepare_error,omitempty"`
	// PreparingBy names the replica preparing the environment now, since
	// PreparingSince; empty when none is.
	PreparingBy    string    `json:"preparing_by,omitempty"`
	PreparingSince time.Time `json:"preparing_since,omitzero"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Prepared reports whether the profile's environment has been prepared
// since it last changed.
func (p Profile) Prepared() bool { return p.Identity != "" }

// Allows reports whether script is one of the profile's allowed scripts.
func (p Profile) Allows(script string) bool { return slices.Contains(p.Scripts, script) }

var (
	// ErrProfileDisabled is returned for a job of a version whose profile
	// is not enabled.
	ErrProfileDisabled = errors.New("the version's execution profile is not enabled")
	// ErrNotPrepared is returned for a job of a version whose profile has
	// not been prepared since it last changed.
	ErrNotPrepared = errors.New("the version's execution profile is not prepared")
	// ErrProfileChanged is returned when the profile changed under an
	// operation that started with another revision of it.
	ErrProfileChanged = errors.New("the version's execution profile changed")
	// ErrScriptNotAllowed is returned for a script the profile does not
	// list.
	ErrScriptNotAllowed = errors.New("script is not allowed by the execution profile")
)

// ownError marks the store's own errors, which need no further context.
type ownError interface{ storeOwn() }

// profileError is a profile refusal with its message and sentinel.
type profileError struct {
	msg string
	is  error
}

func (e *profileError) Error() string { return e.msg }
func (e *profileError) Unwrap() error { return e.is }
func (e *profileError) storeOwn()     {}
func profileErr(is error, format string, args ...any) error {
	return &profileError{msg: fmt.Sprintf(format, args...), is: is}
}

// checkScriptPath reports whether p can name a file inside a package: a
// clean relative slash-separated path.
func checkScriptPath(p string) bool {
	return p != "" && len(p) <= 1024 && fs.ValidPath(p) && p != "." && !strings.ContainsAny(p, "\\\x00") &&
		strings.IndexFunc(p, unicode.IsControl) < 0
}

func validateProfileSpec(ps ProfileSpec) error {
	if !ps.Runtime.Valid() {
		return invalidf("profile runtime %q: it must be python, node or bash", truncate(string(ps.Runtime), 40))
	}
	if ps.TimeoutSeconds < MinTimeoutSeconds || ps.TimeoutSeconds > MaxTimeoutSeconds {
		return invalidf("profile timeout %d s: it must be %d to %d seconds", ps.TimeoutSeconds, MinTimeoutSeconds, MaxTimeoutSeconds)
	}
	if len(ps.Scripts) == 0 || len(ps.Scripts) > maxScripts {
		return invalidf("profile scripts: list 1 to %d allowed scripts (paths inside the package)", maxScripts)
	}
	for i, sc := range ps.Scripts {
		if !checkScriptPath(sc) {
			return invalidf("profile script %q: it must be a clean relative path inside the package", truncate(sc, 80))
		}
		if slices.Contains(ps.Scripts[:i], sc) {
			return invalidf("profile script %s is listed twice", sc)
		}
	}
	for name, v := range map[string]string{"image": ps.Image, "rootfs": ps.RootFS, "interpreter": ps.Interpreter} {
		if len(v) > 1024 || strings.IndexFunc(v, unicode.IsControl) >= 0 || strings.TrimSpace(v) != v {
			return invalidf("profile %s %q: at most 1024 characters without control characters or surrounding spaces", name, truncate(v, 80))
		}
	}
	if ps.RootFS != "" && !path.IsAbs(ps.RootFS) {
		return invalidf("profile rootfs %q: it must be an absolute host path", truncate(ps.RootFS, 80))
	}
	if ps.Interpreter != "" && (!path.IsAbs(ps.Interpreter) || path.Clean(ps.Interpreter) != ps.Interpreter) {
		return invalidf("profile interpreter %q: it must be a clean absolute path inside the sandbox", truncate(ps.Interpreter, 80))
	}
	return nil
}

const profileColumns = `version_id, runtime, image, rootfs, interpreter, scripts, timeout_s, network, enabled,
	revision, identity, prepare_log, prepared_at, updated_at, prepare_error, preparing_by, preparing_since, image_id, image_interpreter`

func scanProfile(r scanner) (Profile, error) {
	var (
		p                 Profile
		scripts           string
		network, enabled  int
		identity, by      sql.NullString
		preparedAt, since sql.NullInt64
		updated           int64
	)
	if err := r.Scan(&p.VersionID, &p.Runtime, &p.Image, &p.RootFS, &p.Interpreter, &scripts, &p.TimeoutSeconds,
		&network, &enabled, &p.Revision, &identity, &p.PrepareLog, &preparedAt, &updated, &p.PrepareError, &by, &since, &p.ImageID, &p.ImageInterpreter); err != nil {
		return Profile{}, err
	}
	p.PreparingBy = by.String
	if since.Valid {
		p.PreparingSince = time.UnixMicro(since.Int64).UTC()
	}
	if err := json.Unmarshal([]byte(scripts), &p.Scripts); err != nil {
		return Profile{}, fmt.Errorf("profile of version %d: its stored scripts are not a JSON list: %w", p.VersionID, err)
	}
	p.Network, p.Enabled = network != 0, enabled != 0
	p.Identity = identity.String
	if preparedAt.Valid {
		p.PreparedAt = time.UnixMicro(preparedAt.Int64).UTC()
	}
	p.UpdatedAt = time.UnixMicro(updated).UTC()
	return p, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SetProfile sets a version's execution profile. Every allowed script must
// be a file of the version. A change of anything but Enabled bumps the
// revision and clears the prepared state (prepare again); setting the same
// profile again changes nothing.
func (s *DB) SetProfile(ctx context.Context, versionID int64, ps ProfileSpec) (Profile, error) {
	if err := validateProfileSpec(ps); err != nil {
		return Profile{}, err
	}
	scripts, err := json.Marshal(ps.Scripts)
	if err != nil {
		return Profile{}, err
	}
	var out Profile
	err = s.write(ctx, fmt.Sprintf("setting the profile of version %d", versionID), func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		if ok, err := exists(ctx, tx, q(`SELECT 1 FROM versions WHERE id = ?`), versionID); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("version %d: %w", versionID, ErrNotFound)
		}
		for _, sc := range ps.Scripts {
			if ok, err := exists(ctx, tx, q(`SELECT 1 FROM version_files WHERE version_id = ? AND path = ?`), versionID, sc); err != nil {
				return nil, err
			} else if !ok {
				return nil, invalidf("profile script %s is not a file of version %d: list paths of the package's files, e.g. scripts/run.py", sc, versionID)
			}
		}
		now := s.now().UnixMicro()
		old, err := scanProfile(tx.QueryRowContext(ctx, q(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`+s.d.lockRow()), versionID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, q(`INSERT INTO profiles (version_id, runtime, image, rootfs, interpreter, scripts,
				timeout_s, network, enabled, revision, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`),
				versionID, string(ps.Runtime), ps.Image, ps.RootFS, ps.Interpreter, string(scripts),
				ps.TimeoutSeconds, b2i(ps.Network), b2i(ps.Enabled), now)
		case err != nil:
			return nil, err
		case old.sameEnvironment(ps) && old.Enabled == ps.Enabled:
			out = old
			return nil, nil
		case old.sameEnvironment(ps):
			_, err = tx.ExecContext(ctx, q(`UPDATE profiles SET enabled = ?, updated_at = ? WHERE version_id = ?`), b2i(ps.Enabled), now, versionID)
		default:
			_, err = tx.ExecContext(ctx, q(`UPDATE profiles SET runtime = ?, image = ?, rootfs = ?, interpreter = ?, scripts = ?,
				timeout_s = ?, network = ?, enabled = ?, revision = revision + 1, identity = NULL, image_id = '', image_interpreter = '', prepare_log = '',
				prepared_at = NULL, updated_at = ? WHERE version_id = ?`),
				string(ps.Runtime), ps.Image, ps.RootFS, ps.Interpreter, string(scripts),
				ps.TimeoutSeconds, b2i(ps.Network), b2i(ps.Enabled), now, versionID)
		}
		if err != nil {
			return nil, err
		}
		out, err = scanProfile(tx.QueryRowContext(ctx, q(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`), versionID))
		if err != nil {
			return nil, err
		}
		if err := s.dropUnusedLayers(ctx, tx); err != nil {
			return nil, err
		}
		return profileHints(ctx, tx, q, versionID)
	})
	return out, err
}

// profileHints are the announcements of a change of version's profile:
// to the projects bound to it (ChangeProfiles), and to the job feed.
func profileHints(ctx context.Context, tx *sql.Tx, q func(string) string, versionID int64) ([]string, error) {
	ids, err := boundProjects(ctx, tx, q, versionID)
	return append(ids, fmt.Sprintf("%s%d", prepHint, versionID)), err
}

// boundProjects lists the projects version is bound to, which the change
// feed tells of a change of its profile (ChangeProfiles).
func boundProjects(ctx context.Context, tx *sql.Tx, q func(string) string, versionID int64) ([]string, error) {
	return queryStrings(ctx, tx, q(`SELECT project_id FROM bindings WHERE version_id = ?`), versionID)
}

// GetProfile returns a version's execution profile, or ErrNotFound when it
// has none.
func (s *DB) GetProfile(ctx context.Context, versionID int64) (Profile, error) {
	p, err := scanProfile(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`), versionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, fmt.Errorf("execution profile of version %d: %w (an administrator sets one first)", versionID, ErrNotFound)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("reading the profile of version %d: %w", versionID, s.d.wrap(err))
	}
	return p, nil
}

// ProjectProfiles returns the execution profiles of the versions bound to
// a project, by version id, in one statement; a bound version without a
// profile has no entry.
func (s *DB) ProjectProfiles(ctx context.Context, projectID string) (map[int64]Profile, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT `+profileColumns+` FROM profiles
		WHERE version_id IN (SELECT version_id FROM bindings WHERE project_id = ?)`), projectID)
	if err != nil {
		return nil, fmt.Errorf("reading the profiles of project %s: %w", truncate(projectID, 80), s.d.wrap(err))
	}
	defer rows.Close()
	out := map[int64]Profile{}
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the profiles of project %s: %w", truncate(projectID, 80), s.d.wrap(err))
		}
		out[p.VersionID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the profiles of project %s: %w", truncate(projectID, 80), s.d.wrap(err))
	}
	return out, nil
}

// SetPrepared records a preparation of the profile at revision: its
// identity when it succeeded (empty when it failed) and its log. Refused
// with ErrProfileChanged when the profile changed since the preparation
// began; nothing is recorded then. A layer the identity names must be
// stored already (EndPreparation stores it with the record).
func (s *DB) SetPrepared(ctx context.Context, versionID, revision int64, identity, log string) (Profile, error) {
	return s.EndPreparation(ctx, versionID, revision, PreparationEnd{Identity: identity, Log: log})
}

// PreparationEnd is how a preparation ended, as EndPreparation records it.
type PreparationEnd struct {
	// Replica, if set, is the replica that prepared: its claim on the
	// preparation (BeginPreparation) is released, whatever else happens.
	Replica string
	// Identity names the prepared environment; empty when it failed.
	Identity string
	// ImageID is the Docker image the preparation ran on ("sha256:" and
	// 64 hex digits), which its runs use; empty on other backends.
	ImageID string
	// ImageInterpreter is the interpreter's path in that image, which its
	// runs use; only with ImageID.
	ImageInterpreter string
	// Log is the preparation's output; Error why it failed.
	Log, Error string
	// Layer, if not nil, is the prepared layer Identity names
	// ("sha256:" + Layer.Digest), stored with the record so that every
	// replica can lay it out.
	Layer *Layer
}

// imageIDRE is a Docker image id: the digest of its configuration.
var imageIDRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ErrPreparing is matched by a *PreparingError.
var ErrPreparing = errors.New("a preparation of the version runs")

// PreparingError refuses a preparation while another runs.
type PreparingError struct {
	VersionID int64
	Replica   string
	Since     time.Time
}

func (e *PreparingError) Error() string {
	return fmt.Sprintf("version %d is being prepared by replica %s since %s: wait for it to end", e.VersionID, e.Replica, e.Since.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrPreparing) true.
func (e *PreparingError) Is(target error) bool { return target == ErrPreparing }
func (e *PreparingError) storeOwn()            {}

// BeginPreparation claims the preparation of version's profile for
// replica: one runs at a time per version, across every replica. A claim
// whose replica's lease has lapsed is taken over; otherwise a running
// preparation refuses with a *PreparingError. The profile returned is the
// one to prepare (its revision is EndPreparation's).
func (s *DB) BeginPreparation(ctx context.Context, versionID int64, replica string) (Profile, error) {
	if err := checkReplica(replica); err != nil {
		return Profile{}, err
	}
	var out Profile
	err := s.write(ctx, fmt.Sprintf("starting the preparation of version %d", versionID), func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		p, err := scanProfile(tx.QueryRowContext(ctx, q(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`+s.d.lockRow()), versionID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("execution profile of version %d: %w (an administrator sets one first)", versionID, ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		if p.PreparingBy != "" {
			lapsed, _, err := s.leaseLapsed(ctx, tx, p.PreparingBy, now)
			if err != nil {
				return nil, err
			}
			if !lapsed || p.PreparingBy == replica {
				return nil, &PreparingError{VersionID: versionID, Replica: p.PreparingBy, Since: p.PreparingSince}
			}
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE profiles SET preparing_by = ?, preparing_since = ?, prepare_error = '' WHERE version_id = ?`),
			replica, now, versionID); err != nil {
			return nil, err
		}
		out, err = scanProfile(tx.QueryRowContext(ctx, q(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`), versionID))
		return []string{fmt.Sprintf("%s%d", prepHint, versionID)}, err
	})
	return out, err
}

// ReleasePreparations drops the claims replica holds on preparations (a
// restarted replica's, whose preparations died with it), recording why.
// It returns the versions released.
func (s *DB) ReleasePreparations(ctx context.Context, replica, why string) ([]int64, error) {
	var out []int64
	err := s.write(ctx, "releasing the preparations of replica "+replica, func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		ids, err := queryStrings(ctx, tx, q(`SELECT CAST(version_id AS TEXT) FROM profiles WHERE preparing_by = ?`), replica)
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE profiles SET preparing_by = NULL, preparing_since = NULL, prepare_error = ? WHERE preparing_by = ?`),
			clipLog(why, MaxJobReason), replica); err != nil {
			return nil, err
		}
		var hints []string
		for _, id := range ids {
			var v int64
			fmt.Sscan(id, &v)
			out = append(out, v)
			hints = append(hints, prepHint+id)
		}
		return hints, nil
	})
	return out, err
}

// EndPreparation records how a preparation of the profile at revision
// ended: the identity when it succeeded (empty when it failed), its log
// and error, and the prepared layer, in one transaction, so that a
// profile is never prepared without its layer stored. The claim of
// end.Replica is released even when the profile changed since the
// preparation began, which is refused with ErrProfileChanged, recording
// nothing else.
func (s *DB) EndPreparation(ctx context.Context, versionID, revision int64, end PreparationEnd) (Profile, error) {
	identity := end.Identity
	if len(identity) > 200 || strings.IndexFunc(identity, unicode.IsControl) >= 0 {
		return Profile{}, invalidf("prepared identity %q: at most 200 characters without control characters", truncate(identity, 80))
	}
	if end.ImageID != "" && (identity == "" || !imageIDRE.MatchString(end.ImageID)) {
		return Profile{}, invalidf("version %d: the prepared image id %q: want sha256: and 64 hex digits, with an identity", versionID, truncate(end.ImageID, 80))
	}
	if ip := end.ImageInterpreter; ip != "" && (end.ImageID == "" || !strings.HasPrefix(ip, "/") || len(ip) > 200 || strings.IndexFunc(ip, unicode.IsControl) >= 0) {
		return Profile{}, invalidf("version %d: the prepared image's interpreter %q: want an absolute path of at most 200 characters, with an image id", versionID, truncate(ip, 80))
	}
	if end.Layer != nil && identity != "sha256:"+end.Layer.Digest {
		return Profile{}, invalidf("version %d: the prepared identity %s does not name the layer sha256:%s", versionID, truncate(identity, 80), end.Layer.Digest)
	}
	log := clipLog(end.Log, MaxPrepareLog)
	var (
		out     Profile
		changed bool
	)
	err := s.write(ctx, fmt.Sprintf("recording the preparation of version %d", versionID), func(tx *sql.Tx) ([]string, error) {
		q := s.d.rebind
		changed = false
		hints := []string{fmt.Sprintf("%s%d", prepHint, versionID)}
		if end.Replica != "" {
			if _, err := tx.ExecContext(ctx, q(`UPDATE profiles SET preparing_by = NULL, preparing_since = NULL WHERE version_id = ? AND preparing_by = ?`),
				versionID, end.Replica); err != nil {
				return nil, err
			}
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		var cur int64
		err = tx.QueryRowContext(ctx, q(`SELECT revision FROM profiles WHERE version_id = ?`+s.d.lockRow()), versionID).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("execution profile of version %d: %w", versionID, ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		if cur != revision {
			// The claim's release above is kept; nothing else is.
			changed = true
			return hints, nil
		}
		if end.Layer != nil {
			if err := s.putLayerTx(ctx, tx, end.Layer, now); err != nil {
				return nil, err
			}
		}
		var at sql.NullInt64
		var identArg sql.NullString
		if identity != "" {
			identArg = sql.NullString{String: identity, Valid: true}
			at = sql.NullInt64{Int64: now, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE profiles SET identity = ?, image_id = ?, image_interpreter = ?, prepare_log = ?, prepare_error = ?, prepared_at = ?, updated_at = ?
			WHERE version_id = ?`), identArg, end.ImageID, end.ImageInterpreter, log, clipLog(end.Error, MaxJobReason), at, now, versionID); err != nil {
			return nil, err
		}
		if err := s.dropUnusedLayers(ctx, tx); err != nil {
			return nil, err
		}
		out, err = scanProfile(tx.QueryRowContext(ctx, q(`SELECT `+profileColumns+` FROM profiles WHERE version_id = ?`), versionID))
		if err != nil {
			return nil, err
		}
		more, err := profileHints(ctx, tx, q, versionID)
		return append(hints, more...), err
	})
	if err == nil && changed {
		err = profileErr(ErrProfileChanged, "version %d: the execution profile changed while it was being prepared (revision %d): prepare it again", versionID, revision)
	}
	return out, err
}

// clipLog keeps the first and last halves of a log longer than n bytes.
func clipLog(log string, n int) string {
	if len(log) <= n {
		return strings.ToValidUTF8(log, "\uFFFD")
	}
	const mark = "\n… (log cut) …\n"
	half := (n - len(mark)) / 2
	return strings.ToValidUTF8(log[:half], "") + mark + strings.ToValidUTF8(log[len(log)-half:], "")
}

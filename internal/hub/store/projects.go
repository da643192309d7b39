package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Project is a set of bound versions served at its own endpoint. Its id is
// stable (it names the endpoint, /p/{id}/mcp); its name may change.
type Project struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Paused bool   `json:"paused"`
	// PausedAt is when the project was paused; zero when it is not.
	PausedAt time.Time `json:"paused_at,omitzero"`
	// WellKnown says whether the project's well-known index (what `npx
	// skills add` installs from) is on: it is served, to the holders of an
	// index token of the project, while the project is not paused.
	WellKnown bool `json:"well_known"`
	// WellKnownAt is when the index was turned on; zero while it is off.
	WellKnownAt time.Time `json:"well_known_at,omitzero"`
	// Generation counts the real changes of the project's bindings: an
	// endpoint that has served generation g and sees g again has nothing
	// to reload.
	Generation int64     `json:"generation"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ProjectPage asks for one page of ListProjects.
type ProjectPage struct {
	// After is the id of the last project of the previous page; empty for
	// the first page.
	After string
	// Limit is the page's size. If zero, DefaultPageSize; at most
	// MaxPageSize.
	Limit int
}

// ProjectList is one page of projects, in id order (byte order).
type ProjectList struct {
	Projects []Project `json:"projects"`
	// Next is the After of the next page; empty on the last page.
	Next string `json:"next,omitempty"`
}

// Binding is one version bound to a project.
type Binding struct {
	Version Version   `json:"version"`
	BoundAt time.Time `json:"bound_at"`
}

// BindingList is a project's bound versions, by package name then version
// id, and the binding generation they are.
type BindingList struct {
	ProjectID  string    `json:"project_id"`
	Generation int64     `json:"generation"`
	Bindings   []Binding `json:"bindings"`
}

// BindResult says what a binding change did. An unchanged binding (bound
// again, or unbound when it was not) leaves the generation as it was and
// announces nothing.
type BindResult struct {
	Changed    bool  `json:"changed"`
	Generation int64 `json:"generation"`
}

// Page sizes of the store's lists.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// maxProjectName bounds a project's name, in bytes.
const maxProjectName = 200

// validProjectID reports whether id can name a new project: 1 to 63
// lowercase letters, digits and hyphens, starting with a letter or digit,
// so that it is one clean path segment of the project's URL.
func validProjectID(id string) bool {
	if id == "" || len(id) > 63 || id[0] == '-' {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func checkProjectID(id string) error {
	if !validProjectID(id) {
		return invalidf("project id %q: it must be 1 to 63 lowercase letters, digits or hyphens, starting with a letter or digit", truncate(id, 80))
	}
	return nil
}

func checkProjectName(name string) error {
	if name == "" || len(name) > maxProjectName || !utf8.ValidString(name) ||
		strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.TrimSpace(name) != name {
		return invalidf("project name %q: it must be 1 to %d bytes of UTF-8 without control characters or surrounding spaces", truncate(name, 80), maxProjectName)
	}
	return nil
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

const projectColumns = `id, name, paused_at, well_known_at, generation, created_at, updated_at`

func scanProject(r scanner) (Project, error) {
	var (
		p                   Project
		pausedAt, wellKnown sql.NullInt64
		created, modified   int64
	)
	if err := r.Scan(&p.ID, &p.Name, &pausedAt, &wellKnown, &p.Generation, &created, &modified); err != nil {
		return Project{}, err
	}
	if pausedAt.Valid {
		p.Paused = true
		p.PausedAt = time.UnixMicro(pausedAt.Int64).UTC()
	}
	if wellKnown.Valid {
		p.WellKnown = true
		p.WellKnownAt = time.UnixMicro(wellKnown.Int64).UTC()
	}
	p.CreatedAt = time.UnixMicro(created).UTC()
	p.UpdatedAt = time.UnixMicro(modified).UTC()
	if modified == 0 { // a project made before updated_at existed
		p.UpdatedAt = p.CreatedAt
	}
	return p, nil
}

// CreateProject adds a project with the given id and name. The id must be
// 1 to 63 lowercase letters, digits or hyphens; ErrExists when the id or
// the name is taken.
func (s *DB) CreateProject(ctx context.Context, id, name string) error {
	if err := checkProjectID(id); err != nil {
		return err
	}
	if err := checkProjectName(name); err != nil {
		return err
	}
	return s.write(ctx, "creating project "+id, func(tx *sql.Tx) ([]string, error) {
		now := s.now().UnixMicro()
		_, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`), id, name, now, now)
		if s.d.classify(err) == kindUnique {
			return nil, s.takenError(ctx, id, name)
		}
		if err != nil {
			return nil, err
		}
		return []string{id}, nil
	})
}

// takenError says whether a unique violation on projects was the id or
// the name. It reads outside the failed transaction, which PostgreSQL
// has aborted.
func (s *DB) takenError(ctx context.Context, id, name string) error {
	var one int
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT 1 FROM projects WHERE id = ?`), id).Scan(&one)
	if err == nil {
		return fmt.Errorf("project %s: %w: choose another id", id, ErrExists)
	}
	return fmt.Errorf("project name %q: %w (names are unique): choose another name", name, ErrExists)
}

// GetProject returns a project, or ErrNotFound.
func (s *DB) GetProject(ctx context.Context, id string) (Project, error) {
	p, err := scanProject(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+projectColumns+` FROM projects WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Project{}, fmt.Errorf("project %s: %w", truncate(id, 80), ErrNotFound)
	}
	if err != nil {
		return Project{}, fmt.Errorf("reading project %s: %w", truncate(id, 80), s.d.wrap(err))
	}
	return p, nil
}

func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageSize, nil
	case n < 0 || n > MaxPageSize:
		return 0, invalidf("page size %d: it must be 1 to %d", n, MaxPageSize)
	}
	return n, nil
}

// ListProjects lists projects in id order (byte order, on both backends),
// a page at a time: the next page starts after the last id of this one,
// so pages neither repeat nor skip projects while others are added.
func (s *DB) ListProjects(ctx context.Context, page ProjectPage) (ProjectList, error) {
	limit, err := pageLimit(page.Limit)
	if err != nil {
		return ProjectList{}, err
	}
	id := s.d.byteOrder("id")
	// One row more than asked tells whether there is a next page.
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT `+projectColumns+` FROM projects WHERE `+id+` > ? ORDER BY `+id+` LIMIT ?`), page.After, limit+1)
	if err != nil {
		return ProjectList{}, fmt.Errorf("listing projects: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := ProjectList{Projects: []Project{}}
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return ProjectList{}, fmt.Errorf("listing projects: %w", s.d.wrap(err))
		}
		out.Projects = append(out.Projects, p)
	}
	if err := rows.Err(); err != nil {
		return ProjectList{}, fmt.Errorf("listing projects: %w", s.d.wrap(err))
	}
	if len(out.Projects) > limit {
		out.Projects = out.Projects[:limit]
		out.Next = out.Projects[limit-1].ID
	}
	return out, nil
}

// RenameProject changes a project's name. ErrExists when another project
// has the name; renaming to the same name changes nothing.
func (s *DB) RenameProject(ctx context.Context, id, name string) (Project, error) {
	if err := checkProjectName(name); err != nil {
		return Project{}, err
	}
	p, err := s.projectTx(ctx, id, "renaming project "+id, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		if p.Name == name {
			return false, nil
		}
		now := s.now()
		_, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE projects SET name = ?, updated_at = ? WHERE id = ?`), name, now.UnixMicro(), id)
		if s.d.classify(err) == kindUnique {
			return false, fmt.Errorf("project name %q: %w (names are unique): choose another name", name, ErrExists)
		}
		if err != nil {
			return false, err
		}
		p.Name, p.UpdatedAt = name, now.UTC().Truncate(time.Microsecond)
		return true, nil
	})
	return p.Project, err
}

// PauseProject pauses a project: its endpoint refuses requests until it
// is resumed. Its bindings and tokens stay. Pausing a paused project
// changes nothing.
func (s *DB) PauseProject(ctx context.Context, id string) (Project, error) {
	return s.setPaused(ctx, id, true)
}

// ResumeProject resumes a paused project; resuming a running one changes
// nothing.
func (s *DB) ResumeProject(ctx context.Context, id string) (Project, error) {
	return s.setPaused(ctx, id, false)
}

func (s *DB) setPaused(ctx context.Context, id string, paused bool) (Project, error) {
	doing := map[bool]string{true: "pausing", false: "resuming"}[paused] + " project " + id
	p, err := s.projectTx(ctx, id, doing, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		if p.Paused == paused {
			return false, nil
		}
		now := s.now()
		var at sql.NullInt64
		if paused {
			at = sql.NullInt64{Int64: now.UnixMicro(), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE projects SET paused_at = ?, updated_at = ? WHERE id = ?`), at, now.UnixMicro(), id); err != nil {
			return false, err
		}
		p.Paused, p.PausedAt, p.UpdatedAt = paused, time.Time{}, now.UTC().Truncate(time.Microsecond)
		if paused {
			p.PausedAt = p.UpdatedAt
			return true, nil
		}
		// Its queued jobs may run again: tell the workers.
		queued, err := queryStrings(ctx, tx, s.d.rebind(`SELECT id FROM jobs WHERE project_id = ? AND state = 'queued'`), id)
		for _, j := range queued {
			p.hints = append(p.hints, jobHint+j)
		}
		return true, err
	})
	return p.Project, err
}

// SetWellKnown turns project id's well-known index on or off. Off, its
// index answers nothing, whatever index tokens it has; they stay, and open
// it again once it is back on (revoke them to end them). Setting it as it
// is changes nothing.
func (s *DB) SetWellKnown(ctx context.Context, id string, on bool) (Project, error) {
	doing := map[bool]string{true: "turning on", false: "turning off"}[on] + " the well-known index of project " + id
	p, err := s.projectTx(ctx, id, doing, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		if p.WellKnown == on {
			return false, nil
		}
		now := s.now()
		var at sql.NullInt64
		if on {
			at = sql.NullInt64{Int64: now.UnixMicro(), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE projects SET well_known_at = ?, updated_at = ? WHERE id = ?`), at, now.UnixMicro(), id); err != nil {
			return false, err
		}
		p.WellKnown, p.WellKnownAt, p.UpdatedAt = on, time.Time{}, now.UTC().Truncate(time.Microsecond)
		if on {
			p.WellKnownAt = p.UpdatedAt
		}
		return true, nil
	})
	return p.Project, err
}

// DuplicateProject makes project id, named name, bound to the versions
// srcID is bound to, as they are (approval is not checked again). Jobs,
// job files and tokens are never copied, and the new project's well-known
// index is off. The new project is not paused.
func (s *DB) DuplicateProject(ctx context.Context, srcID, id, name string) (Project, error) {
	if err := checkProjectID(id); err != nil {
		return Project{}, err
	}
	if err := checkProjectName(name); err != nil {
		return Project{}, err
	}
	err := s.write(ctx, "duplicating project "+srcID+" as "+id, func(tx *sql.Tx) ([]string, error) {
		if _, err := s.lockProject(ctx, tx, srcID); err != nil {
			return nil, err
		}
		now := s.now().UnixMicro()
		_, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`), id, name, now, now)
		if s.d.classify(err) == kindUnique {
			return nil, s.takenError(ctx, id, name)
		}
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO bindings (project_id, version_id, created_at)
			SELECT ?, version_id, ? FROM bindings WHERE project_id = ?`), id, now, srcID)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n > 0 {
			if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE projects SET generation = 1 WHERE id = ?`), id); err != nil {
				return nil, err
			}
		}
		return []string{id}, nil
	})
	if err != nil {
		return Project{}, err
	}
	return s.GetProject(ctx, id)
}

// Job states in which a job holds its project: deleting the project is
// refused while one of its jobs is in one of them. Issue 20's jobs define
// the states; "locked" is a job whose kill could not be confirmed.
var activeJobStates = []string{"running", "locked"}

// DeleteProject removes a project with its bindings, its tokens and its
// job records, in one transaction. Job files are kept for the operator's
// recovery: each job that has files leaves a JobRemnant naming them
// (JobRemnants, ReadJobFile by the job's id, PurgeJobRemnant). Refused with a
// *JobsError while one of the project's jobs runs or is locked.
func (s *DB) DeleteProject(ctx context.Context, id string) error {
	defer s.reclaim(ctx)
	_, err := s.projectTx(ctx, id, "deleting project "+id, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		q := s.d.rebind
		active := `state IN ('` + strings.Join(activeJobStates, `', '`) + `')`
		jobs, err := queryStrings(ctx, tx, q(`SELECT id FROM jobs WHERE project_id = ? AND `+active+` ORDER BY id`), id)
		if err != nil {
			return false, err
		}
		if len(jobs) > 0 {
			return false, &JobsError{ProjectID: id, Jobs: jobs}
		}
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO job_remnants
			(job_id, project_id, version_id, package, tree_digest, state, created_at, deleted_at)
			SELECT j.id, j.project_id, j.version_id, p.name, v.tree_digest, j.state, j.created_at, ?
			FROM jobs j JOIN versions v ON v.id = j.version_id JOIN packages p ON p.id = v.package_id
			WHERE j.project_id = ? AND NOT `+active+`
			AND EXISTS (SELECT 1 FROM job_files f WHERE f.job_id = j.id)`), s.now().UnixMicro(), id); err != nil {
			return false, err
		}
		// Only jobs that do not run: a claim committed since the check above
		// leaves its job, which the check below then finds.
		if _, err := tx.ExecContext(ctx, q(`DELETE FROM jobs WHERE project_id = ? AND NOT `+active), id); err != nil {
			return false, err
		}
		jobs, err = queryStrings(ctx, tx, q(`SELECT id FROM jobs WHERE project_id = ? ORDER BY id`), id)
		if err != nil {
			return false, err
		}
		if len(jobs) > 0 {
			return false, &JobsError{ProjectID: id, Jobs: jobs}
		}
		// Bindings and tokens go with the project (ON DELETE CASCADE).
		if _, err := tx.ExecContext(ctx, q(`DELETE FROM projects WHERE id = ?`), id); err != nil {
			return false, err
		}
		return true, nil
	})
	return err
}

// Bind binds a version to a project; binding it again is not an error.
// With Options.RequireApproval, an unapproved version is refused with
// ErrNotApproved.
func (s *DB) Bind(ctx context.Context, projectID string, versionID int64) error {
	_, err := s.BindVersion(ctx, projectID, versionID)
	return err
}

// BindVersion binds a version to a project and says whether that changed
// anything. A new binding bumps the project's generation and is announced
// on the change feed; binding a bound version again changes nothing.
// Refused with ErrNotFound for a missing project or version, and with
// ErrNotApproved for an unapproved version when the store requires
// approval. Binding changes to one project are serialised by a lock on
// the project's row.
func (s *DB) BindVersion(ctx context.Context, projectID string, versionID int64) (BindResult, error) {
	doing := fmt.Sprintf("binding version %d to project %s", versionID, projectID)
	p, err := s.projectTx(ctx, projectID, doing, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		// The approval check and the insert are one statement.
		res, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO bindings (project_id, version_id, created_at)
			SELECT ?, version_id, ? FROM version_labels WHERE version_id = ? AND (approved_by IS NOT NULL OR ?)
			ON CONFLICT (project_id, version_id) DO NOTHING`),
			projectID, s.now().UnixMicro(), versionID, !s.requireApproval)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 0 {
			// Nothing inserted: bound already, no such version, or not
			// approved.
			if ok, err := exists(ctx, tx, s.d.rebind(`SELECT 1 FROM bindings WHERE project_id = ? AND version_id = ?`), projectID, versionID); err != nil || ok {
				return false, err
			}
			if ok, err := exists(ctx, tx, s.d.rebind(`SELECT 1 FROM versions WHERE id = ?`), versionID); err != nil {
				return false, err
			} else if !ok {
				return false, fmt.Errorf("binding to project %s: version %d: %w", projectID, versionID, ErrNotFound)
			}
			return false, fmt.Errorf("binding version %d to project %s: %w", versionID, projectID, ErrNotApproved)
		}
		return true, s.bumpGeneration(ctx, tx, p)
	})
	if err != nil {
		return BindResult{}, err
	}
	return BindResult{Changed: p.changed, Generation: p.Generation}, nil
}

// Unbind removes a binding; it is not an error when there is none.
func (s *DB) Unbind(ctx context.Context, projectID string, versionID int64) error {
	_, err := s.UnbindVersion(ctx, projectID, versionID)
	return err
}

// UnbindVersion removes a binding and says whether there was one. Refused
// with a *JobsError, listing them, while the project keeps jobs for the
// version (the jobs table's foreign key refuses it too), and with
// ErrNotFound for a missing project or version.
func (s *DB) UnbindVersion(ctx context.Context, projectID string, versionID int64) (BindResult, error) {
	doing := fmt.Sprintf("unbinding version %d from project %s", versionID, projectID)
	p, err := s.projectTx(ctx, projectID, doing, func(tx *sql.Tx, p *lockedProject) (bool, error) {
		jobs, err := queryStrings(ctx, tx, s.d.rebind(`SELECT id FROM jobs WHERE project_id = ? AND version_id = ? ORDER BY id`), projectID, versionID)
		if err != nil {
			return false, err
		}
		if len(jobs) > 0 {
			return false, &JobsError{ProjectID: projectID, VersionID: versionID, Jobs: jobs}
		}
		res, err := tx.ExecContext(ctx, s.d.rebind(`DELETE FROM bindings WHERE project_id = ? AND version_id = ?`), projectID, versionID)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 0 {
			if ok, err := exists(ctx, tx, s.d.rebind(`SELECT 1 FROM versions WHERE id = ?`), versionID); err != nil {
				return false, err
			} else if !ok {
				return false, fmt.Errorf("unbinding from project %s: version %d: %w", projectID, versionID, ErrNotFound)
			}
			return false, nil
		}
		return true, s.bumpGeneration(ctx, tx, p)
	})
	if err != nil {
		return BindResult{}, err
	}
	return BindResult{Changed: p.changed, Generation: p.Generation}, nil
}

func (s *DB) bumpGeneration(ctx context.Context, tx *sql.Tx, p *lockedProject) error {
	now := s.now()
	if err := tx.QueryRowContext(ctx, s.d.rebind(`UPDATE projects SET generation = generation + 1, updated_at = ? WHERE id = ? RETURNING generation`),
		now.UnixMicro(), p.ID).Scan(&p.Generation); err != nil {
		return err
	}
	p.UpdatedAt = now.UTC().Truncate(time.Microsecond)
	return nil
}

// Bindings lists the projects a version is bound to, by id.
func (s *DB) Bindings(ctx context.Context, versionID int64) ([]string, error) {
	out, err := queryStrings(ctx, s.db, s.d.rebind(`SELECT project_id FROM bindings WHERE version_id = ?`), versionID)
	if err != nil {
		return nil, fmt.Errorf("listing bindings of version %d: %w", versionID, s.d.wrap(err))
	}
	slices.Sort(out)
	return out, nil
}

// ProjectBindings lists the versions bound to a project, by package name
// then version id, and the generation they are. When the list is not
// empty, it and its generation come from one statement; an empty list
// carries the generation read just before it, so a change committed in
// between is announced with a higher generation, never missed.
func (s *DB) ProjectBindings(ctx context.Context, projectID string) (BindingList, error) {
	out := BindingList{ProjectID: projectID, Bindings: []Binding{}}
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT generation FROM projects WHERE id = ?`), projectID).Scan(&out.Generation)
	if errors.Is(err, sql.ErrNoRows) {
		return BindingList{}, fmt.Errorf("project %s: %w", truncate(projectID, 80), ErrNotFound)
	}
	if err != nil {
		return BindingList{}, fmt.Errorf("listing the bindings of project %s: %w", projectID, s.d.wrap(err))
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT pr.generation, b.created_at, `+versionColumns+`
		FROM bindings b JOIN projects pr ON pr.id = b.project_id
		JOIN versions v ON v.id = b.version_id JOIN packages p ON p.id = v.package_id
		JOIN version_labels l ON l.version_id = v.id
		WHERE b.project_id = ?`), projectID)
	if err != nil {
		return BindingList{}, fmt.Errorf("listing the bindings of project %s: %w", projectID, s.d.wrap(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			gen, bound int64
			b          Binding
		)
		b.Version, err = scanVersion(prefixScanner{rows, []any{&gen, &bound}})
		if err != nil {
			return BindingList{}, fmt.Errorf("listing the bindings of project %s: %w", projectID, s.d.wrap(err))
		}
		b.BoundAt = time.UnixMicro(bound).UTC()
		out.Generation = gen
		out.Bindings = append(out.Bindings, b)
	}
	if err := rows.Err(); err != nil {
		return BindingList{}, fmt.Errorf("listing the bindings of project %s: %w", projectID, s.d.wrap(err))
	}
	slices.SortFunc(out.Bindings, func(a, b Binding) int {
		if c := strings.Compare(a.Version.Package, b.Version.Package); c != 0 {
			return c
		}
		return int(a.Version.ID - b.Version.ID)
	})
	return out, nil
}

// prefixScanner scans a row whose first columns go to pre, the rest to
// the caller's destinations.
type prefixScanner struct {
	r   *sql.Rows
	pre []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.r.Scan(append(p.pre, dest...)...) }

// lockedProject is a project read under its row's lock, and whether the
// transaction changed it.
type lockedProject struct {
	Project
	changed bool
	// hints are announced with the project's change (a resumed project's
	// queued jobs, for the job feed).
	hints []string
}

// lockProject reads a project and locks its row until tx ends, so that
// changes to one project happen one after the other. SQLite has no row
// locks: its transactions take the database's write lock at BEGIN.
func (s *DB) lockProject(ctx context.Context, tx *sql.Tx, id string) (Project, error) {
	p, err := scanProject(tx.QueryRowContext(ctx, s.d.rebind(`SELECT `+projectColumns+` FROM projects WHERE id = ?`+s.d.lockRow()), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Project{}, fmt.Errorf("project %s: %w", truncate(id, 80), ErrNotFound)
	}
	return p, err
}

// projectTx runs fn in a transaction holding project id's lock. When fn
// reports a change, the change is announced: on PostgreSQL by a
// notification sent at commit, on SQLite by the in-process feed after it.
func (s *DB) projectTx(ctx context.Context, id, doing string, fn func(tx *sql.Tx, p *lockedProject) (bool, error)) (lockedProject, error) {
	var lp lockedProject
	err := s.write(ctx, doing, func(tx *sql.Tx) ([]string, error) {
		p, err := s.lockProject(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		lp = lockedProject{Project: p}
		changed, err := fn(tx, &lp)
		if err != nil || !changed {
			return nil, err
		}
		lp.changed = true
		return append([]string{id}, lp.hints...), nil
	})
	return lp, err
}

// writeAttempts bounds a write's retries after a conflict with a
// concurrent transaction.
const writeAttempts = 5

// write runs fn in a transaction and commits it, announcing the projects
// fn names as changed. Conflicts with concurrent transactions are
// retried; the store's own errors pass through, database errors get
// doing as their context.
func (s *DB) write(ctx context.Context, doing string, fn func(tx *sql.Tx) ([]string, error)) error {
	var err error
	for attempt := 1; ; attempt++ {
		var changed []string
		changed, err = s.writeOnce(ctx, fn)
		if err == nil {
			s.published(changed)
			return nil
		}
		var re *retryError
		if attempt >= writeAttempts || (s.d.classify(err) != kindRetry && !errors.As(err, &re)) || ctx.Err() != nil {
			break
		}
	}
	if isStoreError(err) {
		return err
	}
	return fmt.Errorf("%s: the transaction was rolled back: %w", doing, s.d.wrap(err))
}

func (s *DB) writeOnce(ctx context.Context, fn func(tx *sql.Tx) ([]string, error)) ([]string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	changed, err := fn(tx)
	if err != nil {
		return nil, err
	}
	for _, id := range changed {
		if err := s.publishTx(ctx, tx, id); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return changed, nil
}

// isStoreError reports whether err is one the store made itself, which
// needs no further context.
func isStoreError(err error) bool {
	var ie *invalidError
	var je *JobsError
	var own ownError
	return errors.As(err, &ie) || errors.As(err, &je) || errors.As(err, &own) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrExists) ||
		errors.Is(err, ErrNotApproved) || errors.Is(err, ErrTokenInvalid)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func exists(ctx context.Context, tx *sql.Tx, query string, args ...any) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

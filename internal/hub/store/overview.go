package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Overview is what the administration's dashboard shows of the store: its
// backend, what it holds, and what needs an administrator.
type Overview struct {
	// Backend is "sqlite" or "postgres".
	Backend string
	// RequireApproval reports whether binding refuses unapproved versions.
	RequireApproval bool
	Packages        int
	Versions        int
	Projects        int
	PausedProjects  int
	// Remnants counts the job remnants of deleted projects (their files
	// are kept until purged).
	Remnants int
	// Jobs counts the jobs in each state.
	Jobs map[JobState]int
	// FailedPreparations are the profiles whose last preparation failed
	// (a log or an error and no prepared environment), the latest first,
	// at most MaxOverviewRows.
	FailedPreparations []FailedPreparation
	// UnapprovedBound are the versions bound to a project without being
	// approved, at most MaxOverviewRows.
	UnapprovedBound []UnapprovedBinding
	// CatalogStoredAt is when the catalog snapshot served was stored (a
	// sync); zero when none was (the bundled one is served).
	CatalogStoredAt time.Time
}

// MaxOverviewRows bounds each list of an Overview.
const MaxOverviewRows = 20

// FailedPreparation is a profile whose last preparation failed.
type FailedPreparation struct {
	VersionID  int64
	Package    string
	TreeDigest string
	At         time.Time
	// Log is the end of the preparation's log (at most 2 KiB).
	Log string
}

// UnapprovedBinding is a version bound without approval.
type UnapprovedBinding struct {
	VersionID  int64
	Package    string
	TreeDigest string
	// Projects are the projects it is bound to, by id.
	Projects []string
}

// maxOverviewLog bounds the log tail an Overview carries per preparation.
const maxOverviewLog = 2 << 10

// Overview reads the store's overview. Each part is a short query; they
// are not one snapshot, which a dashboard does not need.
func (s *DB) Overview(ctx context.Context) (Overview, error) {
	o := Overview{Backend: s.d.name(), RequireApproval: s.requireApproval}
	wrap := func(err error) error { return fmt.Errorf("reading the store's overview: %w", s.d.wrap(err)) }
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM packages p WHERE EXISTS (SELECT 1 FROM versions v WHERE v.package_id = p.id)),
		(SELECT COUNT(*) FROM versions),
		(SELECT COUNT(*) FROM projects),
		(SELECT COUNT(*) FROM projects WHERE paused_at IS NOT NULL),
		(SELECT COUNT(*) FROM job_remnants)`).Scan(&o.Packages, &o.Versions, &o.Projects, &o.PausedProjects, &o.Remnants)
	if err != nil {
		return Overview{}, wrap(err)
	}
	if o.Jobs, err = s.CountJobs(ctx); err != nil {
		return Overview{}, err
	}
	q := s.d.rebind
	// A failure that left no log (a backend refused, the package could not
	// be laid out) says why in its error, on every replica.
	rows, err := s.db.QueryContext(ctx, q(`SELECT f.version_id, p.name, v.tree_digest, f.updated_at,
		CASE WHEN f.prepare_log = '' THEN f.prepare_error ELSE f.prepare_log END
		FROM profiles f JOIN versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
		WHERE f.identity IS NULL AND f.preparing_by IS NULL AND (f.prepare_log <> '' OR f.prepare_error <> '')
		ORDER BY f.updated_at DESC, f.version_id LIMIT ?`), MaxOverviewRows)
	if err != nil {
		return Overview{}, wrap(err)
	}
	err = eachRow(rows, func() error {
		var f FailedPreparation
		var at int64
		if err := rows.Scan(&f.VersionID, &f.Package, &f.TreeDigest, &at, &f.Log); err != nil {
			return err
		}
		f.At = time.UnixMicro(at).UTC()
		if len(f.Log) > maxOverviewLog {
			f.Log = "…" + tail(f.Log, maxOverviewLog)
		}
		o.FailedPreparations = append(o.FailedPreparations, f)
		return nil
	})
	if err != nil {
		return Overview{}, wrap(err)
	}
	rows, err = s.db.QueryContext(ctx, q(`SELECT v.id, p.name, v.tree_digest, b.project_id
		FROM bindings b JOIN versions v ON v.id = b.version_id JOIN packages p ON p.id = v.package_id
		LEFT JOIN version_labels l ON l.version_id = v.id
		WHERE l.approved_at IS NULL ORDER BY `+s.d.byteOrder("p.name")+`, v.id, `+s.d.byteOrder("b.project_id")))
	if err != nil {
		return Overview{}, wrap(err)
	}
	err = eachRow(rows, func() error {
		var u UnapprovedBinding
		var project string
		if err := rows.Scan(&u.VersionID, &u.Package, &u.TreeDigest, &project); err != nil {
			return err
		}
		if n := len(o.UnapprovedBound); n > 0 && o.UnapprovedBound[n-1].VersionID == u.VersionID {
			if len(o.UnapprovedBound[n-1].Projects) < MaxOverviewRows {
				o.UnapprovedBound[n-1].Projects = append(o.UnapprovedBound[n-1].Projects, project)
			}
			return nil
		}
		if len(o.UnapprovedBound) < MaxOverviewRows {
			u.Projects = []string{project}
			o.UnapprovedBound = append(o.UnapprovedBound, u)
		}
		return nil
	})
	if err != nil {
		return Overview{}, wrap(err)
	}
	var stored int64
	switch err := s.db.QueryRowContext(ctx, `SELECT created_at FROM index_snapshots ORDER BY id DESC LIMIT 1`).Scan(&stored); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return Overview{}, wrap(err)
	default:
		o.CatalogStoredAt = time.UnixMicro(stored).UTC()
	}
	return o, nil
}

// eachRow calls f for each row, then closes the rows and returns the
// first error.
func eachRow(rows *sql.Rows, f func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// tail returns at most the last n bytes of s, cut at a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

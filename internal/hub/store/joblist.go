package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// JobQuery selects jobs across projects for [DB.QueryJobs], newest first:
// the administration's list of every job. A zero field selects everything.
type JobQuery struct {
	// States keeps the jobs in any of these states.
	States []JobState
	// Project keeps one project's jobs.
	Project string
	// VersionID keeps the jobs of one version (the store's id).
	VersionID int64
	// Package keeps the jobs of every version of one package.
	Package string
	// AfterCreated and AfterID continue a list after the job with this
	// creation time and id (the last one of the page before).
	AfterCreated time.Time
	AfterID      string
	// Limit bounds the jobs returned: 1 to MaxJobQuery; zero means
	// MaxJobQuery.
	Limit int
}

// MaxJobQuery is the most jobs one QueryJobs returns.
const MaxJobQuery = 1000

// ListedJob is a job of a QueryJobs answer with the version it runs.
type ListedJob struct {
	Job
	// Package and TreeDigest name the job's version; empty when the
	// version is gone.
	Package    string
	TreeDigest string
}

// QueryJobs lists the jobs q selects, across projects, newest first,
// without their logs.
func (s *DB) QueryJobs(ctx context.Context, q JobQuery) ([]ListedJob, error) {
	if q.Limit <= 0 || q.Limit > MaxJobQuery {
		q.Limit = MaxJobQuery
	}
	var (
		where []string
		args  []any
	)
	if len(q.States) > 0 {
		marks := make([]string, len(q.States))
		for i, st := range q.States {
			marks[i] = "?"
			args = append(args, string(st))
		}
		where = append(where, "j.state IN ("+strings.Join(marks, ", ")+")")
	}
	if q.Project != "" {
		where, args = append(where, "j.project_id = ?"), append(args, q.Project)
	}
	if q.VersionID != 0 {
		where, args = append(where, "j.version_id = ?"), append(args, q.VersionID)
	}
	if q.Package != "" {
		where, args = append(where, "p.name = ?"), append(args, q.Package)
	}
	if q.AfterID != "" {
		at := q.AfterCreated.UnixMicro()
		where = append(where, "(j.created_at < ? OR (j.created_at = ? AND "+s.d.byteOrder("j.id")+" > ?))")
		args = append(args, at, at, q.AfterID)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, q.Limit)
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT `+prefixed("j.", jobColumns)+`, COALESCE(p.name, ''), COALESCE(v.tree_digest, '')
		FROM jobs j LEFT JOIN versions v ON v.id = j.version_id LEFT JOIN packages p ON p.id = v.package_id`+cond+`
		ORDER BY j.created_at DESC, `+s.d.byteOrder("j.id")+` LIMIT ?`), args...)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := []ListedJob{}
	for rows.Next() {
		var lj ListedJob
		j, err := scanJob(multiScanner{rows, []any{&lj.Package, &lj.TreeDigest}}, false)
		if err != nil {
			return nil, fmt.Errorf("listing jobs: %w", s.d.wrap(err))
		}
		lj.Job = j
		out = append(out, lj)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing jobs: %w", s.d.wrap(err))
	}
	return out, nil
}

// CountJobs counts the jobs in each state, across projects.
func (s *DB) CountJobs(ctx context.Context) (map[JobState]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("counting jobs: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := map[JobState]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("counting jobs: %w", s.d.wrap(err))
		}
		out[JobState(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("counting jobs: %w", s.d.wrap(err))
	}
	return out, nil
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// multiScanner scans a row into a scanner's columns and then extra ones:
// a job's columns followed by what a join adds.
type multiScanner struct {
	r     scanner
	extra []any
}

func (m multiScanner) Scan(dest ...any) error { return m.r.Scan(append(dest, m.extra...)...) }

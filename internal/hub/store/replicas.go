package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// rowQuerier is a database handle or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// clock returns the database's time in microseconds since the epoch. On
// PostgreSQL it is the server's clock, so that replicas on hosts whose
// clocks differ order the queue and judge leases alike; a SQLite database
// lives on one host, whose clock is the store's (s.now, which tests set).
func (s *DB) clock(ctx context.Context, q rowQuerier) (int64, error) {
	if s.url == "" || s.fixedClock {
		return s.now().UnixMicro(), nil
	}
	var us int64
	if err := q.QueryRowContext(ctx, `SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)`).Scan(&us); err != nil {
		return 0, err
	}
	return us, nil
}

// Now returns the database's time: PostgreSQL's clock, or this host's for
// SQLite. Leases and the job queue are judged by it.
func (s *DB) Now(ctx context.Context) (time.Time, error) {
	us, err := s.clock(ctx, s.db)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the database's time: %w", s.d.wrap(err))
	}
	return time.UnixMicro(us).UTC(), nil
}

// Identity is the store's id: 32 hex digits drawn at random when the store
// was made, the same for every process and replica that opens it (and for
// a restored backup of it). The hub names and labels its sandboxes with it
// and its replica, so that hubs of other stores sharing a host or a Docker
// engine never take them for their own.
func (s *DB) Identity() string { return s.identity }

// Lease is a replica's lease as the store keeps it.
type Lease struct {
	Replica string `json:"replica"`
	// FirstSeen is the replica's first heartbeat.
	FirstSeen   time.Time `json:"first_seen"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	Until       time.Time `json:"until"`
	// Lapsed says the lease ended before the database's time of the read.
	// A replica holding jobs but no lease row (it claimed them before
	// leases existed) is listed lapsed, with zero times.
	Lapsed bool `json:"lapsed"`
	// ActiveJobs counts its running and locked jobs; Preparations its
	// preparations under way.
	ActiveJobs   int `json:"active_jobs"`
	Preparations int `json:"preparations"`
}

// MaxLease bounds a lease's length.
const MaxLease = time.Hour

// Heartbeat renews replica's lease until ttl after the database's time,
// which it returns. A replica heartbeats well within its lease; once the
// lease lapses, other replicas may settle the replica's jobs.
func (s *DB) Heartbeat(ctx context.Context, replica string, ttl time.Duration) (time.Time, error) {
	if err := checkReplica(replica); err != nil {
		return time.Time{}, err
	}
	if ttl <= 0 || ttl > MaxLease {
		return time.Time{}, invalidf("lease of %v: it must be positive and at most %v", ttl, MaxLease)
	}
	var now int64
	err := s.write(ctx, "renewing the lease of replica "+replica, func(tx *sql.Tx) ([]string, error) {
		var err error
		if now, err = s.clock(ctx, tx); err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, s.d.rebind(`INSERT INTO replicas (id, started_at, heartbeat_at, lease_until) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until`),
			replica, now, now, now+ttl.Microseconds())
		return nil, err
	})
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(now).UTC(), nil
}

// Leases lists every replica that holds a lease or active jobs or
// preparations, by id, with the database's time they were judged at.
func (s *DB) Leases(ctx context.Context) ([]Lease, time.Time, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
	}
	defer tx.Rollback()
	now, err := s.clock(ctx, tx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
	}
	byID := map[string]*Lease{}
	get := func(id string) *Lease {
		l := byID[id]
		if l == nil {
			l = &Lease{Replica: id, Lapsed: true}
			byID[id] = l
		}
		return l
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, started_at, heartbeat_at, lease_until FROM replicas`)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
	}
	for rows.Next() {
		var id string
		var first, beat, until int64
		if err := rows.Scan(&id, &first, &beat, &until); err != nil {
			rows.Close()
			return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
		}
		l := get(id)
		l.FirstSeen, l.HeartbeatAt, l.Until = time.UnixMicro(first).UTC(), time.UnixMicro(beat).UTC(), time.UnixMicro(until).UTC()
		l.Lapsed = until < now
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
	}
	for _, c := range []struct {
		query string
		count func(*Lease)
	}{
		{`SELECT claimed_by FROM jobs WHERE state IN ('running', 'locked') AND claimed_by IS NOT NULL`, func(l *Lease) { l.ActiveJobs++ }},
		{`SELECT preparing_by FROM profiles WHERE preparing_by IS NOT NULL`, func(l *Lease) { l.Preparations++ }},
	} {
		ids, err := queryStrings(ctx, tx, c.query)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("listing the replicas' leases: %w", s.d.wrap(err))
		}
		for _, id := range ids {
			c.count(get(id))
		}
	}
	out := make([]Lease, 0, len(byID))
	for _, l := range byID {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Lease) int { return strings.Compare(a.Replica, b.Replica) })
	return out, time.UnixMicro(now).UTC(), nil
}

// leaseLapsed reports, inside tx, whether replica holds no current lease
// at the database's time now, locking its row (if any) until tx ends so
// that a heartbeat waits for a settlement that saw the lease lapsed.
func (s *DB) leaseLapsed(ctx context.Context, tx *sql.Tx, replica string, now int64) (bool, time.Time, error) {
	var until int64
	err := tx.QueryRowContext(ctx, s.d.rebind(`SELECT lease_until FROM replicas WHERE id = ?`+s.d.lockRow()), replica).Scan(&until)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, time.Time{}, nil
	case err != nil:
		return false, time.Time{}, err
	}
	return until < now, time.UnixMicro(until).UTC(), nil
}

// Settled is what SettleOrphans settled of a replica whose lease lapsed.
type Settled struct {
	Jobs []Job `json:"jobs"`
	// Preparations are the versions whose preparation the replica left.
	Preparations []int64 `json:"preparations,omitempty"`
	// Waiting counts its jobs that may still be running (started less than
	// their timeout and the grace ago), left for a later call.
	Waiting int `json:"waiting"`
}

// SettleOrphans settles what replica left, once its lease has lapsed: each
// of its running jobs that started more than its profile's timeout plus
// grace ago (so that no run of it can still be going on, or have a result
// its replica still tries to store) becomes failed, each locked job
// stopped, and each preparation it ran failed. settler names the replica
// that settles them, in their reasons. When the replica's lease is
// current (it heartbeated since the caller looked), nothing changes.
func (s *DB) SettleOrphans(ctx context.Context, replica, settler string, grace time.Duration) (Settled, error) {
	if err := checkReplica(replica); err != nil {
		return Settled{}, err
	}
	var out Settled
	err := s.write(ctx, "settling the jobs of replica "+replica, func(tx *sql.Tx) ([]string, error) {
		out = Settled{}
		q := s.d.rebind
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		lapsed, until, err := s.leaseLapsed(ctx, tx, replica, now)
		if err != nil || !lapsed {
			return nil, err
		}
		when := "it held none"
		if !until.IsZero() {
			when = "it lapsed at " + until.Format(time.RFC3339)
		}
		rows, err := tx.QueryContext(ctx, q(`SELECT j.id, j.state, COALESCE(j.started_at, j.updated_at), COALESCE(p.timeout_s, ?)
			FROM jobs j LEFT JOIN profiles p ON p.version_id = j.version_id
			WHERE j.claimed_by = ? AND j.state IN ('running', 'locked') ORDER BY j.id`), MaxTimeoutSeconds, replica)
		if err != nil {
			return nil, err
		}
		type orphan struct {
			id, state        string
			started, timeout int64
		}
		var orphans []orphan
		for rows.Next() {
			var o orphan
			if err := rows.Scan(&o.id, &o.state, &o.started, &o.timeout); err != nil {
				rows.Close()
				return nil, err
			}
			orphans = append(orphans, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		var hints []string
		for _, o := range orphans {
			if JobState(o.state) == JobRunning && o.started+o.timeout*1_000_000+grace.Microseconds() > now {
				out.Waiting++
				continue
			}
			j, err := s.lockJob(ctx, tx, o.id)
			if err != nil {
				return nil, err
			}
			if !j.State.Active() || j.ClaimedBy != replica {
				continue
			}
			r := JobResult{State: JobFailed, Reason: fmt.Sprintf("replica %s, which ran the job, stopped renewing its lease (%s) and its result was lost; settled by replica %s: create another job to run it again", replica, when, settler)}
			if j.State == JobLocked {
				r = JobResult{State: JobStopped, Reason: fmt.Sprintf("replica %s, which held the job locked (its sandbox was never confirmed gone: %s), stopped renewing its lease (%s); settled by replica %s", replica, j.Reason, when, settler)}
			}
			if err := s.endJobTx(ctx, tx, j.ID, r, now); err != nil {
				return nil, err
			}
			if j, err = s.readJobTx(ctx, tx, j.ID); err != nil {
				return nil, err
			}
			out.Jobs = append(out.Jobs, j)
			hints = append(hints, jobHint+j.ID)
		}
		ids, err := queryStrings(ctx, tx, q(`SELECT CAST(version_id AS TEXT) FROM profiles WHERE preparing_by = ?`), replica)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			msg := fmt.Sprintf("the preparation stopped: replica %s, which ran it, stopped renewing its lease (%s); settled by replica %s: prepare again", replica, when, settler)
			if _, err := tx.ExecContext(ctx, q(`UPDATE profiles SET preparing_by = NULL, preparing_since = NULL, prepare_error = ? WHERE preparing_by = ?`), msg, replica); err != nil {
				return nil, err
			}
			for _, id := range ids {
				var v int64
				fmt.Sscan(id, &v)
				out.Preparations = append(out.Preparations, v)
				hints = append(hints, prepHint+id)
			}
		}
		if out.Waiting == 0 {
			// Nothing of it is left: the replica is forgotten (a
			// heartbeat of it makes it again).
			if _, err := tx.ExecContext(ctx, q(`DELETE FROM replicas WHERE id = ?`), replica); err != nil {
				return nil, err
			}
		}
		return hints, nil
	})
	return out, err
}

// endJobTx stores a final state of a job without outputs, at the
// database's time now.
func (s *DB) endJobTx(ctx context.Context, tx *sql.Tx, id string, r JobResult, now int64) error {
	var exit sql.NullInt64
	if r.ExitCode != nil {
		exit = sql.NullInt64{Int64: int64(*r.ExitCode), Valid: true}
	}
	_, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE jobs SET state = ?, exit_code = ?, reason = ?, finished_at = ?, updated_at = ? WHERE id = ?`),
		string(r.State), exit, clipLog(r.Reason, MaxJobReason), now, now, id)
	return err
}

// Settlement asks SettleJob to end a job by an administrator's decision.
type Settlement struct {
	// By names who settles it (a token id, "cli"), for the reason.
	By string
	// Reason says why, for people; it is kept in the job's reason.
	Reason string
	// Force settles a job whose replica holds a current lease (it may be
	// running the job now); without it such a job is refused with a
	// *LiveReplicaError.
	Force bool
}

// ErrLiveReplica is matched by a *LiveReplicaError.
var ErrLiveReplica = errors.New("the job's replica is alive")

// LiveReplicaError refuses to settle, without Force, a job whose replica
// holds a current lease.
type LiveReplicaError struct {
	JobID, Replica string
	Until          time.Time
}

func (e *LiveReplicaError) Error() string {
	return fmt.Sprintf("job %s: replica %s, which runs it, holds its lease until %s: it ends the job itself (stop it to have it killed); settle by force only if you know the replica is gone", e.JobID, e.Replica, e.Until.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLiveReplica) true.
func (e *LiveReplicaError) Is(target error) bool { return target == ErrLiveReplica }
func (e *LiveReplicaError) storeOwn()            {}

// SettleJob ends a running or locked job by an administrator's decision:
// it becomes stopped, its reason naming who settled it and why. The
// replica running it, if it is alive after all, kills its sandbox when
// the job feed tells it and cannot store a result over the settlement.
// Without st.Force a job whose replica holds a current lease is refused
// (a *LiveReplicaError). A job that has not run is stopped, as StopJob
// does; one that has ended is returned as it is.
func (s *DB) SettleJob(ctx context.Context, id string, st Settlement) (Job, error) {
	if !validJobID(id) {
		return Job{}, jobNotFound(id)
	}
	if err := checkAuditText("settled by", st.By, true, 128); err != nil {
		return Job{}, err
	}
	var out Job
	err := s.write(ctx, "settling job "+id, func(tx *sql.Tx) ([]string, error) {
		j, err := s.lockJob(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		now, err := s.clock(ctx, tx)
		if err != nil {
			return nil, err
		}
		if j.State.Final() {
			out = j
			return nil, nil
		}
		reason := "settled by " + st.By
		if st.Reason != "" {
			reason += ": " + st.Reason
		}
		if j.State.Active() {
			lapsed, until, err := s.leaseLapsed(ctx, tx, j.ClaimedBy, now)
			if err != nil {
				return nil, err
			}
			if !lapsed && !st.Force {
				return nil, &LiveReplicaError{JobID: id, Replica: j.ClaimedBy, Until: until}
			}
			if lapsed {
				reason += fmt.Sprintf(" (replica %s, which ran it, holds no current lease)", j.ClaimedBy)
			} else {
				reason += fmt.Sprintf(" by force while replica %s held its lease; its sandbox is killed if that replica still runs it", j.ClaimedBy)
			}
		}
		if err := s.endJobTx(ctx, tx, id, JobResult{State: JobStopped, Reason: reason}, now); err != nil {
			return nil, err
		}
		out, err = s.readJobTx(ctx, tx, id)
		return []string{jobHint + id}, err
	})
	return out, err
}

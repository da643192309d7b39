package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// JobChangeKind says what the job feed announces.
type JobChangeKind string

// The kinds of job change.
const (
	// JobChanged: a job's state, claim or stop request changed; the change
	// carries the job's state as the feed read it after the change.
	JobChanged JobChangeKind = "job"
	// JobGone: the job was deleted.
	JobGone JobChangeKind = "job_gone"
	// JobsWaiting: jobs of projects that are not paused are queued. The
	// feed's periodic look sends it while some are, the fallback for an
	// idle worker that missed an announcement.
	JobsWaiting JobChangeKind = "jobs_waiting"
	// ProfileChanged: a version's execution profile or its preparation
	// changed (set, enabled, a preparation started or ended).
	ProfileChanged JobChangeKind = "profile"
)

// JobChange is one announcement of the job feed.
type JobChange struct {
	Kind          JobChangeKind `json:"kind"`
	JobID         string        `json:"job_id,omitempty"`
	ProjectID     string        `json:"project_id,omitempty"`
	VersionID     int64         `json:"version_id,omitempty"`
	State         JobState      `json:"state,omitempty"`
	ClaimedBy     string        `json:"claimed_by,omitempty"`
	StopRequested bool          `json:"stop_requested,omitempty"`
	// Revision and PreparingBy are the profile's, for ProfileChanged.
	Revision    int64  `json:"revision,omitempty"`
	PreparingBy string `json:"preparing_by,omitempty"`
}

// jobSeen is what the job feed compares of a job.
type jobSeen struct {
	project string
	version int64
	state   JobState
	claimed string
	stop    bool
	updated int64
}

// profileSeen is what the job feed compares of a profile.
type profileSeen struct {
	revision, updated int64
	preparing         string
}

// jobFeed is one JobChanges call's state, owned by its loop goroutine.
type jobFeed struct {
	s        *DB
	out      chan JobChange
	jobs     map[string]jobSeen // the queued, running and locked jobs
	profiles map[int64]profileSeen
	looked   bool // a full look succeeded
}

// JobChanges announces changes of jobs (queued, claimed, stopped, ended,
// deleted), of execution profiles and of preparations made through any
// store on this database: on PostgreSQL by notifications (LISTEN on a
// connection of the feed's own, reconnected with backoff), on SQLite by
// this process's in-process broadcast; and, as the fallback on both (and
// how one SQLite process sees another's changes), a comparison of the
// active jobs and the profiles with what the feed last saw every
// Options.ChangePoll, which also sends JobsWaiting while jobs wait. A
// change may be announced more than once, and several quick ones as one;
// each carries the state read after it.
//
// The channel is closed when ctx is done or the store is closed; the
// feed's goroutines have ended by then. Read it promptly: a feed that is
// not read falls behind, never blocks a writer.
func (s *DB) JobChanges(ctx context.Context) <-chan JobChange {
	f := &jobFeed{s: s, out: make(chan JobChange, 256)}
	s.watch(ctx, jobChannel, f, func() { close(f.out) })
	return f.out
}

func (f *jobFeed) send(ctx context.Context, c JobChange) error {
	select {
	case f.out <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *jobFeed) lookAll(ctx context.Context, announce bool) error {
	q := f.s.d.rebind
	rows, err := f.s.db.QueryContext(ctx, `SELECT j.id, j.project_id, j.version_id, j.state, j.claimed_by, j.stop_requested, j.updated_at, p.paused_at
		FROM jobs j JOIN projects p ON p.id = j.project_id WHERE j.state IN ('queued', 'running', 'locked')`)
	if err != nil {
		return err
	}
	jobs := map[string]jobSeen{}
	waiting := false
	for rows.Next() {
		var (
			id      string
			js      jobSeen
			claimed sql.NullString
			stop    int
			paused  sql.NullInt64
		)
		if err := rows.Scan(&id, &js.project, &js.version, &js.state, &claimed, &stop, &js.updated, &paused); err != nil {
			rows.Close()
			return err
		}
		js.claimed, js.stop = claimed.String, stop != 0
		jobs[id] = js
		waiting = waiting || js.state == JobQueued && !paused.Valid
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	profiles := map[int64]profileSeen{}
	rows, err = f.s.db.QueryContext(ctx, q(`SELECT version_id, revision, updated_at, preparing_by FROM profiles`))
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int64
		var ps profileSeen
		var by sql.NullString
		if err := rows.Scan(&v, &ps.revision, &ps.updated, &by); err != nil {
			rows.Close()
			return err
		}
		ps.preparing = by.String
		profiles[v] = ps
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	old, oldProfiles := f.jobs, f.profiles
	f.jobs, f.profiles = jobs, profiles
	if !announce || !f.looked {
		f.looked = true
		return nil
	}
	for id, js := range jobs {
		if was, ok := old[id]; !ok || was != js {
			if err := f.send(ctx, jobChange(id, js)); err != nil {
				return nil
			}
		}
	}
	for id := range old {
		if _, ok := jobs[id]; !ok {
			// Ended or deleted: say which.
			if err := f.look(ctx, jobHint+id); err != nil {
				return err
			}
		}
	}
	for v, ps := range profiles {
		if was, ok := oldProfiles[v]; !ok || was != ps {
			if err := f.send(ctx, JobChange{Kind: ProfileChanged, VersionID: v, Revision: ps.revision, PreparingBy: ps.preparing}); err != nil {
				return nil
			}
		}
	}
	if waiting {
		f.send(ctx, JobChange{Kind: JobsWaiting})
	}
	return nil
}

func jobChange(id string, js jobSeen) JobChange {
	return JobChange{Kind: JobChanged, JobID: id, ProjectID: js.project, VersionID: js.version, State: js.state, ClaimedBy: js.claimed, StopRequested: js.stop}
}

func (f *jobFeed) look(ctx context.Context, key string) error {
	q := f.s.d.rebind
	switch {
	case strings.HasPrefix(key, jobHint):
		id := strings.TrimPrefix(key, jobHint)
		var (
			js      jobSeen
			claimed sql.NullString
			stop    int
		)
		err := f.s.db.QueryRowContext(ctx, q(`SELECT project_id, version_id, state, claimed_by, stop_requested, updated_at FROM jobs WHERE id = ?`), id).
			Scan(&js.project, &js.version, &js.state, &claimed, &stop, &js.updated)
		if errors.Is(err, sql.ErrNoRows) {
			delete(f.jobs, id)
			f.send(ctx, JobChange{Kind: JobGone, JobID: id})
			return nil
		}
		if err != nil {
			return err
		}
		js.claimed, js.stop = claimed.String, stop != 0
		if f.jobs != nil {
			if js.state == JobQueued || js.state.Active() {
				f.jobs[id] = js
			} else {
				delete(f.jobs, id)
			}
		}
		f.send(ctx, jobChange(id, js))
	case strings.HasPrefix(key, prepHint):
		v, err := strconv.ParseInt(strings.TrimPrefix(key, prepHint), 10, 64)
		if err != nil {
			return nil // not ours
		}
		var ps profileSeen
		var by sql.NullString
		err = f.s.db.QueryRowContext(ctx, q(`SELECT revision, updated_at, preparing_by FROM profiles WHERE version_id = ?`), v).Scan(&ps.revision, &ps.updated, &by)
		if errors.Is(err, sql.ErrNoRows) {
			delete(f.profiles, v)
			f.send(ctx, JobChange{Kind: ProfileChanged, VersionID: v})
			return nil
		}
		if err != nil {
			return err
		}
		ps.preparing = by.String
		if f.profiles != nil {
			f.profiles[v] = ps
		}
		f.send(ctx, JobChange{Kind: ProfileChanged, VersionID: v, Revision: ps.revision, PreparingBy: ps.preparing})
	}
	return nil
}

// catalogFeed is one CatalogChanges call's state.
type catalogFeed struct {
	s      *DB
	out    chan struct{}
	latest int64 // the newest snapshot's id; -1 until read
}

// CatalogChanges announces that a catalog snapshot was stored (by this
// process, another one on the same SQLite database, or another replica),
// so that a running hub serves what the command line or another replica
// imported. Announcements are coalesced: one pending is enough to read
// the latest snapshot. Notifications (PostgreSQL), the in-process
// broadcast (SQLite) and the periodic look at the newest snapshot's id
// bring them, as for JobChanges. The channel is closed when ctx is done or
// the store is closed.
func (s *DB) CatalogChanges(ctx context.Context) <-chan struct{} {
	f := &catalogFeed{s: s, out: make(chan struct{}, 1), latest: -1}
	s.watch(ctx, catalogChannel, f, func() { close(f.out) })
	return f.out
}

func (f *catalogFeed) lookAll(ctx context.Context, announce bool) error {
	var id sql.NullInt64
	if err := f.s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM index_snapshots`).Scan(&id); err != nil {
		return err
	}
	was := f.latest
	f.latest = id.Int64
	if announce && was >= 0 && was != f.latest {
		select {
		case f.out <- struct{}{}:
		default: // one pending is enough
		}
	}
	return nil
}

func (f *catalogFeed) look(ctx context.Context, _ string) error { return f.lookAll(ctx, true) }

// watcher is a feed's view of the database: lookAll compares everything
// it follows with what it last saw (announcing differences unless
// announce is false: the first look), look one hint key.
type watcher interface {
	lookAll(ctx context.Context, announce bool) error
	look(ctx context.Context, key string) error
}

// watch runs the feed w on channel until ctx is done or the store closes,
// then calls done (which closes the feed's channel). Hints come from
// PostgreSQL notifications or, on SQLite, this process's broadcast; the
// periodic full look is the fallback, and a failed read is retried with
// backoff. The first full look is made before watch returns, when the
// database answers, so that changes made after it are announced.
func (s *DB) watch(ctx context.Context, channel string, w watcher, done func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	s.feeds.Add(1)
	if s.closing.Err() != nil {
		stop()
		cancel()
		s.feeds.Done()
		done()
		return
	}
	sub := &subscription{hints: make(chan string, 1024)}
	var conn *pgx.Conn
	if s.url != "" {
		var err error
		if conn, err = s.listenConn(ctx, channel); err != nil {
			s.log.Warn("a change feed cannot listen to PostgreSQL yet; retrying", "channel", channel, "err", err)
			conn = nil
		}
	} else if s.local != nil {
		s.local.mu.Lock()
		s.local.subs[sub] = channel
		s.local.mu.Unlock()
	}
	failing := false
	fail := func(err error) {
		if ctx.Err() == nil && !failing {
			failing = true
			s.log.Warn("a change feed cannot read the database; it will look again", "channel", channel, "err", err)
		}
	}
	firstDone := w.lookAll(ctx, false) == nil
	var wg sync.WaitGroup
	if s.url != "" {
		wg.Go(func() { s.listen(ctx, conn, channel, sub) })
	}
	go func() {
		defer s.feeds.Done()
		defer done()
		defer stop()
		defer wg.Wait()
		defer cancel()
		if s.local != nil {
			defer func() {
				s.local.mu.Lock()
				delete(s.local.subs, sub)
				s.local.mu.Unlock()
			}()
		}
		tick := time.NewTicker(s.pollEvery)
		defer tick.Stop()
		var retry <-chan time.Time
		backoff := listenBackoffMin
		for {
			var err error
			select {
			case <-ctx.Done():
				return
			case key := <-sub.hints:
				if key == "" || !firstDone {
					err = w.lookAll(ctx, firstDone)
				} else {
					err = w.look(ctx, key)
				}
			case <-tick.C:
				err = w.lookAll(ctx, firstDone)
			case <-retry:
				retry = nil
				err = w.lookAll(ctx, firstDone)
			}
			if err == nil && sub.lost.Swap(false) {
				err = w.lookAll(ctx, firstDone)
			}
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				firstDone = true
				if failing {
					failing = false
					s.log.Info("a change feed reads the database again", "channel", channel)
				}
				backoff = listenBackoffMin
				continue
			}
			fail(err)
			if retry == nil {
				retry = time.After(backoff)
				backoff = min(2*backoff, listenBackoffMax)
			}
		}
	}()
}

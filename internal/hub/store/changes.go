package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// ChangeKind says what changed about a project.
type ChangeKind string

// The kinds of change the feed announces.
const (
	// ChangeCreated: a new project (created or duplicated).
	ChangeCreated ChangeKind = "created"
	// ChangeUpdated: the project was renamed, paused or resumed, or its
	// well-known index turned on or off.
	ChangeUpdated ChangeKind = "updated"
	// ChangeBindings: the project's bound versions changed; Generation is
	// the new binding generation.
	ChangeBindings ChangeKind = "bindings"
	// ChangeDeleted: the project is gone.
	ChangeDeleted ChangeKind = "deleted"
	// ChangeProfiles: the execution profile of a version bound to the
	// project changed (set, enabled or disabled, prepared). A profile is
	// per version, so one change is announced to every project bound to
	// it.
	ChangeProfiles ChangeKind = "profiles"
)

// Change is one announcement of the feed: a project, what changed, and
// its state as the database held it when the feed looked.
type Change struct {
	Kind       ChangeKind `json:"kind"`
	ProjectID  string     `json:"project_id"`
	Name       string     `json:"name,omitempty"`
	Paused     bool       `json:"paused,omitempty"`
	WellKnown  bool       `json:"well_known,omitempty"`
	Generation int64      `json:"generation"`
}

// DefaultChangePoll is how often, unless Options.ChangePoll says
// otherwise, the change feed compares every project's state with what it
// last saw: the fallback for notifications it missed.
const DefaultChangePoll = 2 * time.Second

// The PostgreSQL notification channels: project changes (the payload is
// the project's id), and job, preparation and profile changes and catalog
// snapshots (hints; see hintChannel).
const (
	changeChannel  = "hub_changes"
	jobChannel     = "hub_jobs"
	catalogChannel = "hub_catalog"
)

// Hint keys that are not a project's id. A project id has no ':', so the
// key says which feed it is for.
const (
	jobHint     = "job:"     // + a job's id
	prepHint    = "prep:"    // + a version's id: its profile or preparation changed
	catalogHint = "catalog:" // a catalog snapshot was stored
)

// hintChannel is the channel a hint key is announced on.
func hintChannel(key string) string {
	switch {
	case strings.HasPrefix(key, jobHint), strings.HasPrefix(key, prepHint):
		return jobChannel
	case strings.HasPrefix(key, catalogHint):
		return catalogChannel
	}
	return changeChannel
}

// publishTx announces, as part of tx, the hint key: a project's id, or
// one of the hint keys above. On PostgreSQL the notification is delivered
// at commit, to every listener of the database; on SQLite, published
// does it after the commit.
func (s *DB) publishTx(ctx context.Context, tx *sql.Tx, key string) error {
	if s.url == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, hintChannel(key), key)
	return err
}

// published tells this process's feeds on the same SQLite database of the
// hint keys, each on its channel.
func (s *DB) published(keys []string) {
	if s.local == nil || len(keys) == 0 {
		return
	}
	s.local.mu.Lock()
	defer s.local.mu.Unlock()
	for sub, channel := range s.local.subs {
		for _, k := range keys {
			if hintChannel(k) == channel {
				sub.hint(k)
			}
		}
	}
}

// localHub connects the stores of one process open on one SQLite
// database: a change made through one reaches the feeds of all. Other
// processes' changes reach them by the periodic check.
type localHub struct {
	path string
	refs int // stores open on it; guarded by localHubs.mu
	mu   sync.Mutex
	subs map[*subscription]string // each feed's channel
}

var localHubs = struct {
	mu sync.Mutex
	m  map[string]*localHub
}{m: map[string]*localHub{}}

func acquireLocalHub(path string) *localHub {
	localHubs.mu.Lock()
	defer localHubs.mu.Unlock()
	h := localHubs.m[path]
	if h == nil {
		h = &localHub{path: path, subs: map[*subscription]string{}}
		localHubs.m[path] = h
	}
	h.refs++
	return h
}

func (h *localHub) release() {
	localHubs.mu.Lock()
	defer localHubs.mu.Unlock()
	if h.refs--; h.refs == 0 {
		delete(localHubs.m, h.path)
	}
}

// subscription is one feed's inbox of hints: a project id to look at, or
// "" to look at every project. Hints are never waited for: when the inbox
// is full, lost is set and the feed looks at everything.
type subscription struct {
	hints chan string
	lost  atomic.Bool
}

func (sub *subscription) hint(id string) {
	select {
	case sub.hints <- id:
	default:
		sub.lost.Store(true)
	}
}

// projectState is what the feed compares.
type projectState struct {
	name       string
	paused     bool
	wellKnown  bool
	generation int64
	// profiles is the sum of the updated_at of the profiles of the bound
	// versions: it grows with every change of one of them.
	profiles int64
}

// profilesSum is the column of projectState.profiles for the project p.id.
const profilesSum = `(SELECT CAST(COALESCE(SUM(pr.updated_at), 0) AS BIGINT) FROM bindings b
	JOIN profiles pr ON pr.version_id = b.version_id WHERE b.project_id = p.id)`

// feed is one Changes call's state, owned by its loop goroutine.
type feed struct {
	s     *DB
	sub   *subscription
	out   chan Change
	known map[string]projectState // nil until the first full look succeeds
	// failing is set while the database cannot be read, so an outage is
	// logged once.
	failing bool
}

// Changes announces changes of projects and their bindings made through
// any store on this database: other processes' on PostgreSQL (LISTEN on a
// connection of the feed's own, reconnected with backoff when the server
// goes away), this process's on SQLite (an in-process broadcast), and, as
// the fallback on both, a comparison of every project's generation, name,
// pause and well-known index with what the feed last saw, every
// Options.ChangePoll and after each reconnection. Each change is announced once, with the
// project's state read from the database after it; several quick changes
// may be announced as one.
//
// Changes made after Changes returns are announced (when the database is
// reachable at the call; otherwise the feed starts when it comes back and
// announces every project once). The channel is closed when ctx is done
// or the store is closed; the feed's goroutines have ended by then. Read
// it promptly: a feed that is not read falls behind, never blocks a
// writer. Each call holds one database connection on PostgreSQL.
func (s *DB) Changes(ctx context.Context) <-chan Change {
	out := make(chan Change, 64)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	s.feeds.Add(1)
	if s.closing.Err() != nil {
		// Closed already: an empty, closed feed.
		stop()
		cancel()
		s.feeds.Done()
		close(out)
		return out
	}
	f := &feed{s: s, sub: &subscription{hints: make(chan string, 1024)}, out: out}
	var conn *pgx.Conn
	if s.url != "" {
		// LISTEN before the first look, so nothing falls between them.
		var err error
		if conn, err = s.listenConn(ctx, changeChannel); err != nil {
			s.log.Warn("the change feed cannot listen to PostgreSQL yet; retrying", "err", err)
			conn = nil
		}
	} else if s.local != nil {
		s.local.mu.Lock()
		s.local.subs[f.sub] = changeChannel
		s.local.mu.Unlock()
	}
	if states, err := s.projectStates(ctx); err == nil {
		f.known = states
	} else {
		f.failed(err)
	}
	var wg sync.WaitGroup
	if s.url != "" {
		wg.Go(func() { s.listen(ctx, conn, changeChannel, f.sub) })
	}
	go func() {
		defer s.feeds.Done()
		defer close(out)
		defer stop()
		defer wg.Wait()
		defer cancel()
		if s.local != nil {
			defer func() {
				s.local.mu.Lock()
				delete(s.local.subs, f.sub)
				s.local.mu.Unlock()
			}()
		}
		f.run(ctx)
	}()
	return out
}

func (f *feed) run(ctx context.Context) {
	tick := time.NewTicker(f.s.pollEvery)
	defer tick.Stop()
	// After a failed read, everything is looked at again soon, with
	// backoff, rather than at the next tick.
	var retry <-chan time.Time
	backoff := listenBackoffMin
	for {
		ok := true
		select {
		case <-ctx.Done():
			return
		case id := <-f.sub.hints:
			if id == "" {
				ok = f.lookAll(ctx)
			} else {
				ok = f.look(ctx, id)
			}
		case <-tick.C:
			ok = f.lookAll(ctx)
		case <-retry:
			retry = nil
			ok = f.lookAll(ctx)
		}
		if ok && f.sub.lost.Swap(false) {
			ok = f.lookAll(ctx)
		}
		if !ok {
			return
		}
		switch {
		case !f.failing:
			backoff = listenBackoffMin
		case retry == nil:
			retry = time.After(backoff)
			backoff = min(2*backoff, listenBackoffMax)
		}
	}
}

func (f *feed) failed(err error) {
	if !f.failing {
		f.failing = true
		f.s.log.Warn("the change feed cannot read the projects; it will look again", "err", err)
	}
}

func (f *feed) recovered() {
	if f.failing {
		f.failing = false
		f.s.log.Info("the change feed reads the projects again")
	}
}

// look compares one project with what the feed last saw. It returns false
// when ctx ended while announcing.
func (f *feed) look(ctx context.Context, id string) bool {
	if f.known == nil {
		return f.lookAll(ctx)
	}
	var st projectState
	var paused, wellKnown sql.NullInt64
	err := f.s.db.QueryRowContext(ctx, f.s.d.rebind(`SELECT p.name, p.paused_at, p.well_known_at, p.generation, `+profilesSum+` FROM projects p WHERE p.id = ?`), id).
		Scan(&st.name, &paused, &wellKnown, &st.generation, &st.profiles)
	st.paused, st.wellKnown = paused.Valid, wellKnown.Valid
	old, had := f.known[id]
	switch {
	case errors.Is(err, sql.ErrNoRows):
		f.recovered()
		if !had {
			return true
		}
		delete(f.known, id)
		return f.send(ctx, Change{Kind: ChangeDeleted, ProjectID: id})
	case err != nil:
		if ctx.Err() == nil {
			f.failed(err)
		}
		return true // the next full look catches up
	}
	f.recovered()
	f.known[id] = st
	return f.announce(ctx, id, old, had, st)
}

// lookAll compares every project with what the feed last saw.
func (f *feed) lookAll(ctx context.Context) bool {
	states, err := f.s.projectStates(ctx)
	if err != nil {
		if ctx.Err() == nil {
			f.failed(err)
		}
		return true
	}
	f.recovered()
	old := f.known
	f.known = states
	ids := make([]string, 0, len(states))
	for id := range states {
		ids = append(ids, id)
	}
	for id := range old {
		if _, ok := states[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		st, now := states[id]
		was, had := old[id]
		if !now {
			if !f.send(ctx, Change{Kind: ChangeDeleted, ProjectID: id}) {
				return false
			}
			continue
		}
		if !f.announce(ctx, id, was, had, st) {
			return false
		}
	}
	return true
}

func (f *feed) announce(ctx context.Context, id string, old projectState, had bool, st projectState) bool {
	c := Change{ProjectID: id, Name: st.name, Paused: st.paused, WellKnown: st.wellKnown, Generation: st.generation}
	switch {
	case !had:
		c.Kind = ChangeCreated
		return f.send(ctx, c)
	case old.generation != st.generation:
		c.Kind = ChangeBindings
		if !f.send(ctx, c) {
			return false
		}
	case old.profiles != st.profiles:
		// A binding change makes its reader look at the profiles too.
		c.Kind = ChangeProfiles
		if !f.send(ctx, c) {
			return false
		}
	}
	if old.name != st.name || old.paused != st.paused || old.wellKnown != st.wellKnown {
		c.Kind = ChangeUpdated
		return f.send(ctx, c)
	}
	return true
}

func (f *feed) send(ctx context.Context, c Change) bool {
	select {
	case f.out <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *DB) projectStates(ctx context.Context) (map[string]projectState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.id, p.name, p.paused_at, p.well_known_at, p.generation, `+profilesSum+` FROM projects p`)
	if err != nil {
		return nil, s.d.wrap(err)
	}
	defer rows.Close()
	out := map[string]projectState{}
	for rows.Next() {
		var id string
		var st projectState
		var paused, wellKnown sql.NullInt64
		if err := rows.Scan(&id, &st.name, &paused, &wellKnown, &st.generation, &st.profiles); err != nil {
			return nil, s.d.wrap(err)
		}
		st.paused, st.wellKnown = paused.Valid, wellKnown.Valid
		out[id] = st
	}
	if err := rows.Err(); err != nil {
		return nil, s.d.wrap(err)
	}
	return out, nil
}

// Backoff of the feed's reconnections to PostgreSQL, and how long it
// waits for a notification before checking that its connection lives.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
	listenIdleCheck  = time.Minute
)

// listenConn opens a feed's own connection and listens on channel.
func (s *DB) listenConn(ctx context.Context, channel string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.url)
	if err != nil {
		return nil, scrub(err, s.url)
	}
	// A cancelled wait only interrupts the read; the connection stays
	// usable and no cancel request is sent to the server.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, scrub(s.d.wrap(err), s.url)
	}
	if _, err := conn.Exec(cctx, `LISTEN `+channel); err != nil {
		closeConn(conn)
		return nil, s.d.wrap(err)
	}
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}

// listen turns the notifications of channel into hints for sub until ctx
// is done. When the connection breaks it reconnects, with backoff, and
// then has everything looked at (the hint ""), since notifications sent
// meanwhile are lost.
func (s *DB) listen(ctx context.Context, conn *pgx.Conn, channel string, sub *subscription) {
	backoff := listenBackoffMin
	down := conn == nil
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	for ctx.Err() == nil {
		if conn == nil {
			c, err := s.listenConn(ctx, channel)
			if err != nil {
				if !down {
					down = true
					s.log.Warn("the change feed lost PostgreSQL; reconnecting", "err", err)
				}
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return
				}
				backoff = min(2*backoff, listenBackoffMax)
				continue
			}
			conn, backoff = c, listenBackoffMin
			if down {
				down = false
				s.log.Info("the change feed listens to PostgreSQL again")
				sub.hint("")
			}
		}
		wctx, cancel := context.WithTimeout(ctx, listenIdleCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			sub.hint(n.Payload)
			continue
		case ctx.Err() != nil:
			return
		case wctx.Err() != nil && !conn.IsClosed():
			// Idle: make sure the connection still answers.
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
		}
		if !down {
			down = true
			s.log.Warn("the change feed lost PostgreSQL; reconnecting", "err", err)
		}
		closeConn(conn)
		conn = nil
	}
}

// discardLogger is the logger of a store given none.
var discardLogger = slog.New(slog.DiscardHandler)

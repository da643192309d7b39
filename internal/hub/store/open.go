package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"
)

//go:embed migrations
var migrations embed.FS

// DatabaseFile is the SQLite database's name inside a data directory.
const DatabaseFile = "hub.db"

// lockFile is taken while migrations run on a SQLite data directory.
const lockFile = "hub.lock"

// Options configure Open.
type Options struct {
	// Dir is the data directory holding the SQLite database. It is created
	// when missing. Unused when Database is set.
	Dir string
	// Database is a PostgreSQL URL (postgres:// or postgresql://). When
	// empty, the store is the SQLite database in Dir.
	Database string
	// RequireApproval makes Bind refuse versions nobody approved.
	RequireApproval bool
	// Logger receives the migrations' progress and the change feed's
	// troubles. If nil, nothing is logged.
	Logger *slog.Logger
	// ChangePoll is how often the change feed compares every project with
	// what it last saw, the fallback for notifications it missed. If zero,
	// DefaultChangePoll.
	ChangePoll time.Duration

	// sqlitePragmas are extra per-connection pragmas (tests: a page limit).
	sqlitePragmas []string
}

// DB is the hub's store on SQLite or PostgreSQL, safe for concurrent use.
// It has no interface of its own: each package that uses it declares the
// few methods it calls (jobs.Store, endpoint.Store, …), and the
// conformance suite (storetest) runs on *DB over both backends.
type DB struct {
	db              *sql.DB
	d               dialect
	dir             string // the SQLite data directory; empty on PostgreSQL
	requireApproval bool
	// beforeCommit, when set (tests), runs inside Install's transaction
	// just before it commits.
	beforeCommit func()
	now          func() time.Time
	// fixedClock (tests) makes PostgreSQL's store read s.now too.
	fixedClock bool

	url       string // the PostgreSQL URL; empty on SQLite
	identity  string // the store's id (store_identity), read at open
	log       *slog.Logger
	pollEvery time.Duration
	local     *localHub // SQLite: this process's stores on the same file
	// closing is cancelled by Close, which then waits for feeds: the
	// goroutines of Changes.
	closing   context.Context
	stopAll   context.CancelFunc
	feeds     sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating when needed) the store and applies its migrations.
func Open(ctx context.Context, opts Options) (*DB, error) {
	var (
		db      *sql.DB
		d       dialect
		locker  goose.ProviderOption
		dialGst goose.Dialect
		err     error
	)
	switch {
	case opts.Database != "":
		if !strings.HasPrefix(opts.Database, "postgres://") && !strings.HasPrefix(opts.Database, "postgresql://") {
			return nil, fmt.Errorf("hub database %q: only postgres:// URLs are supported; leave --database empty to use the SQLite database in the data directory", redactURL(opts.Database))
		}
		db, err = sql.Open("pgx", opts.Database)
		if err != nil {
			return nil, fmt.Errorf("hub database %s: %w", redactURL(opts.Database), scrub(err, opts.Database))
		}
		d = pgDialect{}
		sl, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			db.Close()
			return nil, err
		}
		locker = goose.WithSessionLocker(sl)
		dialGst = goose.DialectPostgres
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("hub database %s: cannot connect: %w: %w", redactURL(opts.Database), ErrUnavailable, scrub(err, opts.Database))
		}
	default:
		if opts.Dir == "" {
			return nil, errors.New("no data directory given (--data or SKILLS_HUB_DATA)")
		}
		if strings.ContainsAny(opts.Dir, "?#") {
			return nil, fmt.Errorf("hub data directory %q: the name may not contain '?' or '#'; choose another directory", opts.Dir)
		}
		// Traversable but not listable: the job sandboxes' user must reach
		// the jobs folder inside it; the database itself is the owner's
		// alone (SQLite gives its journal and WAL files the same mode).
		if err := os.MkdirAll(opts.Dir, 0o711); err != nil {
			return nil, fmt.Errorf("hub data directory: %w", err)
		}
		path := filepath.Join(opts.Dir, DatabaseFile)
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("hub database %s is not a regular file: move it away or point --data at a hub data directory", path)
		}
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
		}
		db, err = sql.Open("sqlite", sqliteDSN(path, opts.sqlitePragmas))
		if err != nil {
			return nil, fmt.Errorf("hub database %s: %w", path, err)
		}
		d = sqliteDialect{}
		locker = goose.WithLocker(&fileLocker{path: filepath.Join(opts.Dir, lockFile)})
		dialGst = goose.DialectSQLite3
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, sqliteOpenError(path, err)
		}
	}
	s := &DB{db: db, d: d, requireApproval: opts.RequireApproval, now: time.Now,
		url: opts.Database, log: opts.Logger, pollEvery: opts.ChangePoll}
	if s.log == nil {
		s.log = discardLogger
	}
	if s.pollEvery <= 0 {
		s.pollEvery = DefaultChangePoll
	}
	s.closing, s.stopAll = context.WithCancel(context.Background())
	if opts.Database == "" {
		s.dir = opts.Dir
	}
	if err := s.migrate(ctx, dialGst, locker, opts.Logger); err != nil {
		s.stopAll()
		db.Close()
		if opts.Database == "" {
			return nil, sqliteOpenError(filepath.Join(opts.Dir, DatabaseFile), err)
		}
		return nil, fmt.Errorf("hub database %s: %w", redactURL(opts.Database), scrub(s.d.wrap(err), opts.Database))
	}
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM store_identity WHERE one = 1`).Scan(&s.identity); err != nil {
		s.stopAll()
		db.Close()
		return nil, fmt.Errorf("hub database: reading the store's identity: %w", s.d.wrap(err))
	}
	if opts.Database == "" {
		if converted, err := s.useIncrementalVacuum(ctx); err != nil {
			s.log.Warn("the database could not be set to give freed space back (VACUUM needs room for a copy of it); it works as it is, and the next open tries again", "err", err)
		} else if converted {
			s.log.Info("the database now gives the space of deleted jobs and versions back (rewritten once by VACUUM)")
		}
		abs, err := filepath.Abs(filepath.Join(opts.Dir, DatabaseFile))
		if err != nil {
			abs = filepath.Join(opts.Dir, DatabaseFile)
		}
		s.local = acquireLocalHub(abs)
	}
	return s, nil
}

func sqliteDSN(path string, extra []string) string {
	q := []string{
		"_pragma=foreign_keys(1)",
		"_pragma=busy_timeout(30000)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_txlock=immediate",
	}
	for _, p := range extra {
		q = append(q, "_pragma="+p)
	}
	return path + "?" + strings.Join(q, "&")
}

// sqliteOpenError explains a failure to open the SQLite database.
func sqliteOpenError(path string, err error) error {
	if sqliteCode(err)&0xff == sqliteNotADB {
		return fmt.Errorf("hub database %s is not a SQLite database (%v): point --data at a hub data directory, or move the file away and restore a backup with `hub restore`", path, err)
	}
	return fmt.Errorf("hub database %s: %w", path, sqliteDialect{}.wrap(err))
}

func (s *DB) migrate(ctx context.Context, dialect goose.Dialect, locker goose.ProviderOption, log *slog.Logger) error {
	sub, err := fs.Sub(migrations, "migrations/"+s.d.name())
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{locker, goose.WithDisableGlobalRegistry(true)}
	if log != nil {
		opts = append(opts, goose.WithSlog(log))
	}
	p, err := goose.NewProvider(dialect, s.db, sub, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("applying migrations: %w", err)
	}
	return nil
}

// Close stops the store's change feeds, waits for their goroutines and
// releases the database. Closing again returns the first result.
func (s *DB) Close() error {
	s.closeOnce.Do(func() {
		s.stopAll()
		s.feeds.Wait()
		if s.local != nil {
			s.local.release()
		}
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

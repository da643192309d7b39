package store

import (
	"context"
	"database/sql"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
)

// Test hooks, for the external tests of this package.

// SetBeforeCommit makes Install call f inside its transaction, just
// before committing.
func SetBeforeCommit(s *DB, f func()) { s.beforeCommit = f }

// WithPragmas adds per-connection SQLite pragmas to opts.
func WithPragmas(opts Options, pragmas ...string) Options {
	opts.sqlitePragmas = append(opts.sqlitePragmas, pragmas...)
	return opts
}

// RawDB is the store's database handle.
func RawDB(s *DB) *sql.DB { return s.db }

// SetNow makes the store read the time from now.
func SetNow(s *DB, now func() time.Time) { s.now, s.fixedClock = now, true }

// MigrateTo moves s's schema to migration version, up or down.
func MigrateTo(ctx context.Context, s *DB, version int64) error {
	sub, err := fs.Sub(migrations, "migrations/"+s.d.name())
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	if s.url != "" {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, s.db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if version < cur {
		_, err = p.DownTo(ctx, version)
	} else {
		_, err = p.UpTo(ctx, version)
	}
	return err
}

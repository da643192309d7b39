package store

import (
	"database/sql"
	"time"
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

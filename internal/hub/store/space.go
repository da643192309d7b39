package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// SQLite keeps the pages a deletion frees inside the file for reuse; with
// auto_vacuum INCREMENTAL they can be given back to the file system, and
// the WAL, which grows with every write between checkpoints, truncated.
// PostgreSQL gives space back through its own VACUUM (autovacuum makes the
// rows' space reusable; nothing here is needed).

// incrementalVacuum is SQLite's auto_vacuum mode that frees pages on
// request (PRAGMA incremental_vacuum).
const incrementalVacuum = 2

// useIncrementalVacuum turns a SQLite database whose auto_vacuum is off
// (a new one, or one made before this version) to INCREMENTAL. The mode
// of a database with tables changes only with a VACUUM, which rewrites
// the file once: a new database's is a few pages. (Setting the pragma on
// every connection instead would take the write lock at each connect.)
// A failure (no room for the copy VACUUM writes) is returned; the
// database is usable as it was.
func (s *DB) useIncrementalVacuum(ctx context.Context) (converted bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	var mode int
	if err := conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return false, err
	}
	if mode == incrementalVacuum {
		return false, nil
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA auto_vacuum = %d`, incrementalVacuum)); err != nil {
		return false, err
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return false, s.d.wrap(err)
	}
	return true, nil
}

// Thresholds of reclaim: below them, giving the space back costs more
// than it returns (a TRUNCATE checkpoint copies and syncs the WAL).
const (
	reclaimFree = 1 << 20 // bytes of free pages
	reclaimWAL  = 4 << 20 // bytes of WAL
)

// reclaim gives the space deletions freed back to the file system: on
// SQLite the free pages (incremental_vacuum) once they reach reclaimFree,
// and then, by a TRUNCATE checkpoint, the file's room beyond what the
// database uses (reclaimFree or more) and the WAL (once it reaches
// reclaimWAL). It is best effort and never fails the deletion
// that asked for it; a busy database leaves it to the next one.
func (s *DB) reclaim(ctx context.Context) {
	if s.url != "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var free, size int64
	if conn.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free) == nil &&
		conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size) == nil && free*size >= reclaimFree {
		// incremental_vacuum frees pages one by one as its rows are stepped.
		if rows, err := conn.QueryContext(ctx, `PRAGMA incremental_vacuum`); err == nil {
			for rows.Next() {
			}
			rows.Close()
		} else {
			s.log.Debug("giving freed pages back", "err", err)
		}
	}
	// The file shrinks, and the WAL empties, only at a checkpoint: one
	// runs when the WAL is large or the file holds room the database no
	// longer uses.
	var pages int64
	conn.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages)
	fi, err := os.Stat(filepath.Join(s.dir, DatabaseFile))
	if walSize(s.dir) < reclaimWAL && (err != nil || fi.Size()-pages*size < reclaimFree) {
		return
	}
	var busy, logPages, done sql.NullInt64
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil {
		s.log.Debug("truncating the WAL", "err", err)
	}
}

// Size is how much room the database takes: the SQLite file and its WAL,
// or the PostgreSQL database.
type Size struct {
	// Bytes is the database's size on disk.
	Bytes int64 `json:"bytes"`
	// Free is the part of it that is free pages (SQLite) waiting to be
	// reused or given back.
	Free int64 `json:"free"`
	// WAL is the SQLite WAL file's size.
	WAL int64 `json:"wal"`
}

// DiskSize measures the database's room on disk.
func (s *DB) DiskSize(ctx context.Context) (Size, error) {
	var out Size
	if s.url != "" {
		err := s.db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&out.Bytes)
		if err != nil {
			return Size{}, fmt.Errorf("measuring the database: %w", s.d.wrap(err))
		}
		return out, nil
	}
	var pages, free, size int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return Size{}, fmt.Errorf("measuring the database: %w", s.d.wrap(err))
	}
	if err := s.db.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return Size{}, fmt.Errorf("measuring the database: %w", s.d.wrap(err))
	}
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return Size{}, fmt.Errorf("measuring the database: %w", s.d.wrap(err))
	}
	out.Bytes, out.Free = pages*size, free*size
	out.WAL = walSize(s.dir)
	return out, nil
}

// walSize is the size of the SQLite WAL beside the database in dir; 0
// without one.
func walSize(dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, DatabaseFile+"-wal"))
	if err != nil {
		return 0
	}
	return fi.Size()
}

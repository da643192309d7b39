package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the SQLite database to w, taken while
// the store stays in use (VACUUM INTO a temporary file beside the database,
// then copied). On PostgreSQL it returns ErrBackupUnsupported: back up
// that database with pg_dump.
func (s *DB) Backup(ctx context.Context, w io.Writer) error {
	if s.dir == "" {
		return ErrBackupUnsupported
	}
	f, err := os.CreateTemp(s.dir, ".backup-")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	// VACUUM INTO wants a file that does not exist (or is empty).
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("backup: copying the database: %w", s.d.wrap(err))
	}
	f, err = os.Open(tmp)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("backup: writing the copy: %w", err)
	}
	return nil
}

// Restore puts a backup written by Backup into dir, a data directory that
// must be empty or not exist. The backup is checked (a SQLite database
// that passes its integrity check and holds a hub schema) before it takes
// the database's place; on any failure dir is left as it was.
func Restore(ctx context.Context, r io.Reader, dir string) (err error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore: data directory %s is not empty: restore into a new or empty directory, then point --data at it", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	f, err := os.CreateTemp(dir, ".restore-")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("restore: reading the backup: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("restore: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := checkBackup(ctx, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, DatabaseFile)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

func checkBackup(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		if sqliteCode(err)&0xff == sqliteNotADB {
			return fmt.Errorf("restore: the file is not a SQLite database, so not a hub backup (%v)", err)
		}
		return fmt.Errorf("restore: checking the backup: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("restore: the backup is damaged (integrity check: %s); use another backup", res)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM goose_db_version`).Scan(&n); err != nil {
		return fmt.Errorf("restore: the file is a SQLite database but not a hub backup (no schema version: %v)", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM versions`).Scan(&n); err != nil {
		return fmt.Errorf("restore: the file is a SQLite database but not a hub backup (%v)", err)
	}
	return nil
}

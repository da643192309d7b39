package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Approve records that by approved the version, now.
func (s *DB) Approve(ctx context.Context, id int64, by string) (Version, error) {
	if strings.TrimSpace(by) == "" || len(by) > 256 || strings.IndexFunc(by, unicode.IsControl) >= 0 {
		return Version{}, invalidf("approving version %d: the approver must be named (1 to 256 characters, no control characters)", id)
	}
	return s.setLabels(ctx, id, "approving", `UPDATE version_labels SET approved_by = ?, approved_at = ? WHERE version_id = ?`, by, s.now().UnixMicro(), id)
}

// Unapprove withdraws a version's approval. Existing bindings stay.
func (s *DB) Unapprove(ctx context.Context, id int64) (Version, error) {
	return s.setLabels(ctx, id, "unapproving", `UPDATE version_labels SET approved_by = NULL, approved_at = NULL WHERE version_id = ?`, id)
}

// SetNotes replaces a version's notes.
func (s *DB) SetNotes(ctx context.Context, id int64, notes string) (Version, error) {
	if len(notes) > 64<<10 {
		return Version{}, invalidf("notes of version %d: at most 64 KiB", id)
	}
	return s.setLabels(ctx, id, "annotating", `UPDATE version_labels SET notes = ? WHERE version_id = ?`, notes, id)
}

func (s *DB) setLabels(ctx context.Context, id int64, doing, query string, args ...any) (Version, error) {
	res, err := s.db.ExecContext(ctx, s.d.rebind(query), args...)
	if err != nil {
		return Version{}, fmt.Errorf("%s version %d: %w", doing, id, s.d.wrap(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return Version{}, fmt.Errorf("%s version %d: %w", doing, id, s.d.wrap(err))
	} else if n == 0 {
		return Version{}, fmt.Errorf("version %d: %w", id, ErrNotFound)
	}
	return s.GetVersion(ctx, id)
}

// PutIndexSnapshot stores a raw catalog snapshot, which the index package
// has validated, with its source (a URL or a file name). The last few are
// kept; the latest is what LatestIndexSnapshot returns.
func (s *DB) PutIndexSnapshot(ctx context.Context, raw []byte, source string) error {
	if len(raw) == 0 || len(raw) > MaxIndexSnapshot {
		return invalidf("catalog snapshot from %s: %d bytes; it must be 1 byte to %d MiB", source, len(raw), MaxIndexSnapshot>>20)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing the catalog snapshot: %w", s.d.wrap(err))
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO index_snapshots (raw, source, created_at) VALUES (?, ?, ?)`), raw, source, s.now().UnixMicro()); err != nil {
		return fmt.Errorf("storing the catalog snapshot: %w", s.d.wrap(err))
	}
	if _, err := tx.ExecContext(ctx, s.d.rebind(`DELETE FROM index_snapshots WHERE id NOT IN
		(SELECT id FROM index_snapshots ORDER BY id DESC LIMIT ?)`), keptIndexSnapshots); err != nil {
		return fmt.Errorf("storing the catalog snapshot: %w", s.d.wrap(err))
	}
	// Every running hub on this database serves it (CatalogChanges).
	if err := s.publishTx(ctx, tx, catalogHint); err != nil {
		return fmt.Errorf("storing the catalog snapshot: %w", s.d.wrap(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing the catalog snapshot: %w", s.d.wrap(err))
	}
	s.published([]string{catalogHint})
	return nil
}

// LatestIndexSnapshot returns the last catalog snapshot stored and its
// source, or a nil slice and a nil error when none has been stored.
func (s *DB) LatestIndexSnapshot(ctx context.Context) ([]byte, string, error) {
	var raw []byte
	var source string
	err := s.db.QueryRowContext(ctx, `SELECT raw, source FROM index_snapshots ORDER BY id DESC LIMIT 1`).Scan(&raw, &source)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the catalog snapshot: %w", s.d.wrap(err))
	}
	return raw, source, nil
}

// Stats counts what the store holds.
func (s *DB) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM packages p WHERE EXISTS (SELECT 1 FROM versions v WHERE v.package_id = p.id)),
		(SELECT COUNT(*) FROM versions),
		(SELECT COUNT(*) FROM blobs),
		(SELECT COUNT(*) FROM blob_chunks),
		(SELECT COALESCE(SUM(size), 0) FROM blobs)`).Scan(&st.Packages, &st.Versions, &st.Blobs, &st.Chunks, &st.BlobBytes)
	if err != nil {
		return Stats{}, fmt.Errorf("counting the store: %w", s.d.wrap(err))
	}
	return st, nil
}

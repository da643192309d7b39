package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode"
)

// installAttempts bounds Install's retries after a conflict with a
// concurrent transaction (PostgreSQL) or a busy database (SQLite).
const installAttempts = 5

// Install stores nv as a new version, in one transaction: either all of it
// is visible afterwards or none of it. A version with the same tree digest
// is returned as it is, with created false, and nothing is written. Blobs
// already stored (shared with another version) are not written again.
func (s *DB) Install(ctx context.Context, nv NewVersion) (Version, bool, error) {
	if err := validateNewVersion(nv); err != nil {
		return Version{}, false, err
	}
	if v, err := s.FindVersion(ctx, nv.TreeDigest); err == nil {
		return v, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Version{}, false, fmt.Errorf("installing %s: %w", nv.Package, err)
	}
	var (
		id      int64
		created bool
		err     error
	)
	for attempt := 1; ; attempt++ {
		id, created, err = s.installTx(ctx, nv)
		if err == nil {
			break
		}
		k := s.d.classify(err)
		// A foreign key failure here is a blob deleted by a concurrent
		// uninstall between our insert and our reference: retry.
		if attempt < installAttempts && (k == kindRetry || k == kindForeignKey) && ctx.Err() == nil {
			continue
		}
		var ie *invalidError
		if errors.As(err, &ie) {
			return Version{}, false, err
		}
		return Version{}, false, fmt.Errorf("installing %s (%s): the transaction was rolled back and nothing of it was stored: %w", nv.Package, nv.TreeDigest, s.d.wrap(err))
	}
	v, err := s.GetVersion(ctx, id)
	if err != nil {
		return Version{}, false, fmt.Errorf("installing %s: reading back version %d: %w", nv.Package, id, err)
	}
	return v, created, nil
}

func (s *DB) installTx(ctx context.Context, nv NewVersion) (id int64, created bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	q := s.d.rebind
	now := s.now().UnixMicro()

	if _, err := tx.ExecContext(ctx, q(`INSERT INTO packages (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), nv.Package, now); err != nil {
		return 0, false, err
	}
	var pkgID int64
	if err := tx.QueryRowContext(ctx, q(`SELECT id FROM packages WHERE name = ?`), nv.Package).Scan(&pkgID); err != nil {
		return 0, false, err
	}

	var total int64
	for _, f := range nv.Files {
		total += f.Size
	}
	// Claim the tree digest first: a concurrent install of the same tree
	// waits here for ours and then finds the version, writing nothing.
	err = tx.QueryRowContext(ctx, q(`INSERT INTO versions
		(package_id, tree_digest, frontmatter, origin, inspection, file_count, total_size, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tree_digest) DO NOTHING RETURNING id`),
		pkgID, nv.TreeDigest, string(nv.Frontmatter), string(nv.Origin), string(nv.Inspection),
		len(nv.Files), total, now).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		tx.Rollback()
		if err := s.db.QueryRowContext(ctx, q(`SELECT id FROM versions WHERE tree_digest = ?`), nv.TreeDigest).Scan(&id); err != nil {
			return 0, false, err
		}
		return id, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if _, err := tx.ExecContext(ctx, q(`INSERT INTO version_labels (version_id) VALUES (?)`), id); err != nil {
		return 0, false, err
	}

	insBlob, err := tx.PrepareContext(ctx, q(`INSERT INTO blobs (digest, size, chunks) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING`))
	if err != nil {
		return 0, false, err
	}
	defer insBlob.Close()
	insChunk, err := tx.PrepareContext(ctx, q(`INSERT INTO blob_chunks (digest, seq, data) VALUES (?, ?, ?)`))
	if err != nil {
		return 0, false, err
	}
	defer insChunk.Close()
	insFile, err := tx.PrepareContext(ctx, q(`INSERT INTO version_files (version_id, path, mode, size, digest) VALUES (?, ?, ?, ?, ?)`))
	if err != nil {
		return 0, false, err
	}
	defer insFile.Close()

	for _, f := range nv.Files {
		digest := f.Digest[:]
		chunks := (len(f.Data) + ChunkSize - 1) / ChunkSize
		res, err := insBlob.ExecContext(ctx, digest, f.Size, chunks)
		if err != nil {
			return 0, false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, false, err
		} else if n == 1 {
			// A new blob: its digest is checked before it is kept.
			if sha256.Sum256(f.Data) != f.Digest {
				return 0, false, invalidf("file %s: its digest does not match its content; the package reader produced an inconsistent tree", f.Path)
			}
			for seq := range chunks {
				end := min((seq+1)*ChunkSize, len(f.Data))
				if _, err := insChunk.ExecContext(ctx, digest, seq, f.Data[seq*ChunkSize:end]); err != nil {
					return 0, false, err
				}
			}
		}
		if _, err := insFile.ExecContext(ctx, id, f.Path, f.Mode, f.Size, digest); err != nil {
			return 0, false, err
		}
	}
	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

func validateNewVersion(nv NewVersion) error {
	if nv.Package == "" || len(nv.Package) > 256 || strings.IndexFunc(nv.Package, unicode.IsControl) >= 0 {
		return invalidf("package name %q: it must be 1 to 256 characters without control characters", nv.Package)
	}
	if !validTreeDigest(nv.TreeDigest) {
		return invalidf("package %s: tree digest %q is not of the form sha256:<64 lowercase hex digits>", nv.Package, nv.TreeDigest)
	}
	for name, raw := range map[string]json.RawMessage{"frontmatter": nv.Frontmatter, "origin": nv.Origin, "inspection": nv.Inspection} {
		if len(raw) == 0 || !json.Valid(raw) {
			return invalidf("package %s: its %s is missing or not valid JSON", nv.Package, name)
		}
	}
	if len(nv.Files) == 0 {
		return invalidf("package %s has no files", nv.Package)
	}
	hasSkill := false
	for i, f := range nv.Files {
		if !fs.ValidPath(f.Path) || f.Path == "." || strings.ContainsAny(f.Path, "\\\x00") {
			return invalidf("package %s: file path %q is not a clean relative slash-separated path", nv.Package, f.Path)
		}
		if i > 0 && nv.Files[i-1].Path >= f.Path {
			return invalidf("package %s: files are not sorted by path and unique (%q before %q)", nv.Package, nv.Files[i-1].Path, f.Path)
		}
		if f.Mode != 0o644 && f.Mode != 0o755 {
			return invalidf("package %s: file %s has mode %o; only 644 and 755 are stored", nv.Package, f.Path, f.Mode)
		}
		if f.Size != int64(len(f.Data)) {
			return invalidf("package %s: file %s says %d bytes but has %d", nv.Package, f.Path, f.Size, len(f.Data))
		}
		hasSkill = hasSkill || f.Path == "SKILL.md"
	}
	if !hasSkill {
		return invalidf("package %s has no SKILL.md at its root", nv.Package)
	}
	return nil
}

func validTreeDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

const versionColumns = `v.id, p.name, v.tree_digest, v.frontmatter, v.origin, v.inspection,
	v.file_count, v.total_size, v.created_at, l.approved_by, l.approved_at, l.notes`

const versionFrom = ` FROM versions v JOIN packages p ON p.id = v.package_id JOIN version_labels l ON l.version_id = v.id`

type scanner interface{ Scan(dest ...any) error }

func scanVersion(r scanner) (Version, error) {
	var (
		v                      Version
		fm, origin, inspection string
		created                int64
		approvedBy             sql.NullString
		approvedAt             sql.NullInt64
	)
	if err := r.Scan(&v.ID, &v.Package, &v.TreeDigest, &fm, &origin, &inspection,
		&v.FileCount, &v.Size, &created, &approvedBy, &approvedAt, &v.Labels.Notes); err != nil {
		return Version{}, err
	}
	v.Frontmatter = json.RawMessage(fm)
	v.Origin = json.RawMessage(origin)
	v.Inspection = json.RawMessage(inspection)
	v.CreatedAt = time.UnixMicro(created).UTC()
	if approvedBy.Valid {
		v.Labels.ApprovedBy = approvedBy.String
		v.Labels.ApprovedAt = time.UnixMicro(approvedAt.Int64).UTC()
	}
	return v, nil
}

// GetVersion returns the version with the given id, or ErrNotFound.
func (s *DB) GetVersion(ctx context.Context, id int64) (Version, error) {
	v, err := scanVersion(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+versionColumns+versionFrom+` WHERE v.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, fmt.Errorf("version %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Version{}, fmt.Errorf("reading version %d: %w", id, s.d.wrap(err))
	}
	return v, nil
}

// FindVersion returns the version with the given tree digest, or
// ErrNotFound.
func (s *DB) FindVersion(ctx context.Context, treeDigest string) (Version, error) {
	v, err := scanVersion(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+versionColumns+versionFrom+` WHERE v.tree_digest = ?`), treeDigest))
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, fmt.Errorf("version %s: %w", treeDigest, ErrNotFound)
	}
	if err != nil {
		return Version{}, fmt.Errorf("reading version %s: %w", treeDigest, s.d.wrap(err))
	}
	return v, nil
}

// ListPackages lists every package that has a version, by name (byte
// order), each with its version count and latest version.
func (s *DB) ListPackages(ctx context.Context) ([]Package, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.n, `+versionColumns+`
		FROM (SELECT package_id, COUNT(*) AS n, MAX(id) AS latest FROM versions GROUP BY package_id) c
		JOIN versions v ON v.id = c.latest
		JOIN packages p ON p.id = v.package_id
		JOIN version_labels l ON l.version_id = v.id`)
	if err != nil {
		return nil, fmt.Errorf("listing packages: %w", s.d.wrap(err))
	}
	defer rows.Close()
	var out []Package
	for rows.Next() {
		var n int
		var v Version
		var fm, origin, inspection string
		var created int64
		var approvedBy sql.NullString
		var approvedAt sql.NullInt64
		if err := rows.Scan(&n, &v.ID, &v.Package, &v.TreeDigest, &fm, &origin, &inspection,
			&v.FileCount, &v.Size, &created, &approvedBy, &approvedAt, &v.Labels.Notes); err != nil {
			return nil, fmt.Errorf("listing packages: %w", s.d.wrap(err))
		}
		v.Frontmatter, v.Origin, v.Inspection = json.RawMessage(fm), json.RawMessage(origin), json.RawMessage(inspection)
		v.CreatedAt = time.UnixMicro(created).UTC()
		if approvedBy.Valid {
			v.Labels.ApprovedBy = approvedBy.String
			v.Labels.ApprovedAt = time.UnixMicro(approvedAt.Int64).UTC()
		}
		out = append(out, Package{Name: v.Package, Versions: n, Latest: v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing packages: %w", s.d.wrap(err))
	}
	// Sorted here, not in SQL, so both backends agree whatever their
	// collation.
	slices.SortFunc(out, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ListVersions lists a package's versions, oldest first, or returns
// ErrNotFound when it has none.
func (s *DB) ListVersions(ctx context.Context, pkg string) ([]Version, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT `+versionColumns+versionFrom+` WHERE p.name = ? ORDER BY v.id`), pkg)
	if err != nil {
		return nil, fmt.Errorf("listing versions of %s: %w", pkg, s.d.wrap(err))
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("listing versions of %s: %w", pkg, s.d.wrap(err))
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing versions of %s: %w", pkg, s.d.wrap(err))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("package %s: %w", pkg, ErrNotFound)
	}
	return out, nil
}

// VersionFiles lists a version's files in path order (byte order).
func (s *DB) VersionFiles(ctx context.Context, id int64) ([]File, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT path, mode, size, digest FROM version_files WHERE version_id = ?`), id)
	if err != nil {
		return nil, fmt.Errorf("listing files of version %d: %w", id, s.d.wrap(err))
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		var f File
		var digest []byte
		if err := rows.Scan(&f.Path, &f.Mode, &f.Size, &digest); err != nil {
			return nil, fmt.Errorf("listing files of version %d: %w", id, s.d.wrap(err))
		}
		if len(digest) != len(f.Digest) {
			return nil, &CorruptError{VersionID: id, Path: f.Path}
		}
		copy(f.Digest[:], digest)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing files of version %d: %w", id, s.d.wrap(err))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("version %d: %w", id, ErrNotFound)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// ReadFile returns one file of a version, verified against its digest. A
// file whose stored content does not match is a *CorruptError.
func (s *DB) ReadFile(ctx context.Context, id int64, path string) ([]byte, error) {
	// One statement, so the file row and its chunks come from one snapshot
	// even while another transaction uninstalls the version.
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT f.size, f.digest, c.seq, c.data
		FROM version_files f LEFT JOIN blob_chunks c ON c.digest = f.digest
		WHERE f.version_id = ? AND f.path = ? ORDER BY c.seq`), id, path)
	if err != nil {
		return nil, fmt.Errorf("reading %s of version %d: %w", path, id, s.d.wrap(err))
	}
	defer rows.Close()
	var (
		buf    bytes.Buffer
		size   int64
		digest []byte
		found  bool
		next   int64
	)
	for rows.Next() {
		var seq sql.NullInt64
		var data []byte
		if err := rows.Scan(&size, &digest, &seq, &data); err != nil {
			return nil, fmt.Errorf("reading %s of version %d: %w", path, id, s.d.wrap(err))
		}
		if !found {
			found = true
			buf.Grow(int(size))
		}
		if !seq.Valid {
			continue // an empty file has no chunks
		}
		if seq.Int64 != next {
			return nil, &CorruptError{VersionID: id, Path: path}
		}
		next++
		buf.Write(data)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %s of version %d: %w", path, id, s.d.wrap(err))
	}
	if !found {
		return nil, fmt.Errorf("file %s of version %d: %w", path, id, ErrNotFound)
	}
	sum := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != size || !bytes.Equal(sum[:], digest) {
		return nil, &CorruptError{VersionID: id, Path: path}
	}
	return buf.Bytes(), nil
}

// DeleteVersion removes a version with its files and labels, and the blobs
// no remaining version refers to, in one transaction. A version bound to a
// project is refused by the database's foreign key, reported as a
// *BoundError.
func (s *DB) DeleteVersion(ctx context.Context, id int64) error {
	defer s.reclaim(ctx)
	var err error
	for attempt := 1; attempt <= installAttempts; attempt++ {
		err = s.deleteTx(ctx, id)
		var re *retryError
		if err == nil || !(errors.As(err, &re) || s.d.classify(err) == kindRetry) || ctx.Err() != nil {
			break
		}
	}
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	if re := (*retryError)(nil); errors.As(err, &re) {
		return fmt.Errorf("uninstalling version %d: concurrent installs kept sharing its files; nothing was removed, retry: %w", id, re.err)
	}
	if s.d.classify(err) == kindForeignKey {
		projects, berr := s.Bindings(ctx, id)
		if berr != nil {
			return fmt.Errorf("uninstalling version %d: it is bound to a project: %w", id, ErrVersionBound)
		}
		return &BoundError{VersionID: id, Projects: projects}
	}
	return fmt.Errorf("uninstalling version %d: the transaction was rolled back: %w", id, s.d.wrap(err))
}

func (s *DB) deleteTx(ctx context.Context, id int64) (err error) {
	q := s.d.rebind
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	rows, err := tx.QueryContext(ctx, q(`SELECT DISTINCT digest FROM version_files WHERE version_id = ?`), id)
	if err != nil {
		return err
	}
	var digests [][]byte
	for rows.Next() {
		var d []byte
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return err
		}
		digests = append(digests, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, q(`DELETE FROM versions WHERE id = ?`), id)
	if err != nil {
		return err // a binding's foreign key refuses it
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("version %d: %w", id, ErrNotFound)
	}
	del, err := tx.PrepareContext(ctx, q(`DELETE FROM blobs WHERE digest = ?
		AND NOT EXISTS (SELECT 1 FROM version_files WHERE digest = ?)
		AND NOT EXISTS (SELECT 1 FROM layer_files WHERE digest = ?)`))
	if err != nil {
		return err
	}
	defer del.Close()
	for _, d := range digests {
		if _, err := del.ExecContext(ctx, d, d, d); err != nil {
			if s.d.classify(err) == kindForeignKey {
				// A concurrent install referenced the blob after our
				// NOT EXISTS looked: retry the whole deletion.
				return &retryError{err}
			}
			return err
		}
	}
	// Its profile went with it (ON DELETE CASCADE), and with it the last
	// use of its prepared layer, perhaps.
	if err := s.dropUnusedLayers(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// retryError makes an error classify as kindRetry.
type retryError struct{ err error }

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A prepared environment (a Python --target folder, a node_modules tree)
// is a layer: its entries are kept in layer_files, its files' contents as
// blobs shared with versions and other layers, so that any replica can lay
// it out from the database and check it against its digest, the profile's
// identity.

// LayerKind is what a layer entry is.
type LayerKind string

// The kinds of layer entry.
const (
	LayerDir  LayerKind = "d"
	LayerFile LayerKind = "f"
	LayerLink LayerKind = "l"
)

// Bounds of a stored layer.
const (
	MaxLayerEntries = 200_000
	MaxLayerBytes   = 1 << 30
)

// FixedTime is the modification time of every file of a laid-out layer,
// so that layers are alike wherever they are laid out (1980-01-01, the
// earliest a zip can say).
var FixedTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// LayerEntry is one entry of a layer.
type LayerEntry struct {
	// Path is slash-separated and relative, without "." or ".." segments.
	Path string
	Kind LayerKind
	// Exec marks an executable file.
	Exec bool
	// Target is a link's target, as it is (it resolves inside the
	// sandbox the layer is mounted in).
	Target string
	// Size and Digest are a file's.
	Size   int64
	Digest [32]byte
	// Open reads a file's content when the layer is stored; nil for
	// folders and links.
	Open func() (io.ReadCloser, error)
}

// Layer is a layer to store: its entries in walk order (see WalkLess) and
// their digest.
type Layer struct {
	// Digest is LayerDigest(Entries), lowercase hex.
	Digest  string
	Entries []LayerEntry
}

// WalkLess orders paths as a walk of a folder tree meets them
// (filepath.WalkDir: each folder before its entries, a folder's entries by
// name), which is the order of a layer's digest.
func WalkLess(a, b string) int {
	for {
		ha, ra, moreA := strings.Cut(a, "/")
		hb, rb, moreB := strings.Cut(b, "/")
		if c := strings.Compare(ha, hb); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

// LayerDigest is the content digest of a layer: the sha256 of one line
// per entry in walk order, a folder's "d path", a file's "f path x sha256"
// (x: whether it is executable), a link's "l path target", the fields
// separated by NUL. File times, owners and modes other than the executable
// bit are not part of it.
func LayerDigest(entries []LayerEntry) string {
	h := sha256.New()
	for _, e := range entries {
		writeLayerLine(h, e)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeLayerLine(h hash.Hash, e LayerEntry) {
	switch e.Kind {
	case LayerDir:
		fmt.Fprintf(h, "d\x00%s\n", e.Path)
	case LayerLink:
		fmt.Fprintf(h, "l\x00%s\x00%s\n", e.Path, e.Target)
	default:
		fmt.Fprintf(h, "f\x00%s\x00%t\x00%x\n", e.Path, e.Exec, e.Digest)
	}
}

// checkLayer validates a layer before it is stored.
func checkLayer(l *Layer) error {
	if len(l.Digest) != 64 || strings.Trim(l.Digest, "0123456789abcdef") != "" {
		return invalidf("layer digest %q: 64 lowercase hex digits", truncate(l.Digest, 80))
	}
	if len(l.Entries) > MaxLayerEntries {
		return limitf("layer sha256:%s has %d entries; a layer keeps at most %d", l.Digest, len(l.Entries), MaxLayerEntries)
	}
	var total int64
	for i, e := range l.Entries {
		if !fs.ValidPath(e.Path) || e.Path == "." || strings.ContainsAny(e.Path, "\\\x00") || len(e.Path) > 4096 {
			return invalidf("layer sha256:%s: entry %q is not a clean relative path", l.Digest, truncate(e.Path, 80))
		}
		if i > 0 && WalkLess(l.Entries[i-1].Path, e.Path) >= 0 {
			return invalidf("layer sha256:%s: entries are not in walk order and unique (%q before %q)", l.Digest, truncate(l.Entries[i-1].Path, 80), truncate(e.Path, 80))
		}
		switch e.Kind {
		case LayerDir:
		case LayerLink:
			if e.Target == "" || len(e.Target) > 4096 || strings.ContainsRune(e.Target, 0) {
				return invalidf("layer sha256:%s: link %q has no usable target", l.Digest, truncate(e.Path, 80))
			}
		case LayerFile:
			if e.Size < 0 || e.Open == nil {
				return invalidf("layer sha256:%s: file %q has no content to store", l.Digest, truncate(e.Path, 80))
			}
			total += e.Size
		default:
			return invalidf("layer sha256:%s: entry %q is of kind %q: d, f or l", l.Digest, truncate(e.Path, 80), truncate(string(e.Kind), 8))
		}
	}
	if total > MaxLayerBytes {
		return limitf("layer sha256:%s holds %d bytes; a layer keeps at most %d MiB", l.Digest, total, MaxLayerBytes>>20)
	}
	if got := LayerDigest(l.Entries); got != l.Digest {
		return invalidf("layer: its entries' digest is sha256:%s, not sha256:%s", got, l.Digest)
	}
	return nil
}

// putLayerTx stores l inside tx, unless a layer of its digest is stored
// already (the same digest is the same tree). A file's content is checked
// against its digest as it is read, only when its blob is new.
func (s *DB) putLayerTx(ctx context.Context, tx *sql.Tx, l *Layer, now int64) error {
	if err := checkLayer(l); err != nil {
		return err
	}
	q := s.d.rebind
	if ok, err := exists(ctx, tx, q(`SELECT 1 FROM layers WHERE digest = ?`), l.Digest); err != nil || ok {
		return err
	}
	var total int64
	files := 0
	for _, e := range l.Entries {
		if e.Kind == LayerFile {
			files++
			total += e.Size
		}
	}
	if _, err := tx.ExecContext(ctx, q(`INSERT INTO layers (digest, files, size, created_at) VALUES (?, ?, ?, ?)`), l.Digest, files, total, now); err != nil {
		return err
	}
	insFile, err := tx.PrepareContext(ctx, q(`INSERT INTO layer_files (layer, path, kind, exec, target, size, digest) VALUES (?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer insFile.Close()
	for _, e := range l.Entries {
		var digest []byte
		if e.Kind == LayerFile {
			digest = e.Digest[:]
			if err := s.putBlobTx(ctx, tx, e); err != nil {
				return err
			}
		}
		if _, err := insFile.ExecContext(ctx, l.Digest, e.Path, string(e.Kind), b2i(e.Exec), e.Target, e.Size, digest); err != nil {
			return err
		}
	}
	return nil
}

// putBlobTx stores a layer file's content as a blob, unless it is stored.
func (s *DB) putBlobTx(ctx context.Context, tx *sql.Tx, e LayerEntry) error {
	q := s.d.rebind
	chunks := (e.Size + ChunkSize - 1) / ChunkSize
	res, err := tx.ExecContext(ctx, q(`INSERT INTO blobs (digest, size, chunks) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING`), e.Digest[:], e.Size, chunks)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	r, err := e.Open()
	if err != nil {
		return fmt.Errorf("layer file %s: %w", e.Path, err)
	}
	defer r.Close()
	h := sha256.New()
	buf := make([]byte, ChunkSize)
	var size int64
	for seq := 0; ; seq++ {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			h.Write(buf[:n])
			size += int64(n)
			if size > e.Size {
				break
			}
			if _, err := tx.ExecContext(ctx, q(`INSERT INTO blob_chunks (digest, seq, data) VALUES (?, ?, ?)`), e.Digest[:], seq, buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("layer file %s: %w", e.Path, rerr)
		}
	}
	if size != e.Size || [32]byte(h.Sum(nil)) != e.Digest {
		return invalidf("layer file %s changed while it was stored (its size or digest differs from the layer's): prepare again", truncate(e.Path, 80))
	}
	return nil
}

// dropUnusedLayers deletes, inside tx, the layers no profile's identity
// names, and their blobs that nothing else refers to.
func (s *DB) dropUnusedLayers(ctx context.Context, tx *sql.Tx) error {
	q := s.d.rebind
	unused, err := queryStrings(ctx, tx, `SELECT digest FROM layers l
		WHERE NOT EXISTS (SELECT 1 FROM profiles p WHERE p.identity = 'sha256:' || l.digest)`)
	if err != nil || len(unused) == 0 {
		return err
	}
	for _, layer := range unused {
		rows, err := tx.QueryContext(ctx, q(`SELECT DISTINCT digest FROM layer_files WHERE layer = ? AND digest IS NOT NULL`), layer)
		if err != nil {
			return err
		}
		var blobs [][]byte
		for rows.Next() {
			var d []byte
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return err
			}
			blobs = append(blobs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q(`DELETE FROM layers WHERE digest = ?`), layer); err != nil {
			return err
		}
		for _, d := range blobs {
			if _, err := tx.ExecContext(ctx, q(`DELETE FROM blobs WHERE digest = ?
				AND NOT EXISTS (SELECT 1 FROM version_files WHERE digest = ?)
				AND NOT EXISTS (SELECT 1 FROM layer_files WHERE digest = ?)`), d, d, d); err != nil {
				if s.d.classify(err) == kindForeignKey {
					// A concurrent transaction referred to the blob after
					// our check looked: retry the whole change.
					return &retryError{err}
				}
				return err
			}
		}
	}
	return nil
}

// ErrLayerMissing is returned by LayOutLayer for a layer the store does
// not hold (a profile prepared before layers were stored, or damaged).
var ErrLayerMissing = errors.New("the prepared layer is not in the store")

// LayerEntries lists a stored layer's entries in walk order, without
// content (Open is nil).
func (s *DB) LayerEntries(ctx context.Context, digest string) ([]LayerEntry, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT path, kind, exec, target, size, digest FROM layer_files WHERE layer = ?`), digest)
	if err != nil {
		return nil, fmt.Errorf("reading layer sha256:%s: %w", truncate(digest, 64), s.d.wrap(err))
	}
	defer rows.Close()
	var out []LayerEntry
	for rows.Next() {
		var e LayerEntry
		var x int
		var d []byte
		if err := rows.Scan(&e.Path, &e.Kind, &x, &e.Target, &e.Size, &d); err != nil {
			return nil, fmt.Errorf("reading layer sha256:%s: %w", truncate(digest, 64), s.d.wrap(err))
		}
		e.Exec = x != 0
		copy(e.Digest[:], d)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading layer sha256:%s: %w", truncate(digest, 64), s.d.wrap(err))
	}
	if len(out) == 0 {
		var one int
		if err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT 1 FROM layers WHERE digest = ?`), digest).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("layer sha256:%s: %w: an administrator prepares the version again", truncate(digest, 64), ErrLayerMissing)
		}
	}
	slices.SortFunc(out, func(a, b LayerEntry) int { return WalkLess(a.Path, b.Path) })
	return out, nil
}

// LayOutLayer writes the stored layer digest into parent/digest, read-only
// and with fixed file times, checked file by file and as a whole against
// the digest, and returns that folder. A folder there already is returned
// as it is: the caller checks it (and removes it when damaged). The layer
// is written into a temporary folder in parent and renamed, so a folder of
// that name is always whole.
func (s *DB) LayOutLayer(ctx context.Context, digest, parent string) (string, error) {
	final := filepath.Join(parent, digest)
	if _, err := os.Lstat(final); err == nil {
		return final, nil
	}
	entries, err := s.LayerEntries(ctx, digest)
	if err != nil {
		return "", err
	}
	if got := LayerDigest(entries); got != digest {
		return "", fmt.Errorf("layer sha256:%s: its stored entries' digest is sha256:%s: the database is damaged; prepare the version again", digest, got)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(parent, ".fetch-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			makeTreeWritable(tmp)
			os.RemoveAll(tmp)
		}
	}()
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return "", err
	}
	defer root.Close()
	for _, e := range entries {
		p := filepath.FromSlash(e.Path)
		switch e.Kind {
		case LayerDir:
			err = root.Mkdir(p, 0o755)
		case LayerLink:
			err = root.Symlink(e.Target, p)
		case LayerFile:
			err = s.writeBlob(ctx, root, p, e)
		default:
			err = fmt.Errorf("entry %s has kind %q", e.Path, e.Kind)
		}
		if err != nil {
			return "", fmt.Errorf("laying out layer sha256:%s: %w", digest, err)
		}
	}
	// Read-only, leaves first; times fixed, so that every replica's copy
	// is alike.
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		p := filepath.FromSlash(e.Path)
		mode := os.FileMode(0o444)
		switch {
		case e.Kind == LayerLink:
			continue
		case e.Kind == LayerDir || e.Exec:
			mode = 0o555
		}
		if err := root.Chtimes(p, FixedTime, FixedTime); err != nil {
			return "", err
		}
		if err := root.Chmod(p, mode); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o555); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Lstat(final); serr == nil {
			return final, nil // laid out meanwhile by another caller
		}
		return "", err
	}
	ok = true
	return final, nil
}

// writeBlob writes a layer file's content from its blob's chunks, checked
// against its digest.
func (s *DB) writeBlob(ctx context.Context, root *os.Root, p string, e LayerEntry) (err error) {
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT seq, data FROM blob_chunks WHERE digest = ? ORDER BY seq`), e.Digest[:])
	if err != nil {
		return s.d.wrap(err)
	}
	defer rows.Close()
	h := sha256.New()
	var size, next int64
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return s.d.wrap(err)
		}
		if seq != next {
			return fmt.Errorf("%s: its stored content is damaged (a chunk is missing): prepare the version again", path.Clean(e.Path))
		}
		next++
		h.Write(data)
		size += int64(len(data))
		if _, err := f.Write(data); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.d.wrap(err)
	}
	if size != e.Size || [32]byte(h.Sum(nil)) != e.Digest {
		return fmt.Errorf("%s: its stored content does not match its digest: the database is damaged; prepare the version again", path.Clean(e.Path))
	}
	return nil
}

// makeTreeWritable lets a read-only tree be removed.
func makeTreeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
}

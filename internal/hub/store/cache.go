package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Materialize makes a version's files available as a read-only folder
// under cacheDir and returns it. The folder is named by the tree digest;
// an existing one is verified against the stored digests before it is
// returned, and rebuilt when anything in it differs. The cache holds
// nothing the database lacks: deleting it loses nothing.
func (s *DB) Materialize(ctx context.Context, id int64, cacheDir string) (string, error) {
	v, err := s.GetVersion(ctx, id)
	if err != nil {
		return "", err
	}
	files, err := s.VersionFiles(ctx, id)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", fmt.Errorf("hub cache: %w", err)
	}
	dir := filepath.Join(cacheDir, strings.TrimPrefix(v.TreeDigest, "sha256:"))
	if _, err := os.Lstat(dir); err == nil {
		if verr := verifyTree(dir, files); verr == nil {
			return dir, nil
		}
		// Damaged or tampered with: rebuilt from the database.
		if err := removeReadOnly(dir); err != nil {
			return "", fmt.Errorf("hub cache: removing the damaged copy of version %d: %w", id, err)
		}
	}
	tmp, err := os.MkdirTemp(cacheDir, ".tmp-")
	if err != nil {
		return "", fmt.Errorf("hub cache: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			removeReadOnly(tmp)
		}
	}()
	var dirs []string
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		data, err := s.ReadFile(ctx, id, f.Path)
		if err != nil {
			return "", err
		}
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if parent := filepath.Dir(p); parent != tmp {
			if err := os.MkdirAll(parent, 0o700); err != nil {
				return "", fmt.Errorf("hub cache: %w", err)
			}
			dirs = append(dirs, parent)
		}
		perm := os.FileMode(0o444)
		if f.Mode == 0o755 {
			perm = 0o555
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return "", fmt.Errorf("hub cache: writing version %d: %w", id, err)
		}
		if err := os.Chmod(p, perm); err != nil {
			return "", fmt.Errorf("hub cache: %w", err)
		}
	}
	// Folders read-only last, deepest first.
	for i := len(dirs) - 1; i >= 0; i-- {
		for d := dirs[i]; d != tmp; d = filepath.Dir(d) {
			os.Chmod(d, 0o555)
		}
	}
	if err := os.Chmod(tmp, 0o555); err != nil {
		return "", fmt.Errorf("hub cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process materialised it first: use theirs if sound.
		if verr := verifyTree(dir, files); verr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("hub cache: %w", err)
	}
	keep = true
	return dir, nil
}

// verifyTree checks that dir holds exactly files, each with its size,
// mode and digest.
func verifyTree(dir string, files []File) error {
	want := make(map[string]File, len(files))
	for _, f := range files {
		want[f.Path] = f
	}
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, ok := want[filepath.ToSlash(rel)]
		if !ok || !d.Type().IsRegular() {
			return fmt.Errorf("unexpected %s", rel)
		}
		seen++
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() != f.Size || (info.Mode().Perm()&0o111 != 0) != (f.Mode == 0o755) || info.Mode().Perm()&0o222 != 0 {
			return fmt.Errorf("%s changed", rel)
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		h := sha256.New()
		if _, err := io.Copy(h, fh); err != nil {
			return err
		}
		if [32]byte(h.Sum(nil)) != f.Digest {
			return fmt.Errorf("%s does not match its digest", rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(files) {
		return errors.New("files missing")
	}
	return nil
}

// removeReadOnly removes a tree whose folders were made read-only.
func removeReadOnly(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

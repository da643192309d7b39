// Package atomicfile writes files that readers see whole or not at all: the
// content goes to a temporary file in the same folder, which is renamed
// over the target only once everything was written.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes the file name with perm, its content written by fill. On any
// error, from fill or the file system, the temporary file is removed and
// name is left as it was. With sync, the content is flushed to disk before
// the rename, so that a crash cannot leave a renamed but empty file; caches
// that tolerate a torn file skip it.
func Write(name string, perm fs.FileMode, sync bool, fill func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	err = fill(tmp)
	if err == nil && sync {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

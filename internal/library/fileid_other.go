//go:build !linux

package library

import (
	"io/fs"
	"time"
)

// fileID is unavailable here: every Extract hashes the archive.
func fileID(fs.FileInfo) (string, time.Time, bool) { return "", time.Time{}, false }

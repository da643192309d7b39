//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package library

import "os"

// canLock reports whether this system has flock. Without it, the cache
// cannot tell whether another process uses an extraction, so Prune and the
// sweep of abandoned work never remove anything.
const canLock = false

func lockShared(*os.File) error { return nil }

func tryLockExclusive(*os.File) (bool, error) { return false, nil }

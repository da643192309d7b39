//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package library

import (
	"errors"
	"os"
	"syscall"
)

// canLock reports whether this system has flock, which the cache uses to
// tell an extraction in use by another process from an abandoned one.
const canLock = true

// lockShared blocks until f holds a shared lock (converting an exclusive
// one). Locks belong to the open file, so two opens in one process
// conflict like two processes do.
func lockShared(f *os.File) error { return flock(f, syscall.LOCK_SH) }

// tryLockExclusive takes an exclusive lock on f if no other open file holds
// any lock on it, and reports whether it did.
func tryLockExclusive(f *os.File) (bool, error) {
	err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if ferr != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: ferr}
	}
	return nil
}

//go:build unix

package httpserve

import "syscall"

// openFileLimit returns the process's limit on open files (its soft
// limit, which Go raises to the hard one at start).
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}

//go:build unix

package lint

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used, so
// benchmarks can report it next to wall time on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

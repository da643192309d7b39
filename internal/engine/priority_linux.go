package engine

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundNice is the nice value of the thread that does the work after
// the first listing.
const backgroundNice = 19

// lowerPriority moves the calling goroutine to an OS thread of its own and
// gives that thread the lowest CPU priority, so that work which can wait
// (watching every folder, proving the library unchanged) yields the cores
// to requests whenever both want them. The thread is never handed back:
// it ends with the goroutine, and its priority with it.
func lowerPriority() {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), backgroundNice) // best effort
}

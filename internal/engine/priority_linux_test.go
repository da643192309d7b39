package engine

import (
	"testing"

	"golang.org/x/sys/unix"
)

// lowerPriority gives the calling goroutine's thread, and only it, the
// lowest priority.
func TestLowerPriority(t *testing.T) {
	// The test process may itself run niced (under nice, or beside a load):
	// what matters is that this thread is left as it was.
	before, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int)
	go func() {
		lowerPriority()
		// The system call gives 20 - nice.
		p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		if err != nil {
			t.Error(err)
		}
		got <- 20 - p
	}()
	if nice := <-got; nice != backgroundNice {
		t.Errorf("the background thread runs at nice %d, want %d", nice, backgroundNice)
	}
	if p, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err != nil || p != before {
		t.Errorf("the process runs at nice %d, it ran at %d (%v): only the background thread may change", 20-p, 20-before, err)
	}
}

package catalog_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// debounceRun drives the watcher's loop on the fake clock of a synctest
// bubble: kicks at the given offsets from the start, then quiet until
// until; it returns the offsets of the rescans.
func debounceRun(t *testing.T, kicks []time.Duration, until time.Duration) []time.Duration {
	t.Helper()
	var rescans []time.Duration
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		kick, stop := make(chan struct{}, 1), make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			catalog.DebounceLoop(kick, stop, 0, func() { rescans = append(rescans, time.Since(start)) })
		}()
		for _, at := range kicks {
			time.Sleep(at - time.Since(start))
			kick <- struct{}{}
			synctest.Wait() // the loop took it in
		}
		time.Sleep(until - time.Since(start))
		synctest.Wait()
		close(stop)
		<-done
	})
	return rescans
}

// TestContinuousWritesDoNotStarveRescans rewrites a file every 100 ms for
// 10 s: each event restarts the debounce, and rescans used to wait for the
// writes to stop. Now one follows at least every 2 s (MaxDelay), never two
// within a debounce window, and one after the last write.
func TestContinuousWritesDoNotStarveRescans(t *testing.T) {
	var kicks []time.Duration
	for at := time.Duration(0); at < 10*time.Second; at += 100 * time.Millisecond {
		kicks = append(kicks, at)
	}
	last := kicks[len(kicks)-1]
	rescans := debounceRun(t, kicks, last+time.Second)
	if len(rescans) == 0 {
		t.Fatal("no rescan while a file was rewritten every 100 ms for 10 s")
	}
	const most = 2 * time.Second
	if catalog.MaxDelay > most {
		t.Errorf("MaxDelay is %v, want at most %v", catalog.MaxDelay, most)
	}
	prev := time.Duration(0)
	for _, at := range rescans {
		if at-prev > most {
			t.Errorf("rescans at %v: %v without one while changes kept coming, want at most %v", rescans, at-prev, most)
		}
		if at-prev < catalog.Debounce {
			t.Errorf("rescans at %v: two within %v, want at least the debounce %v apart", rescans, at-prev, catalog.Debounce)
		}
		prev = at
	}
	if end := rescans[len(rescans)-1]; end < last || end > last+catalog.Debounce {
		t.Errorf("last rescan at %v, want within %v after the last write at %v", end, catalog.Debounce, last)
	}
}

// TestBurstRescansOnce: a burst of events closer than the debounce window
// and shorter than MaxDelay costs one rescan, a debounce after its last.
func TestBurstRescansOnce(t *testing.T) {
	kicks := []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	rescans := debounceRun(t, kicks, 2*time.Second)
	if want := 200*time.Millisecond + catalog.Debounce; len(rescans) != 1 || rescans[0] != want {
		t.Errorf("rescans at %v, want one at %v", rescans, want)
	}
}

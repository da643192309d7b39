package engine

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func gcPercent() uint64 {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// collectUntil runs collections until cond holds (a cleanup runs on its own
// goroutine some time after the cycle that freed its object).
func collectUntil(t *testing.T, c *scanCollector, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("condition not reached after 10 s of collections")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestScanCollector: GOGC is 100 while the live heap is under the bound,
// drops to the scan's setting once a collection finds it over, and is
// restored by stop.
func TestScanCollector(t *testing.T) {
	before := gcPercent()

	small := startScanCollector(1<<40, 40)
	collectUntil(t, small, func() bool { return small.seen >= 3 })
	if got := gcPercent(); got != 100 {
		t.Errorf("under the bound after %d collections: GOGC %d, want 100", small.seen, got)
	}
	small.stop()
	if got := gcPercent(); got != before {
		t.Errorf("after stop: GOGC %d, want %d", got, before)
	}

	large := startScanCollector(0, 40)
	collectUntil(t, large, func() bool { return large.seen >= 1 })
	if got := gcPercent(); got != 40 {
		t.Errorf("over the bound: GOGC %d, want 40", got)
	}
	seen := large.seen
	runtime.GC()
	runtime.GC()
	large.stop()
	if got := gcPercent(); got != before {
		t.Errorf("after stop: GOGC %d, want %d", got, before)
	}
	large.mu.Lock()
	defer large.mu.Unlock()
	if large.seen != seen {
		t.Errorf("the collector kept looking after it lowered GOGC: %d collections, then %d", seen, large.seen)
	}
}

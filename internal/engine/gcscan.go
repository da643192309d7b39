package engine

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Collector settings for the first scan. A small catalog scans fastest
// with the default GOGC: at 5,000 skills, GOGC 40 throughout cost 13% of a
// cold start in extra collections. A large one must collect more often, or
// its peak resident size doubles the live catalog: past scanHeapBound of
// live heap, the scan continues at scanGCPercent.
const (
	scanGCPercent = 40
	scanHeapBound = 128 << 20
)

// scanCollector lowers GOGC to a scan's setting once the live heap passes
// a bound. It looks after every collection: a cleanup on an unreachable
// sentinel runs once per cycle and arms the next.
type scanCollector struct {
	bound   uint64
	percent int

	mu       sync.Mutex
	stopped  bool
	seen     int // collections looked after
	previous int // GOGC before the scan
}

// startScanCollector sets GOGC to 100 and lowers it to percent once the
// live heap exceeds bound.
func startScanCollector(bound uint64, percent int) *scanCollector {
	c := &scanCollector{bound: bound, percent: percent}
	c.previous = debug.SetGCPercent(100)
	c.arm()
	return c
}

func (c *scanCollector) arm() {
	sentinel := new([16]byte) // not a tiny allocation, so freed on its own
	runtime.AddCleanup(sentinel, (*scanCollector).afterGC, c)
}

func (c *scanCollector) afterGC() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.seen++
	if liveHeap() > c.bound {
		debug.SetGCPercent(c.percent)
		return
	}
	c.arm()
}

// stop restores the GOGC in force before the scan.
func (c *scanCollector) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped = true
		debug.SetGCPercent(c.previous)
	}
}

// liveHeap returns the heap marked live by the last collection.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

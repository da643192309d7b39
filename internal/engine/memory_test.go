package engine

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// memoryLimit leaves a small catalog its own size and room for requests
// in flight above it, never more room than the old 96 MiB floor, and keeps
// a large one well below twice its size.
func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ live, want int64 }{
		{0, 32 * mib},
		{6 * mib, 44 * mib},
		{30 * mib, 92 * mib},
		{72 * mib, 168 * mib},
		{100 * mib, 196 * mib},
		{240 * mib, 336 * mib},
		{600 * mib, 840 * mib},
	} {
		if got := memoryLimit(tc.live); got != tc.want {
			t.Errorf("memoryLimit(%d MiB) = %d MiB, want %d MiB", tc.live/mib, got/mib, tc.want/mib)
		}
	}
}

// limitMemory caps the heap near the live catalog, unless the operator
// tuned the collector.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.DiscardHandler)
	debug.SetMemoryLimit(math.MaxInt64)
	limitMemory(func(string) (string, bool) { return "", false }, log)
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 || got < requestRoom {
		t.Errorf("limit = %d, want the live heap plus at least %d", got, requestRoom)
	}
	for _, tuned := range []string{"GOGC", "GOMEMLIMIT"} {
		debug.SetMemoryLimit(math.MaxInt64)
		limitMemory(func(k string) (string, bool) { return "400", k == tuned }, log)
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("with %s set, the limit became %d", tuned, got)
		}
	}
}

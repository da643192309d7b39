//go:build race

package httpserve

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop a quarter of what is put back, on purpose.
const raceEnabled = true

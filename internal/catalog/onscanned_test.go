package catalog_test

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// TestOnScanned checks that a scan reports its duration, and whether it
// was a rescan, to Options.OnScanned.
func TestOnScanned(t *testing.T) {
	fsys := fstest.MapFS{"a/SKILL.md": md("a", "A skill.")}
	type call struct {
		d      time.Duration
		rescan bool
	}
	var calls []call
	opts := &catalog.Options{OnScanned: func(d time.Duration, rescan bool) { calls = append(calls, call{d, rescan}) }}
	first := scan(t, fsys, opts)
	opts.Previous = first
	scan(t, fsys, opts)
	if len(calls) != 2 || calls[0].rescan || !calls[1].rescan {
		t.Fatalf("OnScanned calls = %+v, want a first scan then a rescan", calls)
	}
	if calls[0].d != first.ScanDuration || calls[0].d <= 0 {
		t.Errorf("first scan reported %v, its snapshot says %v", calls[0].d, first.ScanDuration)
	}
}

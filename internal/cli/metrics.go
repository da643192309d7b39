package cli

import (
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/metrics"
)

// observe has the HTTP server report to c.metrics and serve them at
// /metrics; a server without a catalog (the research profile) gets metrics
// without catalog gauges.
func (c *serveCommand) observe(opts *httpserve.Options) {
	if c.metrics == nil {
		c.metrics = metrics.New(nil)
	}
	c.metrics.Serve(opts)
}

// newMetrics returns the metrics of an HTTP server over store, and has
// every scan of libs report its duration to them.
func newMetrics(store *catalog.Store, libs *libraries) *metrics.Metrics {
	m := metrics.New(&metrics.Options{Catalog: func() metrics.Catalog {
		snap := store.Snapshot()
		if snap.Pending() {
			return metrics.Catalog{}
		}
		st := snap.Stats()
		return metrics.Catalog{Skills: st.Skills, Files: st.Files, Bytes: st.Bytes}
	}})
	libs.SetOnScanned(m.Scanned)
	return m
}

package cli

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/config"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/metrics"
)

// rateSettings are the HTTP rate limits: a flag beats its variable, which
// beats the config file's key, which beats the default.
type rateSettings struct {
	address, token float64 // requests per second; 0 is no limit
	burst          time.Duration
	// set records what a flag or variable gave, which the config file
	// does not override.
	setAddress, setToken, setBurst bool
}

// defaultRateSettings are the limits before flags, variables and file.
func defaultRateSettings() rateSettings {
	return rateSettings{address: httpserve.DefaultAddressRate, token: httpserve.DefaultTokenRate, burst: httpserve.DefaultRateBurst}
}

// register defines the rate limit flags on fs.
func (r *rateSettings) register(fs *flag.FlagSet) {
	rate := func(dst *float64, set *bool) func(string) error {
		return func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= config.MaxRate) {
				return fmt.Errorf("%q is not a number of requests per second from 0 (no limit) to %g", v, float64(config.MaxRate))
			}
			*dst, *set = f, true
			return nil
		}
	}
	fs.Func("rate-limit-address", fmt.Sprintf("over HTTP, allow one client address (IPv4, or IPv6 /64) at most `RATE` requests per second, 0 = no limit (default %d); X-Forwarded-For is never trusted", httpserve.DefaultAddressRate),
		rate(&r.address, &r.setAddress))
	fs.Func("rate-limit-token", fmt.Sprintf("over HTTP, allow one bearer token at most `RATE` requests per second from any address, 0 = no limit (default %d)", httpserve.DefaultTokenRate),
		rate(&r.token, &r.setToken))
	fs.Func("rate-limit-burst", fmt.Sprintf("let a client send `DURATION`'s worth of requests at once above its rate limits (default %s)", httpserve.DefaultRateBurst),
		func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > config.MaxRateBurst {
				return fmt.Errorf("%q is not a duration above 0 and at most %s, such as 2s", v, config.MaxRateBurst)
			}
			r.burst, r.setBurst = d, true
			return nil
		})
}

// fromFile takes the config file's limits that no flag or variable set.
// The file is read at start: a reload does not change the limits.
func (r *rateSettings) fromFile(c *config.Config) {
	if c == nil {
		return
	}
	if c.RateLimitAddress != nil && !r.setAddress {
		r.address = *c.RateLimitAddress
	}
	if c.RateLimitToken != nil && !r.setToken {
		r.token = *c.RateLimitToken
	}
	if c.RateLimitBurst != nil && !r.setBurst {
		r.burst = time.Duration(*c.RateLimitBurst)
	}
}

// apply sets the limits in opts, where zero means the default and a
// negative rate none.
func (r *rateSettings) apply(opts *httpserve.Options) {
	off := func(v float64) float64 {
		if v == 0 {
			return -1
		}
		return v
	}
	opts.AddressRate, opts.TokenRate, opts.RateBurst = off(r.address), off(r.token), r.burst
}

// rateFromFile applies the config file's rate limits to cfg.
func (l *libraries) rateFromFile() {
	l.cfg.rate.fromFile(l.Config())
}

// serverMetrics names the metrics type in serve.go, which imports
// runtime/metrics.
type serverMetrics = metrics.Metrics

// observe has the HTTP handler report to c.metrics and serve them at
// /metrics; a server without a catalog (the research profile) gets metrics
// without catalog gauges.
func (c *serveCommand) observe(opts *httpserve.Options) {
	if c.metrics == nil {
		c.metrics = metrics.New(nil)
	}
	opts.Observer, opts.Metrics = c.metrics, c.metrics.Handler()
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

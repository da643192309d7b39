package httpserve

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/config"
)

// RateSettings are the HTTP rate limits as a command line gathers them: a
// flag beats its variable, which beats the config file's key, which beats
// the default. The zero value has no limits; start from
// [DefaultRateSettings].
type RateSettings struct {
	// Address, Token and Project are requests per second; 0 is no limit.
	Address, Token, Project float64
	Burst                   time.Duration
	// set records what a flag or variable gave, which the config file
	// does not override.
	setAddress, setToken, setBurst bool
}

// DefaultRateSettings are the limits before flags, variables and file.
func DefaultRateSettings() RateSettings {
	return RateSettings{Address: DefaultAddressRate, Token: DefaultTokenRate, Project: DefaultProjectRate, Burst: DefaultRateBurst}
}

// rateFlag parses a rate flag's value, bounded as the config file's keys
// are.
func rateFlag(dst *float64, set *bool) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= config.MaxRate) {
			return fmt.Errorf("%q is not a number of requests per second from 0 (no limit) to %g", v, float64(config.MaxRate))
		}
		*dst = f
		if set != nil {
			*set = true
		}
		return nil
	}
}

// Register defines the rate limit flags (rate-limit-address,
// rate-limit-token, rate-limit-burst) on fs, bounded as the config file's
// keys are.
func (r *RateSettings) Register(fs *flag.FlagSet) {
	fs.Func("rate-limit-address", fmt.Sprintf("over HTTP, allow one client address (IPv4, or IPv6 /64) at most `RATE` requests per second, 0 = no limit (default %d); X-Forwarded-For is never trusted", DefaultAddressRate),
		rateFlag(&r.Address, &r.setAddress))
	fs.Func("rate-limit-token", fmt.Sprintf("over HTTP, allow one bearer token at most `RATE` requests per second from any address, 0 = no limit (default %d)", DefaultTokenRate),
		rateFlag(&r.Token, &r.setToken))
	fs.Func("rate-limit-burst", fmt.Sprintf("let a client send `DURATION`'s worth of requests at once above its rate limits (default %s)", DefaultRateBurst),
		func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > config.MaxRateBurst {
				return fmt.Errorf("%q is not a duration above 0 and at most %s, such as 2s", v, config.MaxRateBurst)
			}
			r.Burst, r.setBurst = d, true
			return nil
		})
}

// RegisterProject defines rate-limit-project on fs, for a server whose
// routes name projects (the hub's).
func (r *RateSettings) RegisterProject(fs *flag.FlagSet) {
	fs.Func("rate-limit-project", fmt.Sprintf("allow one project at most `RATE` requests per second, from any address and token, 0 = no limit (default %d)", DefaultProjectRate),
		rateFlag(&r.Project, nil))
}

// FromFile takes the config file's limits that no flag or variable set.
// The file is read at start: a reload does not change the limits.
func (r *RateSettings) FromFile(c *config.Config) {
	if c == nil {
		return
	}
	if c.RateLimitAddress != nil && !r.setAddress {
		r.Address = *c.RateLimitAddress
	}
	if c.RateLimitToken != nil && !r.setToken {
		r.Token = *c.RateLimitToken
	}
	if c.RateLimitBurst != nil && !r.setBurst {
		r.Burst = time.Duration(*c.RateLimitBurst)
	}
}

// Apply sets the limits in opts, where zero means the default and a
// negative rate none.
func (r *RateSettings) Apply(opts *Options) {
	off := func(v float64) float64 {
		if v == 0 {
			return -1
		}
		return v
	}
	opts.AddressRate, opts.TokenRate, opts.ProjectRate, opts.RateBurst = off(r.Address), off(r.Token), off(r.Project), r.Burst
}

// LimitSettings are the bounds on event streams and the shares of one
// client address as a command line gathers them. A zero field is the
// default of [Options] and [Shares]; a share set to 0 on the command line
// is none (kept here as -1). Start from the zero value.
type LimitSettings struct {
	MaxStreams      int
	AddressConns    int
	AddressStreams  int
	AddressRequests int
	StreamLifetime  time.Duration
}

// Register defines the flags max-streams, max-conns-per-address,
// max-streams-per-address, max-requests-per-address and stream-lifetime
// on fs.
func (l *LimitSettings) Register(fs *flag.FlagSet) {
	count := func(dst *int, zero int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a count from 0", v)
			}
			if n == 0 {
				n = zero
			}
			*dst = n
			return nil
		}
	}
	fs.Func("max-streams", fmt.Sprintf("at most `N` event streams (subscriptions/listen, GET streams) open at once over HTTP; more get 503 with Retry-After (default %d)", DefaultMaxStreams),
		func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive count", v)
			}
			l.MaxStreams = n
			return nil
		})
	fs.Func("max-conns-per-address", "at most `N` HTTP connections open from one client address (IPv4, or IPv6 /64), 0 = no share (default a sixteenth of --max-conns: 256); behind a reverse proxy every client has the proxy's address",
		count(&l.AddressConns, -1))
	fs.Func("max-streams-per-address", "at most `N` event streams open from one client address, 0 = no share (default 64)",
		count(&l.AddressStreams, -1))
	fs.Func("max-requests-per-address", "at most `N` HTTP requests in flight from one client address, 0 = no share (default a quarter of the requests in flight: 16)",
		count(&l.AddressRequests, -1))
	fs.Func("stream-lifetime", fmt.Sprintf("end an event stream after `DURATION` (its client reconnects), 0 = never (default %s)", DefaultStreamLifetime),
		func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("%q is not a duration from 0, such as 30m", v)
			}
			if d == 0 {
				d = -1
			}
			l.StreamLifetime = d
			return nil
		})
}

// Apply sets the bounds in opts.
func (l *LimitSettings) Apply(opts *Options) {
	opts.MaxStreams, opts.StreamLifetime = l.MaxStreams, l.StreamLifetime
	opts.Shares.AddressConns, opts.Shares.AddressStreams, opts.Shares.AddressRequests = l.AddressConns, l.AddressStreams, l.AddressRequests
}

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
	// Address and Token are requests per second; 0 is no limit.
	Address, Token float64
	Burst          time.Duration
	// set records what a flag or variable gave, which the config file
	// does not override.
	setAddress, setToken, setBurst bool
}

// DefaultRateSettings are the limits before flags, variables and file.
func DefaultRateSettings() RateSettings {
	return RateSettings{Address: DefaultAddressRate, Token: DefaultTokenRate, Burst: DefaultRateBurst}
}

// Register defines the rate limit flags (rate-limit-address,
// rate-limit-token, rate-limit-burst) on fs, bounded as the config file's
// keys are.
func (r *RateSettings) Register(fs *flag.FlagSet) {
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
	fs.Func("rate-limit-address", fmt.Sprintf("over HTTP, allow one client address (IPv4, or IPv6 /64) at most `RATE` requests per second, 0 = no limit (default %d); X-Forwarded-For is never trusted", DefaultAddressRate),
		rate(&r.Address, &r.setAddress))
	fs.Func("rate-limit-token", fmt.Sprintf("over HTTP, allow one bearer token at most `RATE` requests per second from any address, 0 = no limit (default %d)", DefaultTokenRate),
		rate(&r.Token, &r.setToken))
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
	opts.AddressRate, opts.TokenRate, opts.RateBurst = off(r.Address), off(r.Token), r.Burst
}

package httpserve

import (
	"net/http"
	"time"
)

// ServeWithGrace is Serve with a chosen shutdown grace period, so tests can
// reach the forced-close path without waiting five seconds.
var ServeWithGrace = serve

// NewGuardWithClock is NewGuard with the clock its rate limits and
// refusal logs read, so tests can empty and refill buckets without
// sleeping.
var NewGuardWithClock = newGuard

// HandlerWithClock is Handler with the clock of the rate limits.
func HandlerWithClock(mcpHandler http.Handler, opts *Options, now func() time.Time) http.Handler {
	return newGuard(opts, now).Handler(mcpHandler)
}

package httpserve

// ServeWithGrace is Serve with a chosen shutdown grace period, so tests can
// reach the forced-close path without waiting five seconds.
var ServeWithGrace = serve

// HandlerWithClock is Handler with the clock its rate limits read, so
// tests can empty and refill buckets without sleeping.
var HandlerWithClock = handler

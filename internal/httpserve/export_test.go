package httpserve

// ServeWithGrace is Serve with a chosen shutdown grace period, so tests can
// reach the forced-close path without waiting five seconds.
var ServeWithGrace = serve

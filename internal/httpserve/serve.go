package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

const (
	// shutdownGrace is how long in-flight requests may run once shutdown
	// begins. MCP calls over stateless HTTP are short; what outlives this
	// is almost always an idle event stream, which is closed.
	shutdownGrace = 5 * time.Second

	// readHeaderTimeout stops slow-header clients from holding connections.
	readHeaderTimeout = 10 * time.Second

	// idleTimeout closes keep-alive connections nobody is using.
	idleTimeout = 120 * time.Second
)

// Serve serves h on ln until ctx is done, then shuts down gracefully: it
// stops accepting connections, lets in-flight requests run for up to 5
// seconds, then cancels their contexts and closes their connections.
//
// It returns nil once a shutdown triggered by ctx is complete, including
// one that had to close requests still running at the deadline (logged at
// Warn). Otherwise it returns the error that stopped serving. Either way ln
// is closed and every connection is gone when Serve returns.
//
// Request contexts carry ctx's values but not its cancellation, so that
// in-flight requests can finish. A request must be read within 30 seconds
// (its headers within 10); h bounds the writes of its answers (a
// [Guard]'s handler does: see the package doc), so the server itself sets
// no write timeout. Event streams parked by a guard's handler end when
// shutdown begins (as at their lifetime: their clients reconnect
// elsewhere), and are closed at the end of the grace period. If logger is
// nil, Serve does not log.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) error {
	return serve(ctx, ln, h, logger, shutdownGrace)
}

func serve(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger, grace time.Duration) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Cancelled only when the grace period runs out, so handlers blocked on
	// their request context (event streams) notice and return.
	parked := newParkedSet()
	defer parked.closeAll()
	baseCtx, cancelBase := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), parkedKey{}, parked))
	defer cancelBase()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		// Serve has closed ln; drop any connections it left behind.
		srv.Close()
		return fmt.Errorf("serving HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	logger.Info("shutting down", "addr", ln.Addr().String())
	parked.finishAll()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("closing requests still running after the grace period",
			"grace", grace, "err", err)
		cancelBase()
		srv.Close()
	}
	// The parked streams' last chunks are on their way (each write is
	// bounded): let them arrive before the rest is closed.
	select {
	case <-parked.drained:
	case <-shutdownCtx.Done():
	}
	// Shutdown makes srv.Serve return ErrServerClosed straight away; wait for
	// it so no goroutine outlives this call.
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving HTTP on %s: %w", ln.Addr(), err)
	}
	return nil
}

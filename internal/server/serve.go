package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AfterHandshake returns a channel closed once the host's handshake
// (initialize, or server/discover) is answered, or at the first other
// request, which may wait for the catalog. Over stdio the first scan starts
// on it, so that the handshake and the scan do not share the cores.
func AfterHandshake(ms *mcp.Server) <-chan struct{} {
	first := make(chan struct{})
	var once sync.Once
	start := func() { once.Do(func() { close(first) }) }
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "initialize" && method != "server/discover" {
				start() // this request may wait for the scan
				return next(ctx, method, req)
			}
			res, err := next(ctx, method, req)
			start()
			return res, err
		}
	})
	return first
}

// StreamableHTTP is the MCP endpoint of ms over stateless streamable HTTP,
// with srv's front end (HTTPHandler) before it when srv is not nil. Host
// checks and authentication are the caller's (httpserve).
func StreamableHTTP(ms *mcp.Server, srv *Server, logger *slog.Logger) http.Handler {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// One JSON body per answer, not an event stream: nothing is sent
		// before a stateless answer, the body needs no SSE framing or
		// flush per event (13-55% more requests per second), and proxies
		// handle it as any JSON API. The spec lets a server answer a POST
		// either way, and a client must accept both.
		JSONResponse: true,
		// Our own Host check (httpserve) is the gate, and the one loopback
		// test; the SDK's would refuse every host an operator allowed.
		DisableLocalhostProtection: true,
		Logger:                     logger,
	})
	if srv != nil {
		h = srv.HTTPHandler(h)
	}
	return h
}

package check

import (
	"context"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/mcpclient"
)

// metered is a transport together with the meter that says why it cut a
// connection (it implements causer).
type metered struct {
	mcp.Transport
	*mcpclient.Meter
}

// HTTP returns a Dialer for the Streamable HTTP endpoint at endpoint. Every
// response body is bounded to maxBytes (DefaultMaxMessageBytes if zero).
// The checker needs no server-initiated messages, and a dropped connection
// is a finding, not something to hide by reconnecting.
func HTTP(endpoint string, maxBytes int64) (Dialer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	// Validate the URL once, before any connection.
	if _, err := mcpclient.NewHTTPTransport(endpoint, nil, maxBytes, new(mcpclient.Meter)); err != nil {
		return nil, err
	}
	return func(context.Context) (mcp.Transport, error) {
		m := new(mcpclient.Meter)
		t, err := mcpclient.NewHTTPTransport(endpoint, nil, maxBytes, m)
		if err != nil {
			return nil, err
		}
		return metered{t, m}, nil
	}, nil
}

// stopAfter is how long closing waits for the server to exit after its
// stdin closes, and again after SIGTERM, before killing it: short, since a
// server under test may ignore all of it.
const stopAfter = 2 * time.Second

// Command returns a Dialer that starts argv for each connection and speaks
// to it over its stdin and stdout. The server's stderr goes to stderr.
// A line longer than maxBytes (DefaultMaxMessageBytes if zero) cuts the
// connection.
func Command(argv []string, stderr io.Writer, maxBytes int64) Dialer {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return func(context.Context) (mcp.Transport, error) {
		m := new(mcpclient.Meter)
		return metered{&mcpclient.CommandTransport{
			Argv: argv, Stderr: stderr, MaxMessageBytes: int(maxBytes), Meter: m, StopAfter: stopAfter,
		}, m}, nil
	}
}

package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/metrics"
)

// BenchmarkGuards measures what the rate limits and the metrics add to a
// request through Handler, over a backend that only reads the body.
func BenchmarkGuards(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/b/SKILL.md"}}`
	for name, opts := range map[string]*httpserve.Options{
		"bare":    {AddressRate: -1},
		"limited": {AddressRate: 1e9},
		"metered": func() *httpserve.Options {
			m := metrics.New(nil)
			return &httpserve.Options{AddressRate: 1e9, Observer: m, Metrics: m.Handler()}
		}(),
	} {
		b.Run(name, func(b *testing.B) {
			h := httpserve.Handler(http.HandlerFunc(echo), opts)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Host = "localhost"
				req.RemoteAddr = "127.0.0.1:5000"
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

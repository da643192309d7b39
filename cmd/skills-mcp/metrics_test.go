package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// rpc posts a JSON-RPC request to url with token and returns the answer.
func rpc(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestHTTPRateLimitAndMetrics runs the binary with a token limit of one
// request per 100 s: a token's second request gets 429 with Retry-After
// and a JSON-RPC error, another token is still served, and /metrics,
// which needs a token, shows the counts moved.
func TestHTTPRateLimitAndMetrics(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokenFile, []byte("tok-a\ntok-b\ntok-c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, nil, "--root", testLibrary, "--token-file", tokenFile,
		"--rate-limit-token", "0.01", "--rate-limit-burst", "100s")
	base := strings.TrimSuffix(url, "/mcp")

	// Wait for the first scan, so that the catalog gauges have a value.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("/healthz not ready within a minute")
		case <-time.After(20 * time.Millisecond):
		}
	}

	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	resp := rpc(t, url, "tok-a", ping)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first ping: status %d, want 200", resp.StatusCode)
	}
	resp = rpc(t, url, "tok-a", ping)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second ping with the token: status %d, want 429: %s", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q, want a number of seconds", ra)
	}
	var msg struct {
		JSONRPC string
		Error   struct{ Code int }
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error.Code != -32000 {
		t.Errorf("429 body is not a JSON-RPC error: %s", body)
	}
	resp = rpc(t, url, "tok-b", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another token after tok-a ran dry: status %d, want 200", resp.StatusCode)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: status %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer tok-c")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics with a token: status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skills_mcp_http_requests_total", map[string]string{"method": "ping", "code": "200"}, 2},
		{"skills_mcp_http_requests_total", map[string]string{"method": "none", "code": "429"}, 1},
		{"skills_mcp_http_rate_limited_total", map[string]string{"key": "token"}, 1},
		{"skills_mcp_catalog_skills", nil, 9},
		{"skills_mcp_catalog_scan_duration_seconds", map[string]string{"kind": "first"}, 1},
	} {
		if got := sample(fams[tc.name], tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

// sample returns the value of fam's series with exactly labels (a
// histogram's count), or -1.
func sample(fam *dto.MetricFamily, labels map[string]string) float64 {
next:
	for _, m := range fam.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

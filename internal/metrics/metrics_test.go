package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/metrics"
)

// echo stands in for the SDK's handler: it reads the body and answers 200,
// or 202 for a notification, as the SDK does over stateless HTTP.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), `"notifications/`) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
}

// server runs Handler with the metrics as its Observer and at /metrics.
func server(t *testing.T, m *metrics.Metrics, opts httpserve.Options) *httptest.Server {
	t.Helper()
	opts.Observer, opts.Metrics = m, m.Handler()
	srv := httptest.NewServer(httpserve.Handler(http.HandlerFunc(echo), &opts))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptest.Server, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// scrape fetches /metrics and parses it as the Prometheus text format.
func scrape(t *testing.T, srv *httptest.Server, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /metrics: status %d: %s", res.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value returns the value of the family's series with exactly these
// labels: a counter's or gauge's value, a histogram's sample count; -1 if
// there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	fam := fams[name]
	if fam == nil {
		return -1
	}
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

func TestMetricsCountRequests(t *testing.T) {
	m := metrics.New(&metrics.Options{Catalog: func() metrics.Catalog {
		return metrics.Catalog{Skills: 3, Files: 17, Bytes: 4096}
	}})
	srv := server(t, m, httpserve.Options{MaxBodyBytes: 1024, AddressRate: 5, RateBurst: time.Second})
	m.Scanned(120*time.Millisecond, false)
	m.Scanned(30*time.Millisecond, true)
	m.Scanned(40*time.Millisecond, true)

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"made/up/` + strings.Repeat("x", 100) + `"}`,
	} {
		post(t, srv, "", body)
	}
	if got := post(t, srv, "", `{"method":"ping","pad":"`+strings.Repeat("x", 2000)+`"}`); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("body over the limit: status %d, want 413", got)
	}
	if got := post(t, srv, "", `{"method":"ping"}`); got != http.StatusTooManyRequests {
		t.Fatalf("sixth request at 5 per second: status %d, want 429", got)
	}

	fams := scrapeDirect(t, m)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skills_mcp_http_requests_total", map[string]string{"method": "skills/list", "code": "200"}, 2},
		{"skills_mcp_http_requests_total", map[string]string{"method": "notifications/initialized", "code": "202"}, 1},
		{"skills_mcp_http_requests_total", map[string]string{"method": "other", "code": "200"}, 1},
		{"skills_mcp_http_requests_total", map[string]string{"method": "none", "code": "413"}, 1}, // refused before the body was read
		{"skills_mcp_http_requests_total", map[string]string{"method": "none", "code": "429"}, 1},
		{"skills_mcp_http_request_duration_seconds", map[string]string{"method": "skills/list"}, 2},
		{"skills_mcp_http_rate_limited_total", map[string]string{"key": "address"}, 1},
		{"skills_mcp_http_rate_limited_total", map[string]string{"key": "token"}, 0},
		{"skills_mcp_http_size_limited_total", map[string]string{"limit": "request_body"}, 1},
		{"skills_mcp_catalog_skills", nil, 3},
		{"skills_mcp_catalog_files", nil, 17},
		{"skills_mcp_catalog_bytes", nil, 4096},
		{"skills_mcp_catalog_scan_duration_seconds", map[string]string{"kind": "first"}, 1},
		{"skills_mcp_catalog_scan_duration_seconds", map[string]string{"kind": "rescan"}, 2},
		{"skills_mcp_build_info", map[string]string{"version": buildinfo.Read().Version, "revision": buildinfo.Read().Revision, "goversion": buildinfo.Read().GoVersion}, 1},
	} {
		if got := value(fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s is not exported", name)
		}
	}
	for _, mf := range fams["skills_mcp_http_requests_total"].GetMetric() {
		for _, l := range mf.GetLabel() {
			if strings.Contains(l.GetValue(), "made/up") {
				t.Errorf("an unknown method became a label value: %q", l.GetValue())
			}
		}
	}
}

// scrapeDirect scrapes the metrics handler itself, past the guards (the
// test spent the address's bucket on purpose).
func scrapeDirect(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("metrics handler: status %d: %s", w.Code, w.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// TestMetricsNeedToken checks that /metrics is refused without one of the
// server's tokens, and served with one.
func TestMetricsNeedToken(t *testing.T) {
	m := metrics.New(nil)
	srv := server(t, m, httpserve.Options{Tokens: []string{"tok"}})
	res, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: status %d, want 401", res.StatusCode)
	}
	post(t, srv, "tok", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	fams := scrape(t, srv, "tok")
	if got := value(fams, "skills_mcp_http_requests_total", map[string]string{"method": "tools/list", "code": "200"}); got != 1 {
		t.Errorf("tools/list 200 = %v, want 1", got)
	}
	if got := value(fams, "skills_mcp_http_requests_total", map[string]string{"method": "none", "code": "401"}); got != -1 {
		t.Errorf("a refused scrape was counted as an /mcp request: %v", got)
	}
	if fams["skills_mcp_catalog_skills"] != nil {
		t.Error("catalog gauges exported without Options.Catalog")
	}
}

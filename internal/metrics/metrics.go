// Package metrics counts what a serving skills-mcp does and serves the
// counts in the Prometheus text format.
//
// A [Metrics] keeps its own set of metrics (never a process-wide one):
// HTTP requests by JSON-RPC method and status with their latency, refusals
// by the rate and size limits, the catalog's size, the durations of the
// first scan and of rescans, the build, and the Go runtime's and the
// process's own figures. It implements [httpserve.Observer], so that the
// HTTP layer reports to it without knowing the metrics library.
//
// The library is VictoriaMetrics/metrics rather than client_golang: this
// package is linked into the binary agent hosts spawn over stdio for every
// conversation, and client_golang's initialisers (its default registry and
// collectors, protobuf) cost 1.8 MiB of resident memory and 0.8 ms at every
// start, metrics or not; this library's cost 0.15 of each
// (docs/decisions/2026-12-04-lean-start.md). The output is the same text
// format, series for series.
//
// Every label has a bounded set of values: a method the server does not
// know is counted as "other", whatever clients send.
package metrics

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// namespace prefixes every metric of ours.
const namespace = "skills_mcp"

// Values of the method label besides the method names themselves.
const (
	// MethodOther counts requests naming a method not in [Methods].
	MethodOther = "other"
	// MethodNone counts requests whose method was not read: no body (a
	// GET), a refusal before the body was read, or a body that is no
	// JSON-RPC request.
	MethodNone = "none"
	// MethodBatch counts JSON-RPC batches (a JSON array).
	MethodBatch = "batch"
)

// Methods are the JSON-RPC methods counted under their own name: those of
// every MCP revision served, and SEP-2640's.
var Methods = []string{
	"initialize", "ping", "server/discover", "subscriptions/listen",
	"tools/list", "tools/call", "prompts/list", "prompts/get",
	"resources/list", "resources/read", "resources/templates/list",
	"resources/subscribe", "resources/unsubscribe", "resources/directory/read",
	"skills/list", "skills/get",
	"completion/complete", "logging/setLevel",
	"tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
	"notifications/initialized", "notifications/cancelled", "notifications/progress",
	"notifications/roots/list_changed",
	// Answers to the server's own requests, which a client may post.
	"roots/list", "sampling/createMessage", "elicitation/create",
}

// Catalog is the size of the catalog served.
type Catalog struct {
	Skills int
	Files  int
	Bytes  int64
}

// Options configures [New]. A nil *Options means defaults.
type Options struct {
	// Catalog, if non-nil, returns the size of the catalog served; it is
	// called at each scrape and must be safe for concurrent use. If nil,
	// the catalog gauges are not exported.
	Catalog func() Catalog
}

// Metrics holds the metrics. Its methods are safe for concurrent use.
type Metrics struct {
	set     *vm.Set
	methods map[string]bool
	// series are the counters and histograms made so far, by full name
	// (with labels): the set makes each once, this saves formatting the
	// name on every request.
	mu     sync.Mutex
	series map[seriesKey]any
}

type seriesKey struct {
	kind          byte // 'r' requests, 'l' latency, 'a' rate, 's' size, 'n' scans
	label, label2 string
}

var _ httpserve.Observer = (*Metrics)(nil)

// requestBuckets are the latency buckets of a request, in seconds: a plain
// answer takes well under a millisecond, a large listing or read a few,
// and an event stream as long as it stays open (the last bucket).
var requestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// scanBuckets are the duration buckets of a scan, in seconds: from an
// unchanged small library (milliseconds) to a cold 100,000 skills
// (minutes): 5 ms times 2.5 to the power 0 to 11.
var scanBuckets = func() []float64 {
	b := make([]float64, 12)
	for i, v := 0, 0.005; i < len(b); i, v = i+1, v*2.5 {
		b[i] = v
	}
	return b
}()

// New returns metrics with every series that exists from the start.
func New(opts *Options) *Metrics {
	if opts == nil {
		opts = &Options{}
	}
	// TYPE lines, so that scrapers know counters from gauges and
	// histograms (the library's switch is process-wide; this package is
	// its only user).
	vm.ExposeMetadata(true)
	m := &Metrics{set: vm.NewSet(), methods: map[string]bool{}, series: map[seriesKey]any{}}
	for _, name := range Methods {
		m.methods[name] = true
	}
	bi := buildinfo.Read()
	m.set.NewGauge(fmt.Sprintf(`%s_build_info{version=%q,revision=%q,goversion=%q}`, namespace, bi.Version, bi.Revision, bi.GoVersion),
		func() float64 { return 1 })
	if opts.Catalog != nil {
		size := opts.Catalog
		m.set.NewGauge(namespace+"_catalog_skills", func() float64 { return float64(size().Skills) })
		m.set.NewGauge(namespace+"_catalog_files", func() float64 { return float64(size().Files) })
		m.set.NewGauge(namespace+"_catalog_bytes", func() float64 { return float64(size().Bytes) })
	}
	// Series that exist from the start, so that a rate over them works
	// before the first refusal.
	for _, key := range httpserve.RateKeys {
		m.counter('a', key, "")
	}
	for _, limit := range httpserve.Limits {
		m.counter('s', limit, "")
	}
	return m
}

// counter returns the counter of a kind and its labels, made on first use.
func (m *Metrics) counter(kind byte, label, label2 string) *vm.Counter {
	k := seriesKey{kind, label, label2}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.series[k]; ok {
		return c.(*vm.Counter)
	}
	var name string
	switch kind {
	case 'r':
		name = fmt.Sprintf(`%s_http_requests_total{method=%q,code=%q}`, namespace, label, label2)
	case 'a':
		name = fmt.Sprintf(`%s_http_rate_limited_total{key=%q}`, namespace, label)
	case 's':
		name = fmt.Sprintf(`%s_http_size_limited_total{limit=%q}`, namespace, label)
	}
	c := m.set.NewCounter(name)
	m.series[k] = c
	return c
}

// histogram returns the histogram of a kind and its label, made on first
// use.
func (m *Metrics) histogram(kind byte, label string) *vm.PrometheusHistogram {
	k := seriesKey{kind: kind, label: label}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.series[k]; ok {
		return h.(*vm.PrometheusHistogram)
	}
	var h *vm.PrometheusHistogram
	switch kind {
	case 'l':
		h = m.set.NewPrometheusHistogramExt(fmt.Sprintf(`%s_http_request_duration_seconds{method=%q}`, namespace, label), requestBuckets)
	case 'n':
		h = m.set.NewPrometheusHistogramExt(fmt.Sprintf(`%s_catalog_scan_duration_seconds{kind=%q}`, namespace, label), scanBuckets)
	}
	m.series[k] = h
	return h
}

// Handler serves the metrics in the Prometheus text format, with the Go
// runtime's and the process's.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.set.WritePrometheus(w)
		vm.WriteProcessMetrics(w)
	})
}

// Serve has an HTTP server report to m and serve the metrics at
// /metrics: it sets opts.Observer and opts.Metrics.
func (m *Metrics) Serve(opts *httpserve.Options) {
	opts.Observer, opts.Metrics = m, m.Handler()
}

// Request implements [httpserve.Observer].
func (m *Metrics) Request(info httpserve.RequestInfo) {
	method := m.methodLabel(info)
	m.counter('r', method, statusLabel(info.Status)).Inc()
	m.histogram('l', method).Update(info.Elapsed.Seconds())
}

// statusLabels are the status codes as labels, made once rather than per
// request.
var statusLabels = func() (l [600]string) {
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(code int) string {
	if code >= 0 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}

// methodLabel bounds the method label to Methods and the three others.
func (m *Metrics) methodLabel(info httpserve.RequestInfo) string {
	switch {
	case info.Batch:
		return MethodBatch
	case info.Method == "":
		return MethodNone
	case m.methods[info.Method]:
		return info.Method
	}
	return MethodOther
}

// RateLimited implements [httpserve.Observer].
func (m *Metrics) RateLimited(key string) { m.counter('a', key, "").Inc() }

// SizeLimited implements [httpserve.Observer].
func (m *Metrics) SizeLimited(limit string) { m.counter('s', limit, "").Inc() }

// Scanned records a scan's duration; rescan is false for the first scan
// of the process. It has the shape of catalog.Options.OnScanned.
func (m *Metrics) Scanned(d time.Duration, rescan bool) {
	kind := "first"
	if rescan {
		kind = "rescan"
	}
	m.histogram('n', kind).Update(d.Seconds())
}

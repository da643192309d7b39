// Package metrics counts what a serving skills-mcp does and serves the
// counts in the Prometheus text format.
//
// A [Metrics] keeps its own registry (never the process-wide default one,
// which any imported package could fill): HTTP requests by JSON-RPC method
// and status with their latency, refusals by the rate and size limits,
// the catalog's size, the durations of the first scan and of rescans, and
// the Go runtime's and the process's own figures. It implements
// [httpserve.Observer], so that the HTTP layer reports to it without
// knowing Prometheus.
//
// Every label has a bounded set of values: a method the server does not
// know is counted as "other", whatever clients send.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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

// Metrics holds the collectors. Its methods are safe for concurrent use.
type Metrics struct {
	reg         *prometheus.Registry
	methods     map[string]bool
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	sizeLimited *prometheus.CounterVec
	scans       *prometheus.HistogramVec
}

var _ httpserve.Observer = (*Metrics)(nil)

// requestBuckets are the latency buckets of a request, in seconds: a plain
// answer takes well under a millisecond, a large listing or read a few,
// and an event stream as long as it stays open (the last bucket).
var requestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// scanBuckets are the duration buckets of a scan, in seconds: from an
// unchanged small library (milliseconds) to a cold 100,000 skills
// (minutes).
var scanBuckets = prometheus.ExponentialBuckets(0.005, 2.5, 12) // 5 ms to about 19 min

// New returns metrics with every collector registered.
func New(opts *Options) *Metrics {
	if opts == nil {
		opts = &Options{}
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		methods: map[string]bool{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests to /mcp answered, by JSON-RPC method (other: a method the server does not know; none: not read; batch: a JSON array) and HTTP status code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from a request's arrival at the handler to its answer, by JSON-RPC method as in skills_mcp_http_requests_total.",
			Buckets: requestBuckets,
		}, []string{"method"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "rate_limited_total",
			Help: "Requests refused with 429, by the bucket that was empty: address (the client's) or token (the bearer token's).",
		}, []string{"key"}),
		sizeLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "size_limited_total",
			Help: "Requests refused by a bound on sizes or load, by the bound (request_body: a body over the limit, 413; batch: 400; concurrency and body_budget: 503; response: an answer over the limit; connections: a connection refused).",
		}, []string{"limit"}),
		scans: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "catalog", Name: "scan_duration_seconds",
			Help:    "Duration of library scans: kind first (the scan at start) or rescan (after a change, a reload or the safety interval).",
			Buckets: scanBuckets,
		}, []string{"kind"}),
	}
	for _, name := range Methods {
		m.methods[name] = true
	}
	m.reg.MustRegister(m.requests, m.latency, m.rateLimited, m.sizeLimited, m.scans, BuildInfo(namespace),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Catalog != nil {
		m.reg.MustRegister(&catalogCollector{size: opts.Catalog})
	}
	// Series that exist from the start, so that a rate over them works
	// before the first refusal.
	for _, key := range []string{"address", "token"} {
		m.rateLimited.WithLabelValues(key)
	}
	for _, limit := range httpserve.Limits {
		m.sizeLimited.WithLabelValues(limit)
	}
	return m
}

// BuildInfo is the gauge NAMESPACE_build_info, always 1, whose labels say
// which build is running: version, revision and goversion.
func BuildInfo(namespace string) prometheus.Collector {
	bi := buildinfo.Read()
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "The running build: its version, VCS revision and Go version (always 1).",
		ConstLabels: prometheus.Labels{"version": bi.Version, "revision": bi.Revision, "goversion": bi.GoVersion},
	}, func() float64 { return 1 })
}

// Handler serves the metrics in the Prometheus exposition formats. A
// collector's error answers 500, so that the scraper notices.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// Serve has an HTTP server report to m and serve the metrics at
// /metrics: it sets opts.Observer and opts.Metrics.
func (m *Metrics) Serve(opts *httpserve.Options) {
	opts.Observer, opts.Metrics = m, m.Handler()
}

// Registry returns the registry, for tests and for callers adding
// collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request implements [httpserve.Observer].
func (m *Metrics) Request(info httpserve.RequestInfo) {
	method := m.methodLabel(info)
	m.requests.WithLabelValues(method, statusLabel(info.Status)).Inc()
	m.latency.WithLabelValues(method).Observe(info.Elapsed.Seconds())
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
func (m *Metrics) RateLimited(key string) { m.rateLimited.WithLabelValues(key).Inc() }

// SizeLimited implements [httpserve.Observer].
func (m *Metrics) SizeLimited(limit string) { m.sizeLimited.WithLabelValues(limit).Inc() }

// Scanned records a scan's duration; rescan is false for the first scan
// of the process. It has the shape of catalog.Options.OnScanned.
func (m *Metrics) Scanned(d time.Duration, rescan bool) {
	kind := "first"
	if rescan {
		kind = "rescan"
	}
	m.scans.WithLabelValues(kind).Observe(d.Seconds())
}

// catalogCollector exports the catalog's size as read at scrape time, so
// that it is never stale and costs nothing between scrapes.
type catalogCollector struct {
	size func() Catalog
}

var (
	skillsDesc = prometheus.NewDesc(namespace+"_catalog_skills", "Skills listed in the catalog served.", nil, nil)
	filesDesc  = prometheus.NewDesc(namespace+"_catalog_files", "Files served, in every skill of the catalog.", nil, nil)
	bytesDesc  = prometheus.NewDesc(namespace+"_catalog_bytes", "Bytes of the files served.", nil, nil)
)

func (c *catalogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- skillsDesc
	ch <- filesDesc
	ch <- bytesDesc
}

func (c *catalogCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.size()
	ch <- prometheus.MustNewConstMetric(skillsDesc, prometheus.GaugeValue, float64(s.Skills))
	ch <- prometheus.MustNewConstMetric(filesDesc, prometheus.GaugeValue, float64(s.Files))
	ch <- prometheus.MustNewConstMetric(bytesDesc, prometheus.GaugeValue, float64(s.Bytes))
}

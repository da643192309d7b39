// Package hubserve is the skill hub's HTTP server, what `skills-hub
// serve` runs:
//
//	GET /livez    200 {"status":"ok"} while the process answers
//	GET /readyz   200 {"status":"ok"} while the database answers, else 503
//	              {"status":"unavailable"}; /healthz is the same
//	/api/…        the admin API (package api)
//	GET /metrics  Prometheus metrics, for an admin token of scope read
//	/p/…          the project endpoints, Options.Projects
//	/api/v1/…     the ClawHub-compatible registry, Options.Registry
//	GET /.well-known/clawhub.json   its discovery document
//	anything else the web interface, Options.UI; without one a JSON 404
//
// Every route stands behind the guard stack `serve --http` uses (package
// httpserve's Guard.Wrap, configured by Options.HTTP): the probes first,
// with no Host check, token or limit; then the Host and Origin checks,
// the per-write deadlines, the rate limits per address, per token and per
// project, and every client's shares; the project endpoints' MCP requests
// also meet the body and stream guards of an MCP endpoint. Every answer of
// its own is JSON; a panic in a handler is logged and answered 500, never
// taking the process down. Serve shuts down gracefully when its context
// ends.
package hubserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/clawhub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Options configure New.
type Options struct {
	// Hub is the hub's operations the admin API and the registry apply.
	// Required.
	Hub *hub.Hub
	// Store is the hub's store: the admin API's, the registry's tokens, and
	// what /readyz asks. Required.
	Store api.Store
	// Projects serves /p/… (the project endpoints). If nil, /p/ answers a
	// JSON 404.
	Projects http.Handler
	// ProjectStats, if not nil, is called at each scrape of /metrics for
	// every project's live sessions, bindings and requests.
	ProjectStats func() []ProjectStat
	// EndpointStats, if not nil, is called at each scrape of /metrics for
	// the project endpoints' totals.
	EndpointStats func() EndpointStat
	// Collectors are registered on the server's metrics registry too (the
	// project endpoints' own metrics, say).
	Collectors []prometheus.Collector
	// API configures the admin API; its Hub, Store and Logger are this
	// server's.
	API api.Options
	// Registry, if not nil, configures the ClawHub-compatible registry
	// (package clawhub) served at /api/v1/ and /.well-known/clawhub.json;
	// its Logger defaults to this server's. If nil, those paths are the
	// admin API's and the UI's.
	Registry *clawhub.Options
	// UI, if not nil, builds the web interface served at every path the
	// routes above do not take (the hub's administration, package
	// hubadmin), given the admin API it acts through. If nil, those paths
	// answer a JSON 404.
	UI func(api http.Handler) (http.Handler, error)
	// Logger receives the server's logs. If nil, nothing is logged.
	Logger *slog.Logger
	// HTTP configures the guard stack: allowed hosts, rate limits, caps
	// and shares (its zero value: every default). Its Ready, MCP, Project,
	// Observer and Logger are the server's own.
	HTTP httpserve.Options
}

// ProjectStat is one project's figures for /metrics.
type ProjectStat struct {
	Project  string
	Sessions int
	Bindings int
	// Requests counts the requests its endpoint served.
	Requests int64
	// IndexRequests counts the requests its well-known index served.
	IndexRequests int64
}

// EndpointStat is the project endpoints' totals for /metrics.
type EndpointStat struct {
	// Versions is how many versions are materialised and open.
	Versions int
	// Refreshes counts the catalog refreshes after binding changes, and
	// RefreshErrors those that failed.
	Refreshes, RefreshErrors int64
	// Unloaded counts the catalogs dropped for being idle.
	Unloaded int64
	// StoreErrors counts the endpoints' requests refused because the
	// database did not answer; /metrics adds them to
	// skills_hub_store_errors_total.
	StoreErrors int64
}

// Server is the hub's HTTP handler and what it counts.
type Server struct {
	st       api.Store
	log      *slog.Logger
	api      *api.API
	projects http.Handler
	ui       http.Handler
	mux      *http.ServeMux
	guard    *httpserve.Guard
	reg      *prometheus.Registry

	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	storeErrors atomic.Int64 // the API's and /healthz's; the endpoints count theirs
	refreshes   *prometheus.CounterVec
}

// New builds the server.
func New(opts Options) (*Server, error) {
	if opts.Hub == nil || opts.Store == nil {
		return nil, errors.New("hub server: no hub or no store")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{st: opts.Store, log: log, projects: opts.Projects, mux: http.NewServeMux(), reg: prometheus.NewRegistry()}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skills_hub_http_requests_total", Help: "HTTP requests answered, by route, method and status.",
	}, []string{"route", "method", "status"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "skills_hub_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route", "method"})
	endpointStats := opts.EndpointStats
	storeErrors := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "skills_hub_store_errors_total", Help: "Requests (API, project endpoints, /healthz) that failed because the database was unavailable, full or failed.",
	}, func() float64 {
		n := s.storeErrors.Load()
		if endpointStats != nil {
			n += endpointStats().StoreErrors
		}
		return float64(n)
	})
	s.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skills_hub_catalog_refreshes_total", Help: "Catalog syncs through the admin API, by result (ok or failed).",
	}, []string{"result"})
	s.refreshes.WithLabelValues("ok")
	s.refreshes.WithLabelValues("failed")
	bi := buildinfo.Read()
	buildInfo := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "skills_hub_build_info",
		Help:        "The running build: its version, VCS revision and Go version (always 1).",
		ConstLabels: prometheus.Labels{"version": bi.Version, "revision": bi.Revision, "goversion": bi.GoVersion},
	}, func() float64 { return 1 })
	refused := newRefusals()
	cs := []prometheus.Collector{s.requests, s.latency, storeErrors, s.refreshes, buildInfo, refused.rate, refused.size,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	if opts.ProjectStats != nil {
		cs = append(cs, projectCollector(opts.ProjectStats))
	}
	if endpointStats != nil {
		cs = append(cs, endpointCollector(endpointStats))
	}
	cs = append(cs, opts.Collectors...)
	for _, c := range cs {
		if err := s.reg.Register(c); err != nil {
			return nil, err
		}
	}

	ao := opts.API
	ao.Hub, ao.Store, ao.Logger = opts.Hub, opts.Store, log
	prevStore, prevSync := ao.OnStoreError, ao.OnCatalogSync
	ao.OnStoreError = func() {
		s.storeErrors.Add(1)
		if prevStore != nil {
			prevStore()
		}
	}
	ao.OnCatalogSync = func(err error) {
		if err != nil {
			s.refreshes.WithLabelValues("failed").Inc()
		} else {
			s.refreshes.WithLabelValues("ok").Inc()
		}
		if prevSync != nil {
			prevSync(err)
		}
	}
	a, err := api.New(ao)
	if err != nil {
		return nil, err
	}
	s.api = a
	if opts.UI != nil {
		if s.ui, err = opts.UI(a); err != nil {
			return nil, err
		}
	}
	s.mux.Handle("GET /metrics", s.guardMetrics(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorLog: nil})))
	s.mux.Handle("/api/", a)
	projects := func(w http.ResponseWriter, r *http.Request) {
		if s.projects == nil {
			api.WriteError(w, api.NewError(http.StatusNotFound, api.CodeNotFound, "this hub serves no project endpoints"))
			return
		}
		s.projects.ServeHTTP(w, r)
	}
	if opts.Registry != nil {
		ro := *opts.Registry
		if ro.Logger == nil {
			ro.Logger = log
		}
		reg := clawhub.New(opts.Hub, opts.Store, &ro)
		s.mux.Handle("/api/v1/", reg)
		s.mux.Handle("GET /.well-known/clawhub.json", reg)
		s.mux.Handle("GET /.well-known/clawdhub.json", reg)
	}
	s.mux.HandleFunc("/p/", projects)
	// The endpoints' OAuth protected-resource metadata (RFC 9728) sits
	// under the well-known prefix, followed by the endpoint's path.
	s.mux.HandleFunc("/.well-known/oauth-protected-resource/p/", projects)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.ui != nil {
			s.ui.ServeHTTP(w, r)
			return
		}
		api.WriteError(w, api.NewError(http.StatusNotFound, api.CodeNotFound, "nothing here: the hub serves /api/ (see /api/openapi.json), /p/{project}/mcp, /readyz and /metrics"))
	})
	ho := opts.HTTP
	ho.Ready, ho.MCP, ho.Project, ho.Observer, ho.Logger = s.ready, isProjectMCP, projectOf, refused, log
	ho.LogPath = store.RedactSecrets
	if ho.AllowedHostsSetting == "" {
		ho.AllowedHostsSetting = "--allowed-hosts"
	}
	s.guard = httpserve.NewGuard(&ho)
	return s, nil
}

// Handler returns the server behind its guard stack: what Serve serves.
func (s *Server) Handler() http.Handler { return s.guard.Wrap(s) }

// isProjectMCP reports whether r is for a project's MCP endpoint,
// /p/{project}/mcp.
func isProjectMCP(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/p/")
	if !ok {
		return false
	}
	_, tail, _ := strings.Cut(rest, "/")
	return tail == "mcp"
}

// projectOf names the project of a request to /p/{project}/…, for the
// per-project rate limit ("" for any other route, and for a name no
// project may have).
func projectOf(r *http.Request) string {
	rest, ok := strings.CutPrefix(r.URL.Path, "/p/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	if id == "" || len(id) > 63 {
		return ""
	}
	return id
}

// API returns the admin API the server serves.
func (s *Server) API() *api.API { return s.api }

// Registry returns the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// ServeHTTP serves the hub's routes, counting each request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("a handler panicked", "method", r.Method, "path", store.RedactSecrets(r.URL.Path), "panic", v)
			if !sw.wrote {
				api.WriteError(sw, api.NewError(http.StatusInternalServerError, api.CodeInternal, "the hub failed to answer; its log says why"))
			}
		}
		route := routeOf(r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.requests.WithLabelValues(route, methodOf(r.Method), strconv.Itoa(status)).Inc()
		s.latency.WithLabelValues(route, methodOf(r.Method)).Observe(time.Since(start).Seconds())
	}()
	s.mux.ServeHTTP(sw, r)
}

// routeOf is the request's route as a bounded label: the pattern the
// innermost mux matched (set on the request itself), or "other".
func routeOf(r *http.Request) string {
	p := r.Pattern
	if p == "" || p == "/" || p == "/api/" {
		return "other"
	}
	if _, path, ok := cutMethod(p); ok {
		p = path
	}
	if len(p) >= 3 && p[:3] == "/p/" {
		return "/p/"
	}
	return p
}

func cutMethod(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == ' ' {
			return p[:i], p[i+1:], true
		}
		if p[i] == '/' {
			break
		}
	}
	return "", p, false
}

func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// Serve serves s, behind its guard stack, on ln (with the guard's bounds
// on connections) until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return httpserve.Serve(ctx, s.guard.Listener(ln), s.Handler(), s.log)
}

// ready reports to /readyz whether the hub can serve: its database
// answers a page of one project (within the probe's deadline).
func (s *Server) ready(ctx context.Context) string {
	if _, err := s.st.ListProjects(ctx, store.ProjectPage{Limit: 1}); err != nil {
		s.storeErrors.Add(1)
		s.log.Warn("readiness probe: the database does not answer", "err", err)
		return "unavailable"
	}
	return ""
}

// refusals counts the guard stack's refusals, as serve's metrics do
// (package metrics, under skills_mcp_): the hub counts its requests
// itself.
type refusals struct {
	rate, size *prometheus.CounterVec
}

func newRefusals() refusals {
	r := refusals{
		rate: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skills_hub_http_rate_limited_total", Help: "Requests refused with 429 by a rate limit, by the bucket that was empty: address, token or project.",
		}, []string{"key"}),
		size: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skills_hub_http_size_limited_total", Help: "Requests and connections refused by a bound on sizes or load, or by a client's share, by the bound (as skills_mcp_http_size_limited_total).",
		}, []string{"limit"}),
	}
	for _, k := range httpserve.RateKeys {
		r.rate.WithLabelValues(k)
	}
	for _, l := range httpserve.Limits {
		r.size.WithLabelValues(l)
	}
	return r
}

func (refusals) Request(httpserve.RequestInfo) {}
func (r refusals) RateLimited(key string)      { r.rate.WithLabelValues(key).Inc() }
func (r refusals) SizeLimited(limit string)    { r.size.WithLabelValues(limit).Inc() }

// guardMetrics lets through requests with an admin token of scope read.
func (s *Server) guardMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, e := api.Authenticate(r.Context(), s.st, r.Header.Get("Authorization"), store.ScopeRead); e != nil {
			api.WriteError(w, e)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter records the status written; Unwrap lets
// http.ResponseController reach the connection (flushes for event
// streams, deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// projectCollector turns ProjectStats into gauges at each scrape.
func projectCollector(stats func() []ProjectStat) prometheus.Collector {
	return &projectStats{
		stats:         stats,
		sessions:      prometheus.NewDesc("skills_hub_project_sessions", "Live MCP sessions of a project's endpoint.", []string{"project"}, nil),
		bindings:      prometheus.NewDesc("skills_hub_project_bindings", "Versions bound to a project.", []string{"project"}, nil),
		requests:      prometheus.NewDesc("skills_hub_project_requests_total", "Requests a project's endpoint served since its catalog was loaded.", []string{"project"}, nil),
		indexRequests: prometheus.NewDesc("skills_hub_project_index_requests_total", "Requests a project's well-known index served since its catalog was loaded.", []string{"project"}, nil),
	}
}

type projectStats struct {
	stats                                       func() []ProjectStat
	sessions, bindings, requests, indexRequests *prometheus.Desc
}

func (p *projectStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.sessions
	ch <- p.bindings
	ch <- p.requests
	ch <- p.indexRequests
}

func (p *projectStats) Collect(ch chan<- prometheus.Metric) {
	for _, st := range p.stats() {
		ch <- prometheus.MustNewConstMetric(p.sessions, prometheus.GaugeValue, float64(st.Sessions), st.Project)
		ch <- prometheus.MustNewConstMetric(p.bindings, prometheus.GaugeValue, float64(st.Bindings), st.Project)
		ch <- prometheus.MustNewConstMetric(p.requests, prometheus.CounterValue, float64(st.Requests), st.Project)
		ch <- prometheus.MustNewConstMetric(p.indexRequests, prometheus.CounterValue, float64(st.IndexRequests), st.Project)
	}
}

// endpointCollector turns EndpointStats into metrics at each scrape.
func endpointCollector(stats func() EndpointStat) prometheus.Collector {
	return &endpointStats{
		stats:         stats,
		versions:      prometheus.NewDesc("skills_hub_endpoint_versions", "Versions materialised and open for the project endpoints.", nil, nil),
		refreshes:     prometheus.NewDesc("skills_hub_endpoint_catalog_refreshes_total", "Project catalogs refreshed after a binding change.", nil, nil),
		refreshErrors: prometheus.NewDesc("skills_hub_endpoint_catalog_refresh_errors_total", "Refreshes of project catalogs that failed (the catalog kept what it served).", nil, nil),
		unloaded:      prometheus.NewDesc("skills_hub_endpoint_catalogs_unloaded_total", "Project catalogs dropped for being idle.", nil, nil),
	}
}

type endpointStats struct {
	stats                                        func() EndpointStat
	versions, refreshes, refreshErrors, unloaded *prometheus.Desc
}

func (e *endpointStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- e.versions
	ch <- e.refreshes
	ch <- e.refreshErrors
	ch <- e.unloaded
}

func (e *endpointStats) Collect(ch chan<- prometheus.Metric) {
	st := e.stats()
	ch <- prometheus.MustNewConstMetric(e.versions, prometheus.GaugeValue, float64(st.Versions))
	ch <- prometheus.MustNewConstMetric(e.refreshes, prometheus.CounterValue, float64(st.Refreshes))
	ch <- prometheus.MustNewConstMetric(e.refreshErrors, prometheus.CounterValue, float64(st.RefreshErrors))
	ch <- prometheus.MustNewConstMetric(e.unloaded, prometheus.CounterValue, float64(st.Unloaded))
}

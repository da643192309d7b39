package hubcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/auditlog"
	"github.com/skills-mcp/skills-mcp/internal/hub/clawhub"
	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/hubserve"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web/hubadmin"
)

// DefaultAddr is where skills-hub serve listens without --http: a port of
// its own, so that the hub and skills-mcp (3939) run side by side.
const DefaultAddr = "127.0.0.1:3940"

const serveHelp = `Usage: skills-hub serve [--http ADDR] [flags]

Serves the hub over HTTP until interrupted:
  /api/               the admin API (its OpenAPI document: /api/openapi.json)
  /api/v1/            a ClawHub-compatible registry, for the clawhub client
                      (discovery: /.well-known/clawhub.json)
  /p/{project}/mcp    each project's MCP endpoint
  /livez              200 while the process answers
  /readyz, /healthz   200 while the database answers, else 503
  /metrics            Prometheus metrics (an admin token of scope read)

Every route but the probes, the API's document and the registry's discovery
needs a token: an admin token for /api/, /api/v1/ (read to install, write to
publish) and /metrics, a project's token for its endpoint. Create the first
admin token from the shell: skills-hub token create --scope admin

ADDR is host:port, :port or port (loopback), or 0.0.0.0:port to listen on
every interface; port 0 picks a free one. The log says where it listens.
Requests must name the hub by a loopback name, the host of --base-url or one
of --allowed-hosts (the probes excepted). Each client address, bearer token
and project has a rate limit, and each client address and token a share of
the connections, event streams, requests in flight and body bytes; past them
requests get 429 with Retry-After (see --rate-limit-* and --max-*).

Script jobs run only in a sandbox: --sandbox auto (the default) takes
bubblewrap, else the Docker engine, else gVisor (runsc), whichever works
first; --sandbox gvisor runs every job under gVisor's user-space kernel, for
code you do not trust at all. The log says which, and which limits it
enforces on this host. With none working the hub still
serves skills and refuses jobs, saying why. Jobs keep their host folders (and
this replica's id) in --jobs DIR (default jobs/ in the data directory), which
the sandbox's unprivileged user must be able to reach: every folder above it
traversable (o+x).

Replicas (several hub serve on one PostgreSQL database) each hold a lease in
the database, renewed every quarter of --lease; when a replica's lease lapses
(a crash, a pod replaced by one with an empty data folder), another settles
its jobs within about three leases, plus the job's timeout. Uploads are
spooled in tmp/ of the data directory (or of --jobs with --database and no
--data), emptied at every start.
`

// serveConfig is what serve's flags and their variables give.
type serveConfig struct {
	http                  string
	maxConns, maxRequests int
	allowedHosts          []string
	rate                  httpserve.RateSettings
	limits                httpserve.LimitSettings
	baseURL, oauthIssuer  string
	cacheDir              string
	jobs                  jobFlags
	logLevel              slog.Level
	logFormat             string
}

func serveCommand(t *cmdline.Table) runFunc {
	cfg := &serveConfig{rate: httpserve.DefaultRateSettings(), jobs: jobFlags{sandbox: "auto"}, logFormat: "text"}
	t.String(&cfg.http, "http", "SKILLS_HUB_HTTP", DefaultAddr, "listen on `ADDR` (host:port, :port or port)")
	t.Int(&cfg.maxConns, "max-conns", "SKILLS_HUB_MAX_CONNS", httpserve.DefaultMaxConns, "at most `N` connections open at once; more are answered 503 and closed")
	t.Int(&cfg.maxRequests, "max-requests", "SKILLS_HUB_MAX_REQUESTS", httpserve.DefaultMaxConcurrent, "at most `N` requests handled at once; more get 503 with Retry-After")
	t.Func("allowed-hosts", "SKILLS_HUB_ALLOWED_HOSTS", "host names", "extra Host/Origin `NAMES` accepted besides loopback names and the host of --base-url, comma-separated (repeatable)", true, func(v string) error {
		cfg.allowedHosts = append(cfg.allowedHosts, cmdline.SplitList(v)...)
		return nil
	})
	rate := flag.NewFlagSet("rate", flag.ContinueOnError)
	cfg.rate.Register(rate)
	cfg.rate.RegisterProject(rate)
	t.Go(rate, map[string]string{
		"rate-limit-address": "SKILLS_HUB_RATE_LIMIT_ADDRESS",
		"rate-limit-token":   "SKILLS_HUB_RATE_LIMIT_TOKEN",
		"rate-limit-burst":   "SKILLS_HUB_RATE_LIMIT_BURST",
		"rate-limit-project": "SKILLS_HUB_RATE_LIMIT_PROJECT",
	}, map[string]string{
		"rate-limit-address": "requests per second",
		"rate-limit-token":   "requests per second",
		"rate-limit-burst":   "a duration such as 2s",
		"rate-limit-project": "requests per second",
	})
	limits := flag.NewFlagSet("limits", flag.ContinueOnError)
	cfg.limits.Register(limits)
	t.Go(limits, map[string]string{
		"max-streams":              "SKILLS_HUB_MAX_STREAMS",
		"max-conns-per-address":    "SKILLS_HUB_MAX_CONNS_PER_ADDRESS",
		"max-streams-per-address":  "SKILLS_HUB_MAX_STREAMS_PER_ADDRESS",
		"max-requests-per-address": "SKILLS_HUB_MAX_REQUESTS_PER_ADDRESS",
		"stream-lifetime":          "SKILLS_HUB_STREAM_LIFETIME",
	}, map[string]string{
		"max-streams":              "a positive count",
		"max-conns-per-address":    "a count (0: no share)",
		"max-streams-per-address":  "a count (0: no share)",
		"max-requests-per-address": "a count (0: no share)",
		"stream-lifetime":          "a duration such as 30m (0: never)",
	})
	t.Func("base-url", "SKILLS_HUB_BASE_URL", "scheme://host[:port]", "the hub's external `URL` (scheme://host[:port]), which endpoint URLs and OAuth audiences start with (default http:// and the address it listens on)", false, func(v string) error {
		cfg.baseURL = v
		return checkBaseURL(v)
	})
	t.Func("oauth-issuer", "SKILLS_HUB_OAUTH_ISSUER", "an https URL", "also accept JWT access tokens of the OAuth 2.1 authorization server at `URL` on project endpoints (needs --base-url)", false, func(v string) error {
		cfg.oauthIssuer = v
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && httpserve.IsLoopback(u.Hostname()))) || u.Host == "" {
			return errors.New("want an https URL (http only on loopback)")
		}
		return nil
	})
	t.String(&cfg.cacheDir, "cache", "SKILLS_HUB_CACHE", "", "keep the versions the endpoints serve unpacked in `DIR` (default: cache/ in the data directory, or the user cache folder with --database)")
	t.Func("sandbox", "SKILLS_HUB_SANDBOX", "bwrap, docker, gvisor or auto", "run script jobs in `BACKEND`: bwrap, docker, gvisor or auto (default auto: bubblewrap, else Docker, else gVisor)", false, func(v string) error {
		if v != "auto" && v != "bwrap" && v != "docker" && v != "gvisor" {
			return errors.New("want bwrap, docker, gvisor or auto")
		}
		cfg.jobs.sandbox = v
		return nil
	}).Alias("SKILLS_SANDBOX")
	t.String(&cfg.jobs.dockerHost, "docker-host", "DOCKER_HOST", "", "the Docker engine's `ADDR` (default unix:///var/run/docker.sock)")
	t.String(&cfg.jobs.dockerImage, "docker-image", "SKILLS_HUB_DOCKER_IMAGE", "", "the Docker `IMAGE` of profiles that name none (default by runtime: python:3.12-slim, node:22-bookworm-slim, debian:bookworm-slim; a preparation pins the image's id)")
	t.String(&cfg.jobs.wheels, "wheels", "SKILLS_HUB_WHEELS", "", "prepare Python environments offline from the wheels in `DIR` (pip --no-index --find-links)")
	t.String(&cfg.jobs.dir, "jobs", "SKILLS_HUB_JOBS", "", "keep the jobs' host folders and this replica's id in `DIR` (default: jobs/ in the data directory); the sandbox's user must be able to traverse every folder above it")
	t.String(&cfg.jobs.npmCache, "npm-cache", "SKILLS_HUB_NPM_CACHE", "", "prepare Node.js environments offline from the npm cache in `DIR` (npm ci --offline)")
	t.Func("lease", "SKILLS_HUB_LEASE", fmt.Sprintf("a duration from 100ms to %v", store.MaxLease), "this replica's lease in the database, a `DURATION`: another replica settles its jobs once it lapses (default 20s)", false, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond || d > store.MaxLease {
			return fmt.Errorf("want a duration from 100ms to %v", store.MaxLease)
		}
		cfg.jobs.lease = d
		return nil
	})
	t.Func("log-level", "SKILLS_HUB_LOG_LEVEL", "debug, info, warn or error", "log `LEVEL`: debug, info, warn or error (default info)", false, func(v string) error {
		if err := cfg.logLevel.UnmarshalText([]byte(v)); err != nil {
			return errors.New("want debug, info, warn or error")
		}
		return nil
	})
	t.Func("log-format", "SKILLS_HUB_LOG_FORMAT", "text or json", "log `FORMAT`: text (key=value lines) or json (one object a line) (default text)", false, func(v string) error {
		if v != "text" && v != "json" {
			return errors.New("want text or json")
		}
		cfg.logFormat = v
		return nil
	})
	return func(ctx context.Context, s *session, _ []string) error { return s.serve(ctx, cfg) }
}

// serve serves the hub as cfg says until ctx ends.
func (s *session) serve(ctx context.Context, cfg *serveConfig) error {
	jf := cfg.jobs
	if cfg.maxConns < 1 || cfg.maxRequests < 1 {
		return cmdline.Usagef("", "--max-conns and --max-requests must be positive")
	}
	for _, d := range []*string{&jf.wheels, &jf.npmCache} {
		if *d == "" {
			continue
		}
		abs, err := filepath.Abs(*d)
		if err != nil {
			return err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return cmdline.Usagef("", "%s is not a folder (--wheels and --npm-cache name folders)", *d)
		}
		*d = abs
	}
	addr, err := httpserve.ParseAddr(cfg.http)
	if err != nil {
		return cmdline.Usagef("", "--http: %v", err)
	}
	baseURL := cfg.baseURL
	if cfg.oauthIssuer != "" && baseURL == "" {
		return cmdline.Usagef("", "--oauth-issuer needs --base-url: access tokens name the endpoint's external URL as their audience")
	}
	opts, err := s.options()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(s.Stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	if cfg.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(s.Stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	}
	opts.Logger = logger
	// The API reads only https repositories: direct installs and catalog
	// items alike.
	h, err := s.openWith(ctx, opts, hub.Options{Logger: logger})
	if err != nil {
		return err
	}
	db := s.db
	if jf.dir, err = jobsDir(jf.dir, opts); err != nil {
		return err
	}
	// The port first: a hub that cannot bind it touches nothing (no
	// sweep, no recovery of jobs).
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another server on that port? choose another with --http)", addr, err)
	}
	defer ln.Close()
	// One process at a time is the replica the jobs folder names.
	lock, err := lockReplica(jf.dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	tmp, err := sweepTemp(opts, jf.dir)
	if err != nil {
		return err
	}
	replica, err := replicaID(jf.dir)
	if err != nil {
		return err
	}
	audit := auditlog.New(db, &auditlog.Options{Replica: replica, Logger: logger})
	js, err := startJobs(ctx, jf, db, replica, audit, logger)
	if err != nil {
		audit.Close(context.Background())
		return err
	}
	// The catalog follows what the command line or another replica
	// stores, until serve returns.
	followCtx, stopFollow := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() { defer close(followed); h.FollowCatalog(followCtx) }()
	jobsOpen := true
	stopJobs := func() {
		if jobsOpen {
			jobsOpen = false
			stopFollow()
			<-followed
			js.svc.Close()
			js.Close()
			actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			audit.Close(actx)
			cancel()
		}
	}
	defer stopJobs()
	bound := ln.Addr().String()
	if baseURL == "" {
		baseURL = "http://" + bound
	}
	cache, err := endpointCache(cfg.cacheDir, opts)
	if err != nil {
		return err
	}
	eo := endpoint.Options{Store: db, CacheDir: cache, Logger: logger, BaseURL: strings.TrimSuffix(baseURL, "/"), Jobs: js.svc, MaxConns: cfg.maxConns}
	if cfg.oauthIssuer != "" {
		eo.OAuth = &endpoint.OAuthOptions{Issuer: cfg.oauthIssuer}
	}
	ep, err := endpoint.New(ctx, eo)
	if err != nil {
		return fmt.Errorf("project endpoints: %w", err)
	}
	defer ep.Close()
	ho := httpserve.Options{AllowedHosts: cfg.allowedHosts, MaxConns: cfg.maxConns, MaxConcurrent: cfg.maxRequests}
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		// The hub's external name is one its clients use.
		ho.AllowedHosts = append(ho.AllowedHosts, u.Host)
	}
	cfg.rate.Apply(&ho)
	cfg.limits.Apply(&ho)
	var admin *hubadmin.Admin
	srv, err := hubserve.New(hubserve.Options{
		Hub:          h,
		Store:        db,
		Logger:       logger,
		HTTP:         ho,
		Projects:     ep,
		ProjectStats: func() []hubserve.ProjectStat { return projectStats(ep.Stats()) },
		EndpointStats: func() hubserve.EndpointStat {
			st := ep.Stats()
			return hubserve.EndpointStat{Versions: st.Versions, Refreshes: st.Refreshes, RefreshErrors: st.RefreshErrors, Unloaded: st.Unloaded, StoreErrors: st.StoreErrors}
		},
		Registry: &clawhub.Options{RequireApproval: opts.RequireApproval},
		API: api.Options{OnTokenRevoked: ep.TokenRevoked, Jobs: js.svc, TempDir: tmp, Replica: replica, Audit: audit,
			Runtime: func(context.Context) []api.Backend { return js.backends }},
		UI: func(a http.Handler) (http.Handler, error) {
			var err error
			admin, err = hubadmin.New(hubadmin.Options{API: a, Verify: db.VerifyToken, BaseURL: strings.TrimSuffix(baseURL, "/"), Logger: logger})
			return admin, err
		},
	})
	if admin != nil {
		defer admin.Close()
	}
	if err != nil {
		return err
	}
	// Said before the address, so that whoever waits for the address has
	// read it.
	toks, err := db.ListTokens(ctx, store.TokenFilter{Kind: store.AdminToken})
	if err == nil && len(toks) == 0 {
		logger.Warn("no admin token yet: the admin API refuses every request until you create one with `skills-hub token create --scope admin`" + dataFlags(opts))
	}
	logger.Info("hub serving", "url", "http://"+bound, "api", "http://"+bound+"/api/", "projects", "http://"+bound+"/p/{project}/mcp",
		"readyz", "http://"+bound+"/readyz", "store", storeText(opts),
		"rateLimitAddress", cfg.rate.Address, "rateLimitToken", cfg.rate.Token, "rateLimitProject", cfg.rate.Project)
	if host, _, _ := net.SplitHostPort(bound); !httpserve.IsLoopback(host) {
		logger.Warn("reachable from the network: every route but the probes needs a token, and tokens travel in clear over http: put TLS in front; clients must name the hub by the host of --base-url or one of --allowed-hosts")
	}
	err = srv.Serve(ctx, ln)
	// Shut down in order: no request is served any more; the
	// preparations and the runs this replica owns are stopped and stored
	// as such, and the audit entries waiting are written; then the
	// endpoints and, after serve returns, the hub's store close.
	stopJobs()
	return err
}

// jobsDir is the jobs' host folder: jobs/ in the data directory, or in the
// user cache folder with --database.
func jobsDir(flag string, o store.Options) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if o.Dir != "" {
		return filepath.Abs(filepath.Join(o.Dir, "jobs"))
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no folder for the jobs (%v): give a data directory with --data", err)
	}
	return filepath.Join(dir, "skills-mcp", "hub-jobs"), nil
}

// checkBaseURL accepts scheme://host[:port] with no path, query or fragment.
func checkBaseURL(raw string) error {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http or https URL")
	case u.Host == "" || u.User != nil:
		return errors.New("want scheme://host[:port]")
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "":
		return errors.New("want no path, query or fragment: endpoint paths start with /p/")
	}
	return nil
}

// endpointCache is the folder the project endpoints unpack versions into.
func endpointCache(flag string, o store.Options) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if o.Dir != "" {
		return filepath.Join(o.Dir, "cache"), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the project endpoints (%v): give one with --cache DIR", err)
	}
	return filepath.Join(dir, "skills-mcp", "hub"), nil
}

// projectStats turns the endpoints' figures into the metrics' rows.
func projectStats(st endpoint.Stats) []hubserve.ProjectStat {
	out := make([]hubserve.ProjectStat, len(st.Projects))
	for i, p := range st.Projects {
		out[i] = hubserve.ProjectStat{Project: p.ID, Sessions: p.Sessions, Bindings: p.Bindings, Requests: p.Requests, IndexRequests: p.IndexRequests}
	}
	return out
}

// storeText names the store for the log, without any password (userinfo,
// a password query parameter, a keyword DSN's).
func storeText(o store.Options) string {
	if o.Database == "" {
		return "sqlite " + o.Dir
	}
	return "postgres " + store.RedactDatabase(o.Database)
}

// sweepTemp empties the folder uploads are spooled in (a crash leaves
// its files there) and returns it: tmp/ in the data directory, or in the
// jobs folder with --database and no data directory.
func sweepTemp(o store.Options, jobs string) (string, error) {
	dir := filepath.Join(jobs, "tmp")
	if o.Dir != "" {
		dir = filepath.Join(o.Dir, "tmp")
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("emptying the temporary folder %s: %w", dir, err)
	}
	// The folder above stays traversable (the jobs' sandbox user walks
	// through a data folder the hub makes); tmp/ is the hub's alone.
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return "", fmt.Errorf("the temporary folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("the temporary folder: %w", err)
	}
	return dir, nil
}

// dataFlags repeats the flags that name the store, for a command line the
// user can paste.
func dataFlags(o store.Options) string {
	if o.Database != "" {
		return " --database URL"
	}
	return " --data " + o.Dir
}

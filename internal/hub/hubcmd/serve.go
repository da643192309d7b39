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
	"text/tabwriter"
	"time"

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

// CLIActor is who the audit log says made a change from the shell.
const CLIActor = "cli"

// DefaultAddr is where skills-hub serve listens without --http: a port of
// its own, so that the hub and skills-mcp (3939) run side by side.
const DefaultAddr = "127.0.0.1:3940"

const hubServeUsage = `Usage: skills-hub serve [--http ADDR] [flags]

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

func (c *command) serve(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("serve", g, hubServeUsage)
	httpAddr := fs.String("http", "", "listen on `ADDR` (or set SKILLS_HUB_HTTP; default "+DefaultAddr+")")
	maxConns := fs.Int("max-conns", httpserve.DefaultMaxConns, "at most `N` connections open at once; more are answered 503 and closed")
	maxRequests := fs.Int("max-requests", httpserve.DefaultMaxConcurrent, "at most `N` requests handled at once; more get 503 with Retry-After")
	var allowedHosts []string
	fs.Func("allowed-hosts", "extra Host/Origin `NAMES` accepted besides loopback names and the host of --base-url, comma-separated", func(v string) error {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				allowedHosts = append(allowedHosts, h)
			}
		}
		return nil
	})
	rate := httpserve.DefaultRateSettings()
	rate.Register(fs.FlagSet)
	rate.RegisterProject(fs.FlagSet)
	var limits httpserve.LimitSettings
	limits.Register(fs.FlagSet)
	baseURL := fs.String("base-url", "", "the hub's external `URL` (scheme://host[:port]), which endpoint URLs and OAuth audiences start with (or set SKILLS_HUB_BASE_URL; default http:// and the address it listens on)")
	oauthIssuer := fs.String("oauth-issuer", "", "also accept JWT access tokens of the OAuth 2.1 authorization server at `URL` on project endpoints (or set SKILLS_HUB_OAUTH_ISSUER; needs --base-url)")
	cacheDir := fs.String("cache", "", "keep the versions the endpoints serve unpacked in `DIR` (or set SKILLS_HUB_CACHE; default: cache/ in the data directory, or the user cache folder with --database)")
	var jf jobFlags
	fs.StringVar(&jf.sandbox, "sandbox", "", "run script jobs in `BACKEND`: bwrap, docker, gvisor or auto (or set SKILLS_HUB_SANDBOX; default auto: bubblewrap, else Docker, else gVisor)")
	fs.StringVar(&jf.dockerHost, "docker-host", "", "the Docker engine's `ADDR` (or set DOCKER_HOST; default unix:///var/run/docker.sock)")
	fs.StringVar(&jf.dockerImage, "docker-image", "", "the Docker `IMAGE` of profiles that name none (default by runtime: python:3.12-slim, node:22-bookworm-slim, debian:bookworm-slim; a preparation pins the image's id)")
	fs.StringVar(&jf.wheels, "wheels", "", "prepare Python environments offline from the wheels in `DIR` (pip --no-index --find-links)")
	fs.StringVar(&jf.dir, "jobs", "", "keep the jobs' host folders and this replica's id in `DIR` (or set SKILLS_HUB_JOBS; default: jobs/ in the data directory); the sandbox's user must be able to traverse every folder above it")
	fs.StringVar(&jf.npmCache, "npm-cache", "", "prepare Node.js environments offline from the npm cache in `DIR` (npm ci --offline)")
	logLevel := fs.String("log-level", "", "log `LEVEL`: debug, info, warn or error (or set SKILLS_HUB_LOG_LEVEL; default info)")
	logFormat := fs.String("log-format", "", "log `FORMAT`: text (key=value lines) or json (one object a line) (or set SKILLS_HUB_LOG_FORMAT; default text)")
	fs.DurationVar(&jf.lease, "lease", 0, "this replica's lease in the database: another replica settles its jobs once it lapses (or set SKILLS_HUB_LEASE; default 20s)")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	c.envDefault(logLevel, "SKILLS_HUB_LOG_LEVEL")
	c.envDefault(logFormat, "SKILLS_HUB_LOG_FORMAT")
	var level slog.Level
	if *logLevel != "" {
		if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
			return usagef("skills-hub serve -h", "--log-level %q: want debug, info, warn or error", *logLevel)
		}
	}
	if *logFormat != "" && *logFormat != "text" && *logFormat != "json" {
		return usagef("skills-hub serve -h", "--log-format %q: want text or json", *logFormat)
	}
	c.envDefault(&jf.dockerHost, "DOCKER_HOST")
	if err := c.httpEnv(fs); err != nil {
		return err
	}
	if *maxConns < 1 || *maxRequests < 1 {
		return usagef("skills-hub serve -h", "--max-conns and --max-requests must be positive")
	}
	c.envDefault(&jf.sandbox, "SKILLS_HUB_SANDBOX")
	c.envDefault(&jf.sandbox, "SKILLS_SANDBOX") // the earlier name
	c.envDefault(&jf.dir, "SKILLS_HUB_JOBS")
	if jf.lease == 0 {
		if v, ok := c.env("SKILLS_HUB_LEASE"); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return usagef("skills-hub serve -h", "SKILLS_HUB_LEASE=%q: want a duration such as 20s", v)
			}
			jf.lease = d
		}
	}
	if jf.lease < 0 || jf.lease > store.MaxLease || (jf.lease > 0 && jf.lease < 100*time.Millisecond) {
		return usagef("skills-hub serve -h", "--lease %v: want 100ms to %v", jf.lease, store.MaxLease)
	}
	if jf.sandbox == "" {
		jf.sandbox = "auto"
	}
	if jf.sandbox != "auto" && jf.sandbox != "bwrap" && jf.sandbox != "docker" && jf.sandbox != "gvisor" {
		return usagef("skills-hub serve -h", "--sandbox %q: want bwrap, docker, gvisor or auto", jf.sandbox)
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
			return usagef("skills-hub serve -h", "%s is not a folder (--wheels and --npm-cache name folders)", *d)
		}
		*d = abs
	}
	addrFlag := *httpAddr
	if addrFlag == "" {
		if v, ok := c.env("SKILLS_HUB_HTTP"); ok {
			addrFlag = v
		}
	}
	if addrFlag == "" {
		addrFlag = DefaultAddr
	}
	addr, err := httpserve.ParseAddr(addrFlag)
	if err != nil {
		return usagef("skills-hub serve -h", "--http: %v", err)
	}
	c.envDefault(baseURL, "SKILLS_HUB_BASE_URL")
	c.envDefault(oauthIssuer, "SKILLS_HUB_OAUTH_ISSUER")
	c.envDefault(cacheDir, "SKILLS_HUB_CACHE")
	if *baseURL != "" {
		if err := checkBaseURL(*baseURL); err != nil {
			return usagef("skills-hub serve -h", "--base-url %q: %v", *baseURL, err)
		}
	}
	if *oauthIssuer != "" {
		if u, err := url.Parse(*oauthIssuer); err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && httpserve.IsLoopback(u.Hostname()))) || u.Host == "" {
			return usagef("skills-hub serve -h", "--oauth-issuer %q: want an https URL (http only on loopback)", *oauthIssuer)
		}
		if *baseURL == "" {
			return usagef("skills-hub serve -h", "--oauth-issuer needs --base-url: access tokens name the endpoint's external URL as their audience")
		}
	}
	opts, err := c.options(g)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: level}))
	if *logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(c.stderr, &slog.HandlerOptions{Level: level}))
	}
	opts.Logger = logger
	db, err := store.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer db.Close()
	// The API reads only https repositories: direct installs and catalog
	// items alike.
	h := hub.New(db, &hub.Options{Logger: logger})
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
	if *baseURL == "" {
		*baseURL = "http://" + bound
	}
	cache, err := c.endpointCache(*cacheDir, opts)
	if err != nil {
		return err
	}
	eo := endpoint.Options{Store: db, CacheDir: cache, Logger: logger, BaseURL: strings.TrimSuffix(*baseURL, "/"), Jobs: js.svc}
	if *oauthIssuer != "" {
		eo.OAuth = &endpoint.OAuthOptions{Issuer: *oauthIssuer}
	}
	ep, err := endpoint.New(ctx, eo)
	if err != nil {
		return fmt.Errorf("project endpoints: %w", err)
	}
	defer ep.Close()
	ho := httpserve.Options{AllowedHosts: allowedHosts, MaxConns: *maxConns, MaxConcurrent: *maxRequests}
	if u, err := url.Parse(*baseURL); err == nil && u.Host != "" {
		// The hub's external name is one its clients use.
		ho.AllowedHosts = append(ho.AllowedHosts, u.Host)
	}
	rate.Apply(&ho)
	limits.Apply(&ho)
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
			admin, err = hubadmin.New(hubadmin.Options{API: a, Verify: db.VerifyToken, BaseURL: strings.TrimSuffix(*baseURL, "/"), Logger: logger})
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
		"rateLimitAddress", rate.Address, "rateLimitToken", rate.Token, "rateLimitProject", rate.Project)
	if host, _, _ := net.SplitHostPort(bound); !httpserve.IsLoopback(host) {
		logger.Warn("reachable from the network: every route but the probes needs a token, and tokens travel in clear over http: put TLS in front; clients must name the hub by the host of --base-url or one of --allowed-hosts")
	}
	err = srv.Serve(ctx, ln)
	// Shut down in order: no request is served any more; the
	// preparations and the runs this replica owns are stopped and stored
	// as such, and the audit entries waiting are written; then the
	// endpoints and the store close (deferred).
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

// hubHTTPFlags are hub serve's flags of the HTTP layer, each with its
// environment twin SKILLS_HUB_<NAME> (the name in capitals, - as _).
var hubHTTPFlags = []string{"allowed-hosts", "max-conns", "max-requests",
	"rate-limit-address", "rate-limit-token", "rate-limit-project", "rate-limit-burst",
	"max-streams", "max-conns-per-address", "max-streams-per-address", "max-requests-per-address", "stream-lifetime"}

// httpEnv sets each HTTP flag the command line left unset from its
// environment twin; a flag beats its variable.
func (c *command) httpEnv(fs *hubFlags) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range hubHTTPFlags {
		key := "SKILLS_HUB_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		v, ok := c.env(key)
		if set[name] || !ok || v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return usagef("skills-hub serve -h", "%s=%q: %v", key, v, err)
		}
	}
	return nil
}

// envDefault fills an unset string flag from its environment twin.
func (c *command) envDefault(v *string, name string) {
	if *v != "" {
		return
	}
	if e, ok := c.env(name); ok {
		*v = e
	}
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
func (c *command) endpointCache(flag string, o store.Options) (string, error) {
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
		out[i] = hubserve.ProjectStat{Project: p.ID, Sessions: p.Sessions, Bindings: p.Bindings, Requests: p.Requests}
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

const hubTokenUsage = `Usage: skills-hub token (create|list|revoke) [flags]

Tokens open the hub: an admin token (scope read, write or admin; read < write
< admin) the admin API and /metrics, a project token its project's endpoint,
an index token (a capability) its project's well-known index, whose URL it
travels in (see skills-hub well-known -h).
A token's secret is printed once, when it is created; the hub keeps only its
hash. Revoking takes effect at once.

Commands:
  create --scope read|write|admin [--name NAME] [--expires DUR]
  create --project ID [--name NAME] [--expires DUR]
  create --index ID [--name NAME] [--expires DUR]
                     create a token and print its secret (alone) on stdout
  list [--project ID] [--all] [--json]
                     list tokens, never their secrets (--all: revoked too;
                     --project: the project's tokens and index capabilities)
  revoke ID          revoke a token
`

func (c *command) token(ctx context.Context, g *hubGlobals, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(c.stdout, hubTokenUsage)
		return nil
	}
	switch args[0] {
	case "create":
		return c.tokenCreate(ctx, g, args[1:])
	case "list":
		return c.tokenList(ctx, g, args[1:])
	case "revoke":
		return c.tokenRevoke(ctx, g, args[1:])
	}
	return usagef("skills-hub token -h", "unknown token command %q", args[0])
}

func (c *command) tokenCreate(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("token create", g, hubTokenUsage)
	scope := fs.String("scope", "", "an admin token of `SCOPE`: read, write or admin")
	project := fs.String("project", "", "a token for project `ID`'s endpoint")
	index := fs.String("index", "", "a capability of project `ID`'s well-known index")
	name := fs.String("name", "", "a label for people")
	expires := fs.Duration("expires", 0, "valid for `DUR` (720h, 90m); default: until revoked")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	const hint = "skills-hub token create -h"
	given := 0
	for _, f := range []string{*scope, *project, *index} {
		if f != "" {
			given++
		}
	}
	switch {
	case given != 1:
		return usagef(hint, "token create needs one of --scope read|write|admin (an admin token), --project ID (a project's token) or --index ID (a capability of a project's well-known index)")
	case *scope != "" && !store.Scope(*scope).Valid():
		return usagef(hint, "--scope %q: want read, write or admin", *scope)
	case *expires < 0:
		return usagef(hint, "--expires %s: want a positive duration", *expires)
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	req, action := hub.TokenRequest{Project: *project, Scope: store.Scope(*scope), Name: *name, Expires: *expires}, "token.create"
	if *index != "" {
		req.Project, req.Index, action = *index, true, "well_known.issue"
	}
	tok, secret, err := h.CreateToken(ctx, req)
	result := store.AuditOK
	if err != nil {
		result = "failed"
	}
	if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: action, ObjectKind: "token", ObjectID: tok.ID, Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, secret)
	what := "admin token " + tok.ID + " (scope " + string(tok.Scope) + ")"
	switch tok.Kind {
	case store.ProjectToken:
		what = "token " + tok.ID + " for project " + tok.ProjectID
	case store.IndexToken:
		what = "capability " + tok.ID + " of project " + tok.ProjectID + "'s well-known index (npx skills add takes the hub's URL followed by " +
			hub.IndexPath(tok.ProjectID, "SECRET") + "; turn the index on with skills-hub well-known on " + tok.ProjectID + ")"
	}
	if !tok.ExpiresAt.IsZero() {
		what += ", expires " + tok.ExpiresAt.Local().Format(time.DateTime)
	}
	fmt.Fprintf(c.stderr, "created %s; its secret is printed above, this once: the hub keeps only its hash\n", what)
	return nil
}

func (c *command) tokenList(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("token list", g, hubTokenUsage)
	project := fs.String("project", "", "only project `ID`'s tokens")
	all := fs.Bool("all", false, "list revoked tokens too")
	asJSON := fs.Bool("json", false, "print the tokens as JSON")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	f := store.TokenFilter{ProjectID: *project, IncludeRevoked: *all}
	toks, err := h.db.ListTokens(ctx, f)
	if err != nil {
		return err
	}
	return Tokens(c.stdout, toks, *asJSON)
}

// Tokens prints a token list, never a secret.
func Tokens(w interface{ Write([]byte) (int, error) }, toks []store.Token, asJSON bool) error {
	if asJSON {
		if toks == nil {
			toks = []store.Token{}
		}
		return WriteJSON(w, toks)
	}
	if len(toks) == 0 {
		fmt.Fprintln(w, "no tokens (create one with `skills-hub token create`)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOPENS\tNAME\tCREATED\tEXPIRES\tSTATE")
	for _, t := range toks {
		opens := "admin API, scope " + string(t.Scope)
		switch t.Kind {
		case store.ProjectToken:
			opens = "project " + t.ProjectID
		case store.IndexToken:
			opens = "project " + t.ProjectID + "'s index"
		}
		expires := "never"
		if !t.ExpiresAt.IsZero() {
			expires = t.ExpiresAt.Local().Format(time.DateTime)
		}
		state := "active"
		switch {
		case !t.RevokedAt.IsZero():
			state = "revoked " + t.RevokedAt.Local().Format(time.DateTime)
		case !t.ExpiresAt.IsZero() && t.ExpiresAt.Before(time.Now()):
			state = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, opens, t.Name, t.CreatedAt.Local().Format(time.DateTime), expires, state)
	}
	return tw.Flush()
}

func (c *command) tokenRevoke(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("token revoke", g, hubTokenUsage)
	pos, err := c.parse(fs, args, 1, 1, "a token ID (see `skills-hub token list`)")
	if err != nil {
		return err
	}
	id := pos[0]
	if strings.HasPrefix(id, "smcp_") {
		return usagef("skills-hub token list", "give the token's ID, not its secret (the ID is the 16 hex digits `skills-hub token list` shows)")
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	tok, err := h.db.RevokeToken(ctx, id)
	result := store.AuditOK
	if err != nil {
		result = "failed"
		if errors.Is(err, store.ErrNotFound) {
			result = "not_found"
		}
	}
	if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: "token.revoke", ObjectKind: "token", ObjectID: id, Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "revoked token %s at %s\n", tok.ID, tok.RevokedAt.Local().Format(time.DateTime))
	return nil
}

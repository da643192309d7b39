package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/adversarial"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/engine"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/metrics"
	"github.com/skills-mcp/skills-mcp/internal/server"
	"github.com/skills-mcp/skills-mcp/internal/web/browse"
	"github.com/skills-mcp/skills-mcp/internal/wellknown"
)

// Grammars of names given on the command line.
var (
	namespacePattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`) })
	serverNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })
	prefixPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_]{1,48}$`) })
)

// serveConfig is everything serve needs, after flags and environment.
type serveConfig struct {
	libs            []libSpec
	root            string
	depth           int
	exclude         []string
	strict          bool
	allowOversize   bool
	maxFileBytes    int64
	pageSize        int
	ttl             time.Duration
	name, title     string
	prefix          string
	http            string // "" = stdio
	tokenFile       string
	allowedHosts    []string
	stats           bool
	logLevel        slog.Level
	logFormat       string // text or json
	configPath      string
	noScripts       bool
	excludeTiers    []string
	devStatus       []string
	showDisabled    bool
	rescanSeconds   int
	cacheDir        string
	allowUnverified bool
	noLint          bool
	profile         string
	legacyIndex     bool
	vaults          []libSpec // --vault NS=DIR
	noPlaybooks     bool
	noValueChains   bool
	noUI            bool                    // no skill browser at / over HTTP
	noWellKnown     bool                    // no Agent Skills well-known index over HTTP
	rate            httpserve.RateSettings  // HTTP rate limits
	limits          httpserve.LimitSettings // HTTP streams and per-address shares

	// HTTP resource limits.
	maxRequests int
	maxConns    int
	maxResponse int64
}

type libSpec struct{ ns, dir string }

type serveCommand struct {
	streams
	cfg  *serveConfig
	opts *cmdline.Table
	// metrics counts what an HTTP server does; nil over stdio.
	metrics *metrics.Metrics
	// wellKnown is the Agent Skills well-known index served over HTTP;
	// nil without one (stdio, --no-well-known, the adversarial profile).
	wellKnown *wellknown.Handler
	// browser makes the skill browser served at / over HTTP, given the
	// tokens; nil without one (stdio, --no-ui, the adversarial profile).
	browser func(tokens []string) (*browse.Browser, error)
}

// defaultHTTPAddr is where a bare --http listens.
const defaultHTTPAddr = httpserve.DefaultAddr

// table is serve's table of settings: every flag with its SKILLS_*
// variable and, where the config file has one, its key.
func (c *serveCommand) table() *cmdline.Table {
	if c.opts != nil {
		return c.opts
	}
	cfg := &serveConfig{rate: httpserve.DefaultRateSettings(), logFormat: "text"}
	o := cmdline.NewTable("serve")
	c.cfg, c.opts = cfg, o
	o.Func("lib", "SKILLS_LIBS", "NS=DIR", "serve the skills in `NS=DIR` (a folder, a .zip, or https://…zip#sha256=HEX) under namespace NS (repeatable)", true, func(v string) error {
		l, err := parseLib(v)
		cfg.libs = append(cfg.libs, l)
		return err
	})
	o.String(&cfg.root, "root", "SKILLS_MCP_ROOT", "", "serve one un-namespaced library from `DIR` (a folder, a .zip or an https URL; not with --lib; SKILLS_ROOT is never read: skills use it for their scripts)")
	o.Func("vault", "SKILLS_VAULTS", "NS=DIR", "read playbooks and value chains of library NS from the vault root `NS=DIR` (repeatable; NS may be empty with --root); by default a vault is recognised inside the library root", true, func(v string) error {
		ns, dir, ok := strings.Cut(v, "=")
		if !ok || dir == "" {
			return errors.New("want NS=DIR")
		}
		cfg.vaults = append(cfg.vaults, libSpec{ns: ns, dir: dir})
		return nil
	})
	o.String(&cfg.configPath, "config", "SKILLS_CONFIG", "", "read more libraries and settings from the JSON config `FILE`; edits apply while serving (SIGHUP forces a reload)")
	o.Int(&cfg.depth, "depth", "SKILLS_DEPTH", catalog.DefaultDepth, "how many folder `levels` below a library root are searched for skills")
	o.Func("exclude", "SKILLS_EXCLUDE", "folder names", "folder `NAMES` never entered, comma-separated (repeatable)", true, func(v string) error {
		cfg.exclude = append(cfg.exclude, cmdline.SplitList(v)...)
		return nil
	})
	o.Bool(&cfg.strict, "strict", "SKILLS_STRICT", "withhold a skill whose frontmatter name differs from its folder, instead of serving it under its name")
	o.Bool(&cfg.allowOversize, "allow-oversize", "SKILLS_ALLOW_OVERSIZE", "serve skills over the SEP-2640 limits of 512 files or 16 MiB")
	o.Int64(&cfg.maxFileBytes, "max-file-bytes", "SKILLS_MAX_FILE_BYTES", catalog.DefaultMaxFileBytes, "largest file served, in `bytes`; larger files are skipped with a warning")
	o.Bool(&cfg.noScripts, "no-scripts", "SKILLS_NO_SCRIPTS", "withhold every executable from every library: scripts by extension or shebang line, compiled programs by magic bytes").Config("noScripts")
	o.Func("exclude-tiers", "SKILLS_EXCLUDE_TIERS", "tier names", "withhold skills whose frontmatter pricing-tier is one of `TIERS` (comma-separated)", true, func(v string) error {
		cfg.excludeTiers = append(cfg.excludeTiers, cmdline.SplitList(v)...)
		return nil
	}).Config("excludeTiers")
	o.Func("dev-status", "SKILLS_DEV_STATUS", "status names", "serve only skills whose frontmatter dev-status is one of `STATUSES` (skills without one are served)", true, func(v string) error {
		cfg.devStatus = append(cfg.devStatus, cmdline.SplitList(v)...)
		return nil
	}).Config("devStatus")
	o.Bool(&cfg.showDisabled, "show-disabled", "SKILLS_SHOW_DISABLED", "list skills marked disable-model-invocation: true (they always answer skills/get), and serve vault playbooks of every status")
	o.Bool(&cfg.noPlaybooks, "no-playbooks", "SKILLS_NO_PLAYBOOKS", "serve no vault playbooks (and no playbook tools, prompt or resources)").Config("playbooks")
	o.Bool(&cfg.noValueChains, "no-value-chains", "SKILLS_NO_VALUE_CHAINS", "serve no vault value chains (and no value-chain tools or resources)").Config("valueChains")
	o.Bool(&cfg.noLint, "no-lint", "SKILLS_NO_LINT", "turn the risk linter off (it labels skills; it never withholds them)").Config("lint")
	o.Int(&cfg.rescanSeconds, "rescan-seconds", "SKILLS_RESCAN_SECONDS", 300, "interval of the safety rescan in `seconds` (0 = off); changes are picked up at once through file notifications")
	o.String(&cfg.cacheDir, "cache-dir", "SKILLS_CACHE_DIR", "", "`DIR` for extracted archives, downloads, file digests and search indexes (default: skills-mcp in the user cache folder)")
	o.Bool(&cfg.allowUnverified, "allow-unverified", "SKILLS_ALLOW_UNVERIFIED", "serve an https library that has neither a #sha256= pin nor a .sha256 sidecar").Config("allowUnverified")
	o.Int(&cfg.pageSize, "page-size", "SKILLS_PAGE_SIZE", server.DefaultPageSize, "`entries` per skills/list, resources/list and directory page")
	o.Duration(&cfg.ttl, "ttl", "SKILLS_TTL", server.DefaultTTL, "cache `duration` hinted to clients (ttlMs); 0 means stale at once")
	o.String(&cfg.name, "name", "SKILLS_NAME", "", "server `name` reported to clients (default \"skills\", or the namespace of a single --lib)")
	o.String(&cfg.title, "title", "SKILLS_TITLE", "", "server `title` reported to clients")
	o.String(&cfg.prefix, "prefix", "SKILLS_TOOL_PREFIX", "", "tool name `prefix` (default the server name with - replaced by _)")
	o.String(&cfg.profile, "profile", "SKILLS_PROFILE", "", "serve `PROFILE` instead of libraries: \"adversarial\" serves only hostile SEP-2640 research fixtures (benign payloads), to test hosts")
	o.Bool(&cfg.legacyIndex, "legacy-index", "SKILLS_LEGACY_INDEX", "also serve skill://index.json and per-skill .tar.gz and .zip archives (superseded SEP-2640 draft) for older hosts")
	o.String(&cfg.http, "http", "SKILLS_HTTP", "", "serve Streamable HTTP at `ADDR` (port, :port or host:port; bare --http means "+defaultHTTPAddr+") instead of stdio")
	o.String(&cfg.tokenFile, "token-file", "SKILLS_TOKEN_FILE", "", "require a bearer token over HTTP: one token per line of `FILE` (or set SKILLS_TOKEN)")
	o.Func("allowed-hosts", "SKILLS_ALLOWED_HOSTS", "host names", "extra Host/Origin `NAMES` accepted over HTTP, comma-separated", true, func(v string) error {
		cfg.allowedHosts = append(cfg.allowedHosts, cmdline.SplitList(v)...)
		return nil
	})
	o.Bool(&cfg.noUI, "no-ui", "SKILLS_NO_UI", "serve no skill browser at / over HTTP (the MCP endpoint is unaffected)")
	o.Bool(&cfg.noWellKnown, "no-well-known", "SKILLS_NO_WELL_KNOWN", "publish no Agent Skills well-known index (/.well-known/agent-skills/index.json, for npx skills add) over HTTP")
	o.Int(&cfg.maxRequests, "max-requests", "SKILLS_MAX_REQUESTS", httpserve.DefaultMaxConcurrent, "at most `N` HTTP requests handled at once; more get 503 with Retry-After")
	o.Int(&cfg.maxConns, "max-conns", "SKILLS_MAX_CONNS", httpserve.DefaultMaxConns, "at most `N` HTTP connections open at once; more are answered 503 and closed")
	o.Int64(&cfg.maxResponse, "max-response-bytes", "SKILLS_MAX_RESPONSE_BYTES", 0, "largest HTTP answer to one request, in `bytes` (default 16 MiB, or twice --max-file-bytes if that is more)")
	rate := flag.NewFlagSet("rate", flag.ContinueOnError)
	cfg.rate.Register(rate)
	o.Go(rate, map[string]string{
		"rate-limit-address": "SKILLS_RATE_LIMIT_ADDRESS",
		"rate-limit-token":   "SKILLS_RATE_LIMIT_TOKEN",
		"rate-limit-burst":   "SKILLS_RATE_LIMIT_BURST",
	}, map[string]string{
		"rate-limit-address": "requests per second",
		"rate-limit-token":   "requests per second",
		"rate-limit-burst":   "a duration such as 2s",
	})
	o.Option("rate-limit-address").Config("rateLimitAddress")
	o.Option("rate-limit-token").Config("rateLimitToken")
	o.Option("rate-limit-burst").Config("rateLimitBurst")
	limits := flag.NewFlagSet("limits", flag.ContinueOnError)
	cfg.limits.Register(limits)
	o.Go(limits, map[string]string{
		"max-streams":              "SKILLS_MAX_STREAMS",
		"max-conns-per-address":    "SKILLS_MAX_CONNS_PER_ADDRESS",
		"max-streams-per-address":  "SKILLS_MAX_STREAMS_PER_ADDRESS",
		"max-requests-per-address": "SKILLS_MAX_REQUESTS_PER_ADDRESS",
		"stream-lifetime":          "SKILLS_STREAM_LIFETIME",
	}, map[string]string{
		"max-streams":              "a positive count",
		"max-conns-per-address":    "a count (0: no share)",
		"max-streams-per-address":  "a count (0: no share)",
		"max-requests-per-address": "a count (0: no share)",
		"stream-lifetime":          "a duration such as 30m (0: never)",
	})
	o.Bool(&cfg.stats, "stats", "", "scan, print catalog statistics as JSON (with library paths: for operators) and exit")
	o.Func("log-level", "SKILLS_LOG_LEVEL", "debug, info, warn or error", "log `level`: debug, info, warn or error (default info)", false, func(v string) error {
		if err := cfg.logLevel.UnmarshalText([]byte(v)); err != nil {
			return errors.New("want debug, info, warn or error")
		}
		return nil
	})
	o.Func("log-format", "SKILLS_LOG_FORMAT", "text or json", "log `format`: text (key=value lines) or json (one object a line) (default text)", false, func(v string) error {
		if v != "text" && v != "json" {
			return errors.New("want text or json")
		}
		cfg.logFormat = v
		return nil
	})
	o.Var("SKILLS_TOKEN", "a bearer token required over HTTP (with --token-file, both are accepted)")
	o.Var("SKILLS_LINT", "false turns the risk linter off, as --no-lint does (older name)")
	o.Var("SKILLS_FETCH_TOKEN", "a bearer token sent to the first host of an https library (and same-host redirects)")
	o.Var("GH_TOKEN", "a token sent only to GitHub hosts for https libraries there (also GITHUB_TOKEN)")
	o.Var("GITHUB_TOKEN", "as GH_TOKEN")
	o.Var("GOMEMLIMIT", "the Go runtime's soft memory limit; without it serve sets one from the catalog's size")
	o.Var("GOGC", "the Go runtime's collector target; set, it turns serve's memory tuning off")
	o.Var("SKILLS_FAST_PATH", "off answers every request through the SDK (for A/B measurements only)")
	return o
}

const serveUsage = `Usage: skills-mcp [serve] [flags]

Serves Agent Skills over MCP: skills/list, skills/get, resources/directory/read
and skill:// resources (SEP-2640). With no library configured, it serves a small
example library built into the binary.
`

// parseArgs reads flags, then fills what they left unset from the
// environment, and checks the result.
func (c *serveCommand) parseArgs(args []string) (*serveConfig, error) {
	pos, err := parseFlags(c.table(), args, c.env, "")
	if err != nil {
		return nil, err
	}
	return c.finish(pos)
}

// finish checks what the flags and variables gave.
func (c *serveCommand) finish(pos []string) (*serveConfig, error) {
	cfg := c.cfg
	if len(pos) > 0 {
		return nil, cmdline.Usagef("", "unexpected argument %q", pos[0])
	}
	// SKILLS_LINT is the older, inverted twin of --no-lint: false turns
	// linting off.
	if v, ok := c.env("SKILLS_LINT"); ok && v != "" && !c.opts.Changed("no-lint") {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, cmdline.Usagef("", "SKILLS_LINT=%q: want true or false", v)
		}
		cfg.noLint = cfg.noLint || !on
	}
	return cfg, cfg.validate()
}

func (cfg *serveConfig) validate() error {
	if cfg.root != "" && len(cfg.libs) > 0 {
		return cmdline.Usagef("serve several libraries with --lib NS=DIR each, or one with --root DIR", "--root cannot be combined with --lib")
	}
	seen := map[string]bool{}
	for _, l := range cfg.libs {
		if seen[l.ns] {
			return cmdline.Usagef("give each --lib its own namespace", "namespace %q is used twice", l.ns)
		}
		seen[l.ns] = true
	}
	seenVault := map[string]bool{}
	for _, v := range cfg.vaults {
		known := (cfg.root != "" && v.ns == "") || seen[v.ns]
		if !known {
			return cmdline.Usagef("give --vault the namespace of a --lib (or an empty one, --vault =DIR, with --root)", "--vault %s=%s: no library %q is served from the command line", v.ns, v.dir, v.ns)
		}
		if seenVault[v.ns] {
			return cmdline.Usagef("", "--vault for library %q is given twice", v.ns)
		}
		seenVault[v.ns] = true
	}
	switch {
	case cfg.depth < 0:
		return cmdline.Usagef("", "--depth must be 0 or more, got %d", cfg.depth)
	case cfg.pageSize < 1 || cfg.pageSize > 10000:
		return cmdline.Usagef("", "--page-size must be between 1 and 10000, got %d", cfg.pageSize)
	case cfg.maxFileBytes < 1:
		return cmdline.Usagef("", "--max-file-bytes must be positive, got %d", cfg.maxFileBytes)
	case cfg.ttl < 0:
		return cmdline.Usagef("", "--ttl must not be negative, got %s", cfg.ttl)
	case cfg.rescanSeconds < 0:
		return cmdline.Usagef("", "--rescan-seconds must be 0 (off) or more, got %d", cfg.rescanSeconds)
	case cfg.maxRequests < 1:
		return cmdline.Usagef("", "--max-requests must be positive, got %d", cfg.maxRequests)
	case cfg.maxConns < 1:
		return cmdline.Usagef("", "--max-conns must be positive, got %d", cfg.maxConns)
	case cfg.maxResponse < 0:
		return cmdline.Usagef("", "--max-response-bytes must not be negative (0 means the default), got %d", cfg.maxResponse)
	}
	switch cfg.profile {
	case "":
	case "adversarial":
		if cfg.root != "" || len(cfg.libs) > 0 || cfg.configPath != "" {
			return cmdline.Usagef("serve the research profile on a server of its own", "--profile adversarial cannot be combined with --root, --lib or --config: a host may drop a whole server's list when one entry is invalid")
		}
	default:
		return cmdline.Usagef("", "--profile %q: the only profile is adversarial", cfg.profile)
	}
	if cfg.configPath != "" {
		abs, err := filepath.Abs(cfg.configPath)
		if err != nil {
			return cmdline.Usagef("", "--config: %v", err)
		}
		cfg.configPath = abs
	}
	if cfg.name == "" {
		cfg.name = server.DefaultName
		if len(cfg.libs) == 1 {
			cfg.name = strings.ReplaceAll(cfg.libs[0].ns, ".", "-")
		}
	}
	if !serverNamePattern().MatchString(cfg.name) {
		return cmdline.Usagef("", "--name %q must match %s", cfg.name, serverNamePattern())
	}
	if cfg.prefix == "" {
		cfg.prefix = strings.ReplaceAll(cfg.name, "-", "_")
	}
	if !prefixPattern().MatchString(cfg.prefix) {
		return cmdline.Usagef("", "--prefix %q must match %s", cfg.prefix, prefixPattern())
	}
	return nil
}

func parseLib(v string) (libSpec, error) {
	ns, dir, ok := strings.Cut(v, "=")
	if !ok || dir == "" {
		return libSpec{}, fmt.Errorf("%q is not NS=DIR", v)
	}
	if !namespacePattern().MatchString(ns) {
		return libSpec{}, fmt.Errorf("namespace %q must match %s", ns, namespacePattern())
	}
	return libSpec{ns: ns, dir: dir}, nil
}

// shutdownTimeout bounds how long serve takes to exit once SIGTERM or
// SIGINT arrives: long enough for the HTTP drain (httpserve's grace) and
// the stdio session's close (server.DrainTimeout), after which the process
// exits even if a scan or a read is stuck in a system call.
const shutdownTimeout = 15 * time.Second

// Run parses args and serves.
func (c *serveCommand) Run(ctx context.Context, args []string) error {
	return c.runArgs(ctx, args, true)
}

// exec implements subcommand: the flags are parsed, not yet their variables.
func (c *serveCommand) exec(ctx context.Context, args []string) error {
	return c.runArgs(ctx, args, false)
}

func (c *serveCommand) runArgs(ctx context.Context, args []string, parse bool) error {
	// The signals are taken before anything slow (opening libraries, the
	// first scan): SIGHUP's default action ends the process, so one sent
	// while the server starts is held here and applied as a reload once
	// the catalog serves; SIGTERM and SIGINT stop it from the first instant.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	var cfg *serveConfig
	var err error
	if parse {
		cfg, err = c.parseArgs(args)
	} else if err = c.table().FromEnv(c.env, ""); err == nil {
		cfg, err = c.finish(args)
	}
	if err != nil {
		return err
	}
	log := newLogger(c.stderr, cfg.logFormat, cfg.logLevel)
	// The SDK logs every session at info, which over stateless HTTP is every
	// request; keep its lines for warnings unless debugging.
	sdkLog := newLogger(c.stderr, cfg.logFormat, max(cfg.logLevel, slog.LevelWarn))
	if cfg.logLevel <= slog.LevelDebug {
		sdkLog = log
	}

	// Once told to stop, serve drains and closes what it opened; what is
	// stuck in a system call (a read of a file that never answers) cannot
	// be interrupted, so after shutdownTimeout Run returns without it and
	// the process exits.
	served := make(chan error, 1)
	go func() { served <- c.serve(ctx, cfg, hup, log, sdkLog) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-served:
		return err
	case <-time.After(shutdownTimeout):
		log.Error("shutdown did not finish in time; exiting with work still running", "deadline", shutdownTimeout)
		return fmt.Errorf("shutdown did not finish within %s (a scan or a read is stuck)", shutdownTimeout)
	}
}

// serve serves until ctx ends (or stdin does), then drains and closes.
// hup receives SIGHUP from the process's start on.
func (c *serveCommand) serve(ctx context.Context, cfg *serveConfig, hup <-chan os.Signal, log, sdkLog *slog.Logger) error {
	if cfg.profile == "adversarial" {
		log.Warn("serving the adversarial research profile: hostile SEP-2640 fixtures with benign payloads; never point a production host at it")
		ms := adversarial.New(&adversarial.Options{Name: cfg.name, Version: version(), Logger: sdkLog})
		if cfg.http == "" {
			err := ms.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.stdin), Writer: nopWriteCloser{c.stdout}})
			if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
				return nil
			}
			return err
		}
		return c.serveHTTP(ctx, cfg, ms, nil, nil, log, sdkLog)
	}

	libs, err := openLibraries(ctx, cfg, c.env, log)
	if err != nil {
		return err
	}
	defer libs.Close()
	libs.rateFromFile()

	if cfg.stats {
		list, opts := libs.Source()
		snap, restore, err := engine.FirstScan(ctx, list, opts, true)
		if err != nil {
			return err
		}
		restore()
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(snap.Stats())
	}

	// Serve at once and scan behind: a host's initialize is answered in
	// milliseconds whatever the catalog's size, and every request that
	// reads the catalog waits for the first scan (see server.New).
	store := catalog.NewPendingStore()
	if cfg.http != "" {
		c.metrics = newMetrics(store, libs)
		if !cfg.noWellKnown {
			c.wellKnown = wellknown.New(store, &wellknown.Options{MaxConns: connsPerClient(cfg), Logger: log})
		}
		if !cfg.noUI {
			c.browser = func(tokens []string) (*browse.Browser, error) {
				return browse.New(store, &browse.Options{Name: cfg.name, Tokens: tokens, Logger: log})
			}
		}
	}
	notifier := &server.Notifier{}
	instrFile := engine.InstructionsFile(libs.Cache().Dir, *cfg)
	srv := server.NewServer(store, &server.Options{
		Name:                cfg.name,
		Title:               cfg.title,
		Prefix:              cfg.prefix,
		Version:             version(),
		PageSize:            cfg.pageSize,
		TTL:                 ttlOption(cfg.ttl),
		Logger:              sdkLog,
		Notifier:            notifier,
		LegacyIndex:         cfg.legacyIndex,
		PendingInstructions: engine.ReadInstructions(instrFile),
		NoFastPath:          envIs(c.env, "SKILLS_FAST_PATH", "off"), // for A/B runs
		// Over HTTP, large answers are shared out by client address too.
		Client: httpClient(cfg),
	})
	// The catalog's work (the first scan, reloads, the watcher) outlives
	// ctx until the front end has drained: a request waiting for the first
	// scan when SIGTERM comes is answered if the scan ends in time. Close
	// (deferred) stops all of it.
	hooks := engine.NotifyHooks(notifier, instrFile, log)
	hooks.Listed, hooks.WaitQuiet = srv.Listed(), srv.WaitQuiet
	live, err := engine.New(engine.Options{
		Store:         store,
		Source:        libs.Source,
		Watch:         true,
		SafetyRescan:  time.Duration(cfg.rescanSeconds) * time.Second,
		TuneMemory:    true,
		LowerPriority: true,
		Env:           c.env,
		Logger:        log,
		Hooks:         hooks,
	})
	if err != nil {
		return err
	}
	defer live.Close()
	ms := srv.MCP()
	// Over stdio the host's handshake comes first: the scan starts once it
	// is answered (or at the first other request, or after the engine's
	// ScanDelay), so that the two do not share the cores.
	var first <-chan struct{}
	if cfg.http == "" {
		first = server.AfterHandshake(ms)
	}
	live.Start(first)
	// The config file and the zip libraries reload when they change, and
	// everything on SIGHUP (hup holds one sent while the server started).
	_ = live.WatchReloads(engine.Reloads{
		ConfigFile: cfg.configPath, ReloadConfig: libs.ReloadConfig,
		Archives: libs.ZipFiles, RefreshArchives: libs.RefreshArchives,
		Signal: hup, Logger: log,
	})

	if cfg.http == "" {
		err := srv.RunStdio(ctx, c.stdin, c.stdout)
		if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil
		}
		return err
	}
	return c.serveHTTP(ctx, cfg, ms, srv, func(context.Context) string {
		if store.Snapshot().Pending() {
			return "loading"
		}
		return ""
	}, log, sdkLog)
}

// connsPerClient is how many connections one client address may hold: the
// least of --max-conns and its share (--max-conns-per-address).
func connsPerClient(cfg *serveConfig) int {
	switch share := cfg.limits.AddressConns; {
	case share < 0:
		return cfg.maxConns
	case share == 0:
		return min(cfg.maxConns, httpserve.DefaultShares(cfg.maxConns, 1, 1, 1).AddressConns)
	default:
		return min(cfg.maxConns, share)
	}
}

// httpClient names the client of a request, over HTTP.
func httpClient(cfg *serveConfig) func(context.Context) (string, bool) {
	if cfg.http == "" {
		return nil
	}
	return httpserve.ClientOf
}

// nopWriteCloser is a writer the transport may close: the streams belong
// to the caller of Main.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ttlOption maps the --ttl flag to server.Options.TTL, where zero means the
// default and a negative value means 0.
func ttlOption(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// serveHTTP serves ms over stateless Streamable HTTP; srv, if not nil, is
// the catalog server of ms, whose front end then answers the plain
// skills/list and skills/get requests (and parks listen streams). ready,
// if not nil, reports the catalog's state to /readyz.
func (c *serveCommand) serveHTTP(ctx context.Context, cfg *serveConfig, ms *mcp.Server, srv *server.Server, ready func(context.Context) string, log, sdkLog *slog.Logger) error {
	addr, err := httpserve.ParseAddr(cfg.http)
	if err != nil {
		return cmdline.Usagef("skills-mcp serve -h", "--http: %v", err)
	}
	tokens, err := c.loadTokens(cfg.tokenFile)
	if err != nil {
		return err
	}
	maxResponse := cfg.maxResponse
	if maxResponse == 0 {
		// Room for the largest file served, base64-encoded.
		maxResponse = max(httpserve.DefaultMaxResponseBytes, 2*cfg.maxFileBytes)
	}
	opts := &httpserve.Options{
		AllowedHosts: cfg.allowedHosts,
		Tokens:       tokens,
		Logger:       log,
		Ready:        ready,

		MaxConcurrent:    cfg.maxRequests,
		MaxConns:         cfg.maxConns,
		MaxResponseBytes: maxResponse,
	}
	cfg.limits.Apply(opts)
	if c.wellKnown != nil {
		opts.WellKnown = c.wellKnown
	}
	if c.browser != nil {
		if opts.UI, err = c.browser(tokens); err != nil {
			return err
		}
	}
	cfg.rate.Apply(opts)
	c.observe(opts)
	if err := httpserve.CheckBind(addr, opts); err != nil {
		return &cmdline.UsageError{Err: err}
	}
	mh := server.StreamableHTTP(ms, srv, sdkLog)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	g := httpserve.NewGuard(opts)
	log.Info("listening", "url", "http://"+ln.Addr().String()+"/mcp", "auth", len(tokens) > 0, "browser", opts.UI != nil,
		"well_known_index", opts.WellKnown != nil,
		"metrics", "http://"+ln.Addr().String()+"/metrics", "readyz", "http://"+ln.Addr().String()+"/readyz",
		"rate_limit_address", cfg.rate.Address, "rate_limit_token", cfg.rate.Token)
	return httpserve.Serve(ctx, g.Listener(ln), g.Handler(mh), log)
}

// loadTokens reads the bearer tokens from --token-file and SKILLS_TOKEN.
func (c *serveCommand) loadTokens(file string) ([]string, error) {
	extra, _ := c.env("SKILLS_TOKEN")
	tokens, err := httpserve.LoadTokens(file, extra)
	if _, ok := errors.AsType[*httpserve.EmptyTokenFileError](err); ok {
		return nil, cmdline.Usagef("put one token per line in the file", "%v", err)
	} else if err != nil {
		return nil, cmdline.Usagef("give --token-file a readable file with one token per line", "%v", err)
	}
	return tokens, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// envIs reports whether variable name holds value.
func envIs(env cmdline.Env, name, value string) bool {
	v, ok := env(name)
	return ok && v == value
}

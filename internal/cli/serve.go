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
	noUI            bool                   // no skill browser at / over HTTP
	noWellKnown     bool                   // no Agent Skills well-known index over HTTP
	rate            httpserve.RateSettings // HTTP rate limits

	// HTTP resource limits.
	maxRequests int
	maxConns    int
	maxResponse int64
}

type libSpec struct{ ns, dir string }

type serveCommand struct {
	streams
	// metrics counts what an HTTP server does; nil over stdio.
	metrics *metrics.Metrics
	// wellKnown is the Agent Skills well-known index served over HTTP;
	// nil without one (stdio, --no-well-known, the adversarial profile).
	wellKnown *wellknown.Handler
	// browser makes the skill browser served at / over HTTP, given the
	// tokens; nil without one (stdio, --no-ui, the adversarial profile).
	browser func(tokens []string) (*browse.Browser, error)
}

// envTwins maps each flag to its environment variable. The flag beats the
// variable when both are set.
var envTwins = map[string]string{
	"lib":              "SKILLS_LIBS",
	"root":             "SKILLS_MCP_ROOT",
	"depth":            "SKILLS_DEPTH",
	"exclude":          "SKILLS_EXCLUDE",
	"strict":           "SKILLS_STRICT",
	"allow-oversize":   "SKILLS_ALLOW_OVERSIZE",
	"max-file-bytes":   "SKILLS_MAX_FILE_BYTES",
	"page-size":        "SKILLS_PAGE_SIZE",
	"ttl":              "SKILLS_TTL",
	"name":             "SKILLS_NAME",
	"title":            "SKILLS_TITLE",
	"prefix":           "SKILLS_TOOL_PREFIX",
	"http":             "SKILLS_HTTP",
	"token-file":       "SKILLS_TOKEN_FILE",
	"allowed-hosts":    "SKILLS_ALLOWED_HOSTS",
	"log-level":        "SKILLS_LOG_LEVEL",
	"config":           "SKILLS_CONFIG",
	"no-scripts":       "SKILLS_NO_SCRIPTS",
	"exclude-tiers":    "SKILLS_EXCLUDE_TIERS",
	"dev-status":       "SKILLS_DEV_STATUS",
	"show-disabled":    "SKILLS_SHOW_DISABLED",
	"rescan-seconds":   "SKILLS_RESCAN_SECONDS",
	"cache-dir":        "SKILLS_CACHE_DIR",
	"allow-unverified": "SKILLS_ALLOW_UNVERIFIED",
	"profile":          "SKILLS_PROFILE",
	"legacy-index":     "SKILLS_LEGACY_INDEX",
	"vault":            "SKILLS_VAULTS",
	"no-playbooks":     "SKILLS_NO_PLAYBOOKS",
	"no-value-chains":  "SKILLS_NO_VALUE_CHAINS",
	"no-ui":            "SKILLS_NO_UI",
	"no-well-known":    "SKILLS_NO_WELL_KNOWN",

	// The HTTP rate limits (ratelimit.go).
	"rate-limit-address": "SKILLS_RATE_LIMIT_ADDRESS",
	"rate-limit-token":   "SKILLS_RATE_LIMIT_TOKEN",
	"rate-limit-burst":   "SKILLS_RATE_LIMIT_BURST",

	// HTTP resource limits.
	"max-requests":       "SKILLS_MAX_REQUESTS",
	"max-conns":          "SKILLS_MAX_CONNS",
	"max-response-bytes": "SKILLS_MAX_RESPONSE_BYTES",
}

func (c *serveCommand) flags(cfg *serveConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Func("lib", "serve the skills in `NS=DIR` (a folder, a .zip, or https://…zip#sha256=HEX) under namespace NS (repeatable)", func(v string) error {
		l, err := parseLib(v)
		cfg.libs = append(cfg.libs, l)
		return err
	})
	fs.StringVar(&cfg.root, "root", "", "serve one un-namespaced library from `DIR` (a folder, a .zip or an https URL; not with --lib)")
	fs.IntVar(&cfg.depth, "depth", catalog.DefaultDepth, "how many folder `levels` below a library root are searched for skills")
	fs.Func("exclude", "folder `NAMES` never entered, comma-separated (repeatable)", func(v string) error {
		cfg.exclude = append(cfg.exclude, splitList(v)...)
		return nil
	})
	fs.BoolVar(&cfg.strict, "strict", false, "withhold a skill whose frontmatter name differs from its folder, instead of serving it under its name")
	fs.BoolVar(&cfg.allowOversize, "allow-oversize", false, "serve skills over the SEP-2640 limits of 512 files or 16 MiB")
	fs.Int64Var(&cfg.maxFileBytes, "max-file-bytes", catalog.DefaultMaxFileBytes, "largest file served, in `bytes`; larger files are skipped with a warning")
	fs.IntVar(&cfg.pageSize, "page-size", server.DefaultPageSize, "`entries` per skills/list, resources/list and directory page")
	fs.DurationVar(&cfg.ttl, "ttl", server.DefaultTTL, "cache `duration` hinted to clients (ttlMs); 0 means stale at once")
	fs.StringVar(&cfg.name, "name", "", "server `name` reported to clients (default \"skills\", or the namespace of a single --lib)")
	fs.StringVar(&cfg.title, "title", "", "server `title` reported to clients")
	fs.StringVar(&cfg.prefix, "prefix", "", "tool name `prefix` (default the server name with - replaced by _)")
	fs.StringVar(&cfg.http, "http", "", "serve Streamable HTTP at `ADDR` (port, :port or host:port; bare --http means "+httpserve.DefaultAddr+") instead of stdio")
	fs.StringVar(&cfg.tokenFile, "token-file", "", "require a bearer token over HTTP: one token per line of `FILE` (or set SKILLS_TOKEN)")
	fs.Func("allowed-hosts", "extra Host/Origin `NAMES` accepted over HTTP, comma-separated", func(v string) error {
		cfg.allowedHosts = append(cfg.allowedHosts, splitList(v)...)
		return nil
	})
	fs.IntVar(&cfg.maxRequests, "max-requests", httpserve.DefaultMaxConcurrent, "at most `N` HTTP requests handled at once; more get 503 with Retry-After")
	fs.IntVar(&cfg.maxConns, "max-conns", httpserve.DefaultMaxConns, "at most `N` HTTP connections open at once; more are answered 503 and closed")
	fs.Int64Var(&cfg.maxResponse, "max-response-bytes", 0, "largest HTTP answer to one request, in `bytes` (default 16 MiB, or twice --max-file-bytes if that is more)")
	fs.StringVar(&cfg.configPath, "config", "", "read more libraries and settings from the JSON config `FILE`; edits apply while serving (SIGHUP forces a reload)")
	fs.BoolVar(&cfg.noScripts, "no-scripts", false, "withhold every executable from every library: scripts by extension or shebang line, compiled programs by magic bytes")
	fs.Func("exclude-tiers", "withhold skills whose frontmatter pricing-tier is one of `TIERS` (comma-separated)", func(v string) error {
		cfg.excludeTiers = append(cfg.excludeTiers, splitList(v)...)
		return nil
	})
	fs.Func("dev-status", "serve only skills whose frontmatter dev-status is one of `STATUSES` (skills without one are served)", func(v string) error {
		cfg.devStatus = append(cfg.devStatus, splitList(v)...)
		return nil
	})
	fs.BoolVar(&cfg.showDisabled, "show-disabled", false, "list skills marked disable-model-invocation: true (they always answer skills/get), and serve vault playbooks of every status")
	fs.IntVar(&cfg.rescanSeconds, "rescan-seconds", 300, "interval of the safety rescan in `seconds` (0 = off); changes are picked up at once through file notifications")
	fs.StringVar(&cfg.cacheDir, "cache-dir", "", "`DIR` for extracted archives, downloads, file digests and search indexes (default: skills-mcp in the user cache folder)")
	fs.BoolVar(&cfg.allowUnverified, "allow-unverified", false, "serve an https library that has neither a #sha256= pin nor a .sha256 sidecar")
	fs.StringVar(&cfg.profile, "profile", "", "serve `PROFILE` instead of libraries: \"adversarial\" serves only hostile SEP-2640 research fixtures (benign payloads), to test hosts")
	fs.BoolVar(&cfg.legacyIndex, "legacy-index", false, "also serve skill://index.json and per-skill .tar.gz and .zip archives (superseded SEP-2640 draft) for older hosts")
	fs.Func("vault", "read playbooks and value chains of library NS from the vault root `NS=DIR` (repeatable; NS may be empty with --root); by default a vault is recognised inside the library root", func(v string) error {
		ns, dir, ok := strings.Cut(v, "=")
		if !ok || dir == "" {
			return fmt.Errorf("%q is not NS=DIR", v)
		}
		cfg.vaults = append(cfg.vaults, libSpec{ns: ns, dir: dir})
		return nil
	})
	fs.BoolVar(&cfg.noPlaybooks, "no-playbooks", false, "serve no vault playbooks (and no playbook tools, prompt or resources)")
	fs.BoolVar(&cfg.noValueChains, "no-value-chains", false, "serve no vault value chains (and no value-chain tools or resources)")
	fs.BoolVar(&cfg.noUI, "no-ui", false, "serve no skill browser at / over HTTP (the MCP endpoint is unaffected)")
	fs.BoolVar(&cfg.noWellKnown, "no-well-known", false, "publish no Agent Skills well-known index (/.well-known/agent-skills/index.json, for npx skills add) over HTTP")
	fs.BoolVar(&cfg.noLint, "no-lint", false, "turn the risk linter off (it labels skills; it never withholds them)")
	cfg.rate.Register(fs)
	fs.BoolVar(&cfg.stats, "stats", false, "scan, print catalog statistics as JSON (with library paths: for operators) and exit")
	fs.Func("log-level", "log `level`: debug, info, warn or error (default info)", func(v string) error {
		return cfg.logLevel.UnmarshalText([]byte(v))
	})
	fs.Usage = func() {
		fmt.Fprint(c.stderr, serveUsage)
		fs.PrintDefaults()
		fmt.Fprint(c.stderr, serveEnvUsage)
	}
	return fs
}

const serveUsage = `Usage: skills-mcp [serve] [flags]

Serves Agent Skills over MCP: skills/list, skills/get, resources/directory/read
and skill:// resources (SEP-2640). With no library configured, it serves a small
example library built into the binary.

Flags:
`

const serveEnvUsage = `
Environment (a flag beats its variable):
  SKILLS_LIBS            --lib, as "a=/x,b=/y"
  SKILLS_VAULTS          --vault, as "a=/vault"
  SKILLS_MCP_ROOT        --root (SKILLS_ROOT is never read: skills use it for their scripts)
  SKILLS_DEPTH, SKILLS_EXCLUDE, SKILLS_STRICT, SKILLS_ALLOW_OVERSIZE, SKILLS_MAX_FILE_BYTES,
  SKILLS_PAGE_SIZE, SKILLS_TTL, SKILLS_NAME, SKILLS_TITLE, SKILLS_TOOL_PREFIX (--prefix),
  SKILLS_HTTP, SKILLS_TOKEN_FILE, SKILLS_NO_PLAYBOOKS, SKILLS_NO_VALUE_CHAINS, SKILLS_NO_UI,
  SKILLS_NO_WELL_KNOWN,
  SKILLS_ALLOWED_HOSTS, SKILLS_LOG_LEVEL, SKILLS_RATE_LIMIT_ADDRESS, SKILLS_RATE_LIMIT_TOKEN,
  SKILLS_RATE_LIMIT_BURST, SKILLS_MAX_REQUESTS, SKILLS_MAX_CONNS, SKILLS_MAX_RESPONSE_BYTES
                         the flag of the same name (the rate limits also come from the config
                         file's rateLimitAddress, rateLimitToken and rateLimitBurst, read at start)
  SKILLS_TOKEN           a bearer token required over HTTP (with --token-file, both are accepted)
  SKILLS_LINT            false turns the risk linter off (--no-lint)
`

// parseArgs reads flags, then fills what they left unset from the
// environment.
func (c *serveCommand) parseArgs(args []string) (*serveConfig, error) {
	cfg := &serveConfig{rate: httpserve.DefaultRateSettings()}
	fs := c.flags(cfg)
	if err := fs.Parse(expandBareHTTP(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err: err, hint: "skills-mcp serve -h"}
	}
	if fs.NArg() > 0 {
		return nil, usagef("skills-mcp serve -h", "unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// SKILLS_LINT is the inverted twin of --no-lint: false turns linting off.
	if v, ok := c.env("SKILLS_LINT"); ok && v != "" && !set["no-lint"] {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, usagef("", "SKILLS_LINT=%q: want true or false", v)
		}
		cfg.noLint = !on
	}
	for name, key := range envTwins {
		v, ok := c.env(key)
		if set[name] || !ok || v == "" {
			continue
		}
		var err error
		if name == "lib" || name == "vault" {
			for _, item := range splitList(v) {
				if err = fs.Set(name, item); err != nil {
					break
				}
			}
		} else {
			err = fs.Set(name, v)
		}
		if err != nil {
			return nil, usagef("", "%s=%q: %v", key, v, err)
		}
	}
	return cfg, cfg.validate()
}

// expandBareHTTP gives a bare --http (last, or followed by another flag) its
// default address, since the flag package has no optional values.
func expandBareHTTP(args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		out = append(out, a)
		if (a == "--http" || a == "-http") && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out = append(out, httpserve.DefaultAddr)
		}
	}
	return out
}

func (cfg *serveConfig) validate() error {
	if cfg.root != "" && len(cfg.libs) > 0 {
		return usagef("serve several libraries with --lib NS=DIR each, or one with --root DIR", "--root cannot be combined with --lib")
	}
	seen := map[string]bool{}
	for _, l := range cfg.libs {
		if seen[l.ns] {
			return usagef("give each --lib its own namespace", "namespace %q is used twice", l.ns)
		}
		seen[l.ns] = true
	}
	seenVault := map[string]bool{}
	for _, v := range cfg.vaults {
		known := (cfg.root != "" && v.ns == "") || seen[v.ns]
		if !known {
			return usagef("give --vault the namespace of a --lib (or an empty one, --vault =DIR, with --root)", "--vault %s=%s: no library %q is served from the command line", v.ns, v.dir, v.ns)
		}
		if seenVault[v.ns] {
			return usagef("", "--vault for library %q is given twice", v.ns)
		}
		seenVault[v.ns] = true
	}
	switch {
	case cfg.depth < 0:
		return usagef("", "--depth must be 0 or more, got %d", cfg.depth)
	case cfg.pageSize < 1 || cfg.pageSize > 10000:
		return usagef("", "--page-size must be between 1 and 10000, got %d", cfg.pageSize)
	case cfg.maxFileBytes < 1:
		return usagef("", "--max-file-bytes must be positive, got %d", cfg.maxFileBytes)
	case cfg.ttl < 0:
		return usagef("", "--ttl must not be negative, got %s", cfg.ttl)
	case cfg.rescanSeconds < 0:
		return usagef("", "--rescan-seconds must be 0 (off) or more, got %d", cfg.rescanSeconds)
	case cfg.maxRequests < 1:
		return usagef("", "--max-requests must be positive, got %d", cfg.maxRequests)
	case cfg.maxConns < 1:
		return usagef("", "--max-conns must be positive, got %d", cfg.maxConns)
	case cfg.maxResponse < 0:
		return usagef("", "--max-response-bytes must not be negative (0 means the default), got %d", cfg.maxResponse)
	}
	switch cfg.profile {
	case "":
	case "adversarial":
		if cfg.root != "" || len(cfg.libs) > 0 || cfg.configPath != "" {
			return usagef("serve the research profile on a server of its own", "--profile adversarial cannot be combined with --root, --lib or --config: a host may drop a whole server's list when one entry is invalid")
		}
	default:
		return usagef("", "--profile %q: the only profile is adversarial", cfg.profile)
	}
	if cfg.configPath != "" {
		abs, err := filepath.Abs(cfg.configPath)
		if err != nil {
			return usagef("", "--config: %v", err)
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
		return usagef("", "--name %q must match %s", cfg.name, serverNamePattern())
	}
	if cfg.prefix == "" {
		cfg.prefix = strings.ReplaceAll(cfg.name, "-", "_")
	}
	if !prefixPattern().MatchString(cfg.prefix) {
		return usagef("", "--prefix %q must match %s", cfg.prefix, prefixPattern())
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

func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shutdownTimeout bounds how long serve takes to exit once SIGTERM or
// SIGINT arrives: long enough for the HTTP drain (httpserve's grace) and
// the stdio session's close (server.DrainTimeout), after which the process
// exits even if a scan or a read is stuck in a system call.
const shutdownTimeout = 15 * time.Second

// Run implements command.
func (c *serveCommand) Run(ctx context.Context, args []string) error {
	// The signals are taken before anything slow (opening libraries, the
	// first scan): SIGHUP's default action ends the process, so one sent
	// while the server starts is held here and applied as a reload once
	// the catalog serves; SIGTERM and SIGINT stop it from the first instant.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	// The SDK logs every session at info, which over stateless HTTP is every
	// request; keep its lines for warnings unless debugging.
	sdkLog := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: max(cfg.logLevel, slog.LevelWarn)}))
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
		return c.serveHTTP(ctx, cfg, ms, nil, func() any { return map[string]any{"status": "ok", "profile": "adversarial"} }, nil, log, sdkLog)
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
			c.wellKnown = wellknown.New(store, &wellknown.Options{MaxConns: cfg.maxConns, Logger: log})
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
		NoFastPath:          os.Getenv("SKILLS_FAST_PATH") == "off", // for A/B runs
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
	return c.serveHTTP(ctx, cfg, ms, srv, func() any {
		snap := store.Snapshot()
		if snap.Pending() {
			return map[string]any{"status": "loading"}
		}
		return map[string]any{"status": "ok", "skills": snap.Len()}
	}, func() bool { return !store.Snapshot().Pending() }, log, sdkLog)
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
// skills/list and skills/get requests.
func (c *serveCommand) serveHTTP(ctx context.Context, cfg *serveConfig, ms *mcp.Server, srv *server.Server, health func() any, ready func() bool, log, sdkLog *slog.Logger) error {
	addr, err := httpserve.ParseAddr(cfg.http)
	if err != nil {
		return usagef("skills-mcp serve -h", "--http: %v", err)
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
		Health:       health,
		Ready:        ready,

		MaxConcurrent:    cfg.maxRequests,
		MaxResponseBytes: maxResponse,
	}
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
		return &usageError{err: err}
	}
	mh := server.StreamableHTTP(ms, srv, sdkLog)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	log.Info("listening", "url", "http://"+ln.Addr().String()+"/mcp", "auth", len(tokens) > 0, "browser", opts.UI != nil,
		"wellKnownIndex", opts.WellKnown != nil,
		"metrics", "http://"+ln.Addr().String()+"/metrics", "rateLimitAddress", cfg.rate.Address, "rateLimitToken", cfg.rate.Token)
	return httpserve.Serve(ctx, httpserve.LimitListener(ln, cfg.maxConns, opts.Observer), httpserve.Handler(mh, opts), log)
}

// loadTokens reads the bearer tokens from --token-file and SKILLS_TOKEN.
func (c *serveCommand) loadTokens(file string) ([]string, error) {
	extra, _ := c.env("SKILLS_TOKEN")
	tokens, err := httpserve.LoadTokens(file, extra)
	if _, ok := errors.AsType[*httpserve.EmptyTokenFileError](err); ok {
		return nil, usagef("put one token per line in the file", "%v", err)
	} else if err != nil {
		return nil, usagef("give --token-file a readable file with one token per line", "%v", err)
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

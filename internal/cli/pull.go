package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/pull"
)

// pullCommand copies skills from a SEP-2640 server to a folder, verified.
type pullCommand struct {
	streams
}

// pullConfig is everything pull needs, after flags.
type pullConfig struct {
	refs          []string
	url           string
	command       []string
	to            string
	all, list     bool
	keepPath      bool
	withDeps      bool
	sync, force   bool
	dryRun        bool
	json          bool
	allowDynamic  bool
	allowOversize bool
	noScripts     bool
	header        http.Header
	tokenEnv      string
	timeout       time.Duration
	deadline      time.Duration
}

const pullUsage = `Usage: skills-mcp pull [SKILL…] (--url URL | --command CMD ARGS…) [flags]

Copies skills from any server that implements the MCP Skills extension
(SEP-2640) into a folder, verified: every file is checked against the size
and sha256 digest the server listed before it is written, and SKILL.md's
frontmatter against the listed one. Nothing is written unless every selected
skill verifies; a failure leaves the destination as it was.

A SKILL is a skill path (acme/billing/refunds), a skill:// URI, a frontmatter
name (refunds) or ns/name (acme/refunds). --command takes the rest of the
command line as the server to run over stdio, so it comes last.

Exit status: 0 ok, 1 a verification or transfer failure, 2 a usage error.

Flags:
`

func (c *pullCommand) flags(cfg *pullConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&cfg.url, "url", "", "pull from the Streamable HTTP server at `URL`")
	fs.StringVar(&cfg.to, "to", pull.DefaultDest, "destination `DIR`; each skill goes to DIR/<name>/")
	fs.BoolVar(&cfg.all, "all", false, "pull every listed skill")
	fs.BoolVar(&cfg.list, "list", false, "list the server's skills and exit; reads nothing but skills/list")
	fs.BoolVar(&cfg.keepPath, "keep-path", false, "write each skill to DIR/<skill path>/ instead of DIR/<name>/")
	fs.BoolVar(&cfg.withDeps, "with-deps", false, "also pull the skills they need at run time (required dependencies, transitively)")
	fs.BoolVar(&cfg.sync, "sync", false, "update existing skill folders: keep matching files, fetch changed ones, delete unlisted ones")
	fs.BoolVar(&cfg.force, "force", false, "replace existing skill folders with a fresh copy")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "read and verify everything, write nothing")
	fs.BoolVar(&cfg.json, "json", false, "print a JSON report on stdout instead of lines")
	fs.BoolVar(&cfg.allowDynamic, "allow-dynamic", false, `pull skills whose manifest is "dynamic" (no digests: only the frontmatter is verified)`)
	fs.BoolVar(&cfg.allowOversize, "allow-oversize", false, "pull skills over the SEP-2640 limits of 512 files or 16 MiB")
	fs.BoolVar(&cfg.noScripts, "no-scripts", false, "write no executable (scripts by extension or shebang line, compiled programs), as serve --no-scripts withholds them")
	fs.Func("header", "send `'Name: value'` with every HTTP request to the server (repeatable)", func(v string) error {
		name, value, err := parseHeader(v)
		if err != nil {
			return err
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Add(name, value)
		return nil
	})
	fs.StringVar(&cfg.tokenEnv, "token-env", "", "send the bearer token held in environment variable `VAR` (Authorization: Bearer …)")
	fs.DurationVar(&cfg.timeout, "timeout", pull.DefaultRequestTimeout, "longest wait for one answer from the server")
	fs.DurationVar(&cfg.deadline, "deadline", defaultDeadline, "longest the whole pull may take, connecting, listing and reading included; past it pull stops and writes nothing (or set SKILLS_DEADLINE)")
	fs.Usage = func() {
		fmt.Fprint(c.stderr, pullUsage)
		fs.PrintDefaults()
		fmt.Fprint(c.stderr, "  -command CMD ARGS…\n    \trun CMD ARGS… as the server, over stdio; takes the rest of the command line\n")
	}
	return fs
}

// headerName is an HTTP token.
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// transportHeaders are set by the MCP transport itself.
var transportHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "Host": true, "Connection": true,
	"Transfer-Encoding": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Mcp-Method": true,
	"Mcp-Name": true, "Last-Event-Id": true,
}

func parseHeader(v string) (string, string, error) {
	name, value, ok := strings.Cut(v, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || !headerName.MatchString(name):
		return "", "", fmt.Errorf("%q is not 'Name: value'", v)
	case strings.ContainsAny(value, "\r\n\x00"):
		return "", "", fmt.Errorf("header %s: the value contains a line break or NUL", name)
	case transportHeaders[http.CanonicalHeaderKey(name)]:
		return "", "", fmt.Errorf("header %s is set by the MCP transport and cannot be overridden", name)
	}
	return name, value, nil
}

// parseArgs reads the command line. Everything after --command is the
// server command line. Skills may come before, between or after flags.
func (c *pullCommand) parseArgs(args []string) (*pullConfig, error) {
	cfg := &pullConfig{}
	var hasCommand bool
	for i, a := range args {
		if a == "--command" || a == "-command" {
			cfg.command, hasCommand = args[i+1:], true
			args = args[:i]
			break
		}
		if v, ok := strings.CutPrefix(a, "--command="); ok {
			cfg.command, hasCommand = append([]string{v}, args[i+1:]...), true
			args = args[:i]
			break
		}
	}
	fs := c.flags(cfg)
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{err: err, hint: "skills-mcp pull -h"}
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			cfg.refs = append(cfg.refs, left...)
			break
		}
		cfg.refs = append(cfg.refs, left[0])
		rest = left[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	const hint = "skills-mcp pull -h"
	switch {
	case hasCommand && len(cfg.command) == 0:
		return nil, usagef(hint, "--command needs the server command line after it")
	case hasCommand && cfg.url != "":
		return nil, usagef(hint, "give --url or --command, not both")
	case !hasCommand && cfg.url == "":
		return nil, usagef(hint, "say where the server is: --url URL or --command CMD ARGS…")
	case hasCommand && (cfg.header != nil || cfg.tokenEnv != ""):
		return nil, usagef(hint, "--header and --token-env apply to --url only")
	case cfg.sync && cfg.force:
		return nil, usagef(hint, "--sync and --force exclude each other: --sync updates in place, --force replaces")
	case cfg.timeout <= 0:
		return nil, usagef(hint, "--timeout must be positive")
	}
	if err := c.deadlineFromEnv(&cfg.deadline, set["deadline"], hint); err != nil {
		return nil, err
	}
	if cfg.list {
		for _, name := range []string{"all", "to", "keep-path", "with-deps", "sync", "force", "dry-run", "allow-dynamic", "allow-oversize"} {
			if set[name] {
				return nil, usagef(hint, "--list only lists; it takes no --%s", name)
			}
		}
		if len(cfg.refs) > 0 {
			return nil, usagef(hint, "--list lists every skill; it takes no skill names")
		}
	} else {
		switch {
		case cfg.all && len(cfg.refs) > 0:
			return nil, usagef(hint, "give skill names or --all, not both")
		case !cfg.all && len(cfg.refs) == 0:
			return nil, usagef(hint, "name the skills to pull, or give --all (or --list to see them)")
		}
	}
	if cfg.url != "" {
		if err := checkURL(cfg.url); err != nil {
			return nil, usagef(hint, "--url: %v", err)
		}
	}
	if cfg.tokenEnv != "" {
		tok, ok := c.env(cfg.tokenEnv)
		if !ok || strings.TrimSpace(tok) == "" {
			return nil, usagef("export the token first, e.g. "+cfg.tokenEnv+"=…", "--token-env: environment variable %s is not set", cfg.tokenEnv)
		}
		if cfg.header.Get("Authorization") != "" {
			return nil, usagef(hint, "--token-env and --header 'Authorization: …' both set Authorization; give one")
		}
		if strings.ContainsAny(tok, "\r\n\x00") {
			return nil, usagef("", "--token-env: the token in %s contains a line break or NUL", cfg.tokenEnv)
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Set("Authorization", "Bearer "+strings.TrimSpace(tok))
	}
	return cfg, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}

// Run implements command.
func (c *pullCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := withDeadline(ctx, cfg.deadline)
	defer cancel()
	err = c.run(ctx, cfg)
	if pastDeadline(ctx) && err != nil {
		return deadlineError("pull", cfg.deadline, err, "nothing was written")
	}
	return err
}

// run connects, lists and pulls, within ctx.
func (c *pullCommand) run(ctx context.Context, cfg *pullConfig) error {
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ep := pull.Endpoint{URL: cfg.url, Header: cfg.header, Command: cfg.command}
	if cfg.url != "" && cfg.header.Get("Authorization") != "" {
		if u, _ := url.Parse(cfg.url); u.Scheme == "http" && !httpserve.IsLoopback(u.Host) {
			log.Warn("sending credentials over plain http to a non-loopback host", "host", u.Host)
		}
	}
	// A spawned server's own log is noise while it works; keep its last
	// lines to show when something fails.
	tail := &pull.Tail{Max: 4 << 10}
	if len(cfg.command) > 0 {
		ep.Stderr = tail
	}
	cl, err := pull.Dial(ctx, ep, &pull.Options{RequestTimeout: cfg.timeout, Logger: log})
	if err != nil {
		return c.withServerLog(err, tail)
	}
	defer cl.Close()

	entries, err := cl.List(ctx)
	if err != nil {
		return c.withServerLog(err, tail)
	}
	if cfg.list {
		return pull.WriteList(c.stdout, c.stderr, cl.Server(), entries, cfg.json)
	}

	selected := entries
	if !cfg.all {
		if selected, err = resolve(ctx, cl, entries, cfg.refs); err != nil {
			return err
		}
	}
	var deps []pull.Dep
	if cfg.withDeps {
		var derr error
		selected, deps, derr = pull.Closure(entries, selected)
		for _, d := range deps {
			fmt.Fprintf(c.stderr, "deps  %s → %s (%s)\n", d.From, d.Name, d.Path)
		}
		if derr != nil {
			return derr
		}
	}

	opts := &pull.PullOptions{
		Dest:          cfg.to,
		KeepPath:      cfg.keepPath,
		Sync:          cfg.sync,
		Force:         cfg.force,
		DryRun:        cfg.dryRun,
		AllowDynamic:  cfg.allowDynamic,
		AllowOversize: cfg.allowOversize,
		NoScripts:     cfg.noScripts,
	}
	var bar *pull.ProgressBar
	if !cfg.json {
		if bar = pull.NewProgressBar(c.stderr); bar != nil {
			opts.OnProgress = bar.Update
		}
	}
	rep, err := cl.Pull(ctx, selected, opts)
	bar.Clear()
	if rep != nil {
		rep.Deps = deps
	}
	if cfg.json {
		if jerr := rep.WriteJSON(c.stdout); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		rep.WriteText(c.stdout)
	}
	if err != nil {
		var ce *pull.ConflictError
		if errors.As(err, &ce) {
			return &usageError{err: err}
		}
		return c.withServerLog(err, tail)
	}
	return nil
}

// resolve resolves the skills named on the command line; naming no
// single skill is a usage error.
func resolve(ctx context.Context, cl *pull.Client, entries []*pull.Entry, refs []string) ([]*pull.Entry, error) {
	sel, err := cl.Resolve(ctx, entries, refs)
	var ue *pull.UnknownSkillError
	var se *pull.SelectError
	switch {
	case errors.As(err, &ue):
		return nil, &usageError{err: err}
	case errors.As(err, &se):
		return nil, &usageError{err: err, hint: "run pull with --list instead of skill names to see every listed skill"}
	}
	return sel, err
}

func (c *pullCommand) withServerLog(err error, tail *pull.Tail) error {
	if s := strings.TrimSpace(tail.String()); s != "" {
		fmt.Fprintf(c.stderr, "server stderr (last lines):\n%s\n", indent(s))
	}
	return err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

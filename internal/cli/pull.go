package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/pull"
)

// pullCommand copies skills from a SEP-2640 server to a folder, verified.
type pullCommand struct {
	streams
	cfg  *pullConfig
	opts *cmdline.Table
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

// table is pull's table of flags and variables.
func (c *pullCommand) table() *cmdline.Table {
	if c.opts != nil {
		return c.opts
	}
	cfg := &pullConfig{}
	o := cmdline.NewTable("pull")
	c.cfg, c.opts = cfg, o
	o.String(&cfg.url, "url", "", "", "pull from the Streamable HTTP server at `URL`")
	o.String(&cfg.to, "to", "", pull.DefaultDest, "destination `DIR`; each skill goes to DIR/<name>/")
	o.Bool(&cfg.all, "all", "", "pull every listed skill")
	o.Bool(&cfg.list, "list", "", "list the server's skills and exit; reads nothing but skills/list")
	o.Bool(&cfg.keepPath, "keep-path", "", "write each skill to DIR/<skill path>/ instead of DIR/<name>/")
	o.Bool(&cfg.withDeps, "with-deps", "", "also pull the skills they need at run time (required dependencies, transitively)")
	o.Bool(&cfg.sync, "sync", "", "update existing skill folders: keep matching files, fetch changed ones, delete unlisted ones")
	o.Bool(&cfg.force, "force", "", "replace existing skill folders with a fresh copy")
	o.Bool(&cfg.dryRun, "dry-run", "", "read and verify everything, write nothing")
	o.Bool(&cfg.json, "json", "", "print a JSON report on stdout instead of lines")
	o.Bool(&cfg.allowDynamic, "allow-dynamic", "", `pull skills whose manifest is "dynamic" (no digests: only the frontmatter is verified)`)
	o.Bool(&cfg.allowOversize, "allow-oversize", "", "pull skills over the SEP-2640 limits of 512 files or 16 MiB")
	o.Bool(&cfg.noScripts, "no-scripts", "", "write no executable (scripts by extension or shebang line, compiled programs), as serve --no-scripts withholds them")
	o.Func("header", "", "'Name: value'", "send `'Name: value'` with every HTTP request to the server (repeatable)", true, func(v string) error {
		name, value, err := pull.ParseHeader(v)
		if err != nil {
			return err
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Add(name, value)
		return nil
	})
	o.String(&cfg.tokenEnv, "token-env", "", "", "send the bearer token held in environment variable `VAR` (Authorization: Bearer …)")
	o.Duration(&cfg.timeout, "timeout", "", pull.DefaultRequestTimeout, "longest wait for one answer from the server")
	o.Duration(&cfg.deadline, "deadline", deadlineEnv, defaultDeadline, "longest the whole pull may take, connecting, listing and reading included; past it pull stops and writes nothing")
	return o
}

// pullUsage is pull's help before its flags.
func pullUsage() string { return pull.Usage }

// pullAfter is pull's help after its flags.
const pullAfter = "      --command CMD ARGS…    run CMD ARGS… as the server, over stdio; takes the rest of the command line\n"

// parseArgs reads the command line. Everything after --command is the
// server command line. Skills may come before, between or after flags.
func (c *pullCommand) parseArgs(args []string) (*pullConfig, error) {
	args, c.server, c.hasServer = splitCommand(args)
	refs, err := parseFlags(c.table(), args, c.env, "")
	if err != nil {
		return nil, err
	}
	return c.finish(refs)
}

// finish checks what the flags and variables gave.
func (c *pullCommand) finish(refs []string) (*pullConfig, error) {
	cfg := c.cfg
	cfg.command = c.server
	hasCommand := c.hasServer
	if len(refs) == 0 {
		refs = nil
	}
	cfg.refs = refs
	const hint = "skills-mcp pull -h"
	switch {
	case hasCommand && len(cfg.command) == 0:
		return nil, cmdline.Usagef(hint, "--command needs the server command line after it")
	case hasCommand && cfg.url != "":
		return nil, cmdline.Usagef(hint, "give --url or --command, not both")
	case !hasCommand && cfg.url == "":
		return nil, cmdline.Usagef(hint, "say where the server is: --url URL or --command CMD ARGS…")
	case hasCommand && (cfg.header != nil || cfg.tokenEnv != ""):
		return nil, cmdline.Usagef(hint, "--header and --token-env apply to --url only")
	case cfg.sync && cfg.force:
		return nil, cmdline.Usagef(hint, "--sync and --force exclude each other: --sync updates in place, --force replaces")
	case cfg.timeout <= 0:
		return nil, cmdline.Usagef(hint, "--timeout must be positive")
	}
	if cfg.deadline <= 0 {
		return nil, cmdline.Usagef(hint, "--deadline must be positive")
	}
	if cfg.list {
		for _, name := range []string{"all", "to", "keep-path", "with-deps", "sync", "force", "dry-run", "allow-dynamic", "allow-oversize"} {
			if c.opts.Changed(name) {
				return nil, cmdline.Usagef(hint, "--list only lists; it takes no --%s", name)
			}
		}
		if len(cfg.refs) > 0 {
			return nil, cmdline.Usagef(hint, "--list lists every skill; it takes no skill names")
		}
	} else {
		switch {
		case cfg.all && len(cfg.refs) > 0:
			return nil, cmdline.Usagef(hint, "give skill names or --all, not both")
		case !cfg.all && len(cfg.refs) == 0:
			return nil, cmdline.Usagef(hint, "name the skills to pull, or give --all (or --list to see them)")
		}
	}
	if cfg.url != "" {
		if err := pull.CheckURL(cfg.url); err != nil {
			return nil, cmdline.Usagef(hint, "--url: %v", err)
		}
	}
	if cfg.tokenEnv != "" {
		tok, ok := c.env(cfg.tokenEnv)
		if !ok || strings.TrimSpace(tok) == "" {
			return nil, cmdline.Usagef("export the token first, e.g. "+cfg.tokenEnv+"=…", "--token-env: environment variable %s is not set", cfg.tokenEnv)
		}
		if cfg.header.Get("Authorization") != "" {
			return nil, cmdline.Usagef(hint, "--token-env and --header 'Authorization: …' both set Authorization; give one")
		}
		if strings.ContainsAny(tok, "\r\n\x00") {
			return nil, cmdline.Usagef("", "--token-env: the token in %s contains a line break or NUL", cfg.tokenEnv)
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Set("Authorization", "Bearer "+strings.TrimSpace(tok))
	}
	return cfg, nil
}

// Run parses args and pulls.
func (c *pullCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	return c.pull(ctx, cfg)
}

// exec implements subcommand.
func (c *pullCommand) exec(ctx context.Context, args []string) error {
	if err := c.table().FromEnv(c.env, ""); err != nil {
		return err
	}
	cfg, err := c.finish(args)
	if err != nil {
		return err
	}
	return c.pull(ctx, cfg)
}

func (c *pullCommand) pull(ctx context.Context, cfg *pullConfig) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := withDeadline(ctx, cfg.deadline)
	defer cancel()
	if cfg.url != "" && cfg.header.Get("Authorization") != "" {
		if u, _ := url.Parse(cfg.url); u.Scheme == "http" && !httpserve.IsLoopback(u.Host) {
			log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			log.Warn("sending credentials over plain http to a non-loopback host", "host", u.Host)
		}
	}
	err := pull.Run(ctx, pull.Job{
		Endpoint: pull.Endpoint{URL: cfg.url, Header: cfg.header, Command: cfg.command},
		List:     cfg.list, All: cfg.all, Refs: cfg.refs, WithDeps: cfg.withDeps, JSON: cfg.json,
		Timeout: cfg.timeout,
		Pull: pull.PullOptions{
			Dest:          cfg.to,
			KeepPath:      cfg.keepPath,
			Sync:          cfg.sync,
			Force:         cfg.force,
			DryRun:        cfg.dryRun,
			AllowDynamic:  cfg.allowDynamic,
			AllowOversize: cfg.allowOversize,
			NoScripts:     cfg.noScripts,
		},
	}, c.stdout, c.stderr)
	if pastDeadline(ctx) && err != nil {
		return deadlineError("pull", cfg.deadline, err, "nothing was written")
	}
	// What the user must fix: a skill name, or a folder in the way.
	_, unknown := errors.AsType[*pull.UnknownSkillError](err)
	_, conflict := errors.AsType[*pull.ConflictError](err)
	if _, ok := errors.AsType[*pull.SelectError](err); ok && !unknown {
		return &cmdline.UsageError{Err: err, Hint: "run pull with --list instead of skill names to see every listed skill"}
	}
	if unknown || conflict {
		return &cmdline.UsageError{Err: err}
	}
	return err
}

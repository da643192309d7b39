package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/check"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// checkCommand checks any SEP-2640 server from the client side.
type checkCommand struct {
	streams
	cfg  *checkConfig
	opts *cmdline.Table
}

// checkConfig is everything check needs, after flags.
type checkConfig struct {
	url           string
	command       []string
	json          bool
	adversarial   bool
	pageSizeProbe bool
	timeout       time.Duration
	deadline      time.Duration
	maxPages      int
}

// adversarialMaxPages bounds the listing in --adversarial mode: every
// fixture is on the first pages, and one fixture's listing never ends.
const adversarialMaxPages = 100

// table is check's table of flags and variables.
func (c *checkCommand) table() *cmdline.Table {
	if c.opts != nil {
		return c.opts
	}
	cfg := &checkConfig{}
	o := cmdline.NewTable("check")
	c.cfg, c.opts = cfg, o
	o.String(&cfg.url, "url", "", "", "check the Streamable HTTP server at `URL`")
	o.Bool(&cfg.json, "json", "", "print a JSON report on stdout instead of lines")
	o.Bool(&cfg.adversarial, "adversarial", "", "print the oracle of each adversarial fixture the server offers: what a conformant host must do, and why")
	o.Bool(&cfg.pageSizeProbe, "page-size-probe", "", "also probe pagination: an invalid cursor, a second listing, and listings resumed from the first cursors")
	o.Duration(&cfg.timeout, "timeout", "", check.DefaultTimeout, "longest wait for one answer from the server")
	o.Duration(&cfg.deadline, "deadline", deadlineEnv, defaultDeadline, "longest the whole check may take; past it check stops and fails, with the results so far")
	o.Int(&cfg.maxPages, "max-pages", "", 0, fmt.Sprintf("most `pages` of one listing before it fails to terminate (default %d; %d with --adversarial)", check.DefaultMaxPages, adversarialMaxPages))
	return o
}

// checkUsage is check's help before its flags.
func checkUsage() string { return check.Usage }

// parseArgs reads the command line. Everything after --command is the
// server command line.
func (c *checkCommand) parseArgs(args []string) (*checkConfig, error) {
	args, c.server, c.hasServer = splitCommand(args)
	pos, err := parseFlags(c.table(), args, c.env, "")
	if err != nil {
		return nil, err
	}
	return c.finish(pos)
}

// finish checks what the flags and variables gave.
func (c *checkCommand) finish(pos []string) (*checkConfig, error) {
	cfg := c.cfg
	cfg.command = c.server
	hasCommand := c.hasServer
	const hint = ""
	switch {
	case len(pos) > 0:
		return nil, cmdline.Usagef(hint, "unexpected argument %q", pos[0])
	case hasCommand && len(cfg.command) == 0:
		return nil, cmdline.Usagef(hint, "--command needs the server command line after it")
	case hasCommand && cfg.url != "":
		return nil, cmdline.Usagef(hint, "give --url or --command, not both")
	case !hasCommand && cfg.url == "":
		return nil, cmdline.Usagef(hint, "say where the server is: --url URL or --command CMD ARGS…")
	case cfg.timeout <= 0:
		return nil, cmdline.Usagef(hint, "--timeout must be positive")
	case cfg.maxPages < 0:
		return nil, cmdline.Usagef(hint, "--max-pages must be positive")
	case cfg.deadline <= 0:
		return nil, cmdline.Usagef(hint, "--deadline must be positive")
	}
	return cfg, nil
}

// exec implements subcommand.
func (c *checkCommand) exec(ctx context.Context, args []string) error {
	if err := c.table().FromEnv(c.env, ""); err != nil {
		return err
	}
	cfg, err := c.finish(args)
	if err != nil {
		return err
	}
	return c.check(ctx, cfg)
}

// Run parses args and checks.
func (c *checkCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	return c.check(ctx, cfg)
}

func (c *checkCommand) check(ctx context.Context, cfg *checkConfig) error {
	var err error
	var dial check.Dialer
	if cfg.url != "" {
		if dial, err = check.HTTP(cfg.url, 0); err != nil {
			return cmdline.Usagef("", "--url: %v", err)
		}
	} else {
		dial = check.Command(cfg.command, c.stderr, 0)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := withDeadline(ctx, cfg.deadline)
	defer cancel()

	opts := &check.Options{Timeout: cfg.timeout, PageSizeProbe: cfg.pageSizeProbe, MaxPages: cfg.maxPages}
	if cfg.adversarial && cfg.maxPages == 0 {
		opts.MaxPages = adversarialMaxPages
	}
	rep := check.Run(ctx, dial, opts)
	switch {
	case cfg.json:
		err = rep.WriteJSON(c.stdout)
	case cfg.adversarial:
		err = rep.WriteOracle(c.stdout)
	default:
		err = rep.WriteText(c.stdout)
	}
	if err != nil {
		return err
	}
	if pastDeadline(ctx) {
		return deadlineError("check", cfg.deadline, nil, "the results above are partial")
	}
	if cfg.adversarial {
		return rep.AdversarialErr()
	}
	return rep.Err()
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/check"
)

// checkCommand checks any SEP-2640 server from the client side.
type checkCommand struct {
	streams
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

func (c *checkCommand) flags(cfg *checkConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&cfg.url, "url", "", "check the Streamable HTTP server at `URL`")
	fs.BoolVar(&cfg.json, "json", false, "print a JSON report on stdout instead of lines")
	fs.BoolVar(&cfg.adversarial, "adversarial", false, "print the oracle of each adversarial fixture the server offers: what a conformant host must do, and why")
	fs.BoolVar(&cfg.pageSizeProbe, "page-size-probe", false, "also probe pagination: an invalid cursor, a second listing, and listings resumed from the first cursors")
	fs.DurationVar(&cfg.timeout, "timeout", check.DefaultTimeout, "longest wait for one answer from the server")
	fs.DurationVar(&cfg.deadline, "deadline", defaultDeadline, "longest the whole check may take; past it check stops and fails, with the results so far (or set SKILLS_DEADLINE)")
	fs.IntVar(&cfg.maxPages, "max-pages", 0, fmt.Sprintf("most `pages` of one listing before it fails to terminate (default %d; %d with --adversarial)", check.DefaultMaxPages, adversarialMaxPages))
	fs.Usage = func() {
		fmt.Fprint(c.stderr, check.Usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs reads the command line. Everything after --command is the
// server command line.
func (c *checkCommand) parseArgs(args []string) (*checkConfig, error) {
	cfg := &checkConfig{}
	var hasCommand bool
	args, cfg.command, hasCommand = splitCommand(args)
	fs := c.flags(cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err: err, hint: "skills-mcp check -h"}
	}
	const hint = "skills-mcp check -h"
	switch {
	case fs.NArg() > 0:
		return nil, usagef(hint, "unexpected argument %q", fs.Arg(0))
	case hasCommand && len(cfg.command) == 0:
		return nil, usagef(hint, "--command needs the server command line after it")
	case hasCommand && cfg.url != "":
		return nil, usagef(hint, "give --url or --command, not both")
	case !hasCommand && cfg.url == "":
		return nil, usagef(hint, "say where the server is: --url URL or --command CMD ARGS…")
	case cfg.timeout <= 0:
		return nil, usagef(hint, "--timeout must be positive")
	case cfg.maxPages < 0:
		return nil, usagef(hint, "--max-pages must be positive")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := c.deadlineFromEnv(&cfg.deadline, set["deadline"], hint); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Run implements command.
func (c *checkCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	var dial check.Dialer
	if cfg.url != "" {
		if dial, err = check.HTTP(cfg.url, 0); err != nil {
			return usagef("skills-mcp check -h", "--url: %v", err)
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

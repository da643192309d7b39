package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/lint/lintcmd"
)

// lintCommand checks skills for their authors and CI: the SKILL.md rules,
// the SEP-2640 limits and the risk rules of package lint, read and reported
// by package lintcmd. It reads nothing outside the paths it is given and
// runs nothing.
type lintCommand struct {
	streams
	cfg    *lintConfig
	failOn string
	opts   *cmdline.Table
}

// lintConfig is everything lint needs, after flags.
type lintConfig struct {
	paths  []string
	format string
	failOn lint.Severity
	never  bool // --fail-on none
}

// table is lint's table of flags.
func (c *lintCommand) table() *cmdline.Table {
	if c.opts != nil {
		return c.opts
	}
	cfg := &lintConfig{}
	o := cmdline.NewTable("lint")
	c.cfg, c.opts = cfg, o
	o.String(&cfg.format, "format", "", "text", "report `format`: text, json or sarif (SARIF 2.1.0, for code scanning)")
	o.String(&c.failOn, "fail-on", "", "error", "exit 1 when an unsuppressed finding reaches `level`: error, warning, info or none")
	return o
}

// lintUsage is lint's help before its flags.
func lintUsage() string { return lintcmd.Usage }

// parseArgs reads the command line; paths and flags may be interleaved.
func (c *lintCommand) parseArgs(args []string) (*lintConfig, error) {
	paths, err := parseFlags(c.table(), args, c.env, "")
	if err != nil {
		return nil, err
	}
	return c.finish(paths)
}

// finish checks what the flags gave.
func (c *lintCommand) finish(paths []string) (*lintConfig, error) {
	const hint = ""
	cfg, failOn := c.cfg, c.failOn
	cfg.paths = paths
	switch cfg.format {
	case "text", "json", "sarif":
	default:
		return nil, cmdline.Usagef(hint, "--format must be text, json or sarif, not %q", cfg.format)
	}
	if strings.EqualFold(failOn, "none") {
		cfg.never = true
	} else {
		sev, err := lint.ParseSeverity(failOn)
		if err != nil {
			return nil, cmdline.Usagef(hint, "--fail-on must be error, warning, info or none, not %q", failOn)
		}
		cfg.failOn = sev
	}
	if len(cfg.paths) == 0 {
		return nil, cmdline.Usagef(hint, "give at least one PATH: a folder of skills, a skill or a .zip")
	}
	for _, p := range cfg.paths {
		info, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, cmdline.Usagef(hint, "PATH %s: %v", p, unwrapPathErr(err))
		case info.IsDir(), strings.EqualFold(filepath.Ext(p), ".zip"), filepath.Base(p) == "SKILL.md":
		default:
			return nil, cmdline.Usagef(hint, "PATH %s is not a folder, a SKILL.md or a .zip", p)
		}
	}
	return cfg, nil
}

// Run parses args and lints.
func (c *lintCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	return c.lint(ctx, cfg)
}

// exec implements subcommand.
func (c *lintCommand) exec(ctx context.Context, args []string) error {
	cfg, err := c.finish(args)
	if err != nil {
		return err
	}
	return c.lint(ctx, cfg)
}

func (c *lintCommand) lint(ctx context.Context, cfg *lintConfig) error {
	report, err := lintcmd.Lint(ctx, cfg.paths)
	if err != nil {
		return err
	}
	switch cfg.format {
	case "json":
		err = report.WriteJSON(c.stdout)
	case "sarif":
		err = report.WriteSARIF(c.stdout, version())
	default:
		err = report.WriteText(c.stdout)
	}
	if err != nil {
		return err
	}
	for _, e := range report.Errors {
		fmt.Fprintf(c.stderr, "lint: %s\n", e)
	}
	failing := 0
	if !cfg.never {
		failing = report.Failing(cfg.failOn)
	}
	switch {
	case failing > 0:
		return fmt.Errorf("%d finding(s) at %s or above", failing, cfg.failOn)
	case len(report.Errors) > 0:
		return fmt.Errorf("%d PATH(s) could not be linted", len(report.Errors))
	}
	return nil
}

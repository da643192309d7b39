package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// subcommand is one sub-command as the command tree runs it: its table of
// flags and variables, and what it does once they are parsed and checked.
type subcommand interface {
	table() *cmdline.Table
	// exec runs the command on the arguments left after the flags.
	exec(ctx context.Context, args []string) error
}

// commandInfo is what the help says of a sub-command.
type commandInfo struct {
	use, short string
	intro      string // the help's text before the flags
	after      string // the help's text after the flags and variables
}

// newRoot builds the command tree of skills-mcp over st: serve is also the
// root, so that "skills-mcp --root DIR" serves.
func newRoot(st streams) *cobra.Command {
	rootServe := &serveCommand{streams: st}
	root := &cobra.Command{
		Use:           "skills-mcp",
		Short:         "serve Agent Skills to AI agents over MCP",
		Version:       buildinfo.Read().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// Serve takes no arguments: one here is a mistyped command.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			err := fmt.Errorf("unknown command %q", args[0])
			if args[0] == "hub" || args[0] == "catalog" {
				rest := args
				if args[0] == "hub" {
					rest = args[1:]
				}
				return &cmdline.UsageError{Err: err, Hint: "the hub and the catalog builder are a binary of their own: " + strings.Join(append([]string{"skills-hub"}, rest...), " ")}
			}
			if s := cmdline.SuggestCommands(cmd, args[0]); len(s) > 0 {
				err = fmt.Errorf("unknown command %q: did you mean %s?", args[0], strings.Join(s, " or "))
			}
			return &cmdline.UsageError{Err: err}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return rootServe.exec(cmd.Context(), args)
		},
	}
	root.SetVersionTemplate("skills-mcp {{.Version}}\n")
	// Before the completion command is made: its scripts go to the
	// writer the root had then.
	root.SetOut(st.stdout)
	root.SetErr(st.stderr)
	root.SetIn(st.stdin)
	root.Flags().AddFlagSet(rootServe.table().Flags())
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if cmd == root {
			fmt.Fprint(st.stdout, mainUsage)
			return
		}
		// cobra's own commands (completion) keep cobra's help.
		fmt.Fprint(st.stdout, cmd.UsageString())
	})
	root.SetFlagErrorFunc(cmdline.FlagError)
	for _, sc := range []struct {
		info commandInfo
		cmd  subcommand
	}{
		{commandInfo{use: "serve", short: "serve skill libraries over stdio or HTTP (the default command)", intro: serveUsage}, &serveCommand{streams: st}},
		{commandInfo{use: "pull [SKILL...]", short: "copy skills from any SEP-2640 server to disk, verified", intro: pullUsage(), after: pullAfter}, &pullCommand{streams: st}},
		{commandInfo{use: "lint PATH...", short: "check skills for the Agent Skills rules and risky content", intro: lintUsage()}, &lintCommand{streams: st}},
		{commandInfo{use: "check", short: "check any SEP-2640 server from the client side", intro: checkUsage()}, &checkCommand{streams: st}},
		{commandInfo{use: "pack", short: "build a vault's release zip, pinned by its digest", intro: packUsage}, &packCommand{streams: st}},
	} {
		root.AddCommand(cobraCommand(sc.info, sc.cmd, st))
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  cmdline.UsageArgs(cobra.NoArgs),
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(st.stdout, "skills-mcp", buildinfo.Read())
		},
	})
	// A shell cobra's completion command does not know is bad usage
	// (exit 2), not its help.
	cmdline.RefuseUnknownShells(root)
	return root
}

// cobraCommand is the cobra command of sc.
func cobraCommand(info commandInfo, sc subcommand, st streams) *cobra.Command {
	t := sc.table()
	cmd := &cobra.Command{
		Use:           info.use,
		Short:         info.short,
		SilenceErrors: true,
		SilenceUsage:  true,
		// The commands check their own arguments, with errors that say
		// which one and why.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sc.exec(cmd.Context(), args)
		},
	}
	cmd.Flags().AddFlagSet(t.Flags())
	cmd.SetHelpFunc(func(*cobra.Command, []string) {
		fmt.Fprint(st.stdout, helpText(info, t))
	})
	return cmd
}

// helpText is a command's help: its text, its flags, its variables.
func helpText(info commandInfo, t *cmdline.Table) string {
	h := cmdline.Help{Intro: info.intro, Flags: t, After: info.after}
	if !strings.Contains(info.intro, "Exit status:") {
		h.ExitStatus = exitStatusHelp
	}
	return h.String()
}

// exitStatusHelp is the exit-status contract, the same for every command.
const exitStatusHelp = `
Exit status: 0 ok, 1 a failure at run time (lint: findings at --fail-on or
above), 2 bad usage (a flag, a variable, an argument or a path named on the
command line).
`

// parseFlags parses args with t's flags, then their variables: what a
// command's Run does when called without the command tree (tests).
func parseFlags(t *cmdline.Table, args []string, env cmdline.Env, hint string) ([]string, error) {
	return cmdline.Parse(t, normalizeArgs(args, t.Flags()), env, hint)
}

// normalizeArgs accepts the Go flag package's single dash for long flags
// ("-depth 3"), which the house's commands took before, and gives a bare
// --http its default address.
func normalizeArgs(args []string, sets ...*pflag.FlagSet) []string {
	args = cmdline.NormalizeArgs(args, sets...)
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		out = append(out, a)
		if a == "--http" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out = append(out, defaultHTTPAddr)
		}
	}
	return out
}

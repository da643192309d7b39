package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/suggest"
)

// subcommand is one sub-command as the command tree runs it: its table of
// flags and variables, and what it does once they are parsed and checked.
type subcommand interface {
	table() *options
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
				return &usageError{err: err, hint: "the hub and the catalog builder are a binary of their own: " + strings.Join(append([]string{"skills-hub"}, rest...), " ")}
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				err = fmt.Errorf("unknown command %q: did you mean %s?", args[0], strings.Join(s, " or "))
			}
			return &usageError{err: err}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return rootServe.exec(cmd.Context(), args)
		},
	}
	root.SetVersionTemplate("skills-mcp {{.Version}}\n")
	root.Flags().AddFlagSet(rootServe.table().fs)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if cmd == root {
			fmt.Fprint(st.stdout, mainUsage)
			return
		}
		// cobra's own commands (completion) keep cobra's help.
		fmt.Fprint(st.stdout, cmd.UsageString())
	})
	root.SetFlagErrorFunc(flagError)
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
		Args:  usageArgs(cobra.NoArgs),
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(st.stdout, "skills-mcp", buildinfo.Read())
		},
	})
	// A shell cobra's completion command does not know is bad usage
	// (exit 2), not its help.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("", "completion needs a shell: bash, zsh, fish or powershell")
			}
			return usagef("", "unknown shell %q: want bash, zsh, fish or powershell", args[0])
		}
	}
	root.SetOut(st.stdout)
	root.SetErr(st.stderr)
	root.SetIn(st.stdin)
	return root
}

// usageArgs makes the errors of an argument check usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err: err}
		}
		return nil
	}
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
	cmd.Flags().AddFlagSet(t.fs)
	cmd.SetHelpFunc(func(*cobra.Command, []string) {
		fmt.Fprint(st.stdout, helpText(info, t))
	})
	return cmd
}

// helpText is a command's help: its text, its flags, its variables.
func helpText(info commandInfo, t *options) string {
	var b strings.Builder
	b.WriteString(info.intro)
	if !strings.HasSuffix(info.intro, "Flags:\n") {
		b.WriteString("\nFlags:\n")
	}
	all := pflag.NewFlagSet(t.fs.Name(), pflag.ContinueOnError)
	all.SortFlags = false
	all.AddFlagSet(t.fs)
	all.BoolP("help", "h", false, "print this help")
	b.WriteString(all.FlagUsagesWrapped(100))
	b.WriteString(info.after)
	b.WriteString(t.envHelp())
	if !strings.Contains(info.intro, "Exit status:") {
		b.WriteString(exitStatusHelp)
	}
	return b.String()
}

// exitStatusHelp is the exit-status contract, the same for every command.
const exitStatusHelp = `
Exit status: 0 ok, 1 a failure at run time (lint: findings at --fail-on or
above), 2 bad usage (a flag, a variable, an argument or a path named on the
command line).
`

// flagError turns the flag parser's errors into usage errors that name the
// flag, the type it wants and, for an unknown flag, the likely one.
func flagError(cmd *cobra.Command, err error) error {
	return &usageError{err: describeFlagError(cmd.Flags(), err)}
}

func describeFlagError(fs *pflag.FlagSet, err error) error {
	if e, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		f := e.GetFlag()
		want := wantOf(f)
		cause := e.Unwrap()
		if cause != nil && !strings.Contains(cause.Error(), "strconv.") && !strings.Contains(cause.Error(), "time: ") && !strings.Contains(cause.Error(), "parse error") {
			return fmt.Errorf("--%s %q: %v", f.Name, e.GetValue(), cause)
		}
		return fmt.Errorf("--%s %q: want %s", f.Name, e.GetValue(), want)
	}
	if e, ok := errors.AsType[*pflag.NotExistError](err); ok {
		name := e.GetSpecifiedName()
		if s := similarFlags(fs, name); len(s) > 0 {
			return fmt.Errorf("unknown flag --%s: did you mean --%s?", name, strings.Join(s, " or --"))
		}
		return fmt.Errorf("unknown flag --%s", name)
	}
	if e, ok := errors.AsType[*pflag.ValueRequiredError](err); ok {
		return fmt.Errorf("--%s needs a value (%s)", e.GetSpecifiedName(), wantOf(e.GetFlag()))
	}
	return err
}

// wantOf names the type of value flag f takes.
func wantOf(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int64", "uint", "uint64":
		return "an integer"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 90s, 5m or 1h"
	case "float64":
		return "a number"
	}
	if name, _ := pflag.UnquoteUsage(f); name != "" && name != "value" && name != "string" {
		return name
	}
	return "a value"
}

// similarFlags are the flags of fs whose names are close to name.
func similarFlags(fs *pflag.FlagSet, name string) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return suggest.Closest(name, names)
}

// parseFlags parses args with t's flags, then their variables: what a
// command's Run does when called without the command tree (tests).
func parseFlags(t *options, args []string, env env, hint string) ([]string, error) {
	if err := t.fs.Parse(normalizeArgs(args, t.fs)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err: describeFlagError(t.fs, err), hint: hint}
	}
	if err := t.fromEnv(env, hint); err != nil {
		return nil, err
	}
	return t.fs.Args(), nil
}

// normalizeArgs accepts the Go flag package's single dash for long flags
// ("-depth 3"), which the house's commands took before, and gives a bare
// --http its default address.
func normalizeArgs(args []string, sets ...*pflag.FlagSet) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			for _, fs := range sets {
				if len(name) > 1 && fs.Lookup(name) != nil {
					a = "-" + a
					break
				}
			}
		}
		out = append(out, a)
		if a == "--http" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out = append(out, defaultHTTPAddr)
		}
	}
	return out
}

// printError writes err as the command line's one error, with the hint
// and what to try, and returns the exit status.
func printError(w io.Writer, cmdPath string, err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "Error: %v\n", ue.err)
		if ue.hint != "" && !strings.HasSuffix(ue.hint, " -h") && !strings.HasSuffix(ue.hint, " --help") && ue.hint != "skills-mcp help" {
			fmt.Fprintf(w, "Hint: %s\n", ue.hint)
		}
		fmt.Fprintf(w, "Try: %s --help\n", cmdPath)
		return exitUsage
	}
	fmt.Fprintf(w, "Error: %v\n", err)
	return exitFailure
}

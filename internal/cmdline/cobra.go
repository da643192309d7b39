package cmdline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skills-mcp/skills-mcp/internal/suggest"
)

// FlagError is a cobra FlagErrorFunc: it turns the flag parser's errors
// into usage errors that name the flag, the type it wants and, for an
// unknown flag, the likely one.
func FlagError(cmd *cobra.Command, err error) error {
	return &UsageError{Err: DescribeFlagError(cmd.Flags(), err)}
}

// DescribeFlagError rewrites an error of fs's parser as one line that
// names the flag, the type it wants, or the flag likely meant.
func DescribeFlagError(fs *pflag.FlagSet, err error) error {
	if e, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		f := e.GetFlag()
		if cause := e.Unwrap(); cause != nil && !bareParseError(cause.Error()) {
			return fmt.Errorf("--%s %q: %v", f.Name, e.GetValue(), cause)
		}
		return fmt.Errorf("--%s %q: want %s", f.Name, e.GetValue(), wantOf(f))
	}
	if e, ok := errors.AsType[*pflag.NotExistError](err); ok {
		name := e.GetSpecifiedName()
		dashes := "--"
		if e.GetSpecifiedShortnames() != "" {
			dashes = "-"
		}
		if s := similarFlags(fs, name); len(s) > 0 {
			return fmt.Errorf("unknown flag %s%s: did you mean --%s?", dashes, name, strings.Join(s, " or --"))
		}
		return fmt.Errorf("unknown flag %s%s", dashes, name)
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

// NormalizeArgs accepts the Go flag package's single dash for the long
// flags of sets ("-depth 3", "-json"), which both binaries took before.
// Everything after "--" is left as it is.
func NormalizeArgs(args []string, sets ...*pflag.FlagSet) []string {
	out := make([]string, 0, len(args))
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
	}
	return out
}

// UsageArgs makes the errors of an argument check usage errors.
func UsageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}

// Help is a command's help text, put together.
type Help struct {
	Intro string // before the flags; it may end with its own "Flags:" line
	Flags *Table // the command's own flags
	// Inherited are the flags every command takes, listed apart; nil
	// for none.
	Inherited *Table
	After     string // after the flags, before the variables
	// ExitStatus ends the help; "" for none.
	ExitStatus string
}

// String is the help: its text, its flags, the flags every command takes,
// the variables, the exit statuses.
func (h Help) String() string {
	var b strings.Builder
	b.WriteString(h.Intro)
	if !strings.HasSuffix(h.Intro, "Flags:\n") {
		b.WriteString("\nFlags:\n")
	}
	own := pflag.NewFlagSet("help", pflag.ContinueOnError)
	own.SortFlags = false
	if h.Flags != nil {
		own.AddFlagSet(h.Flags.fs)
	}
	if own.Lookup("help") == nil {
		own.BoolP("help", "h", false, "print this help")
	}
	b.WriteString(own.FlagUsagesWrapped(100))
	if h.Inherited != nil && h.Inherited.fs.HasFlags() {
		b.WriteString("\nGlobal flags:\n")
		b.WriteString(h.Inherited.fs.FlagUsagesWrapped(100))
	}
	b.WriteString(h.After)
	env := &Table{}
	for _, t := range []*Table{h.Inherited, h.Flags} {
		if t != nil {
			env.rows = append(env.rows, t.rows...)
			env.vars = append(env.vars, t.vars...)
		}
	}
	b.WriteString(env.EnvHelp())
	b.WriteString(h.ExitStatus)
	return b.String()
}

// Shells are the shells cobra's completion command writes scripts for.
const Shells = "bash, zsh, fish or powershell"

// RefuseUnknownShells makes root's completion command (cobra's) answer a
// missing or unknown shell with a usage error (exit 2), not its help. Call
// it after root.SetOut: cobra's scripts go to the writer root had when
// the completion command was made.
func RefuseUnknownShells(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	c, _, err := root.Find([]string{"completion"})
	if err != nil || c == root {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return Usagef("", "completion needs a shell: %s", Shells)
		}
		return Usagef("", "unknown shell %q: want %s", args[0], Shells)
	}
}

// SuggestCommands are the commands under cmd whose names are close to
// name, for "did you mean".
func SuggestCommands(cmd *cobra.Command, name string) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return suggest.Closest(name, names)
}

package hubcmd

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// Streams are the command line's standard streams and environment: Env
// looks a variable up (os.LookupEnv in the binary, a map in tests).
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            cmdline.Env
}

// Main runs the skills-hub command line args (without the program name)
// and returns the exit status: 0 ok or help, 1 a failure at run time, 2
// bad usage. Errors go to st.Stderr: one "Error: …" line and, for bad
// usage, a hint and "Try: skills-hub CMD --help".
func Main(ctx context.Context, args []string, st Streams) int {
	path, err := execute(ctx, args, st)
	if err == nil || errors.Is(err, cmdline.ErrHelp) {
		return cmdline.ExitOK
	}
	return cmdline.PrintError(st.Stderr, path, err)
}

// execute runs the command line and returns the path of the command it
// ran ("skills-hub catalog search") and its error: nil, a
// *cmdline.UsageError for bad input, or the failure.
func execute(ctx context.Context, args []string, st Streams) (string, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newSession(st)
	root := newTree(s)
	if len(args) == 0 || (args[0] != cobra.ShellCompRequestCmd && args[0] != cobra.ShellCompNoDescRequestCmd) {
		args = cmdline.NormalizeArgs(args, flagSets(root)...)
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	path := "skills-hub"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return path, err
}

// flagSets are the flag sets of every command in the tree, so that the
// Go flag package's single dash ("-json"), which the hub took before,
// still names a long flag.
func flagSets(root *cobra.Command) []*pflag.FlagSet {
	var sets []*pflag.FlagSet
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		sets = append(sets, c.Flags(), c.PersistentFlags())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return sets
}

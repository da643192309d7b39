package hubcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/catalogbuild"
)

// Exit statuses of [Main]: the contract of both binaries.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Main runs the skills-hub command line args (without the program name)
// and returns the exit status: 0 ok or help, 1 a failure, 2 bad usage.
// Errors go to st.Stderr, one "Error: …" line and, for bad usage, a
// "Try: …" line.
func Main(ctx context.Context, args []string, st Streams) int {
	if len(args) > 0 {
		switch args[0] {
		case "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return complete(args, st)
		case "version", "--version", "-version":
			fmt.Fprintln(st.Stdout, "skills-hub", buildinfo.Read())
			return exitOK
		case "catalog":
			// The catalog builder is a publisher's tool with its own
			// command line; the hub's catalog commands are the others.
			if len(args) > 1 && args[1] == "build" {
				return catalogbuild.Main(ctx, args[1:], st.Stdout, st.Stderr, st.Env)
			}
		}
	}
	err := Run(ctx, args, st)
	var ue *UsageError
	switch {
	case err == nil, errors.Is(err, ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(st.Stderr, "Error: %v\n", ue.Err)
		if ue.Hint != "" {
			fmt.Fprintf(st.Stderr, "Try: %s\n", ue.Hint)
		}
		return exitUsage
	default:
		fmt.Fprintf(st.Stderr, "Error: %v\n", err)
		return exitFailure
	}
}

// Package cli is the skills-mcp command line: it reads flags, SKILLS_*
// environment variables and (later) the config file, builds every component
// and owns their lifetimes. It is the only package that reads the process
// environment.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is bad input from the user: the command exits 2 and prints the
// hint after the error.
type usageError struct {
	err  error
	hint string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(hint, format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), hint: hint}
}

// env is the process environment as a lookup function, so tests can run
// commands without touching the real one.
type env func(string) (string, bool)

// command is one sub-command.
type command interface {
	Run(ctx context.Context, args []string) error
}

// streams are a command's standard streams.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            env
}

// Main runs the command line args (without the program name) and returns the
// exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, streams{stdin: stdin, stdout: stdout, stderr: stderr, env: os.LookupEnv})
}

func run(ctx context.Context, args []string, st streams) int {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var cmd command
	switch name {
	case "serve":
		cmd = &serveCommand{streams: st}
	case "pull":
		cmd = &pullCommand{streams: st}
	case "lint":
		cmd = &lintCommand{streams: st}
	case "check":
		cmd = &checkCommand{streams: st}
	case "pack":
		cmd = &packCommand{streams: st}
	case "version":
		fmt.Fprintln(st.stdout, "skills-mcp", version())
		return exitOK
	case "help":
		fmt.Fprint(st.stdout, mainUsage)
		return exitOK
	default:
		fmt.Fprintf(st.stderr, "Error: unknown command %q\nTry: skills-mcp help\n", name)
		return exitUsage
	}
	err := cmd.Run(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(st.stderr, "Error: %v\n", ue.err)
		if ue.hint != "" {
			fmt.Fprintf(st.stderr, "Try: %s\n", ue.hint)
		}
		return exitUsage
	default:
		fmt.Fprintf(st.stderr, "Error: %v\n", err)
		return exitFailure
	}
}

// errHelp is returned by a command that printed its help on request.
var errHelp = errors.New("help requested")

// parseInterleaved parses fs's flags, which may come before, between and
// after the arguments it returns ("--" ends the flags); hint follows a
// bad flag.
func parseInterleaved(fs *flag.FlagSet, args []string, hint string) ([]string, error) {
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{err: err, hint: hint}
		}
		left := fs.Args()
		if len(left) == 0 {
			return pos, nil
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			return append(pos, left...), nil
		}
		pos = append(pos, left[0])
		rest = left[1:]
	}
}

// splitCommand splits off "--command CMD ARGS…" (or --command=CMD), which
// takes the rest of the command line as a server to run over stdio.
func splitCommand(args []string) (rest, command []string, found bool) {
	for i, a := range args {
		if a == "--command" || a == "-command" {
			return args[:i], args[i+1:], true
		}
		if v, ok := strings.CutPrefix(a, "--command="); ok {
			return args[:i], append([]string{v}, args[i+1:]...), true
		}
	}
	return args, nil, false
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

const mainUsage = `skills-mcp serves Agent Skills (folders with a SKILL.md) to AI agents over the
Model Context Protocol, with the MCP Skills extension (SEP-2640).

Usage:
  skills-mcp [serve] [flags]    serve skill libraries over stdio or HTTP (default)
  skills-mcp pull [SKILL...]    copy skills from any SEP-2640 server to disk, verified
  skills-mcp lint [PATH...]     check skills for the Agent Skills rules and risky content
  skills-mcp check --url URL    check any SEP-2640 server from the client side (or --command CMD ARGS...)
  skills-mcp pack --vault DIR   build a vault's release zip, pinned by its digest
  skills-mcp version            print the version
  skills-mcp help               print this help

Run "skills-mcp COMMAND -h" for a command's flags; serve's have SKILLS_* environment twins.
`

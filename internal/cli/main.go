// Package cli is the skills-mcp command line: it reads flags, SKILLS_*
// environment variables and (later) the config file, builds every component
// and owns their lifetimes. It is the only package that reads the process
// environment.
package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// streams are a command's standard streams.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            cmdline.Env
	// server is the command line after --command (pull, check), which
	// the flag parser never sees; hasServer says --command was given.
	server    []string
	hasServer bool
}

// Main runs the command line args (without the program name) and returns the
// exit status: 0 ok or help, 1 a failure at run time, 2 bad usage.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, streams{stdin: stdin, stdout: stdout, stderr: stderr, env: os.LookupEnv})
}

func run(ctx context.Context, args []string, st streams) int {
	// --command takes the rest of the command line as a server to run
	// over stdio: cut it off before the flags are parsed.
	if len(args) > 0 && (args[0] == "pull" || args[0] == "check") {
		args, st.server, st.hasServer = splitCommand(args)
	}
	root := newRoot(st)
	var sets []*pflag.FlagSet
	for _, c := range append(root.Commands(), root) {
		sets = append(sets, c.Flags())
	}
	root.SetArgs(normalizeArgs(args, sets...))
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil, errors.Is(err, cmdline.ErrHelp):
		return cmdline.ExitOK
	}
	path := "skills-mcp"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return cmdline.PrintError(st.stderr, path, err)
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

func version() string { return buildinfo.Read().Version }

const mainUsage = `skills-mcp serves Agent Skills (folders with a SKILL.md) to AI agents over the
Model Context Protocol, with the MCP Skills extension (SEP-2640).

Usage:
  skills-mcp [serve] [flags]    serve skill libraries over stdio or HTTP (default)
  skills-mcp pull [SKILL...]    copy skills from any SEP-2640 server to disk, verified
  skills-mcp lint [PATH...]     check skills for the Agent Skills rules and risky content
  skills-mcp check --url URL    check any SEP-2640 server from the client side (or --command CMD ARGS...)
  skills-mcp pack --vault DIR   build a vault's release zip, pinned by its digest
  skills-mcp version            print the version (also --version)
  skills-mcp completion SHELL   print the completion script for bash, zsh, fish or powershell
  skills-mcp help [COMMAND]     print this help, or a command's

Run "skills-mcp COMMAND --help" for a command's flags and variables; serve's
flags are also taken without "serve". The skill hub is another binary,
skills-hub.

Exit status: 0 ok, 1 a failure at run time (lint: findings at --fail-on or
above), 2 bad usage (a flag, a variable, an argument or a path named on the
command line).
`

package hubcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skills-mcp/skills-mcp/internal/buildinfo"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// command is one sub-command of skills-hub, a row of [commands]: what the
// help and completion say of it, the arguments it takes, and its flags
// and what it runs, both from define.
type command struct {
	path  string // its words below skills-hub: "catalog search"
	args  string // its arguments (and the flags it needs) as usage lines show them
	short string // one line, for the command lists and completion
	help  string // the help's text before the flags
	// minArgs and maxArgs (-1: any) bound the arguments; what names
	// them in the error when some are missing.
	minArgs, maxArgs int
	what             string
	// alone marks a command that never opens the hub: it takes none of
	// the global flags.
	alone bool
	// define declares the command's flags and variables in t and returns
	// what the command runs once they are parsed and its arguments
	// counted.
	define func(t *cmdline.Table) runFunc
}

// runFunc runs a command on its arguments. It opens the hub through the
// session, if it needs it; the tree closes it after the command.
type runFunc func(ctx context.Context, s *session, args []string) error

// group is a command that holds others; its help lists them.
type group struct{ name, short, help string }

// groups are the commands that hold others, in the order of the help.
var groups = []group{
	{"catalog", "search, refresh, import or build the catalog", catalogHelp},
	{"token", "create, list or revoke the tokens of the admin API and the projects", tokenHelp},
	{"well-known", "turn a project's well-known index (npx skills add) on or off", wellKnownHelp},
	{"job", "settle a job whose replica is gone", jobHelp},
	{"remnants", "list, show, download or purge the files kept of deleted projects' jobs", remnantsHelp},
}

// commands is the command table of skills-hub, in the order of the help:
// the tree, the help's command lists and completion all come from it.
var commands = []command{
	{path: "install", args: "(--zip FILE [--path DIR] | --repo URL [--path DIR] [--ref REF | --commit SHA] | --item ID)",
		short: "install a package from a ZIP, a git repository or the catalog", help: installHelp, define: installCommand},
	{path: "import", args: "FILE [--path DIR]", short: "install the package in a ZIP upload (install --zip)", help: importHelp,
		minArgs: 1, maxArgs: 1, what: "the ZIP FILE to install", define: importCommand},
	{path: "list", short: "list the installed packages", help: listHelp, define: listCommand},
	{path: "versions", args: "PACKAGE", short: "list a package's versions", help: versionsHelp,
		minArgs: 1, maxArgs: 1, what: "a PACKAGE name", define: versionsCommand},
	{path: "inspect", args: "VERSION", short: "show a version's origin, files and inspection", help: inspectHelp,
		minArgs: 1, maxArgs: 1, what: "a VERSION (as skills-hub list prints it)", define: inspectCommand},
	{path: "approve", args: "VERSION", short: "record an administrator's approval (--revoke withdraws it)", help: approveHelp,
		minArgs: 1, maxArgs: 1, what: "a VERSION (as skills-hub list prints it)", define: approveCommand},
	{path: "notes", args: "VERSION TEXT", short: "set a version's notes", help: notesHelp,
		minArgs: 2, maxArgs: 2, what: "a VERSION and the TEXT of its notes", define: notesCommand},
	{path: "uninstall", args: "VERSION", short: "remove a version (refused while a project uses it)", help: uninstallHelp,
		minArgs: 1, maxArgs: 1, what: "a VERSION (as skills-hub list prints it)", define: uninstallCommand},
	{path: "catalog search", args: "[QUERY…]", short: "search the catalog (or browse it by --category, --author)", help: catalogSearchHelp,
		maxArgs: -1, define: catalogSearchCommand},
	{path: "catalog refresh", args: "[URL]", short: "replace the catalog with the document at URL", help: catalogRefreshHelp,
		maxArgs: 1, define: catalogRefreshCommand},
	{path: "catalog import", args: "FILE", short: "replace the catalog with the document in FILE", help: catalogImportHelp,
		minArgs: 1, maxArgs: 1, what: "the catalog document FILE", define: catalogImportCommand},
	{path: "catalog build", args: "--out FILE", short: "index public skill repositories into a catalog document", help: catalogBuildHelp,
		maxArgs: -1, alone: true, define: catalogBuildCommand},
	{path: "serve", args: "[--http ADDR]", short: "serve the admin API and the project endpoints over HTTP", help: serveHelp, define: serveCommand},
	{path: "token create", args: "(--scope SCOPE | --project ID | --index ID)", short: "create a token and print its secret", help: tokenCreateHelp, define: tokenCreateCommand},
	{path: "token list", short: "list tokens, never their secrets", help: tokenListHelp, define: tokenListCommand},
	{path: "token revoke", args: "ID", short: "revoke a token", help: tokenRevokeHelp,
		minArgs: 1, maxArgs: 1, what: "a token ID (see skills-hub token list)", define: tokenRevokeCommand},
	{path: "well-known on", args: "PROJECT", short: "serve a project's well-known index to the holders of its capabilities", help: wellKnownOnHelp,
		minArgs: 1, maxArgs: 1, what: "a project ID", define: wellKnownCommand(true)},
	{path: "well-known off", args: "PROJECT", short: "answer 404 at a project's well-known index URLs", help: wellKnownOffHelp,
		minArgs: 1, maxArgs: 1, what: "a project ID", define: wellKnownCommand(false)},
	{path: "job settle", args: "JOB", short: "end a job whose replica is gone (--force: whatever its replica)", help: jobSettleHelp,
		minArgs: 1, maxArgs: 1, what: "a job id (j-…)", define: jobSettleCommand},
	{path: "remnants list", short: "list the remnants, oldest first", help: remnantsListHelp, define: remnantsListCommand},
	{path: "remnants show", args: "JOB", short: "show a remnant's record and files", help: remnantsShowHelp,
		minArgs: 1, maxArgs: 1, what: "a job id (see skills-hub remnants list)", define: remnantsShowCommand},
	{path: "remnants download", args: "JOB PATH", short: "write a remnant's file to a file or stdout", help: remnantsDownloadHelp,
		minArgs: 2, maxArgs: 2, what: "a job id and a file's path (see skills-hub remnants show JOB)", define: remnantsDownloadCommand},
	{path: "remnants purge", args: "JOB...", short: "delete remnants and their files for good", help: remnantsPurgeHelp,
		minArgs: 1, maxArgs: -1, what: "one or more job ids (see skills-hub remnants list)", define: remnantsPurgeCommand},
	{path: "backup", args: "--out FILE", short: "write a backup of the whole hub (SQLite)", help: backupHelp, define: backupCommand},
	{path: "restore", args: "FILE", short: "restore a backup into an empty data directory", help: restoreHelp,
		minArgs: 1, maxArgs: 1, what: "the backup FILE", define: restoreCommand},
}

// exitStatusHelp is the exit-status contract, the same for every command.
const exitStatusHelp = `
Exit status: 0 ok, 1 a failure at run time, 2 bad usage (a flag, a variable
or an argument).
`

// newTree builds the command tree of skills-hub over s from [commands]
// and [groups].
func newTree(s *session) *cobra.Command {
	var showVersion bool
	rootFlags := cmdline.NewTable("skills-hub")
	rootFlags.Bool(&showVersion, "version", "", "print the version")
	root := &cobra.Command{
		Use:           "skills-hub",
		Short:         "the skill hub: versions, projects, their MCP endpoints, jobs",
		Version:       buildinfo.Read().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(s.Stdout, mainHelp(cmd, rootFlags, s))
			return nil
		},
	}
	root.SetVersionTemplate("skills-hub {{.Version}}\n")
	// Before the completion command is made: its scripts go to the
	// writer the root had then.
	root.SetOut(s.Stdout)
	root.SetErr(s.Stderr)
	root.SetIn(s.Stdin)
	root.Flags().AddFlagSet(rootFlags.Flags())
	root.PersistentFlags().AddFlagSet(s.global.Flags())
	root.SetFlagErrorFunc(cmdline.FlagError)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if cmd == root {
			fmt.Fprint(s.Stdout, mainHelp(root, rootFlags, s))
			return
		}
		// cobra's own commands (completion, help) keep cobra's help.
		fmt.Fprint(s.Stdout, cmd.UsageString())
	})
	helps := map[*cobra.Command]func() string{}
	parents := map[string]*cobra.Command{"": root}
	for _, g := range groups {
		gc := &cobra.Command{
			Use:           g.name + " COMMAND",
			Short:         g.short,
			SilenceErrors: true,
			SilenceUsage:  true,
			Args:          unknownCommand,
			RunE: func(cmd *cobra.Command, _ []string) error {
				fmt.Fprint(s.Stdout, groupHelp(g))
				return nil
			},
		}
		helps[gc] = func() string { return groupHelp(g) }
		root.AddCommand(gc)
		parents[g.name] = gc
	}
	for _, c := range commands {
		parent, name := "", c.path
		if i := strings.LastIndexByte(c.path, ' '); i >= 0 {
			parent, name = c.path[:i], c.path[i+1:]
		}
		t := cmdline.NewTable(c.path)
		run := c.define(t)
		cc := &cobra.Command{
			Use:           strings.TrimSpace(name + " " + c.args),
			Short:         c.short,
			SilenceErrors: true,
			SilenceUsage:  true,
			Args:          c.checkArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				return s.run(cmd.Context(), c, t, run, args)
			},
		}
		cc.Flags().AddFlagSet(t.Flags())
		h := cmdline.Help{Intro: c.help, Flags: t, Inherited: s.global, ExitStatus: exitStatusHelp}
		if c.alone {
			h.Inherited = nil
		}
		if strings.Contains(c.help, "Exit status:") {
			h.ExitStatus = ""
		}
		helps[cc] = h.String
		parents[parent].AddCommand(cc)
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "print the version (also --version)",
		Args:  cmdline.UsageArgs(cobra.NoArgs),
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(s.Stdout, "skills-hub", buildinfo.Read())
		},
	})
	root.SetHelpCommand(helpCommand(root))
	cmdline.RefuseUnknownShells(root)
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Use, c.Short = "completion SHELL", "print the completion script for "+cmdline.Shells
	}
	for cmd, help := range helps {
		cmd.SetHelpFunc(func(*cobra.Command, []string) { fmt.Fprint(s.Stdout, help()) })
	}
	return root
}

// checkArgs counts a command's arguments.
func (c command) checkArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) < c.minArgs:
		return cmdline.Usagef("", "%s needs %s", c.path, c.what)
	case c.maxArgs >= 0 && len(args) > c.maxArgs:
		return cmdline.Usagef("", "%s: unexpected argument %q", c.path, args[c.maxArgs])
	}
	return nil
}

// run runs command c: the variables of the flags not given (the global
// ones only for a command that opens the hub), then the command, then
// the hub's close.
func (s *session) run(ctx context.Context, c command, t *cmdline.Table, run runFunc, args []string) (err error) {
	if c.alone {
		for _, o := range s.global.Options() {
			if s.global.Changed(o.Name) {
				return cmdline.Usagef("", "%s opens no hub: it takes no --%s", c.path, o.Name)
			}
		}
	} else if err := s.global.FromEnv(s.Env, ""); err != nil {
		return err
	}
	if err := t.FromEnv(s.Env, ""); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close()) }()
	return run(ctx, s, args)
}

// unknownCommand refuses the arguments of a command that holds others:
// the first names no command of it.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	err := fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmdline.SuggestCommands(cmd, args[0]); len(s) > 0 {
		err = fmt.Errorf("%w: did you mean %s?", err, strings.Join(s, " or "))
	}
	return &cmdline.UsageError{Err: err}
}

// helpCommand is "skills-hub help [COMMAND…]": the help of the command
// named, or a usage error for one that does not exist.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "print this help, or a command's",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				unknown := args[len(args)-1]
				if len(rest) > 0 {
					unknown = rest[0]
				}
				parent := root
				if target != nil {
					parent = target
				}
				return unknownCommand(parent, []string{unknown})
			}
			target.HelpFunc()(target, nil)
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			c, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

const mainIntro = `Usage: skills-hub COMMAND [flags]

skills-hub is the skill hub: it keeps installed skill packages as immutable
versions, each inspected at install, and a catalog of public skills to install
from, and serves projects (sets of versions) each at its own MCP endpoint, an
admin API and console, and sandboxed script jobs. Its state is one database:
SQLite in the data directory (--data), or PostgreSQL (--database). Nothing a
package contains runs when it is installed. To serve skill folders to an
agent without a hub, use skills-mcp.
`

const mainAfter = `
A VERSION is NAME@DIGEST as list and versions print it (pdf@3f2a9c0b1d4e),
a shorter prefix of at least 4 hex digits, the full tree digest (sha256:…),
or a package name that has one version. Inspection is not proof of safety.

Run "skills-hub COMMAND --help" for a command's flags.
`

// mainHelp is the help of skills-hub: every command, the global flags,
// the variables.
func mainHelp(root *cobra.Command, rootFlags *cmdline.Table, s *session) string {
	var list strings.Builder
	for _, c := range commands {
		commandLine(&list, c.path+" "+c.args, c.short)
	}
	for _, name := range []string{"version", "completion", "help"} {
		if c, _, err := root.Find([]string{name}); err == nil && c != root {
			commandLine(&list, c.Use, c.Short)
		}
	}
	return cmdline.Help{Intro: mainIntro + "\nCommands:\n" + list.String() + mainAfter, Flags: rootFlags, Inherited: s.global, ExitStatus: exitStatusHelp}.String()
}

// groupHelp is the help of group g: its text, then its commands.
func groupHelp(g group) string {
	var list strings.Builder
	for _, c := range commands {
		if name, ok := strings.CutPrefix(c.path, g.name+" "); ok {
			commandLine(&list, name+" "+c.args, c.short)
		}
	}
	return g.help + "\nCommands:\n" + list.String() + "\nRun \"skills-hub " + g.name + " COMMAND --help\" for a command's flags.\n"
}

// commandLine writes a line of a command list: the command with its
// arguments, and what it does.
func commandLine(b *strings.Builder, use, short string) {
	use = strings.TrimSpace(use)
	if utf8.RuneCountInString(use) > 24 {
		fmt.Fprintf(b, "  %s\n  %-24s  %s\n", use, "", short)
		return
	}
	fmt.Fprintf(b, "  %s%s  %s\n", use, strings.Repeat(" ", 24-utf8.RuneCountInString(use)), short)
}

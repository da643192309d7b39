package hubcmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// completionCommands are the commands shell completion offers, with the
// description a shell may show: the list of hubUsage.
var completionCommands = []struct{ name, short string }{
	{"install", "install a package from a ZIP, a git repository or the catalog"},
	{"import", "install the package in a ZIP upload"},
	{"list", "list the installed packages"},
	{"versions", "list a package's versions"},
	{"inspect", "show a version's origin, files and inspection"},
	{"approve", "record an administrator's approval"},
	{"notes", "set a version's notes"},
	{"uninstall", "remove a version"},
	{"serve", "serve the admin API and the project endpoints over HTTP"},
	{"token", "manage the tokens of the admin API and the projects"},
	{"well-known", "turn a project's well-known index on or off"},
	{"job", "settle a job whose replica is gone"},
	{"remnants", "list, show, download or purge the files kept of deleted projects' jobs"},
	{"backup", "write a backup of the whole hub"},
	{"restore", "restore a backup into an empty data directory"},
	{"version", "print the version"},
	{"help", "print the help"},
}

// complete answers "skills-hub completion SHELL" (the script) and the
// requests the script makes (cobra's __complete): the commands are
// completed from a cobra tree of their names; flags and arguments are
// left to the shell's file completion, since the commands parse their
// own flags.
func complete(args []string, st Streams) int {
	root := &cobra.Command{Use: "skills-hub", SilenceErrors: true, SilenceUsage: true}
	for _, c := range completionCommands {
		root.AddCommand(&cobra.Command{Use: c.name, Short: c.short, DisableFlagParsing: true, Run: func(*cobra.Command, []string) {}})
	}
	catalog := &cobra.Command{Use: "catalog", Short: "search, refresh, import or build the catalog"}
	for _, c := range [][2]string{{"search", "search the catalog"}, {"refresh", "replace the catalog with the document at a URL"},
		{"import", "replace the catalog with a document in a file"}, {"build", "index skill repositories into a catalog document"}} {
		catalog.AddCommand(&cobra.Command{Use: c[0], Short: c[1], DisableFlagParsing: true, Run: func(*cobra.Command, []string) {}})
	}
	root.AddCommand(catalog)
	root.PersistentFlags().String("data", "", "the hub's data directory")
	root.PersistentFlags().String("database", "", "a PostgreSQL URL")
	root.PersistentFlags().Bool("require-approval", false, "versions must be approved before a project may use them")
	root.SetArgs(args)
	root.SetIn(st.Stdin)
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(st.Stderr, "Error: %v\nTry: skills-hub completion --help\n", err)
		return exitUsage
	}
	return exitOK
}

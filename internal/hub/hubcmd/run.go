package hubcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/suggest"
)

// Streams are the hub command's standard streams and environment, as the
// CLI passes them: Env looks a variable up (os.LookupEnv in the binary, a
// map in tests).
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            func(string) (string, bool)
}

// UsageError is bad input from the user (exit status 2): the CLI prints the
// error and, if not empty, Hint as what to try.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(hint, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Hint: hint}
}

// ErrHelp is returned by a hub command that printed its help on request
// (exit status 0).
var ErrHelp = errors.New("help requested")

// Run runs `skills-hub args…` (args without "hub"). It returns nil,
// ErrHelp, a *UsageError for bad input, or another error for a failure;
// the caller maps them to exit statuses 0, 0, 2 and 1 and prints the error.
func Run(ctx context.Context, args []string, st Streams) error {
	return (&command{stdin: st.Stdin, stdout: st.Stdout, stderr: st.Stderr, env: st.Env}).Run(ctx, args)
}

// command is `skills-hub …`, the skill hub's command family.
type command struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            func(string) (string, bool)
}

// hubGlobals are the flags every hub sub-command takes.
type hubGlobals struct {
	data            string
	database        string
	requireApproval bool
	set             map[string]bool // the globals given as flags
}

const hubUsage = `Usage: skills-hub COMMAND [flags]

skills-hub is the skill hub: it keeps installed skill packages as immutable
versions, each inspected at install, and a catalog of public skills to install
from, and serves projects (sets of versions) each at its own MCP endpoint, an
admin API and console, and sandboxed script jobs. Its state is one database:
SQLite in the data directory (--data), or PostgreSQL (--database). Nothing a
package contains runs when it is installed. To serve skill folders to an
agent without a hub, use skills-mcp.

Commands:
  install (--zip FILE [--path DIR] | --repo URL [--path DIR] [--ref REF | --commit SHA] | --item ID)
                            install a package from a ZIP, a git repository or the catalog
  import FILE [--path DIR]  install the package in a ZIP upload (install --zip)
  list                      list the installed packages
  versions PACKAGE          list a package's versions
  inspect VERSION           show a version's origin, files and inspection
  approve VERSION           record an administrator's approval (--revoke withdraws it)
  notes VERSION TEXT        set a version's notes
  uninstall VERSION         remove a version (refused while a project uses it)
  catalog search [QUERY]    search the catalog (or browse it by --category, --author)
  catalog refresh [URL]     replace the catalog with the document at URL
  catalog import FILE       replace the catalog with the document in FILE
  catalog build --out FILE  index public skill repositories into a catalog document
  serve [--http ADDR]       serve the admin API and the project endpoints over HTTP
  token create|list|revoke  manage the tokens of the admin API and the projects
  well-known on|off PROJECT turn a project's well-known index (npx skills add) on or off
  job settle JOB            end a job whose replica is gone (--force: whatever its replica)
  remnants list|show|download|purge
                            the files kept of deleted projects' jobs
  backup --out FILE         write a backup of the whole hub (SQLite)
  restore FILE              restore a backup into an empty data directory
  version                   print the version (also --version)
  completion SHELL          print the completion script for bash, zsh, fish or powershell

A VERSION is NAME@DIGEST as list and versions print it (pdf@3f2a9c0b1d4e),
a shorter prefix of at least 4 hex digits, the full tree digest (sha256:…),
or a package name that has one version.

Every command takes these flags (a flag beats its variable):
  --data DIR              the data directory (SKILLS_HUB_DATA; default
                          $XDG_DATA_HOME/skills-mcp/hub or ~/.local/share/skills-mcp/hub)
  --database URL          a postgres:// database instead of SQLite (SKILLS_HUB_DATABASE)
  --require-approval      versions must be approved before a project may use them
                          (SKILLS_HUB_REQUIRE_APPROVAL)

Inspection is not proof of safety. Exit status: 0 ok, 1 a failure, 2 a usage error.
Run "skills-hub COMMAND -h" for a command's flags.
`

const hubCatalogUsage = `Usage: skills-hub catalog (search|refresh|import|build) [flags]

The catalog lists public skills to install with "skills-hub install --item ID". A
snapshot is built into the binary, so it works offline; refresh and import
replace it with a newer document (schema_version 1), kept in the hub's
database. A document that fails to download or validate changes nothing, and
a catalog update never changes an installed version.

Commands:
  search [QUERY…]    rank items by name, author and description; without a
                     query, list them (filtered by --category and --author)
  refresh [URL]      download the catalog document at URL (https, or http to
                     a loopback address; default SKILLS_HUB_CATALOG_URL)
  import FILE        read the catalog document in FILE
  build --out FILE   index public skill repositories into a catalog document
                     (a publisher's tool: see skills-hub catalog build -h)
`

// Run runs the hub command line args.
func (c *command) Run(ctx context.Context, args []string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &hubGlobals{set: map[string]bool{}}
	fs := c.flagSet("hub", g, hubUsage)
	if err := fs.Parse(args); err != nil {
		return c.flagError(fs, err, "skills-hub help")
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(c.stdout, hubUsage)
		return nil
	}
	name, args := args[0], args[1:]
	switch name {
	case "help":
		if len(args) > 0 {
			return c.Run(ctx, []string{args[0], "-h"})
		}
		fmt.Fprint(c.stdout, hubUsage)
		return nil
	case "install":
		return c.install(ctx, g, args)
	case "import":
		return c.importZip(ctx, g, args)
	case "list":
		return c.list(ctx, g, args)
	case "versions":
		return c.versions(ctx, g, args)
	case "inspect":
		return c.inspect(ctx, g, args)
	case "approve":
		return c.approve(ctx, g, args)
	case "notes":
		return c.notes(ctx, g, args)
	case "uninstall":
		return c.uninstall(ctx, g, args)
	case "catalog":
		return c.catalog(ctx, g, args)
	case "backup":
		return c.backup(ctx, g, args)
	case "restore":
		return c.restore(ctx, g, args)
	case "serve":
		return c.serve(ctx, g, args)
	case "token":
		return c.token(ctx, g, args)
	case "well-known":
		return c.wellKnown(ctx, g, args)
	case "job":
		return c.job(ctx, g, args)
	case "remnants":
		return c.remnants(ctx, g, args)
	}
	if s := suggest.Closest(name, hubCommands); len(s) > 0 {
		return usagef("skills-hub help", "unknown command %q: did you mean %s?", name, strings.Join(s, " or "))
	}
	return usagef("skills-hub help", "unknown command %q", name)
}

// hubCommands are the names Run dispatches, for suggestions.
var hubCommands = []string{"install", "import", "list", "versions", "inspect", "approve", "notes", "uninstall",
	"catalog", "backup", "restore", "serve", "token", "well-known", "help", "version", "completion"}

// hubFlags is one hub command's flag set and its help text.
type hubFlags struct {
	*flag.FlagSet
	usage string
}

// flagSet is a flag set for one hub command, with the global flags. A bad
// flag is reported once, as the error (exit 2); -h prints the help.
func (c *command) flagSet(name string, g *hubGlobals, usage string) *hubFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	track := func(f string, set func(string) error) func(string) error {
		return func(v string) error { g.set[f] = true; return set(v) }
	}
	fs.Func("data", "the hub's data `DIR` (or set SKILLS_HUB_DATA)", track("data", func(v string) error { g.data = v; return nil }))
	fs.Func("database", "a PostgreSQL `URL` (postgres://…) to keep the hub in, instead of SQLite in the data directory (or set SKILLS_HUB_DATABASE)", track("database", func(v string) error { g.database = v; return nil }))
	fs.BoolFunc("require-approval", "versions must be approved before a project may use them (or set SKILLS_HUB_REQUIRE_APPROVAL)", track("require-approval", func(v string) error {
		b, err := strconv.ParseBool(v)
		g.requireApproval = b
		return err
	}))
	return &hubFlags{FlagSet: fs, usage: usage}
}

func (c *command) flagError(fs *hubFlags, err error, hint string) error {
	if !errors.Is(err, flag.ErrHelp) {
		return &UsageError{Err: describeFlagError(fs.FlagSet, err), Hint: hint}
	}
	// Help asked for is the answer, on stdout.
	fmt.Fprint(c.stdout, fs.usage)
	if fs.Name() != "hub" {
		fmt.Fprint(c.stdout, "\nFlags:\n")
		fs.SetOutput(c.stdout)
		fs.PrintDefaults()
	}
	return ErrHelp
}

// describeFlagError rewrites the flag package's errors ("flag provided
// but not defined: -x", "invalid value … parse error") as one line that
// names the flag, the type it wants, or the flag likely meant.
func describeFlagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggest.Closest(name, names); len(s) > 0 {
			return fmt.Errorf("unknown flag --%s: did you mean --%s?", name, strings.Join(s, " or --"))
		}
		return fmt.Errorf("unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("--%s needs a value", name)
	}
	// invalid value "abc" for flag -n: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		value, flagPart, _ := strings.Cut(rest, " for flag -")
		name, cause, _ := strings.Cut(flagPart, ": ")
		if f := fs.Lookup(name); f != nil && (cause == "parse error" || strings.Contains(cause, "invalid syntax")) {
			want := "a valid value"
			switch fmt.Sprintf("%T", f.Value) {
			case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
				want = "an integer"
			case "*flag.boolValue":
				want = "true or false"
			case "*flag.durationValue":
				want = "a duration such as 90s, 5m or 1h"
			case "*flag.float64Value":
				want = "a number"
			}
			return fmt.Errorf("--%s %s: want %s", name, value, want)
		}
		return fmt.Errorf("--%s %s: %s", name, value, cause)
	}
	return err
}

// parse parses a command's flags, which may come before, between and after
// its arguments ("--" ends the flags), and checks the argument count.
// what names the arguments for the error when some are missing.
func (c *command) parse(fs *hubFlags, args []string, minArgs, maxArgs int, what string) ([]string, error) {
	hint := "skills-hub " + fs.Name() + " -h"
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, c.flagError(fs, err, hint)
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			pos = append(pos, left...)
			break
		}
		pos = append(pos, left[0])
		rest = left[1:]
	}
	switch {
	case len(pos) < minArgs:
		return nil, usagef(hint, "%s needs %s", fs.Name(), what)
	case maxArgs >= 0 && len(pos) > maxArgs:
		return nil, usagef(hint, "%s: unexpected argument %q", fs.Name(), pos[maxArgs])
	}
	return pos, nil
}

// options resolves the global flags against their environment twins and
// the default data directory: the store to open.
func (c *command) options(g *hubGlobals) (store.Options, error) {
	if !g.set["data"] {
		if v, ok := c.env("SKILLS_HUB_DATA"); ok && v != "" {
			g.data = v
		}
	}
	if !g.set["database"] {
		if v, ok := c.env("SKILLS_HUB_DATABASE"); ok && v != "" {
			g.database = v
		}
	}
	if !g.set["require-approval"] {
		if v, ok := c.env("SKILLS_HUB_REQUIRE_APPROVAL"); ok && v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return store.Options{}, usagef("", "SKILLS_HUB_REQUIRE_APPROVAL=%q: want true or false", v)
			}
			g.requireApproval = b
		}
	}
	if g.database == "" && g.data == "" {
		dir, err := c.defaultHubData()
		if err != nil {
			return store.Options{}, err
		}
		g.data = dir
	}
	// Warnings only: a stored catalog passed over, say; not the migrations.
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := store.Options{Dir: g.data, Database: g.database, RequireApproval: g.requireApproval, Logger: logger}
	return opts, nil
}

// defaultHubData is the user's data directory for the hub.
func (c *command) defaultHubData() (string, error) {
	if v, ok := c.env("XDG_DATA_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "skills-mcp", "hub"), nil
	}
	if v, ok := c.env("HOME"); ok && v != "" {
		return filepath.Join(v, ".local", "share", "skills-mcp", "hub"), nil
	}
	return "", usagef("", "no data directory: give --data DIR or set SKILLS_HUB_DATA (HOME is not set)")
}

// openHub is a command's hub: the store it opened and the hub's operations
// over it. Close closes the store.
type openHub struct {
	*hub.Hub
	db *store.DB
}

func (h *openHub) Close() error { return h.db.Close() }

// open opens the hub's store and the hub's operations over it, which read
// repositories on this machine's disk (the command line's; hub serve does
// not). github, if not nil, reads github.com repositories through GitHub's
// endpoints.
func (c *command) open(ctx context.Context, g *hubGlobals, github *pkgtree.GitHubOptions) (*openHub, error) {
	opts, err := c.options(g)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &openHub{Hub: hub.New(db, &hub.Options{LocalRepositories: true, GitHub: github, Logger: opts.Logger}), db: db}, nil
}

const hubInstallUsage = `Usage: skills-hub install (--zip FILE [--path DIR] | --repo URL [--path DIR] [--ref REF | --commit SHA] | --item ID) [flags]

Installs a skill package as an immutable version: from a ZIP archive (SKILL.md
at its root, or in --path), from a directory of a git repository at a ref or a
commit (the commit read is recorded), or from a catalog item at the commit the
catalog names. Installing the same tree again returns the existing version.
Nothing the package contains runs, and no install command, hook or package
script is executed. Each version is inspected; the inspection is not proof of
safety.

Repositories are local folders, file:// or https URLs. github.com
repositories are read through GitHub's API and the commit's archive, sending
GITHUB_TOKEN (if set) to GitHub only; --no-github-api reads them with git.
`

func (c *command) install(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("install", g, hubInstallUsage)
	zipFile := fs.String("zip", "", "install the package in the ZIP archive `FILE`")
	repo := fs.String("repo", "", "install from the git repository at `URL` (or a local path)")
	item := fs.String("item", "", "install the catalog item `ID`")
	path := fs.String("path", "", "the package's `DIR` inside the archive or repository (default: its root)")
	ref := fs.String("ref", "", "the branch or tag `REF` to read (with --repo; default: the default branch)")
	commit := fs.String("commit", "", "the full commit `SHA` to read (with --repo)")
	noGitHub := fs.Bool("no-github-api", false, "read github.com repositories with git's protocol instead of GitHub's API and archive")
	asJSON := fs.Bool("json", false, "print the installed version as JSON")
	quiet := fs.Bool("quiet", false, "print no progress on stderr")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	const hint = "skills-hub install -h"
	n := 0
	for _, s := range []string{*zipFile, *repo, *item} {
		if s != "" {
			n++
		}
	}
	switch {
	case n != 1:
		return usagef(hint, "give one of --zip FILE, --repo URL or --item ID")
	case *zipFile != "" && (*ref != "" || *commit != ""):
		return usagef(hint, "--ref and --commit apply to --repo only")
	case *item != "" && (*ref != "" || *commit != "" || *path != ""):
		return usagef(hint, "--item installs the catalog item's own path and commit: it takes no --path, --ref or --commit")
	case *ref != "" && *commit != "":
		return usagef(hint, "give --ref or --commit, not both")
	}
	var gh *pkgtree.GitHubOptions
	if !*noGitHub {
		gh = &pkgtree.GitHubOptions{}
		if t, ok := c.env("GITHUB_TOKEN"); ok {
			gh.Token = strings.TrimSpace(t)
		}
	}
	h, err := c.open(ctx, g, gh)
	if err != nil {
		return err
	}
	defer h.Close()
	prog := c.progress(*quiet)
	var inst *hub.Installed
	switch {
	case *zipFile != "":
		inst, err = h.InstallZipFile(ctx, *zipFile, *path, prog)
	case *repo != "":
		inst, err = h.InstallGit(ctx, hub.GitInstall{URL: *repo, Path: *path, Ref: *ref, Commit: *commit, Progress: prog})
	default:
		inst, err = h.InstallCatalogItem(ctx, *item, prog)
	}
	if err != nil {
		return err
	}
	return Installed(c.stdout, inst, *asJSON)
}

const hubImportUsage = `Usage: skills-hub import FILE [--path DIR] [flags]

Installs the skill package in the ZIP archive FILE (an upload), as
"skills-hub install --zip FILE" does: SKILL.md at the archive root, or in --path.
To replace the catalog with a catalog document, use "skills-hub catalog import".
`

func (c *command) importZip(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("import", g, hubImportUsage)
	path := fs.String("path", "", "the package's `DIR` inside the archive (default: its root)")
	asJSON := fs.Bool("json", false, "print the installed version as JSON")
	quiet := fs.Bool("quiet", false, "print no progress on stderr")
	pos, err := c.parse(fs, args, 1, 1, "the ZIP FILE to install")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	inst, err := h.InstallZipFile(ctx, pos[0], *path, c.progress(*quiet))
	if err != nil {
		return err
	}
	return Installed(c.stdout, inst, *asJSON)
}

// progress is the progress callback of a long install, on stderr.
func (c *command) progress(quiet bool) func(pkgtree.Progress) {
	if quiet {
		return nil
	}
	return Progress(c.stderr)
}

const hubListUsage = `Usage: skills-hub list [flags]

Lists the installed packages by name, each with its number of versions and its
latest version.
`

func (c *command) list(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("list", g, hubListUsage)
	asJSON := fs.Bool("json", false, "print the packages as JSON")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return List(ctx, h.Hub, c.stdout, *asJSON)
}

const hubVersionsUsage = `Usage: skills-hub versions PACKAGE [flags]

Lists a package's versions, oldest first, with where each came from.
`

func (c *command) versions(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("versions", g, hubVersionsUsage)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	pos, err := c.parse(fs, args, 1, 1, "a PACKAGE name")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Versions(ctx, h.Hub, c.stdout, pos[0], *asJSON)
}

const hubInspectUsage = `Usage: skills-hub inspect VERSION [flags]

Shows a version: its tree digest, origin, labels, the projects bound to it,
its files, and the inspection made at install (linter findings, validator
warnings, scripts and how they run, package manifests, declared requirements).
Inspection is not proof of safety.
`

func (c *command) inspect(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("inspect", g, hubInspectUsage)
	asJSON := fs.Bool("json", false, "print the version and its inspection as JSON")
	pos, err := c.parse(fs, args, 1, 1, "a VERSION (as hub list prints it)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Inspect(ctx, h.Hub, c.stdout, pos[0], *asJSON)
}

const hubApproveUsage = `Usage: skills-hub approve VERSION [--by NAME] [--revoke] [flags]

Records that an administrator approved a version, and when. With
--require-approval, projects may use only approved versions. --revoke
withdraws the approval; projects already using the version keep it.
`

func (c *command) approve(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("approve", g, hubApproveUsage)
	by := fs.String("by", "", "who approves (default: $USER)")
	revoke := fs.Bool("revoke", false, "withdraw the version's approval")
	asJSON := fs.Bool("json", false, "print the version as JSON")
	pos, err := c.parse(fs, args, 1, 1, "a VERSION (as hub list prints it)")
	if err != nil {
		return err
	}
	if *revoke && *by != "" {
		return usagef("skills-hub approve -h", "--revoke takes no --by")
	}
	if !*revoke && *by == "" {
		if u, ok := c.env("USER"); ok {
			*by = strings.TrimSpace(u)
		}
		if *by == "" {
			return usagef("skills-hub approve VERSION --by NAME", "say who approves: --by NAME (USER is not set)")
		}
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Approve(ctx, h.Hub, c.stdout, pos[0], *by, *revoke, *asJSON)
}

const hubNotesUsage = `Usage: skills-hub notes VERSION TEXT [flags]

Replaces a version's notes (an empty TEXT clears them). Notes and approval
are the only things about a version that change after install.
`

func (c *command) notes(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("notes", g, hubNotesUsage)
	asJSON := fs.Bool("json", false, "print the version as JSON")
	pos, err := c.parse(fs, args, 2, 2, "a VERSION and the TEXT of its notes")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Notes(ctx, h.Hub, c.stdout, pos[0], pos[1], *asJSON)
}

const hubUninstallUsage = `Usage: skills-hub uninstall VERSION [flags]

Removes a version, with the file contents no other version shares. A version
a project uses is refused until it is unbound.
`

func (c *command) uninstall(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("uninstall", g, hubUninstallUsage)
	asJSON := fs.Bool("json", false, "print the removed version as JSON")
	pos, err := c.parse(fs, args, 1, 1, "a VERSION (as hub list prints it)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Uninstall(ctx, h.Hub, c.stdout, pos[0], *asJSON)
}

func (c *command) catalog(ctx context.Context, g *hubGlobals, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(c.stdout, hubCatalogUsage)
		return nil
	}
	switch args[0] {
	case "search":
		return c.catalogSearch(ctx, g, args[1:])
	case "refresh":
		return c.catalogRefresh(ctx, g, args[1:])
	case "import":
		return c.catalogImport(ctx, g, args[1:])
	}
	return usagef("skills-hub catalog help", "unknown catalog command %q", args[0])
}

const hubCatalogSearchUsage = `Usage: skills-hub catalog search [QUERY…] [flags]

Ranks the catalog's items for QUERY by name, author and description (an item
named exactly QUERY first). Without a QUERY it lists the items, in the
catalog's order. --category and --author keep only their items.
Install one with "skills-hub install --item ID".
`

func (c *command) catalogSearch(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("catalog search", g, hubCatalogSearchUsage)
	category := fs.String("category", "", "only items of `CATEGORY`")
	author := fs.String("author", "", "only items of `AUTHOR`")
	limit := fs.Int("limit", 20, "show at most `N` items (0: all, when browsing)")
	asJSON := fs.Bool("json", false, "print the items as JSON")
	pos, err := c.parse(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	if *limit < 0 {
		return usagef("skills-hub catalog search -h", "--limit must not be negative")
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	q := index.Query{Text: strings.Join(pos, " "), Category: *category, Author: *author, Limit: *limit}
	return Search(ctx, h.Hub, c.stdout, q, *asJSON)
}

const hubCatalogRefreshUsage = `Usage: skills-hub catalog refresh [URL] [flags]

Downloads the catalog document at URL (default: SKILLS_HUB_CATALOG_URL) and,
if it is valid, makes it the catalog. The URL must be https, or http to a
loopback address. No credential is sent. A failure keeps the last good
catalog.
`

func (c *command) catalogRefresh(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("catalog refresh", g, hubCatalogRefreshUsage)
	pos, err := c.parse(fs, args, 0, 1, "")
	if err != nil {
		return err
	}
	var url string
	if len(pos) == 1 {
		url = pos[0]
	} else if v, ok := c.env("SKILLS_HUB_CATALOG_URL"); ok {
		url = strings.TrimSpace(v)
	}
	if url == "" {
		return usagef("skills-hub catalog refresh URL", "say where the catalog document is: a URL, or set SKILLS_HUB_CATALOG_URL")
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Refresh(ctx, h.Hub, c.stdout, c.stderr, url)
}

const hubCatalogImportUsage = `Usage: skills-hub catalog import FILE [flags]

Reads the catalog document in FILE and, if it is valid, makes it the
catalog. An invalid document (a syntax error, a schema_version other than 1,
an item without a repository, …) is refused whole, naming the item, and the
catalog stays as it was.
`

func (c *command) catalogImport(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("catalog import", g, hubCatalogImportUsage)
	pos, err := c.parse(fs, args, 1, 1, "the catalog document FILE")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Import(ctx, h.Hub, c.stdout, pos[0])
}

const hubBackupUsage = `Usage: skills-hub backup --out FILE [flags]

Writes a consistent backup of the whole hub (every version, its files, labels,
projects and the catalog) to FILE, while the hub stays in use. The database is
the only state, so this one file is everything; restore it with "skills-hub restore".
A PostgreSQL hub is backed up with pg_dump instead.
`

func (c *command) backup(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("backup", g, hubBackupUsage)
	out := fs.String("out", "", "write the backup to `FILE`")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	if *out == "" {
		return usagef("skills-hub backup --out FILE", "--out is required: where to write the backup")
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	return Backup(ctx, h.db, c.stdout, *out)
}

const hubRestoreUsage = `Usage: skills-hub restore FILE [flags]

Restores a backup written by "skills-hub backup" into the data directory (--data),
which must be empty or not exist. The backup is checked before it is put in
place; on any failure the directory is left as it was. A PostgreSQL hub is
restored with pg_restore instead.
`

func (c *command) restore(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("restore", g, hubRestoreUsage)
	pos, err := c.parse(fs, args, 1, 1, "the backup FILE")
	if err != nil {
		return err
	}
	opts, err := c.options(g)
	if err != nil {
		return err
	}
	if opts.Database != "" {
		return usagef("", "restore puts a SQLite backup into a data directory; restore a PostgreSQL hub with `pg_restore --no-owner -d URL hub.dump`")
	}
	return Restore(ctx, opts, c.stdout, pos[0])
}

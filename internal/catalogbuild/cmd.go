package catalogbuild

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

// Exit statuses of [Main], as the rest of the command line's.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usage = `Usage: skills-hub catalog build --out FILE [flags]

Indexes public skill repositories into a hub catalog document (schema
version 1): each repository is resolved to a commit and read there, and
every valid skill package in it (found and checked by the server's and the
hub's own rules, nested skills included) becomes an item with its tree
digest, so that an install can be checked against it. Nothing is executed:
no hooks, no install commands, no scripts. The output is written whole or
not at all; an error never replaces an existing file.

Sources (at least one):
  --repositories R,R,…   each R is URL[#REF][@COMMIT], a local PATH (a git
                         directory, a working clone or a .zip of one), or
                         PATH=URL[#REF][@COMMIT]: the local copy of URL
  --sources FILE         one R per line, then optionally its category; #
                         starts a comment
  --html FILE            a saved directory page: its GitHub links are
                         repositories, its links below its own path are
                         category and detail pages, followed two deep

A report lists every repository and every skipped folder with its reason, on
stderr and (--report) as JSON. Every flag has a SKILLS_CATALOG_* twin
(--max-pages is SKILLS_CATALOG_MAX_PAGES); a flag beats its variable.
GITHUB_TOKEN, if set, is sent with --resolve-with api, to GitHub only.

Exit status: 0 when the catalog was written, 1 when the build failed
(nothing written), 2 for bad usage.

Flags:
`

type config struct {
	repositories, sources, html, base string
	maxPages                          int
	resolveWith, out, report, mirrors string
	parallel                          int
	keepGoing                         bool
}

func flags(cfg *config, stderr io.Writer, env func(string) (string, bool)) (*flag.FlagSet, func() error) {
	fs := flag.NewFlagSet("catalog build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	varName := func(name string) string {
		return "SKILLS_CATALOG_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	}
	get := func(name, def string) string {
		if v, ok := env(varName(name)); ok {
			return v
		}
		return def
	}
	// bad holds, per flag, what is wrong with its variable; it matters
	// only when the flag is not given, since a flag beats its variable.
	bad := map[string]error{}
	var order []string
	complain := func(name string, err error) {
		if _, ok := bad[name]; !ok {
			order = append(order, name)
		}
		bad[name] = err
	}
	getInt := func(name string, def int) int {
		s := get(name, "")
		if s == "" {
			return def
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			complain(name, fmt.Errorf("%s=%q is not a number", varName(name), s))
			return def
		}
		return n
	}
	getBool := func(name string) bool {
		s := get(name, "")
		if s == "" {
			return false
		}
		b, err := strconv.ParseBool(strings.ToLower(s))
		if err != nil {
			complain(name, fmt.Errorf("%s=%q is not a boolean; use 1, true, 0 or false", varName(name), s))
		}
		return b
	}
	defParallel := min(max(2, runtime.NumCPU()), 8)
	fs.StringVar(&cfg.repositories, "repositories", get("repositories", ""), "comma-separated `repositories` to index (see above)")
	fs.StringVar(&cfg.sources, "sources", get("sources", ""), "a `file` of repositories, one per line (the project's is catalog/sources.txt)")
	fs.StringVar(&cfg.html, "html", get("html", ""), "a saved directory page `file` to discover repositories from")
	fs.StringVar(&cfg.base, "base", get("base", ""), "the `URL` the saved page was at, for its relative links (default: the page's own <base> or canonical link)")
	fs.IntVar(&cfg.maxPages, "max-pages", getInt("max-pages", DefaultMaxPages), "fail discovery, rather than truncate it, past this many linked `pages`")
	fs.StringVar(&cfg.resolveWith, "resolve-with", get("resolve-with", ResolveGit), "resolve and read remote repositories with `git` or the GitHub api")
	fs.StringVar(&cfg.out, "out", get("out", ""), "write the catalog document to `file` (atomically)")
	fs.StringVar(&cfg.report, "report", get("report", ""), "also write the report as JSON to `file`")
	fs.StringVar(&cfg.mirrors, "mirrors", get("mirrors", ""), "read each github.com/OWNER/NAME from a local copy instead, recording its public URL: `pattern` is a folder holding OWNER+NAME (a git directory or clone) or OWNER+NAME.zip, or a path with {owner} and {name} in it")
	fs.IntVar(&cfg.parallel, "parallel", getInt("parallel", defParallel), "read this many `repositories` at once")
	fs.BoolVar(&cfg.keepGoing, "keep-going", getBool("keep-going"), "publish without the repositories that cannot be read (the report and the sources say which are in)")
	// envErr, called after Parse, reports the first bad variable whose
	// flag was not given.
	envErr := func() error {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for _, name := range order {
			if !given[name] {
				return bad[name]
			}
		}
		return nil
	}
	return fs, envErr
}

// Main runs "skills-hub catalog ARGS" and returns the exit status: args
// start with the sub-command ("build"); stdout gets nothing but help,
// stderr the progress, the report and errors; env looks up the
// environment (SKILLS_CATALOG_*, GITHUB_TOKEN).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] != "build" {
		fmt.Fprintf(stderr, "Error: unknown catalog command %q\nTry: skills-hub catalog build -h\n", args[0])
		return exitUsage
	}
	cfg := &config{}
	fs, envErr := flags(cfg, stderr, env)
	// The flag package would print a bad flag's error and then the whole
	// help; the error is printed once, below, and help only when asked for.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "Error: %v\nTry: skills-hub catalog build -h\n", err)
		return exitUsage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "Error: "+format+"\nTry: skills-hub catalog build -h\n", a...)
		return exitUsage
	}
	if err := envErr(); err != nil {
		return usageErr("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q; repositories go in --repositories", fs.Arg(0))
	case cfg.out == "":
		return usageErr("give --out FILE, where the catalog document goes")
	case cfg.repositories == "" && cfg.sources == "" && cfg.html == "":
		return usageErr("give the repositories: --repositories, --sources or --html")
	case cfg.resolveWith != ResolveGit && cfg.resolveWith != ResolveAPI:
		return usageErr("--resolve-with must be git or api, not %q", cfg.resolveWith)
	case cfg.maxPages < 1:
		return usageErr("--max-pages must be at least 1")
	case cfg.parallel < 1:
		return usageErr("--parallel must be at least 1")
	}
	var repos []Repository
	for _, s := range strings.Split(cfg.repositories, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := ParseRepository(s)
		if err != nil {
			return usageErr("--repositories: %v", err)
		}
		repos = append(repos, r)
	}
	if cfg.sources != "" {
		rs, err := ReadSources(cfg.sources)
		if err != nil {
			return usageErr("--sources: %v", err)
		}
		repos = append(repos, rs...)
	}
	rep := &Report{}
	fail := func(err error) int {
		rep.WriteText(stderr)
		if cfg.report != "" {
			if werr := atomicfile.Write(cfg.report, 0o644, true, rep.WriteJSON); werr != nil {
				fmt.Fprintf(stderr, "Error: writing the report: %v\n", werr)
			}
		}
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return exitFailure
	}
	progress := func(line string) { fmt.Fprintln(stderr, "catalog: "+line) }
	if cfg.html != "" {
		progress("discovering repositories from " + cfg.html)
		found, pages, err := Discover(ctx, cfg.html, DiscoverOptions{Base: cfg.base, MaxPages: cfg.maxPages})
		rep.Pages = pages
		if err != nil {
			return fail(err)
		}
		progress(fmt.Sprintf("found %d repositories on %d pages", len(found), len(pages)))
		repos = append(repos, found...)
	}
	if cfg.mirrors != "" {
		for i := range repos {
			if repos[i].Local != "" {
				continue
			}
			p, err := mirrorOf(cfg.mirrors, repos[i].URL)
			if err != nil {
				return usageErr("--mirrors: %v", err)
			}
			repos[i].Local = p
		}
	}
	gh := &pkgtree.GitHubOptions{}
	if cfg.resolveWith == ResolveAPI {
		if tok, ok := env("GITHUB_TOKEN"); ok {
			gh.Token = strings.TrimSpace(tok)
		}
	}
	snap, brep, err := Build(ctx, Options{
		Repositories: repos, ResolveWith: cfg.resolveWith, GitHub: gh,
		Parallel: cfg.parallel, KeepGoing: cfg.keepGoing, Progress: progress,
	})
	if brep != nil {
		brep.Pages = rep.Pages
		rep = brep
	}
	if err != nil {
		return fail(err)
	}
	if err := write(cfg.out, snap); err != nil {
		rep.Failed = "writing " + cfg.out + ": " + err.Error()
		return fail(fmt.Errorf("writing the catalog: %w (the previous file, if any, is unchanged)", err))
	}
	rep.WriteText(stderr)
	if cfg.report != "" {
		if err := atomicfile.Write(cfg.report, 0o644, true, rep.WriteJSON); err != nil {
			fmt.Fprintf(stderr, "Error: writing the report: %v\n", err)
			return exitFailure
		}
	}
	progress(fmt.Sprintf("wrote %s: %d items from %d repositories", cfg.out, len(snap.Items), len(snap.Sources)))
	return exitOK
}

// write checks the document as every hub will read it, then writes it
// atomically.
func write(name string, snap *index.Snapshot) error {
	raw, err := index.Marshal(snap)
	if err != nil {
		return err
	}
	if _, err := index.Parse(strings.NewReader(string(raw)), nil); err != nil {
		return fmt.Errorf("the document does not validate: %w", err)
	}
	return atomicfile.Write(name, 0o644, true, func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	})
}

package hubcmd

import (
	"context"
	"errors"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/catalogbuild"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
)

// The catalog's commands: search it, replace it, build one.

const catalogHelp = `Usage: skills-hub catalog COMMAND [flags]

The catalog lists public skills to install with "skills-hub install --item ID". A
snapshot is built into the binary, so it works offline; refresh and import
replace it with a newer document (schema_version 1), kept in the hub's
database. A document that fails to download or validate changes nothing, and
a catalog update never changes an installed version. "catalog build" is a
publisher's tool: it makes such a document from skill repositories.
`

const catalogSearchHelp = `Usage: skills-hub catalog search [QUERY…] [flags]

Ranks the catalog's items for QUERY by name, author and description (an item
named exactly QUERY first). Without a QUERY it lists the items, in the
catalog's order. --category and --author keep only their items.
Install one with "skills-hub install --item ID".
`

func catalogSearchCommand(t *cmdline.Table) runFunc {
	var category, author string
	var limit int
	var asJSON bool
	t.String(&category, "category", "", "", "only items of `CATEGORY`")
	t.String(&author, "author", "", "", "only items of `AUTHOR`")
	t.Int(&limit, "limit", "", 20, "show at most `N` items (0: all, when browsing)")
	t.Bool(&asJSON, "json", "", "print the items as JSON")
	return func(ctx context.Context, s *session, args []string) error {
		if limit < 0 {
			return cmdline.Usagef("", "--limit must not be negative")
		}
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		q := index.Query{Text: strings.Join(args, " "), Category: category, Author: author, Limit: limit}
		return Search(ctx, h, s.Stdout, q, asJSON)
	}
}

const catalogRefreshHelp = `Usage: skills-hub catalog refresh [URL] [flags]

Downloads the catalog document at URL (default: SKILLS_HUB_CATALOG_URL) and,
if it is valid, makes it the catalog. The URL must be https, or http to a
loopback address. No credential is sent. A failure keeps the last good
catalog.
`

func catalogRefreshCommand(t *cmdline.Table) runFunc {
	t.Var("SKILLS_HUB_CATALOG_URL", "the catalog document's URL when none is given")
	return func(ctx context.Context, s *session, args []string) error {
		var url string
		if len(args) == 1 {
			url = args[0]
		} else if v, ok := s.Env("SKILLS_HUB_CATALOG_URL"); ok {
			url = strings.TrimSpace(v)
		}
		if url == "" {
			return cmdline.Usagef("skills-hub catalog refresh URL", "say where the catalog document is: a URL, or set SKILLS_HUB_CATALOG_URL")
		}
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		return Refresh(ctx, h, s.Stdout, s.Stderr, url)
	}
}

const catalogImportHelp = `Usage: skills-hub catalog import FILE [flags]

Reads the catalog document in FILE and, if it is valid, makes it the
catalog. An invalid document (a syntax error, a schema_version other than 1,
an item without a repository, …) is refused whole, naming the item, and the
catalog stays as it was.
`

func catalogImportCommand(*cmdline.Table) runFunc {
	return func(ctx context.Context, s *session, args []string) error {
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		return Import(ctx, h, s.Stdout, args[0])
	}
}

const catalogBuildHelp = `Usage: skills-hub catalog build --out FILE [flags]

Indexes public skill repositories into a hub catalog document (schema
version 1): each repository is resolved to a commit and read there, and
every valid skill package in it (found and checked by the server's and the
hub's own rules, nested skills included) becomes an item with its tree
digest, so that an install can be checked against it. Nothing is executed:
no hooks, no install commands, no scripts. The output is written whole or
not at all; an error never replaces an existing file. It opens no hub.

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
stderr and (--report) as JSON.

Exit status: 0 when the catalog was written, 1 when the build failed
(nothing written), 2 for bad usage.
`

func catalogBuildCommand(t *cmdline.Table) runFunc {
	cfg := catalogbuild.Config{}
	t.Func("repositories", "SKILLS_CATALOG_REPOSITORIES", "repositories", "comma-separated `R,R,…` to index (see above; repeatable)", true, func(v string) error {
		cfg.Repositories = append(cfg.Repositories, cmdline.SplitList(v)...)
		return nil
	})
	t.String(&cfg.Sources, "sources", "SKILLS_CATALOG_SOURCES", "", "a `FILE` of repositories, one per line (the project's is catalog/sources.txt)")
	t.String(&cfg.HTML, "html", "SKILLS_CATALOG_HTML", "", "a saved directory page `FILE` to discover repositories from")
	t.String(&cfg.Base, "base", "SKILLS_CATALOG_BASE", "", "the `URL` the saved page was at, for its relative links (default: the page's own <base> or canonical link)")
	t.Int(&cfg.MaxPages, "max-pages", "SKILLS_CATALOG_MAX_PAGES", catalogbuild.DefaultMaxPages, "fail discovery, rather than truncate it, past `N` linked pages")
	t.String(&cfg.ResolveWith, "resolve-with", "SKILLS_CATALOG_RESOLVE_WITH", catalogbuild.ResolveGit, "resolve and read remote repositories with `git|api`: git, or the GitHub api")
	t.String(&cfg.Out, "out", "SKILLS_CATALOG_OUT", "", "write the catalog document to `FILE` (atomically)")
	t.String(&cfg.Report, "report", "SKILLS_CATALOG_REPORT", "", "also write the report as JSON to `FILE`")
	t.String(&cfg.Mirrors, "mirrors", "SKILLS_CATALOG_MIRRORS", "", "read each github.com/OWNER/NAME from a local copy instead, recording its public URL: `PATTERN` is a folder holding OWNER+NAME (a git directory or clone) or OWNER+NAME.zip, or a path with {owner} and {name} in it")
	t.Int(&cfg.Parallel, "parallel", "SKILLS_CATALOG_PARALLEL", 0, "read `N` repositories at once (default one a core, 2 to 8)")
	t.Bool(&cfg.KeepGoing, "keep-going", "SKILLS_CATALOG_KEEP_GOING", "publish without the repositories that cannot be read (the report and the sources say which are in)")
	t.Var("GITHUB_TOKEN", "a token sent with --resolve-with api, to GitHub only")
	return func(ctx context.Context, s *session, args []string) error {
		if len(args) > 0 {
			return cmdline.Usagef("", "unexpected argument %q; repositories go in --repositories", args[0])
		}
		if !t.Changed("parallel") {
			cfg.Parallel = catalogbuild.DefaultParallel()
		}
		if cfg.ResolveWith == catalogbuild.ResolveAPI {
			cfg.GitHubToken, _ = s.Env("GITHUB_TOKEN")
		}
		err := catalogbuild.Run(ctx, cfg, s.Stderr)
		if ce, ok := errors.AsType[*catalogbuild.ConfigError](err); ok {
			return &cmdline.UsageError{Err: ce.Err}
		}
		return err
	}
}

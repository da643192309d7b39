package hubcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// The commands on installed packages and their versions, and the hub's
// backup.

const installHelp = `Usage: skills-hub install (--zip FILE [--path DIR] | --repo URL [--path DIR] [--ref REF | --commit SHA] | --item ID) [flags]

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

func installCommand(t *cmdline.Table) runFunc {
	var zipFile, repo, item, path, ref, commit string
	var noGitHub, asJSON, quiet bool
	t.String(&zipFile, "zip", "", "", "install the package in the ZIP archive `FILE`")
	t.String(&repo, "repo", "", "", "install from the git repository at `URL` (or a local path)")
	t.String(&item, "item", "", "", "install the catalog item `ID`")
	t.String(&path, "path", "", "", "the package's `DIR` inside the archive or repository (default: its root)")
	t.String(&ref, "ref", "", "", "the branch or tag `REF` to read (with --repo; default: the default branch)")
	t.String(&commit, "commit", "", "", "the full commit `SHA` to read (with --repo)")
	t.Bool(&noGitHub, "no-github-api", "SKILLS_HUB_NO_GITHUB_API", "read github.com repositories with git's protocol instead of GitHub's API and archive")
	t.Bool(&asJSON, "json", "", "print the installed version as JSON")
	t.Bool(&quiet, "quiet", "", "print no progress on stderr")
	t.Var("GITHUB_TOKEN", "a token sent to GitHub only, when reading github.com repositories through its API")
	return func(ctx context.Context, s *session, _ []string) error {
		n := 0
		for _, v := range []string{zipFile, repo, item} {
			if v != "" {
				n++
			}
		}
		switch {
		case n != 1:
			return cmdline.Usagef("", "give one of --zip FILE, --repo URL or --item ID")
		case zipFile != "" && (ref != "" || commit != ""):
			return cmdline.Usagef("", "--ref and --commit apply to --repo only")
		case item != "" && (ref != "" || commit != "" || path != ""):
			return cmdline.Usagef("", "--item installs the catalog item's own path and commit: it takes no --path, --ref or --commit")
		case ref != "" && commit != "":
			return cmdline.Usagef("", "give --ref or --commit, not both")
		}
		var gh *pkgtree.GitHubOptions
		if !noGitHub {
			gh = &pkgtree.GitHubOptions{}
			if tok, ok := s.Env("GITHUB_TOKEN"); ok {
				gh.Token = strings.TrimSpace(tok)
			}
		}
		h, err := s.open(ctx, func(o *hub.Options) { o.GitHub = gh })
		if err != nil {
			return err
		}
		prog := s.progress(quiet)
		var inst *hub.Installed
		switch {
		case zipFile != "":
			inst, err = h.InstallZipFile(ctx, zipFile, path, prog)
		case repo != "":
			inst, err = h.InstallGit(ctx, hub.GitInstall{URL: repo, Path: path, Ref: ref, Commit: commit, Progress: prog})
		default:
			inst, err = h.InstallCatalogItem(ctx, item, prog)
		}
		if err != nil {
			return err
		}
		return Installed(s.Stdout, inst, asJSON)
	}
}

const importHelp = `Usage: skills-hub import FILE [--path DIR] [flags]

Installs the skill package in the ZIP archive FILE (an upload), as
"skills-hub install --zip FILE" does: SKILL.md at the archive root, or in --path.
To replace the catalog with a catalog document, use "skills-hub catalog import".
`

func importCommand(t *cmdline.Table) runFunc {
	var path string
	var asJSON, quiet bool
	t.String(&path, "path", "", "", "the package's `DIR` inside the archive (default: its root)")
	t.Bool(&asJSON, "json", "", "print the installed version as JSON")
	t.Bool(&quiet, "quiet", "", "print no progress on stderr")
	return func(ctx context.Context, s *session, args []string) error {
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		inst, err := h.InstallZipFile(ctx, args[0], path, s.progress(quiet))
		if err != nil {
			return err
		}
		return Installed(s.Stdout, inst, asJSON)
	}
}

// progress is the progress callback of a long install, on stderr.
func (s *session) progress(quiet bool) func(pkgtree.Progress) {
	if quiet {
		return nil
	}
	return Progress(s.Stderr)
}

// reportCommand is a command that prints what one operation of the open
// hub returns, as text or, with --json, as JSON.
func reportCommand(jsonHelp string, report func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error) func(t *cmdline.Table) runFunc {
	return func(t *cmdline.Table) runFunc {
		var asJSON bool
		t.Bool(&asJSON, "json", "", jsonHelp)
		return func(ctx context.Context, s *session, args []string) error {
			h, err := s.open(ctx, nil)
			if err != nil {
				return err
			}
			return report(ctx, h, s, args, asJSON)
		}
	}
}

const listHelp = `Usage: skills-hub list [flags]

Lists the installed packages by name, each with its number of versions and its
latest version.
`

var listCommand = reportCommand("print the packages as JSON", func(ctx context.Context, h *hub.Hub, s *session, _ []string, asJSON bool) error {
	return List(ctx, h, s.Stdout, asJSON)
})

const versionsHelp = `Usage: skills-hub versions PACKAGE [flags]

Lists a package's versions, oldest first, with where each came from.
`

var versionsCommand = reportCommand("print the versions as JSON", func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error {
	return Versions(ctx, h, s.Stdout, args[0], asJSON)
})

const inspectHelp = `Usage: skills-hub inspect VERSION [flags]

Shows a version: its tree digest, origin, labels, the projects bound to it,
its files, and the inspection made at install (linter findings, validator
warnings, scripts and how they run, package manifests, declared requirements).
Inspection is not proof of safety.
`

var inspectCommand = reportCommand("print the version and its inspection as JSON", func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error {
	return Inspect(ctx, h, s.Stdout, args[0], asJSON)
})

const approveHelp = `Usage: skills-hub approve VERSION [--by NAME] [--revoke] [flags]

Records that an administrator approved a version, and when. With
--require-approval, projects may use only approved versions. --revoke
withdraws the approval; projects already using the version keep it.
`

func approveCommand(t *cmdline.Table) runFunc {
	var by string
	var revoke, asJSON bool
	t.String(&by, "by", "", "", "who approves (default: $USER)")
	t.Bool(&revoke, "revoke", "", "withdraw the version's approval")
	t.Bool(&asJSON, "json", "", "print the version as JSON")
	t.Var("USER", "who approves, when --by is not given")
	return func(ctx context.Context, s *session, args []string) error {
		if revoke && by != "" {
			return cmdline.Usagef("", "--revoke takes no --by")
		}
		if !revoke && by == "" {
			if u, ok := s.Env("USER"); ok {
				by = strings.TrimSpace(u)
			}
			if by == "" {
				return cmdline.Usagef("skills-hub approve VERSION --by NAME", "say who approves: --by NAME (USER is not set)")
			}
		}
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		return Approve(ctx, h, s.Stdout, args[0], by, revoke, asJSON)
	}
}

const notesHelp = `Usage: skills-hub notes VERSION TEXT [flags]

Replaces a version's notes (an empty TEXT clears them). Notes and approval
are the only things about a version that change after install.
`

var notesCommand = reportCommand("print the version as JSON", func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error {
	return Notes(ctx, h, s.Stdout, args[0], args[1], asJSON)
})

const uninstallHelp = `Usage: skills-hub uninstall VERSION [flags]

Removes a version, with the file contents no other version shares. A version
a project uses is refused until it is unbound.
`

var uninstallCommand = reportCommand("print the removed version as JSON", func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error {
	return Uninstall(ctx, h, s.Stdout, args[0], asJSON)
})

const backupHelp = `Usage: skills-hub backup --out FILE [flags]

Writes a consistent backup of the whole hub (every version, its files, labels,
projects and the catalog) to FILE, while the hub stays in use. The database is
the only state, so this one file is everything; restore it with "skills-hub restore".
A PostgreSQL hub is backed up with pg_dump instead.
`

func backupCommand(t *cmdline.Table) runFunc {
	var out string
	t.String(&out, "out", "", "", "write the backup to `FILE`")
	return func(ctx context.Context, s *session, _ []string) error {
		if out == "" {
			return cmdline.Usagef("skills-hub backup --out FILE", "--out is required: where to write the backup")
		}
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		return Backup(ctx, s.db, s.Stdout, out)
	}
}

const restoreHelp = `Usage: skills-hub restore FILE [flags]

Restores a backup written by "skills-hub backup" into the data directory (--data),
which must be empty or not exist. The backup is checked before it is put in
place; on any failure the directory is left as it was. A PostgreSQL hub is
restored with pg_restore instead.
`

func restoreCommand(*cmdline.Table) runFunc {
	return func(ctx context.Context, s *session, args []string) error {
		opts, err := s.options()
		if err != nil {
			return err
		}
		if opts.Database != "" {
			return cmdline.Usagef("", "restore puts a SQLite backup into a data directory; restore a PostgreSQL hub with `pg_restore --no-owner -d URL hub.dump`")
		}
		f, err := regfile.Open(args[0])
		if err != nil {
			return fmt.Errorf("restoring %s: opening the backup: %w", args[0], err)
		}
		err = store.Restore(ctx, f, opts.Dir)
		f.Close()
		if err != nil {
			return fmt.Errorf("restoring %s: %w", args[0], err)
		}
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		return Restored(ctx, s.db, s.Stdout, args[0], opts.Dir)
	}
}

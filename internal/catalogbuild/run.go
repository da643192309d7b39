package catalogbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

// Config is what "skills-hub catalog build" is asked to do, as its flags
// give it: where the repositories come from, how they are read, and where
// the document and the report go. Each field is the flag of the same name.
type Config struct {
	// Repositories are each URL[#REF][@COMMIT], a local PATH (a git
	// directory, a working clone or a .zip of one), or PATH=URL[#REF][@COMMIT].
	Repositories []string
	// Sources is a file of repositories, one per line, then optionally
	// its category.
	Sources string
	// HTML is a saved directory page to discover repositories from, and
	// Base the URL it was at (default: its own <base> or canonical link).
	HTML, Base string
	// MaxPages bounds discovery: past it, it fails rather than truncate.
	MaxPages int
	// ResolveWith is ResolveGit or ResolveAPI.
	ResolveWith string
	// Out is where the catalog document goes, Report where the report
	// goes as JSON ("" for none).
	Out, Report string
	// Mirrors reads each github.com/OWNER/NAME from a local copy: a folder
	// holding OWNER+NAME or OWNER+NAME.zip, or a path with {owner} and
	// {name} in it.
	Mirrors string
	// Parallel is how many repositories are read at once.
	Parallel int
	// KeepGoing publishes without the repositories that cannot be read.
	KeepGoing bool
	// GitHubToken is sent with ResolveAPI, to GitHub only.
	GitHubToken string
}

// DefaultParallel is how many repositories a build reads at once unless
// told: one a core, at least 2 and at most 8.
func DefaultParallel() int { return min(max(2, runtime.NumCPU()), 8) }

// ConfigError is a [Config] that cannot be run: a missing or bad setting,
// or a repository, sources file or mirror that does not parse. Nothing
// was read or written.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, a ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, a...)}
}

// check refuses a config that cannot be run.
func (cfg *Config) check() error {
	switch {
	case cfg.Out == "":
		return configErrorf("give --out FILE, where the catalog document goes")
	case len(cfg.Repositories) == 0 && cfg.Sources == "" && cfg.HTML == "":
		return configErrorf("give the repositories: --repositories, --sources or --html")
	case cfg.ResolveWith != ResolveGit && cfg.ResolveWith != ResolveAPI:
		return configErrorf("--resolve-with must be git or api, not %q", cfg.ResolveWith)
	case cfg.MaxPages < 1:
		return configErrorf("--max-pages must be at least 1")
	case cfg.Parallel < 1:
		return configErrorf("--parallel must be at least 1")
	}
	return nil
}

// Run builds the catalog cfg describes and writes it to cfg.Out, whole or
// not at all. Progress, the report and, on a failure, the report of what
// failed go to log. It returns a [*ConfigError] for a config that cannot
// be run, or the build's or the write's error (the previous file, if
// any, unchanged).
func Run(ctx context.Context, cfg Config, log io.Writer) error {
	if err := cfg.check(); err != nil {
		return err
	}
	var repos []Repository
	for _, s := range cfg.Repositories {
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := ParseRepository(s)
		if err != nil {
			return configErrorf("--repositories: %v", err)
		}
		repos = append(repos, r)
	}
	if cfg.Sources != "" {
		rs, err := ReadSources(cfg.Sources)
		if err != nil {
			return configErrorf("--sources: %v", err)
		}
		repos = append(repos, rs...)
	}
	rep := &Report{}
	fail := func(err error) error {
		rep.WriteText(log)
		if cfg.Report != "" {
			if werr := atomicfile.Write(cfg.Report, 0o644, true, rep.WriteJSON); werr != nil {
				err = errors.Join(err, fmt.Errorf("writing the report: %w", werr))
			}
		}
		return err
	}
	progress := func(line string) { fmt.Fprintln(log, "catalog: "+line) }
	if cfg.HTML != "" {
		progress("discovering repositories from " + cfg.HTML)
		found, pages, err := Discover(ctx, cfg.HTML, DiscoverOptions{Base: cfg.Base, MaxPages: cfg.MaxPages})
		rep.Pages = pages
		if err != nil {
			return fail(err)
		}
		progress(fmt.Sprintf("found %d repositories on %d pages", len(found), len(pages)))
		repos = append(repos, found...)
	}
	if cfg.Mirrors != "" {
		for i := range repos {
			if repos[i].Local != "" {
				continue
			}
			p, err := mirrorOf(cfg.Mirrors, repos[i].URL)
			if err != nil {
				return configErrorf("--mirrors: %v", err)
			}
			repos[i].Local = p
		}
	}
	gh := &pkgtree.GitHubOptions{}
	if cfg.ResolveWith == ResolveAPI {
		gh.Token = strings.TrimSpace(cfg.GitHubToken)
	}
	snap, brep, err := Build(ctx, Options{
		Repositories: repos, ResolveWith: cfg.ResolveWith, GitHub: gh,
		Parallel: cfg.Parallel, KeepGoing: cfg.KeepGoing, Progress: progress,
	})
	if brep != nil {
		brep.Pages = rep.Pages
		rep = brep
	}
	if err != nil {
		return fail(err)
	}
	if err := write(cfg.Out, snap); err != nil {
		rep.Failed = "writing " + cfg.Out + ": " + err.Error()
		return fail(fmt.Errorf("writing the catalog: %w (the previous file, if any, is unchanged)", err))
	}
	rep.WriteText(log)
	if cfg.Report != "" {
		if err := atomicfile.Write(cfg.Report, 0o644, true, rep.WriteJSON); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	}
	progress(fmt.Sprintf("wrote %s: %d items from %d repositories", cfg.Out, len(snap.Items), len(snap.Sources)))
	return nil
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

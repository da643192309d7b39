package cli

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/skills-mcp/skills-mcp/examples"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/library"
)

// libraries is what a serve process serves (library.Set), with the
// config reload and the rate limits read from the config file.
type libraries struct {
	*library.Set
	cfg *serveConfig
}

// openLibraries opens the command-line libraries and, when --config is
// given, the config file's. Any problem is an error: at start, nothing is
// served half-configured.
func openLibraries(ctx context.Context, cfg *serveConfig, env cmdline.Env, log *slog.Logger) (*libraries, error) {
	cache := newCache(cfg, env, log)
	set := library.NewSet(library.SetOptions{
		Cache: cache, Logger: log, AllowUnverified: cfg.allowUnverified, ConfigPath: cfg.configPath, Root: cfg.root != "",
		Scan: catalog.Options{
			Depth:         cfg.depth,
			Exclude:       cfg.exclude,
			MaxFileBytes:  cfg.maxFileBytes,
			AllowOversize: cfg.allowOversize,
			Strict:        cfg.strict,
			NoScripts:     cfg.noScripts,
			ExcludeTiers:  cfg.excludeTiers,
			DevStatus:     cfg.devStatus,
			ShowDisabled:  cfg.showDisabled,
			NoPlaybooks:   cfg.noPlaybooks,
			NoValueChains: cfg.noValueChains,
			NoLint:        cfg.noLint,
			DigestCache:   catalog.NewDigestCache(cache.Dir),
			Logger:        log,
		},
	})
	l := &libraries{Set: set, cfg: cfg}
	specs := cfg.libs
	if cfg.root != "" {
		specs = []libSpec{{ns: "", dir: cfg.root}}
	}
	for _, s := range specs {
		src := library.Spec{Namespace: s.ns, Value: s.dir}
		for _, v := range cfg.vaults {
			if v.ns == s.ns {
				src.Vault = v.dir
			}
		}
		if err := set.AddFixed(ctx, src); err != nil {
			set.Close()
			if _, ok := errors.AsType[*library.FetchError](err); ok {
				return nil, err // the network's or the server's failure: exit 1
			}
			return nil, cmdline.Usagef("point --lib/--root at a readable folder of skills, a .zip, or an https URL pinned with #sha256=", "%v", err)
		}
	}
	if cfg.configPath != "" {
		if err := set.ReloadConfig(ctx); err != nil {
			set.Close()
			if _, ok := errors.AsType[*library.FetchError](err); ok {
				return nil, err
			}
			return nil, cmdline.Usagef("fix the config file, or start without --config", "%v", err)
		}
	}
	if set.Empty() {
		sub, err := fs.Sub(examples.Library, "library")
		if err != nil {
			return nil, err
		}
		log.Warn("no library configured (--lib, --root, --config, SKILLS_LIBS or SKILLS_MCP_ROOT); serving the example library built into the binary")
		set.SetFallback(&catalog.Library{FS: sub, Origin: "embedded example", Kind: "embedded"})
	}
	return l, nil
}

// newCache returns the archive and download cache under SKILLS_CACHE_DIR.
func newCache(cfg *serveConfig, env cmdline.Env, log *slog.Logger) *library.Cache {
	dir := cfg.cacheDir
	if dir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "skills-mcp")
		} else {
			dir = filepath.Join(os.TempDir(), "skills-mcp-cache")
		}
	}
	limits := library.DefaultLimits()
	limits.MaxEntryBytes = max(limits.MaxEntryBytes, cfg.maxFileBytes)
	return &library.Cache{Dir: dir, Limits: limits, Logger: log, Env: env}
}

// rateFromFile applies the config file's rate limits to cfg.
func (l *libraries) rateFromFile() {
	l.cfg.rate.FromFile(l.Config())
}

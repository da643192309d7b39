package cli

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/examples"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/config"
)

// rootGrace is how long a library root replaced by a config reload stays
// open: requests that started on the old snapshot may still read from it.
const rootGrace = time.Minute

// libraries is what a serve process serves: the fixed libraries of the
// command line and environment, and those of the config file, which a
// reload may change. It is the catalog.Source of the reloader.
type libraries struct {
	cfg *serveConfig
	log *slog.Logger

	mu      sync.Mutex
	fixed   []*catalog.Library
	file    []*catalog.Library
	fileCfg *config.Config
	closers map[*catalog.Library]func()
}

// openLibraries opens the command-line libraries and, when --config is
// given, the config file's. Any problem is an error: at start, nothing is
// served half-configured.
func openLibraries(ctx context.Context, cfg *serveConfig, log *slog.Logger) (*libraries, error) {
	l := &libraries{cfg: cfg, log: log, closers: map[*catalog.Library]func(){}}
	specs := cfg.libs
	if cfg.root != "" {
		specs = []libSpec{{ns: "", dir: cfg.root}}
	}
	for _, s := range specs {
		lib, err := l.open(ctx, s.ns, s.dir, false)
		if err != nil {
			l.Close()
			return nil, usagef("point --lib/--root at a readable folder of skills", "%v", err)
		}
		l.fixed = append(l.fixed, lib)
	}
	if cfg.configPath != "" {
		if err := l.reloadConfig(ctx); err != nil {
			l.Close()
			return nil, usagef("fix the config file, or start without --config", "%v", err)
		}
	}
	if len(l.fixed) == 0 && len(l.file) == 0 {
		sub, err := fs.Sub(examples.Library, "library")
		if err != nil {
			return nil, err
		}
		log.Warn("no library configured (--lib, --root, --config, SKILLS_LIBS or SKILLS_MCP_ROOT); serving the example library built into the binary")
		l.fixed = []*catalog.Library{{FS: sub, Origin: "embedded example", Kind: "embedded"}}
	}
	return l, nil
}

// open opens one library root. The error names the library and the path.
func (l *libraries) open(_ context.Context, ns, dir string, noScripts bool) (*catalog.Library, error) {
	what := "library root"
	if ns != "" {
		what = "library " + strconv.Quote(ns)
	}
	lib, err := catalog.OpenDirectory(ns, dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be opened: %v", what, dir, unwrapPathErr(err))
	}
	lib.NoScripts = noScripts
	l.mu.Lock()
	l.closers[lib] = func() { lib.Close() }
	l.mu.Unlock()
	return lib, nil
}

// reloadConfig reads, validates and applies the config file. On any error
// nothing changes: the libraries already served keep serving.
func (l *libraries) reloadConfig(ctx context.Context) error {
	path := l.cfg.configPath
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %v", unwrapPathErr(err))
	}
	c, err := config.Parse(f)
	f.Close()
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		err = c.Resolve(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if l.cfg.root != "" {
		return fmt.Errorf("config file %s: --root serves one un-namespaced library and cannot be combined with config libraries", path)
	}
	for i, lib := range c.Libraries {
		for _, fixed := range l.cfg.libs {
			if fixed.ns == lib.Namespace {
				return fmt.Errorf("config file %s: libraries[%d].namespace %q is already given on the command line", path, i, lib.Namespace)
			}
		}
		if lib.URL != "" {
			return fmt.Errorf("config file %s: libraries[%d]: url libraries are not supported by this build", path, i)
		}
	}
	// Open every library first; swap only when all opened.
	var opened []*catalog.Library
	for _, lc := range c.Libraries {
		lib, err := l.open(ctx, lc.Namespace, lc.Root, lc.NoScripts)
		if err != nil {
			l.closeLater(opened, 0)
			return fmt.Errorf("config file %s: %w", path, err)
		}
		lib.Info = catalog.Info{Title: lc.Title, Source: lc.Source, Version: lc.Version, Metadata: lc.Metadata}
		opened = append(opened, lib)
	}
	l.mu.Lock()
	replaced := l.file
	l.file, l.fileCfg = opened, c
	l.mu.Unlock()
	l.closeLater(replaced, rootGrace)
	return nil
}

// closeLater closes library roots after grace.
func (l *libraries) closeLater(libs []*catalog.Library, grace time.Duration) {
	if len(libs) == 0 {
		return
	}
	l.mu.Lock()
	var fns []func()
	for _, lib := range libs {
		if fn, ok := l.closers[lib]; ok {
			fns = append(fns, fn)
			delete(l.closers, lib)
		}
	}
	l.mu.Unlock()
	closeAll := func() {
		for _, fn := range fns {
			fn()
		}
	}
	if grace == 0 {
		closeAll()
		return
	}
	time.AfterFunc(grace, closeAll)
}

// Source implements catalog.Source: the current libraries and the scan
// options, where the config file may only tighten what the command line
// set.
func (l *libraries) Source() ([]*catalog.Library, *catalog.Options) {
	l.mu.Lock()
	defer l.mu.Unlock()
	libs := slices.Concat(l.fixed, l.file)
	o := &catalog.Options{
		Depth:         l.cfg.depth,
		Exclude:       l.cfg.exclude,
		MaxFileBytes:  l.cfg.maxFileBytes,
		AllowOversize: l.cfg.allowOversize,
		Strict:        l.cfg.strict,
		NoScripts:     l.cfg.noScripts,
		ExcludeTiers:  l.cfg.excludeTiers,
		DevStatus:     l.cfg.devStatus,
		ShowDisabled:  l.cfg.showDisabled,
		Logger:        l.log,
	}
	if c := l.fileCfg; c != nil {
		if c.NoScripts != nil && *c.NoScripts {
			o.NoScripts = true
		}
		if c.ExcludeTiers != nil {
			o.ExcludeTiers = slices.Concat(o.ExcludeTiers, *c.ExcludeTiers)
		}
		if c.DevStatus != nil {
			o.DevStatus = tighten(o.DevStatus, *c.DevStatus)
		}
	}
	return libs, o
}

// tighten combines two allowlists: each alone allows what it lists; both
// together allow what both list.
func tighten(cli, file []string) []string {
	if len(cli) == 0 {
		return file
	}
	if len(file) == 0 {
		return cli
	}
	var out []string
	for _, s := range file {
		if containsFold(cli, s) {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{"\x00none"} // nothing in common: nothing is allowed
	}
	return out
}

// Close closes every library root now.
func (l *libraries) Close() {
	l.mu.Lock()
	fns := l.closers
	l.closers = map[*catalog.Library]func(){}
	l.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

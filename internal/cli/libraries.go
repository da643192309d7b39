package cli

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/examples"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/config"
	"github.com/skills-mcp/skills-mcp/internal/library"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// rootGrace is how long a library replaced by a reload stays open: requests
// that started on the old snapshot may still read from it.
const rootGrace = time.Minute

// libraries is what a serve process serves: the fixed libraries of the
// command line and environment, and those of the config file, which a
// reload may change. It is the catalog.Source of the reloader.
type libraries struct {
	// onScanned is given to every scan (catalog.Options.OnScanned).
	onScanned func(time.Duration, bool)

	cfg     *serveConfig
	log     *slog.Logger
	cache   *library.Cache
	digests *catalog.DigestCache

	// reloadMu serialises the reloads (reloadConfig, refreshArchives): a
	// config file event and a SIGHUP may come at once, and each reload
	// reads the state the one before left.
	reloadMu sync.Mutex

	// mu guards what Source reads. A reload opens everything first and
	// swaps it in under mu at once, so a scan sees the whole previous
	// configuration or the whole new one.
	mu       sync.Mutex
	fixed    []*library.Opened
	file     []*library.Opened
	fileCfg  *config.Config
	embedded *catalog.Library
}

// openLibraries opens the command-line libraries and, when --config is
// given, the config file's. Any problem is an error: at start, nothing is
// served half-configured.
func openLibraries(ctx context.Context, cfg *serveConfig, env env, log *slog.Logger) (*libraries, error) {
	l := &libraries{cfg: cfg, log: log, cache: newCache(cfg, env, log)}
	l.digests = catalog.NewDigestCache(l.cache.Dir)
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
		o, err := l.open(ctx, src, nil)
		if err != nil {
			l.Close()
			return nil, usagef("point --lib/--root at a readable folder of skills, a .zip, or an https URL pinned with #sha256=", "%v", err)
		}
		l.fixed = append(l.fixed, o)
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
		l.embedded = &catalog.Library{FS: sub, Origin: "embedded example", Kind: "embedded"}
	}
	return l, nil
}

// newCache returns the archive and download cache under SKILLS_CACHE_DIR.
func newCache(cfg *serveConfig, env env, log *slog.Logger) *library.Cache {
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

// open opens one library, with fileCfg the config file in force for it
// (nil for none), whose allowUnverified applies to the libraries it lists.
func (l *libraries) open(ctx context.Context, spec library.Spec, fileCfg *config.Config) (*library.Opened, error) {
	spec.AllowUnverified = l.cfg.allowUnverified || fileCfg != nil && fileCfg.AllowUnverified != nil && *fileCfg.AllowUnverified
	return library.Open(ctx, l.cache, spec, l.log)
}

// release closes an opened source after grace and lets the cache prune an
// extraction nobody uses any more.
func (l *libraries) release(olds []*library.Opened, grace time.Duration) {
	if len(olds) == 0 {
		return
	}
	done := func() {
		for _, o := range olds {
			o.Close()
			if o.Digest != "" {
				l.cache.Prune(o.Digest)
			}
		}
	}
	if grace == 0 {
		done()
		return
	}
	time.AfterFunc(grace, done)
}

// zipFiles returns the local archives served, to be watched for changes.
func (l *libraries) zipFiles() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, o := range slices.Concat(l.fixed, l.file) {
		if o.Spec.IsZip() {
			if abs, err := filepath.Abs(o.Spec.Value); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// refreshArchives re-opens the command-line libraries that come from an
// archive or a URL: a replaced zip is extracted anew (an unchanged one costs
// a stat), an unpinned URL is checked against its sidecar. On failure the
// previous copy keeps serving.
func (l *libraries) refreshArchives(ctx context.Context) {
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	l.mu.Lock()
	fixed := slices.Clone(l.fixed)
	fileCfg := l.fileCfg
	l.mu.Unlock()
	var replaced []*library.Opened
	for i, o := range fixed {
		if o.Lib.Kind == "directory" {
			continue
		}
		n, err := l.open(ctx, o.Spec, fileCfg)
		if err != nil {
			l.log.Error("library refresh failed; the previous copy keeps serving", "library", o.Spec.Namespace, "err", err)
			continue
		}
		fixed[i] = n
		replaced = append(replaced, o)
	}
	l.mu.Lock()
	l.fixed = fixed
	l.mu.Unlock()
	l.release(replaced, rootGrace)
}

// reloadConfig reads, validates and applies the config file. On any error
// nothing changes: the libraries and switches already served keep serving.
// Reloads run one at a time, each reading the file when its turn comes, so
// the last one applies the file as it is then; a scan meanwhile sees the
// previous configuration whole.
func (l *libraries) reloadConfig(ctx context.Context) error {
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	path := l.cfg.configPath
	c, err := l.readConfig(path)
	if err != nil {
		return err
	}
	// Open every library first; swap only when all opened. The config's
	// allowUnverified applies to the libraries it lists.
	var opened []*library.Opened
	for _, lc := range c.Libraries {
		src := library.Spec{Namespace: lc.Namespace, Value: cmp.Or(lc.URL, lc.Root), SHA256: lc.SHA256, NoScripts: lc.NoScripts,
			Info: catalog.Info{Title: lc.Title, Source: lc.Source, Version: lc.Version, Metadata: lc.Metadata}}
		if lc.Vault != nil {
			src.Vault, src.NoVault = lc.Vault.Path, lc.Vault.Disabled
		}
		o, err := l.open(ctx, src, c)
		if err != nil {
			l.release(opened, 0)
			return fmt.Errorf("config file %s: %w", path, err)
		}
		opened = append(opened, o)
	}
	l.mu.Lock()
	replaced := l.file
	l.file, l.fileCfg = opened, c
	l.mu.Unlock()
	l.release(replaced, rootGrace)
	return nil
}

// readConfig reads, validates and resolves the config file at path, and
// checks it against the command line.
func (l *libraries) readConfig(path string) (*config.Config, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %v", unwrapPathErr(err))
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
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if l.cfg.root != "" {
		return nil, fmt.Errorf("config file %s: --root serves one un-namespaced library and cannot be combined with config libraries", path)
	}
	for i, lib := range c.Libraries {
		for _, fixed := range l.cfg.libs {
			if fixed.ns == lib.Namespace {
				return nil, fmt.Errorf("config file %s: libraries[%d].namespace %q is already given on the command line", path, i, lib.Namespace)
			}
		}
	}
	return c, nil
}

// Source implements catalog.Source: the current libraries and the scan
// options, where the config file may only tighten what the command line
// set.
func (l *libraries) Source() ([]*catalog.Library, *catalog.Options) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var libs []*catalog.Library
	for _, o := range slices.Concat(l.fixed, l.file) {
		libs = append(libs, o.Lib)
	}
	if l.embedded != nil {
		libs = append(libs, l.embedded)
	}
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
		NoPlaybooks:   l.cfg.noPlaybooks,
		NoValueChains: l.cfg.noValueChains,
		NoLint:        l.cfg.noLint,
		DigestCache:   l.digests,
		OnScanned:     l.onScanned,
		Logger:        l.log,
	}
	if c := l.fileCfg; c != nil {
		if c.NoScripts != nil && *c.NoScripts {
			o.NoScripts = true
		}
		if c.Lint != nil && !*c.Lint {
			o.NoLint = true
		}
		if c.ExcludeTiers != nil {
			o.ExcludeTiers = slices.Concat(o.ExcludeTiers, *c.ExcludeTiers)
		}
		if c.Playbooks != nil && !*c.Playbooks {
			o.NoPlaybooks = true
		}
		if c.ValueChains != nil && !*c.ValueChains {
			o.NoValueChains = true
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

// Close closes every library and the cache now.
func (l *libraries) Close() {
	l.mu.Lock()
	all := slices.Concat(l.fixed, l.file)
	l.fixed, l.file = nil, nil
	l.mu.Unlock()
	l.release(all, 0)
	l.cache.Close()
}

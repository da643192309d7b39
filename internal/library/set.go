package library

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/config"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// replacedGrace is how long a library replaced by a reload stays open:
// requests that started on the old snapshot may still read from it.
const replacedGrace = time.Minute

// SetOptions configure a Set.
type SetOptions struct {
	// Cache holds the archive extractions and downloads.
	Cache *Cache
	// Logger receives the failures of background refreshes.
	Logger *slog.Logger
	// Scan is the scan options of the command line; the config file may
	// only tighten them.
	Scan catalog.Options
	// AllowUnverified lets every library be opened without a pinned digest.
	AllowUnverified bool
	// ConfigPath is the config file that adds libraries, if any.
	ConfigPath string
	// Root says the fixed libraries are one un-namespaced root, which no
	// config library may join.
	Root bool
}

// A Set is what a serve process serves: the fixed libraries of the command
// line and environment, and those of the config file, which a reload may
// change. Its Source method is the catalog.Source of the reloader.
type Set struct {
	opts    SetOptions
	fixedNS []string

	// reloadMu serialises the reloads (ReloadConfig, RefreshArchives): a
	// config file event and a SIGHUP may come at once, and each reload
	// reads the state the one before left.
	reloadMu sync.Mutex

	// mu guards what Source reads. A reload opens everything first and
	// swaps it in under mu at once, so a scan sees the whole previous
	// configuration or the whole new one.
	mu        sync.Mutex
	fixed     []*Opened
	file      []*Opened
	fileCfg   *config.Config
	fallback  *catalog.Library
	onScanned func(time.Duration, bool)

	// pending are the replaced libraries waiting out their grace period,
	// each on its timer; Close ends them at once and waits for any timer
	// already firing (waiting counts the timers not yet done).
	pending map[*pendingRelease]struct{}
	closed  bool
	waiting sync.WaitGroup
}

// pendingRelease is one release waiting for its grace period.
type pendingRelease struct {
	timer *time.Timer
	done  func()
}

// NewSet returns an empty set; add its fixed libraries with AddFixed and
// read the config file with ReloadConfig.
func NewSet(opts SetOptions) *Set {
	return &Set{opts: opts, pending: map[*pendingRelease]struct{}{}}
}

// AddFixed opens one library of the command line.
func (s *Set) AddFixed(ctx context.Context, spec Spec) error {
	o, err := s.open(ctx, spec, nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.fixed = append(s.fixed, o)
	s.fixedNS = append(s.fixedNS, spec.Namespace)
	s.mu.Unlock()
	return nil
}

// Empty says whether the set has no library, fixed or from the file.
func (s *Set) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fixed) == 0 && len(s.file) == 0
}

// SetFallback serves lib after the others (the example library when none
// is configured).
func (s *Set) SetFallback(lib *catalog.Library) {
	s.mu.Lock()
	s.fallback = lib
	s.mu.Unlock()
}

// SetOnScanned has every scan report its duration to f
// (catalog.Options.OnScanned).
func (s *Set) SetOnScanned(f func(time.Duration, bool)) {
	s.mu.Lock()
	s.onScanned = f
	s.mu.Unlock()
}

// Cache is the set's archive and download cache.
func (s *Set) Cache() *Cache { return s.opts.Cache }

// Config is the config file in force, nil before one was read.
func (s *Set) Config() *config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fileCfg
}

// open opens one library, with fileCfg the config file in force for it
// (nil for none), whose allowUnverified applies to the libraries it lists.
func (s *Set) open(ctx context.Context, spec Spec, fileCfg *config.Config) (*Opened, error) {
	spec.AllowUnverified = s.opts.AllowUnverified || fileCfg != nil && fileCfg.AllowUnverified != nil && *fileCfg.AllowUnverified
	return Open(ctx, s.opts.Cache, spec, s.opts.Logger)
}

// release closes opened libraries after grace and lets the cache prune an
// extraction nobody uses any more.
func (s *Set) release(olds []*Opened, grace time.Duration) {
	if len(olds) == 0 {
		return
	}
	done := func() {
		for _, o := range olds {
			o.Close()
			if o.Digest != "" {
				s.opts.Cache.Prune(o.Digest)
			}
		}
	}
	s.mu.Lock()
	if grace == 0 || s.closed {
		s.mu.Unlock()
		done()
		return
	}
	p := &pendingRelease{done: done}
	s.pending[p] = struct{}{}
	s.waiting.Add(1)
	p.timer = time.AfterFunc(grace, func() {
		defer s.waiting.Done()
		if s.take(p) {
			p.done()
		}
	})
	s.mu.Unlock()
}

// take removes p from the pending releases, reporting whether it was
// there (Close may have taken it first).
func (s *Set) take(p *pendingRelease) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[p]
	delete(s.pending, p)
	return ok
}

// ZipFiles returns the local archives served, to be watched for changes.
func (s *Set) ZipFiles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, o := range slices.Concat(s.fixed, s.file) {
		if o.Spec.IsZip() {
			if abs, err := filepath.Abs(o.Spec.Value); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// RefreshArchives re-opens the fixed libraries that come from an archive
// or a URL: a replaced zip is extracted anew (an unchanged one costs a
// stat), an unpinned URL is checked against its sidecar. On failure the
// previous copy keeps serving.
func (s *Set) RefreshArchives(ctx context.Context) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.mu.Lock()
	fixed := slices.Clone(s.fixed)
	fileCfg := s.fileCfg
	s.mu.Unlock()
	var replaced, fresh []*Opened
	for i, o := range fixed {
		if o.Lib.Kind == "directory" {
			continue
		}
		n, err := s.open(ctx, o.Spec, fileCfg)
		if err != nil {
			s.opts.Logger.Error("library refresh failed; the previous copy keeps serving", "library", o.Spec.Namespace, "err", err)
			continue
		}
		fixed[i] = n
		replaced = append(replaced, o)
		fresh = append(fresh, n)
	}
	s.mu.Lock()
	if s.closed { // Close ran meanwhile: what was opened is nobody's
		s.mu.Unlock()
		s.release(fresh, 0)
		return
	}
	s.fixed = fixed
	s.mu.Unlock()
	s.release(replaced, replacedGrace)
}

// ReloadConfig reads, validates and applies the config file. On any error
// nothing changes: the libraries and switches already served keep serving.
// Reloads run one at a time, each reading the file when its turn comes, so
// the last one applies the file as it is then; a scan meanwhile sees the
// previous configuration whole.
func (s *Set) ReloadConfig(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	path := s.opts.ConfigPath
	c, err := s.readConfig(path)
	if err != nil {
		return err
	}
	// Open every library first; swap only when all opened. The config's
	// allowUnverified applies to the libraries it lists.
	var opened []*Opened
	for _, lc := range c.Libraries {
		src := Spec{Namespace: lc.Namespace, Value: cmp.Or(lc.URL, lc.Root), SHA256: lc.SHA256, NoScripts: lc.NoScripts,
			Info: catalog.Info{Title: lc.Title, Source: lc.Source, Version: lc.Version, Metadata: lc.Metadata}}
		if lc.Vault != nil {
			src.Vault, src.NoVault = lc.Vault.Path, lc.Vault.Disabled
		}
		o, err := s.open(ctx, src, c)
		if err != nil {
			s.release(opened, 0)
			return fmt.Errorf("config file %s: %w", path, err)
		}
		opened = append(opened, o)
	}
	s.mu.Lock()
	if s.closed { // Close ran meanwhile: what was opened is nobody's
		s.mu.Unlock()
		s.release(opened, 0)
		return fmt.Errorf("config file %s: the libraries were closed during the reload", path)
	}
	replaced := s.file
	s.file, s.fileCfg = opened, c
	s.mu.Unlock()
	s.release(replaced, replacedGrace)
	return nil
}

// readConfig reads, validates and resolves the config file at path, and
// checks it against the fixed libraries.
func (s *Set) readConfig(path string) (*config.Config, error) {
	f, err := regfile.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("config file %s: %v", path, err)
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
	if s.opts.Root {
		return nil, fmt.Errorf("config file %s: --root serves one un-namespaced library and cannot be combined with config libraries", path)
	}
	s.mu.Lock()
	fixedNS := s.fixedNS
	s.mu.Unlock()
	for i, lib := range c.Libraries {
		if slices.Contains(fixedNS, lib.Namespace) {
			return nil, fmt.Errorf("config file %s: libraries[%d].namespace %q is already given on the command line", path, i, lib.Namespace)
		}
	}
	return c, nil
}

// Source implements catalog.Source: the current libraries and the scan
// options, where the config file may only tighten what the command line
// set.
func (s *Set) Source() ([]*catalog.Library, *catalog.Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var libs []*catalog.Library
	for _, o := range slices.Concat(s.fixed, s.file) {
		libs = append(libs, o.Lib)
	}
	if s.fallback != nil {
		libs = append(libs, s.fallback)
	}
	o := s.opts.Scan
	o.OnScanned = s.onScanned
	if c := s.fileCfg; c != nil {
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
	return libs, &o
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
		if slices.ContainsFunc(cli, func(c string) bool { return strings.EqualFold(c, s) }) {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{"\x00none"} // nothing in common: nothing is allowed
	}
	return out
}

// Close closes every library and the cache now.
func (s *Set) Close() {
	s.mu.Lock()
	all := slices.Concat(s.fixed, s.file)
	s.fixed, s.file = nil, nil
	s.closed = true
	pending := s.pending
	s.pending = map[*pendingRelease]struct{}{}
	s.mu.Unlock()
	// The libraries still in their grace period close now, not after
	// the process has let go of the cache.
	for p := range pending {
		if p.timer.Stop() {
			s.waiting.Done() // its func will not run
		}
		p.done()
	}
	s.waiting.Wait()
	s.release(all, 0)
	s.opts.Cache.Close()
}

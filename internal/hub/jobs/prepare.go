package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// identityNone is the identity of a profile with nothing to install.
const identityNone = "none"

// Where things are inside a build sandbox.
const (
	wheelsTarget = "/wheels"
	npmTarget    = "/npmcache"
)

// prepareWall bounds a preparation.
const prepareWall = 10 * time.Minute

// Preparation is the state of a version's preparation as every replica
// sees it: running (on which replica, since when), prepared, failed or
// none.
type Preparation struct {
	VersionID int64 `json:"version_id"`
	// State is running while a preparation runs on some replica; else
	// prepared, failed (the last one failed: Error and Log say why) or
	// none.
	State     string    `json:"state"`
	Replica   string    `json:"replica,omitempty"` // where it runs
	StartedAt time.Time `json:"started_at,omitzero"`
	// FinishedAt is when the environment was prepared.
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Error      string    `json:"error,omitempty"`
	Identity   string    `json:"identity,omitempty"`
	// ImageID is the Docker image the preparation pinned, which every run
	// uses until the version is prepared again; empty on other backends.
	ImageID  string `json:"image_id,omitempty"`
	Log      string `json:"log,omitempty"`
	Revision int64  `json:"revision"`
}

// The states of a Preparation.
const (
	PrepRunning  = "running"
	PrepPrepared = "prepared"
	PrepFailed   = "failed"
	PrepNone     = "none"
)

func preparationOf(p store.Profile) Preparation {
	out := Preparation{VersionID: p.VersionID, Identity: p.Identity, ImageID: p.ImageID, Log: p.PrepareLog, Revision: p.Revision, Error: p.PrepareError, FinishedAt: p.PreparedAt}
	switch {
	case p.PreparingBy != "":
		out.State, out.Replica, out.StartedAt, out.FinishedAt = PrepRunning, p.PreparingBy, p.PreparingSince, time.Time{}
	case p.Prepared():
		out.State = PrepPrepared
	case p.PrepareLog != "" || p.PrepareError != "":
		out.State = PrepFailed
	default:
		out.State = PrepNone
	}
	return out
}

// Preparation reports a version's preparation as the store has it, the
// same on every replica. An error matching store.ErrNotFound when the
// version has no profile.
func (s *Service) Preparation(ctx context.Context, versionID int64) (Preparation, error) {
	p, err := s.st.GetProfile(ctx, versionID)
	if err != nil {
		return Preparation{}, err
	}
	return preparationOf(p), nil
}

// StartPrepare starts a preparation of a version's environment on this
// replica and returns at once, with the preparation running; the service
// owns it (Close stops it and waits). One preparation of a version runs at
// a time across every replica: another is refused with an error matching
// store.ErrPreparing. Preparation tells how it goes; its end is recorded
// in the store, whatever it is.
func (s *Service) StartPrepare(ctx context.Context, versionID int64) (Preparation, error) {
	if err := s.usable(); err != nil {
		return Preparation{}, err
	}
	p, err := s.st.BeginPreparation(ctx, versionID, s.opts.Replica)
	if err != nil {
		return Preparation{}, err
	}
	h, err := s.addPrep(p)
	if err != nil {
		return Preparation{}, err
	}
	actor := actorOf(ctx, "")
	s.wg.Go(func() {
		defer s.endPrep(p.VersionID, h)
		_, err := s.prepare(h.ctx, p, h.name)
		result := store.AuditOK
		if err != nil {
			result = PrepFailed
			s.log.Warn("a preparation failed", "version", p.VersionID, "err", err)
		}
		s.audit(context.Background(), store.AuditEntry{Actor: actor, Action: "skill.prepare", ObjectKind: "version", ObjectID: fmt.Sprint(p.VersionID), Result: result})
	})
	return preparationOf(p), nil
}

// Prepare prepares a version's environment under its current profile and
// waits for the end; see StartPrepare and prepare.
func (s *Service) Prepare(ctx context.Context, versionID int64) (store.Profile, error) {
	if err := s.usable(); err != nil {
		return store.Profile{}, err
	}
	p, err := s.st.BeginPreparation(ctx, versionID, s.opts.Replica)
	if err != nil {
		return store.Profile{}, err
	}
	h, err := s.addPrep(p)
	if err != nil {
		return p, err
	}
	defer s.endPrep(p.VersionID, h)
	// The caller's cancellation stops it too.
	stop := context.AfterFunc(ctx, func() { h.cancel(context.Cause(ctx)) })
	defer stop()
	return s.prepare(h.ctx, p, h.name)
}

// prepRun is a preparation's handle with its context, owned by the
// service, and its build sandbox's name.
type prepRun struct {
	*prepHandle
	ctx  context.Context
	name string // the build sandbox's name
}

// addPrep registers a preparation of this replica, whose claim (p) was
// taken; a closed service releases the claim and refuses.
func (s *Service) addPrep(p store.Profile) (*prepRun, error) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	h := &prepRun{prepHandle: &prepHandle{runHandle: runHandle{cancel: cancel, done: make(chan struct{})}, revision: p.Revision}, ctx: ctx, name: s.prepName()}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel(nil)
		s.endPreparation(p, store.PreparationEnd{Error: ErrClosed.Error()})
		return nil, ErrClosed
	}
	s.runs[h.name] = &h.runHandle
	s.preps[p.VersionID] = h.prepHandle
	s.prepGen++
	s.wg.Add(1)
	s.mu.Unlock()
	return h, nil
}

func (s *Service) endPrep(versionID int64, h *prepRun) {
	h.cancel(nil)
	s.mu.Lock()
	delete(s.runs, h.name)
	if s.preps[versionID] == h.prepHandle {
		delete(s.preps, versionID)
	}
	s.mu.Unlock()
	close(h.done)
	s.wg.Done()
}

// endPreparation records a preparation's end and releases this replica's
// claim, retried while the database is away.
func (s *Service) endPreparation(p store.Profile, end store.PreparationEnd) (store.Profile, error) {
	end.Replica = s.opts.Replica
	var out store.Profile
	var rerr error
	s.keepTrying(fmt.Sprint("version ", p.VersionID), "recording the end of a preparation", func(ctx context.Context) error {
		var err error
		out, err = s.st.EndPreparation(ctx, p.VersionID, p.Revision, end)
		if err != nil && !errors.Is(err, store.ErrUnavailable) {
			rerr = err // refused for good (the profile changed): say so
			return nil
		}
		rerr = err
		return err
	})
	return out, rerr
}

// prepare runs a preparation claimed as p, an administrator's explicit
// operation (the caller checks the scope) that may use the network (when
// the profile allows it) and runs dependency build code, in a build
// sandbox. It lays the package out verified against its digests first.
// Python: the root requirements.txt is installed with pip into a prepared
// layer (--no-index --find-links Options.Wheels when given); Node.js: the
// root package-lock.json with npm ci --ignore-scripts (--offline from
// Options.NpmCache when given). The build is made reproducible: no
// compiled caches (pip --no-compile, and any __pycache__ is dropped),
// SOURCE_DATE_EPOCH and PYTHONHASHSEED fixed, file times fixed; the same
// version and profile give the same layer, so the same identity, wherever
// they are prepared. The layer's content digest is the identity, and the
// layer is stored in the database with it, so every replica can lay it
// out; with nothing to install the interpreter is checked and the
// identity is "none". The end, failed or not, is recorded with the log.
func (s *Service) prepare(ctx context.Context, p store.Profile, name string) (store.Profile, error) {
	versionID := p.VersionID
	fail := func(err error, log string) (store.Profile, error) {
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				err = fmt.Errorf("%w: %w", err, cause)
			}
		}
		if out, rerr := s.endPreparation(p, store.PreparationEnd{Log: log, Error: err.Error()}); rerr == nil {
			p = out
		}
		return p, err
	}
	pkg, err := s.st.Materialize(ctx, versionID, s.dir("packages"))
	if err != nil {
		return fail(fmt.Errorf("preparing version %d: the package's files could not be verified: %w", versionID, err), "")
	}
	image, err := s.pinImage(ctx, p)
	if err != nil {
		return fail(fmt.Errorf("%w: version %d: %w", ErrPrepareFailed, versionID, err), "")
	}
	interp := s.preparationInterpreter(p)
	var (
		argv   []string
		mounts = []sandbox.Mount{{Host: pkg, Target: packageTarget}}
		build  string
		// keepBuild keeps the build folder of a sandbox that may still run.
		keepBuild bool
		// Reproducible builds: fixed build times and hash seeds.
		env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp",
			"SOURCE_DATE_EPOCH=" + fmt.Sprint(store.FixedTime.Unix()), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1"}
	)
	switch {
	case p.Runtime == store.RuntimePython && exists(filepath.Join(pkg, "requirements.txt")):
		argv = []string{interp, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-input", "--no-compile",
			"--target", layerTarget, "-r", path.Join(packageTarget, "requirements.txt")}
		switch {
		case s.opts.Wheels != "":
			argv = append(argv, "--no-index", "--find-links", wheelsTarget)
			mounts = append(mounts, sandbox.Mount{Host: s.opts.Wheels, Target: wheelsTarget})
		case !p.Network:
			return fail(fmt.Errorf("%w: version %d needs Python packages (requirements.txt) but the hub has no wheel folder and the profile has no network: give the hub a wheel folder or allow the profile's network", ErrPrepareFailed, versionID), "")
		}
	case p.Runtime == store.RuntimeNode && exists(filepath.Join(pkg, "package-lock.json")):
		npm := path.Join(path.Dir(interp), "npm")
		argv = []string{npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--logs-dir=/tmp"}
		switch {
		case s.opts.NpmCache != "":
			argv = append(argv, "--offline", "--cache", npmTarget)
			mounts = append(mounts, sandbox.Mount{Host: s.opts.NpmCache, Target: npmTarget})
		case !p.Network:
			return fail(fmt.Errorf("%w: version %d needs npm packages (package-lock.json) but the hub has no npm cache and the profile has no network: give the hub an npm cache or allow the profile's network", ErrPrepareFailed, versionID), "")
		default:
			argv = append(argv, "--cache", "/tmp/npm-cache")
		}
	default:
		argv = []string{interp, "--version"}
	}
	if len(argv) > 2 {
		if build, err = os.MkdirTemp(s.dir("layers"), s.buildPrefix()); err != nil {
			return fail(fmt.Errorf("preparing version %d: %w", versionID, err), "")
		}
		// Kept when the build sandbox is not confirmed gone: it may still
		// write there.
		defer func() {
			if !keepBuild {
				removeTree(build)
			}
		}()
		if err := os.Chmod(build, 0o777); err != nil {
			return fail(err, "")
		}
		if p.Runtime == store.RuntimeNode {
			for _, f := range []string{"package.json", "package-lock.json"} {
				if err := copyFile(filepath.Join(pkg, f), filepath.Join(build, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fail(fmt.Errorf("preparing version %d: %w", versionID, err), "")
				}
			}
		}
		mounts = append(mounts, sandbox.Mount{Host: build, Target: layerTarget, Writable: true})
	}
	lim := s.limit
	lim.Wall = prepareWall
	lim.WorkTree, lim.WorkFiles = store.MaxLayerBytes, store.MaxLayerEntries // a layer may be large
	lim.FileSize = 1 << 30
	spec := sandbox.Spec{Name: name, Argv: argv, Dir: packageTarget, Env: env, Mounts: mounts,
		Image: image, RootFS: p.RootFS, Network: p.Network, Limits: lim}
	if build != "" {
		spec.Dir = layerTarget
	}
	r, err := s.ex.Run(ctx, spec)
	if err != nil {
		keepBuild = errors.Is(err, sandbox.ErrUnconfirmed)
		log := fmt.Sprintf("$ %s\nthe build sandbox (%s) failed: %v\n", strings.Join(argv, " "), s.ex.Name(), err)
		return fail(fmt.Errorf("%w: version %d: the build sandbox failed: %w", ErrPrepareFailed, versionID, err), log)
	}
	log := logBytes(argv, r)
	if r.Reason != sandbox.ReasonExited || r.ExitCode != 0 {
		return fail(fmt.Errorf("%w: version %d: %s ended with %s, exit status %d; its log is kept with the profile", ErrPrepareFailed, versionID, path.Base(argv[0]), r.Reason, r.ExitCode), log)
	}
	end := store.PreparationEnd{Identity: identityNone, Log: log, ImageID: image}
	if image != "" {
		end.ImageInterpreter = interp
	}
	if build != "" {
		layer, err := s.keepLayer(build)
		if err != nil {
			return fail(fmt.Errorf("%w: version %d: the prepared layer cannot be kept: %w", ErrPrepareFailed, versionID, err), log+"\nthe prepared layer cannot be kept: "+err.Error()+"\n")
		}
		end.Identity, end.Layer = "sha256:"+layer.Digest, layer
	}
	out, err := s.endPreparation(p, end)
	if err != nil {
		return p, err
	}
	return out, nil
}

// keepLayer makes a finished build folder a prepared layer: compiled
// caches dropped, read-only, file times fixed, named by its content
// digest under layers/ (renamed there, or dropped when that layer is
// there already), and returns the layer to store.
func (s *Service) keepLayer(build string) (*store.Layer, error) {
	if err := dropCaches(build); err != nil {
		return nil, err
	}
	if err := readOnly(build); err != nil {
		return nil, err
	}
	layer, err := readLayer(build)
	if err != nil {
		return nil, err
	}
	final := s.dir("layers", layer.Digest)
	if _, err := os.Lstat(final); err == nil {
		if got, err := treeDigest(final); err != nil || got != layer.Digest {
			removeTree(final)
		}
	}
	if err := os.Rename(build, final); err != nil && !exists(final) {
		return nil, fmt.Errorf("keeping the layer: %w", err)
	}
	if err := os.Chmod(final, 0o555); err != nil {
		return nil, err
	}
	// The layer's files are read when it is stored: from its new place.
	if layer, err = readLayer(final); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.layers[layer.Digest] = true
	s.mu.Unlock()
	return layer, nil
}

// dropCaches removes what makes a build differ from one made elsewhere
// from the same inputs: Python's compiled caches (__pycache__ folders and
// loose .pyc files), which embed the build's times and are rebuilt in
// memory when imported (runs set PYTHONDONTWRITEBYTECODE).
func dropCaches(dir string) error {
	var drop []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && d.Name() == "__pycache__":
			drop = append(drop, p)
			return filepath.SkipDir
		case d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".pyc"):
			drop = append(drop, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range drop {
		if err := removeTree(p); err != nil {
			return err
		}
	}
	return nil
}

// prepName names a new build sandbox of this replica.
func (s *Service) prepName() string {
	var b [6]byte
	rand.Read(b[:])
	return prepPrefix + s.tag + "-" + hex.EncodeToString(b[:])
}

// buildPrefix starts the names of this replica's build folders in layers.
func (s *Service) buildPrefix() string { return ".build-" + s.tag + "-" }

// preparationsSince reports whether a preparation of this replica runs now
// or started after generation gen was read.
func (s *Service) preparationsSince(gen int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepGen != gen {
		return true
	}
	for name := range s.runs {
		if strings.HasPrefix(name, prepPrefix) {
			return true
		}
	}
	return false
}

// preparing reports whether a preparation of this process has the name.
func (s *Service) preparing(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name] != nil
}

// layer returns the host folder of the profile's prepared layer, checked
// against its identity once per process; "" when it has none. A layer
// this replica does not have (prepared on another replica) is laid out
// from the store and checked; a damaged one is laid out again.
func (s *Service) layer(ctx context.Context, p store.Profile) (string, error) {
	digest, ok := strings.CutPrefix(p.Identity, "sha256:")
	if !ok {
		return "", nil
	}
	dir := s.dir("layers", digest)
	s.mu.Lock()
	known := s.layers[digest]
	s.mu.Unlock()
	if known {
		return dir, nil
	}
	if got, err := treeDigest(dir); err == nil && got == digest {
		s.mu.Lock()
		s.layers[digest] = true
		s.mu.Unlock()
		return dir, nil
	}
	if exists(dir) {
		removeTree(dir)
	}
	if _, err := s.st.LayOutLayer(ctx, digest, s.dir("layers")); err != nil {
		return "", fmt.Errorf("the prepared environment (%s) could not be laid out on replica %s: %w", p.Identity, s.opts.Replica, err)
	}
	if got, err := treeDigest(dir); err != nil || got != digest {
		return "", fmt.Errorf("the prepared environment (%s) laid out on replica %s does not match its identity (%s, %v): an administrator prepares the version again", p.Identity, s.opts.Replica, got, err)
	}
	s.mu.Lock()
	s.layers[digest] = true
	s.mu.Unlock()
	return dir, nil
}

// readLayer reads a folder as a layer: its entries in walk order, each
// file's digest computed (and its content read again, by Open, when the
// store keeps it). Anything but folders, regular files and links is
// refused.
func readLayer(dir string) (*store.Layer, error) {
	var entries []store.LayerEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t.IsDir():
			entries = append(entries, store.LayerEntry{Path: rel, Kind: store.LayerDir})
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries = append(entries, store.LayerEntry{Path: rel, Kind: store.LayerLink, Target: target})
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			fh := sha256.New()
			n, err := io.Copy(fh, f)
			f.Close()
			if err != nil {
				return err
			}
			entries = append(entries, store.LayerEntry{Path: rel, Kind: store.LayerFile, Exec: info.Mode().Perm()&0o111 != 0,
				Size: n, Digest: [32]byte(fh.Sum(nil)), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		default:
			return fmt.Errorf("%s is a special file", rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &store.Layer{Digest: store.LayerDigest(entries), Entries: entries}, nil
}

// treeDigest is the content digest of a folder read as a layer
// (store.LayerDigest): the identity of a prepared environment.
func treeDigest(dir string) (string, error) {
	l, err := readLayer(dir)
	if err != nil {
		return "", err
	}
	return l.Digest, nil
}

// readOnly makes a tree readable by all and writable by none, its files'
// times fixed (store.FixedTime), so that layers are alike wherever they
// are made.
func readOnly(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := os.FileMode(0o444)
			if info.Mode().Perm()&0o111 != 0 {
				mode = 0o555
			}
			if err := os.Chtimes(p, store.FixedTime, store.FixedTime); err != nil {
				return err
			}
			return os.Chmod(p, mode)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		if err = os.Chtimes(dirs[i], store.FixedTime, store.FixedTime); err == nil {
			err = os.Chmod(dirs[i], 0o555)
		}
	}
	return err
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, 0o666); err != nil {
		return err
	}
	return os.Chmod(dst, 0o666)
}

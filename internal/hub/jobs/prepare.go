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

// Prepare prepares a version's environment under its current profile, an
// administrator's explicit operation (the caller checks the scope) that
// may use the network (when the profile allows it) and runs dependency
// build code, in a build sandbox. It lays the package out verified
// against its digests first. Python: the root requirements.txt is
// installed with pip into a prepared layer (--no-index --find-links
// Options.Wheels when given); Node.js: the root package-lock.json with
// npm ci --ignore-scripts (--offline from Options.NpmCache when given). The
// layer's content digest is the identity recorded; with nothing to
// install the interpreter is checked and the identity is "none". The log
// is kept with the profile whether the build succeeds or not.
func (s *Service) Prepare(ctx context.Context, versionID int64) (store.Profile, error) {
	if err := s.usable(); err != nil {
		return store.Profile{}, err
	}
	p, err := s.st.GetProfile(ctx, versionID)
	if err != nil {
		return store.Profile{}, err
	}
	pkg, err := s.st.Materialize(ctx, versionID, s.dir("packages"))
	if err != nil {
		return store.Profile{}, fmt.Errorf("preparing version %d: the package's files could not be verified: %w", versionID, err)
	}
	name := s.prepName()
	// The preparation is one of this replica's runs: Close kills its
	// sandbox and waits for it.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	h := &runHandle{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return p, ErrClosed
	}
	s.runs[name] = h
	s.prepGen++
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.runs, name)
		s.mu.Unlock()
		close(h.done)
		s.wg.Done()
	}()

	interp := interpreter(p)
	var (
		argv   []string
		mounts = []sandbox.Mount{{Host: pkg, Target: packageTarget}}
		build  string
		// keepBuild keeps the build folder of a sandbox that may still run.
		keepBuild bool
		env       = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp"}
	)
	switch {
	case p.Runtime == store.RuntimePython && exists(filepath.Join(pkg, "requirements.txt")):
		argv = []string{interp, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-input",
			"--target", layerTarget, "-r", path.Join(packageTarget, "requirements.txt")}
		switch {
		case s.opts.Wheels != "":
			argv = append(argv, "--no-index", "--find-links", wheelsTarget)
			mounts = append(mounts, sandbox.Mount{Host: s.opts.Wheels, Target: wheelsTarget})
		case !p.Network:
			return p, fmt.Errorf("%w: version %d needs Python packages (requirements.txt) but the hub has no wheel folder and the profile has no network: give the hub a wheel folder or allow the profile's network", ErrPrepareFailed, versionID)
		}
	case p.Runtime == store.RuntimeNode && exists(filepath.Join(pkg, "package-lock.json")):
		npm := path.Join(path.Dir(interp), "npm")
		argv = []string{npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--logs-dir=/tmp"}
		switch {
		case s.opts.NpmCache != "":
			argv = append(argv, "--offline", "--cache", npmTarget)
			mounts = append(mounts, sandbox.Mount{Host: s.opts.NpmCache, Target: npmTarget})
		case !p.Network:
			return p, fmt.Errorf("%w: version %d needs npm packages (package-lock.json) but the hub has no npm cache and the profile has no network: give the hub an npm cache or allow the profile's network", ErrPrepareFailed, versionID)
		default:
			argv = append(argv, "--cache", "/tmp/npm-cache")
		}
	default:
		argv = []string{interp, "--version"}
	}
	if len(argv) > 2 {
		if build, err = os.MkdirTemp(s.dir("layers"), s.buildPrefix()); err != nil {
			return p, fmt.Errorf("preparing version %d: %w", versionID, err)
		}
		// Kept when the build sandbox is not confirmed gone: it may still
		// write there.
		defer func() {
			if !keepBuild {
				removeTree(build)
			}
		}()
		if err := os.Chmod(build, 0o777); err != nil {
			return p, err
		}
		if p.Runtime == store.RuntimeNode {
			for _, f := range []string{"package.json", "package-lock.json"} {
				if err := copyFile(filepath.Join(pkg, f), filepath.Join(build, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return p, fmt.Errorf("preparing version %d: %w", versionID, err)
				}
			}
		}
		mounts = append(mounts, sandbox.Mount{Host: build, Target: layerTarget, Writable: true})
	}
	lim := s.limit
	lim.Wall = prepareWall
	lim.WorkTree, lim.WorkFiles = 1<<30, 200_000 // a layer may be large
	lim.FileSize = 1 << 30
	spec := sandbox.Spec{Name: name, Argv: argv, Dir: packageTarget, Env: env, Mounts: mounts,
		Image: p.Image, RootFS: p.RootFS, Network: p.Network, Limits: lim}
	if build != "" {
		spec.Dir = layerTarget
	}
	r, err := s.ex.Run(ctx, spec)
	if err != nil {
		keepBuild = errors.Is(err, sandbox.ErrUnconfirmed)
		log := fmt.Sprintf("$ %s\nthe build sandbox (%s) failed: %v\n", strings.Join(argv, " "), s.ex.Name(), err)
		s.recordFailure(versionID, p.Revision, log)
		return p, fmt.Errorf("%w: version %d: the build sandbox failed: %w", ErrPrepareFailed, versionID, err)
	}
	log := logBytes(argv, r)
	if r.Reason != sandbox.ReasonExited || r.ExitCode != 0 {
		s.recordFailure(versionID, p.Revision, log)
		return p, fmt.Errorf("%w: version %d: %s ended with %s, exit status %d; its log is kept with the profile", ErrPrepareFailed, versionID, path.Base(argv[0]), r.Reason, r.ExitCode)
	}
	identity := identityNone
	if build != "" {
		digest, err := treeDigest(build)
		if err != nil {
			s.recordFailure(versionID, p.Revision, log+"\nthe prepared layer cannot be kept: "+err.Error()+"\n")
			return p, fmt.Errorf("%w: version %d: the prepared layer cannot be kept: %w", ErrPrepareFailed, versionID, err)
		}
		final := s.dir("layers", digest)
		if _, err := os.Lstat(final); err == nil {
			if got, err := treeDigest(final); err != nil || got != digest {
				removeTree(final)
			}
		}
		if err := readOnly(build); err != nil {
			return p, err
		}
		if err := os.Rename(build, final); err != nil && !exists(final) {
			return p, fmt.Errorf("preparing version %d: keeping the layer: %w", versionID, err)
		}
		identity = "sha256:" + digest
		s.mu.Lock()
		s.layers[digest] = true
		s.mu.Unlock()
	}
	return s.st.SetPrepared(ctx, versionID, p.Revision, identity, log)
}

// recordFailure keeps a failed preparation's log; the prepared state stays
// clear.
func (s *Service) recordFailure(versionID, revision int64, log string) {
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if _, err := s.st.SetPrepared(ctx, versionID, revision, "", log); err != nil {
		s.log.Warn("keeping a failed preparation's log", "version", versionID, "err", err)
	}
}

func (s *Service) prepName() string {
	var b [6]byte
	rand.Read(b[:])
	return prepPrefix + s.tag + "-" + hex.EncodeToString(b[:])
}

// preparing reports whether a preparation of this process has the name.
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

func (s *Service) preparing(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name] != nil
}

// layer returns the host folder of the profile's prepared layer, checked
// against its identity once per process; "" when it has none.
func (s *Service) layer(p store.Profile) (string, error) {
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
	got, err := treeDigest(dir)
	if err != nil || got != digest {
		return "", fmt.Errorf("the prepared environment (%s) is missing or damaged on replica %s: an administrator prepares the version again", p.Identity, s.opts.Replica)
	}
	s.mu.Lock()
	s.layers[digest] = true
	s.mu.Unlock()
	return dir, nil
}

// treeDigest is the content digest of a folder: the sha256 of one line per
// entry in path order, a folder's "d path", a file's "f path x sha256"
// (x: whether it is executable), a link's "l path target". Anything else
// is refused.
func treeDigest(dir string) (string, error) {
	h := sha256.New()
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
			fmt.Fprintf(h, "d\x00%s\n", rel)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "l\x00%s\x00%s\n", rel, target)
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
			_, err = io.Copy(fh, f)
			f.Close()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f\x00%s\x00%t\x00%x\n", rel, info.Mode().Perm()&0o111 != 0, fh.Sum(nil))
		default:
			return fmt.Errorf("%s is a special file", rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readOnly makes a tree readable by all and writable by none.
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
			return os.Chmod(p, mode)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = os.Chmod(dirs[i], 0o555)
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

package pull

import (
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
)

// stagePrefix names the hidden folder inside the destination where skills
// are assembled before they are renamed into place. A crash can leave one
// behind; it is safe to delete.
const stagePrefix = ".skills-pull-"

// Bounds on what a local skill folder may hold before --sync gives up on
// it: a pull only ever writes what a manifest lists, so more is not ours.
const (
	maxLocalEntries = 100000
	maxLocalDepth   = 64
)

// dest is the destination folder, opened as an os.Root so that no path
// below it can leave it.
type dest struct {
	path    string
	root    *os.Root // nil in a dry run whose destination does not exist
	created []string // folders Dial created for the destination, outermost first
	stage   string   // the staging folder, relative to root, or ""
}

// openDest opens (and, unless dryRun, creates) the destination. The
// destination itself must not be a symbolic link; the folders above it are
// the user's choice and are taken as they are.
func openDest(dir string, dryRun bool) (*dest, error) {
	d := &dest{path: dir}
	if vcs := insideVCS(dir); vcs != "" {
		return nil, fmt.Errorf("destination %s lies inside a %s folder; pull never writes into version-control metadata: give a folder outside it", dir, vcs)
	}
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return nil, fmt.Errorf("destination %s is a symbolic link (to %s); pull never writes through links: give the real folder", dir, target)
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("destination %s exists and is not a folder", dir)
	case errors.Is(err, fs.ErrNotExist):
		if dryRun {
			return d, nil
		}
		if err := d.mkdirAll(dir); err != nil {
			return nil, fmt.Errorf("creating destination: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("destination: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		d.removeCreated()
		return nil, fmt.Errorf("opening destination: %w", err)
	}
	d.root = root
	return d, nil
}

// refuseVCS fails when the existing skill folder dir holds version-control
// metadata (a .git folder, or the .git file of a worktree or submodule) at
// any depth: --sync would delete it as unlisted and --force would replace
// the folder with it, and a repository is the user's, not a copy of a
// skill.
func (d *dest) refuseVCS(dir string) error {
	files, dirs, err := d.scan(dir)
	if err != nil {
		return err
	}
	for _, rel := range dirs {
		if isVCS(path.Base(rel)) {
			return d.vcsError(dir, rel)
		}
	}
	for rel := range files {
		if isVCS(path.Base(rel)) {
			return d.vcsError(dir, rel)
		}
	}
	return nil
}

func (d *dest) vcsError(dir, rel string) error {
	return fmt.Errorf("%s holds %s: pull never replaces or deletes version-control metadata; update that folder with its own tool, or pull to another --to", filepath.Join(d.path, filepath.FromSlash(dir)), rel)
}

// insideVCS returns the version-control folder that dir (a destination)
// lies inside, as written or once its links are resolved, or "".
func insideVCS(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	candidates := []string{abs}
	// The part that exists, with its links resolved: a link above the
	// destination may lead into a repository's metadata.
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			rest, _ := filepath.Rel(p, abs)
			candidates = append(candidates, filepath.Join(real, rest))
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, c := range candidates {
		for _, seg := range strings.Split(filepath.ToSlash(c), "/") {
			if isVCS(seg) {
				return seg
			}
		}
	}
	return ""
}

// mkdirAll creates dir and its missing parents, remembering which it
// created so that a failed pull can remove them again.
func (d *dest) mkdirAll(dir string) error {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		d.created = append(d.created, missing[i])
	}
	return nil
}

// removeCreated removes the folders openDest created, if they are empty.
func (d *dest) removeCreated() {
	for i := len(d.created) - 1; i >= 0; i-- {
		os.Remove(d.created[i])
	}
	d.created = nil
}

// close removes the staging folder and closes the root. With failed set,
// it also removes the destination folders this pull created.
func (d *dest) close(failed bool) error {
	var err error
	if d.root != nil {
		if d.stage != "" {
			err = d.root.RemoveAll(d.stage)
			d.stage = ""
		}
		err = errors.Join(err, d.root.Close())
		d.root = nil
	}
	if failed {
		d.removeCreated()
	}
	return err
}

// inspect walks dir (relative, slash-separated) component by component
// without following anything: it reports whether dir exists as a folder,
// and fails on a symbolic link or a non-folder anywhere on the way.
func (d *dest) inspect(dir string) (exists bool, err error) {
	if d.root == nil {
		return false, nil
	}
	segs := strings.Split(dir, "/")
	for i := range segs {
		p := strings.Join(segs[:i+1], "/")
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return false, fmt.Errorf("%s is a symbolic link; pull never follows links in the destination", filepath.Join(d.path, filepath.FromSlash(p)))
		case !fi.IsDir():
			return false, fmt.Errorf("%s exists and is not a folder", filepath.Join(d.path, filepath.FromSlash(p)))
		}
	}
	return true, nil
}

// mkParents creates the missing parents of dir, checking each existing one
// again, and returns those it created, outermost first.
func (d *dest) mkParents(dir string) ([]string, error) {
	var created []string
	segs := strings.Split(dir, "/")
	for i := range len(segs) - 1 {
		p := strings.Join(segs[:i+1], "/")
		fi, err := d.root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := d.root.Mkdir(p, 0o755); err != nil {
				return created, err
			}
			created = append(created, p)
		case err != nil:
			return created, err
		case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
			return created, fmt.Errorf("%s is not a folder (or is a link); pull never follows links in the destination", p)
		}
	}
	return created, nil
}

// newStage creates the staging folder.
func (d *dest) newStage() error {
	var b [8]byte
	rand.Read(b[:])
	name := stagePrefix + hex.EncodeToString(b[:])
	if err := d.root.Mkdir(name, 0o700); err != nil {
		return fmt.Errorf("creating the staging folder: %w", err)
	}
	d.stage = name
	return nil
}

// writeFile writes data to rel below dir, which this pull created, making
// parent folders; made remembers the folders already made, to spare a walk
// per file. The file must not exist yet.
func (d *dest) writeFile(dir, rel string, data []byte, made map[string]bool) error {
	name := dir + "/" + rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 && !made[rel[:i]] {
		if err := d.root.MkdirAll(dir+"/"+rel[:i], 0o755); err != nil {
			return err
		}
		made[rel[:i]] = true
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// localFile is a file found in an existing skill folder.
type localFile struct {
	size    int64
	regular bool
}

// scan lists what an existing skill folder holds, without following links:
// files (regular or not) by relative path, and folders.
func (d *dest) scan(dir string) (files map[string]localFile, dirs []string, err error) {
	files = map[string]localFile{}
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		if depth > maxLocalDepth {
			return fmt.Errorf("%s is nested deeper than %d folders", path.Join(dir, rel), maxLocalDepth)
		}
		f, err := d.root.Open(path.Join(dir, rel))
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, de := range ents {
			if len(files)+len(dirs) > maxLocalEntries {
				return fmt.Errorf("%s holds more than %d entries", dir, maxLocalEntries)
			}
			r := path.Join(rel, de.Name())
			switch {
			case de.Type().IsDir():
				dirs = append(dirs, r)
				if err := walk(r, depth+1); err != nil {
					return err
				}
			case de.Type().IsRegular():
				info, err := de.Info()
				if err != nil {
					return err
				}
				files[r] = localFile{size: info.Size(), regular: true}
			default: // a link, socket, device…: never opened
				files[r] = localFile{}
			}
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return nil, nil, fmt.Errorf("reading the local copy: %w", err)
	}
	return files, dirs, nil
}

// readLocal reads the regular file rel of dir when it is still the file
// scan saw, no bigger than size, and returns its bytes and digest.
func (d *dest) readLocal(dir, rel string, size int64) ([]byte, string, error) {
	name := path.Join(dir, rel)
	before, err := d.root.Lstat(name)
	if err != nil {
		return nil, "", err
	}
	if !before.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is no longer a regular file", name)
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !os.SameFile(before, after) {
		return nil, "", fmt.Errorf("%s changed while being read", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	return data, "sha256:" + hex.EncodeToString(sum[:]), nil
}

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// WithDefaults returns l with every zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	if l.Wall <= 0 {
		l.Wall = d.Wall
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.CPUs <= 0 {
		l.CPUs = d.CPUs
	}
	if l.CPUTime <= 0 {
		l.CPUTime = time.Duration(math.Ceil(l.Wall.Seconds()*l.CPUs)) * time.Second
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.FileSize <= 0 {
		l.FileSize = d.FileSize
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	if l.WorkTree <= 0 {
		l.WorkTree = d.WorkTree
	}
	if l.WorkFiles <= 0 {
		l.WorkFiles = d.WorkFiles
	}
	return l
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`)

// reserved are the sandbox paths every backend builds itself; a mount may
// not replace them.
var reserved = []string{"/", "/proc", "/dev", "/tmp", "/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc"}

// CheckSpec reports what is wrong with spec before any backend runs it: a
// name that is not a plain identifier, an empty or relative command, a
// relative working directory, an environment entry without '=', or a mount
// that is not absolute and clean on both sides or that would hide a part
// of the sandbox's own root.
func CheckSpec(spec Spec) error {
	if !nameRE.MatchString(spec.Name) {
		return fmt.Errorf("sandbox: run name %q: want 1-100 letters, digits, '-' or '_', starting with a letter or digit", spec.Name)
	}
	if len(spec.Argv) == 0 || !path.IsAbs(spec.Argv[0]) {
		return fmt.Errorf("sandbox: run %s: the command must be an absolute path inside the sandbox (got %q)", spec.Name, spec.Argv)
	}
	if spec.Dir != "" && (!path.IsAbs(spec.Dir) || path.Clean(spec.Dir) != spec.Dir) {
		return fmt.Errorf("sandbox: run %s: working directory %q is not a clean absolute path", spec.Name, spec.Dir)
	}
	for _, e := range spec.Env {
		if k, _, ok := cutEnv(e); !ok || k == "" {
			return fmt.Errorf("sandbox: run %s: environment entry %q is not KEY=value", spec.Name, e)
		}
	}
	targets := map[string]bool{}
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.Host) || filepath.Clean(m.Host) != m.Host {
			return fmt.Errorf("sandbox: run %s: mount source %q is not a clean absolute host path", spec.Name, m.Host)
		}
		if !path.IsAbs(m.Target) || path.Clean(m.Target) != m.Target {
			return fmt.Errorf("sandbox: run %s: mount target %q is not a clean absolute path", spec.Name, m.Target)
		}
		for _, r := range reserved {
			if m.Target == r || (r != "/" && isUnder(m.Target, r)) {
				return fmt.Errorf("sandbox: run %s: mount target %q would replace the sandbox's own %s", spec.Name, m.Target, r)
			}
		}
		if targets[m.Target] {
			return fmt.Errorf("sandbox: run %s: two mounts on %q", spec.Name, m.Target)
		}
		targets[m.Target] = true
	}
	if spec.Limits.Wall < 0 || spec.Limits.Memory < 0 || spec.Limits.CPUs < 0 || spec.Limits.CPUTime < 0 || spec.Limits.Processes < 0 ||
		spec.Limits.FileSize < 0 || spec.Limits.Output < 0 || spec.Limits.WorkTree < 0 || spec.Limits.WorkFiles < 0 {
		return fmt.Errorf("sandbox: run %s: a limit is negative (%+v)", spec.Name, spec.Limits)
	}
	return nil
}

func cutEnv(e string) (string, string, bool) {
	for i := 0; i < len(e); i++ {
		if e[i] == '=' {
			return e[:i], e[i+1:], true
		}
	}
	return "", "", false
}

func isUnder(p, dir string) bool {
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

// Capture is an io.Writer that keeps the first Max bytes written to it and
// reads and drops the rest, so a command that writes too much is never
// blocked on a full pipe. It is safe for concurrent use.
type Capture struct {
	mu  sync.Mutex
	max int64
	buf []byte
	cut bool
}

// NewCapture returns a Capture that keeps max bytes.
func NewCapture(max int64) *Capture { return &Capture{max: max} }

// Write keeps what fits and reports the whole of p as written.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - int64(len(c.buf))
	if int64(len(p)) > room {
		c.buf = append(c.buf, p[:room]...)
		c.cut = true
	} else {
		c.buf = append(c.buf, p...)
	}
	return len(p), nil
}

// Result returns the kept bytes and whether more was written.
func (c *Capture) Result() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.cut
}

// errOverQuota stops the walk of WorkUsage early.
var errOverQuota = errors.New("over quota")

// WorkUsage measures the host folders dirs (a run's writable mounts): the
// bytes of their regular files and the number of their entries (files,
// folders and links, the folders themselves not counted). A folder that is
// a work-folder file system (MountWorkspace) is measured by the file
// system's own count, which includes files unlinked but still open;
// otherwise a file counts its apparent size or its allocated blocks,
// whichever is more (so reserved blocks and sparse files count), and the
// walk never follows a link. It stops early, with over set, once maxBytes
// or maxFiles is passed (a zero bound is not checked). A folder that
// vanishes or cannot be read while the run changes it is skipped.
func WorkUsage(dirs []string, maxBytes int64, maxFiles int) (bytes int64, files int, over bool) {
	for _, dir := range dirs {
		if used, _, n, _, ok := workspaceStat(dir); ok {
			bytes += used
			files += int(n)
			if (maxBytes > 0 && bytes > maxBytes) || (maxFiles > 0 && files > maxFiles) {
				return bytes, files, true
			}
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			files++
			if d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					size := info.Size()
					if st, ok := info.Sys().(*syscall.Stat_t); ok {
						size = max(size, st.Blocks*512)
					}
					bytes += size
				}
			}
			if (maxBytes > 0 && bytes > maxBytes) || (maxFiles > 0 && files > maxFiles) {
				return errOverQuota
			}
			return nil
		})
		if errors.Is(err, errOverQuota) {
			return bytes, files, true
		}
	}
	return bytes, files, false
}

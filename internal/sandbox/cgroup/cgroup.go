// Package cgroup makes, limits, joins, kills and removes the cgroups of
// sandbox runs, on the unified hierarchy (v2) or the legacy one (v1, as on
// Debian's hybrid layout): one folder per run under Name/Owner, so an
// owner never lists or removes another's. The bubblewrap and gVisor
// backends use it.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Hierarchy is what the host offers for the runs' cgroups: nothing, the
// unified hierarchy (v2: one folder per run, joined at clone through
// CLONE_INTO_CGROUP) or the legacy one (v1: one folder per run in each of
// the memory, pids and cpu hierarchies, joined before the sandbox execs).
type Hierarchy struct {
	// V2 says the unified hierarchy is in use.
	V2 bool
	// parent is, per controller ("memory", "pids", "cpu"), the folder the
	// runs' folders are made in; v2 uses one folder for all three.
	parent map[string]string
	memsw  bool // v1: memory.memsw.limit_in_bytes exists (swap is bounded too)
	// enable is, under v2, what each level down to the owner's folder
	// writes to cgroup.subtree_control ("+memory +pids +cpu").
	enable string
	// others are, under v1, the owner's folders in the hierarchies of the
	// other controllers (blkio, cpuset, freezer...), by hierarchy: a
	// runtime (runsc) makes a run's folders by the same path in each.
	// This package makes nothing there, but removes what is left there.
	others map[string]string
	// owned lists, per hierarchy, the owner's folder and the Name folder
	// above it, in that order: what Close removes when they are empty.
	owned [][2]string
	// Enforced and Missing describe the controllers, for sandbox.Enforced.
	Enforced, Missing []string
}

var controllers = []string{"memory", "pids", "cpu"}

// Detect looks under root (normally /sys/fs/cgroup) for a cgroup
// hierarchy this process may make folders in, and makes the parent folder
// name/owner in it: runs of one owner live in their own folder, so no
// owner ever lists or removes another's. It never fails: what it cannot
// use it lists as missing. Close removes the folders it made once they
// are empty.
func Detect(root, name, owner string) *Hierarchy {
	c := &Hierarchy{parent: map[string]string{}, others: map[string]string{}}
	if ctl, err := os.ReadFile(filepath.Join(root, "cgroup.controllers")); err == nil {
		c.V2 = true
		c.owned = [][2]string{{filepath.Join(root, name, owner), filepath.Join(root, name)}}
		c.detectV2(root, name, owner, strings.Fields(string(ctl)))
		return c
	}
	ours := map[string]bool{}
	for _, ctl := range controllers {
		ours[ctl] = true
	}
	// Every v1 hierarchy mounted under root: the controllers' own and the
	// others a runtime may make the runs' folders in. A link ("cpu" to
	// "cpu,cpuacct") names a hierarchy listed under its own name too.
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			base := filepath.Join(root, e.Name())
			if !e.IsDir() && !ours[e.Name()] {
				continue
			}
			if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
				continue
			}
			if !ours[e.Name()] {
				if real, err := filepath.EvalSymlinks(base); err == nil && c.sameAsOurs(root, real) {
					continue
				}
				c.others[e.Name()] = filepath.Join(base, name, owner)
			}
			c.owned = append(c.owned, [2]string{filepath.Join(base, name, owner), filepath.Join(base, name)})
		}
	}
	name = filepath.Join(name, owner)
	for _, ctl := range controllers {
		probe := map[string]string{"memory": "memory.limit_in_bytes", "pids": "pids.max", "cpu": "cpu.cfs_quota_us"}[ctl]
		base := filepath.Join(root, ctl)
		if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: cgroup: no v1 %s hierarchy at %s and no cgroup v2", ctlLimit(ctl), ctl, base))
			continue
		}
		dir := filepath.Join(base, name)
		if err := mkdirAll(dir); err != nil {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: cgroup v1 %s: cannot make %s (%v); run the server as root or delegate the hierarchy", ctlLimit(ctl), ctl, dir, errors.Unwrap(err)))
			continue
		}
		// The root of a hierarchy lacks some limit files (pids.max): look
		// in the folder just made.
		if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: cgroup v1: %s has no %s", ctlLimit(ctl), base, probe))
			continue
		}
		c.parent[ctl] = dir
		c.Enforced = append(c.Enforced, fmt.Sprintf("%s: cgroup v1 (%s)", ctlLimit(ctl), probe))
		if ctl == "memory" {
			if _, err := os.Stat(filepath.Join(base, "memory.memsw.limit_in_bytes")); err == nil {
				c.memsw = true
			}
		}
	}
	return c
}

func (c *Hierarchy) detectV2(root, name, owner string, offered []string) {
	dir := filepath.Join(root, name, owner)
	var want []string
	for _, ctl := range controllers {
		if !strings.Contains(" "+strings.Join(offered, " ")+" ", " "+ctl+" ") {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: cgroup v2 at %s offers no %s controller", ctlLimit(ctl), root, ctl))
			continue
		}
		want = append(want, "+"+ctl)
	}
	if len(want) == 0 {
		return
	}
	c.enable = strings.Join(want, " ")
	err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte(c.enable), 0)
	if err == nil {
		err = c.makeV2(dir)
	}
	if err != nil {
		for _, w := range want {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: cgroup v2: cannot enable %s under %s (%v); run the server as root in the host's cgroup namespace or delegate a cgroup to it", ctlLimit(w[1:]), w[1:], root, err))
		}
		return
	}
	for _, w := range want {
		c.parent[w[1:]] = dir
		c.Enforced = append(c.Enforced, fmt.Sprintf("%s: cgroup v2 (%s)", ctlLimit(w[1:]), map[string]string{"memory": "memory.max", "pids": "pids.max", "cpu": "cpu.max"}[w[1:]]))
	}
}

// makeV2 makes the owner's folder dir and the Name folder above it, each
// delegating the controllers to the level below. A Close of another
// process of the owner (or of another owner, for the Name folder) may
// remove one between two steps: that is tried again.
func (c *Hierarchy) makeV2(dir string) error {
	var err error
	for range 3 {
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err = os.Mkdir(d, 0o755); errors.Is(err, os.ErrExist) {
				err = nil
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte(c.enable), 0)
			}
			if err != nil {
				break
			}
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return err
}

// mkdirAll is os.MkdirAll, tried again when a concurrent Close removed a
// folder on the way.
func mkdirAll(dir string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(dir, 0o755); !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return err
}

// remake makes the parent folder of the controller ctl again, after a
// Close (of this or of another process of the owner) removed it.
func (c *Hierarchy) remake(ctl string) error {
	if c.V2 {
		return c.makeV2(c.parent[ctl])
	}
	return mkdirAll(c.parent[ctl])
}

// sameAsOurs reports whether the hierarchy at real (links resolved) is
// that of one of the controllers this package limits.
func (c *Hierarchy) sameAsOurs(root, real string) bool {
	for _, ctl := range controllers {
		if r, err := filepath.EvalSymlinks(filepath.Join(root, ctl)); err == nil && r == real {
			return true
		}
	}
	return false
}

func ctlLimit(ctl string) string {
	return map[string]string{"memory": "memory", "pids": "processes", "cpu": "cpu share"}[ctl]
}

// Group is one run's cgroup folders.
type Group struct {
	c *Hierarchy
	// Dirs maps each controller to its folder (v2: the same folder).
	Dirs map[string]string
	// FD is, under v2, the open folder, for CLONE_INTO_CGROUP; -1 otherwise.
	FD   int
	name string
}

// Create makes the run's folders and writes its limits. Nothing is made
// when the host offers no controller (nil, nil).
func (c *Hierarchy) Create(name string, l sandbox.Limits) (_ *Group, err error) {
	if len(c.parent) == 0 {
		return nil, nil
	}
	j := &Group{c: c, Dirs: map[string]string{}, FD: -1}
	defer func() {
		if err != nil {
			j.Remove(time.Second)
		}
	}()
	for ctl, parent := range c.parent {
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, 0o755)
		// The owner's folder is gone when a Close found it empty.
		for try := 0; try < 3 && errors.Is(err, os.ErrNotExist); try++ {
			if err = c.remake(ctl); err == nil {
				err = os.Mkdir(dir, 0o755)
			}
		}
		if err != nil && !(c.V2 && errors.Is(err, os.ErrExist) && len(j.Dirs) > 0) {
			return nil, fmt.Errorf("making the run's cgroup: %w (a run of that name left it behind? Kill removes it)", err)
		}
		j.Dirs[ctl] = dir
	}
	j.name = name
	period := int64(100000)
	quota := int64(math.Ceil(l.CPUs * float64(period)))
	write := func(ctl, file, value string) error {
		dir, ok := j.Dirs[ctl]
		if !ok {
			return nil
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			return fmt.Errorf("setting the run's cgroup limit %s=%s: %w", file, value, err)
		}
		return nil
	}
	mem := strconv.FormatInt(l.Memory, 10)
	var writes [][3]string
	if c.V2 {
		writes = [][3]string{
			{"memory", "memory.max", mem}, {"memory", "memory.swap.max", "0"},
			{"pids", "pids.max", strconv.Itoa(l.Processes)},
			{"cpu", "cpu.max", fmt.Sprintf("%d %d", quota, period)},
		}
	} else {
		writes = [][3]string{
			{"memory", "memory.limit_in_bytes", mem},
			{"pids", "pids.max", strconv.Itoa(l.Processes)},
			{"cpu", "cpu.cfs_period_us", strconv.FormatInt(period, 10)},
			{"cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)},
		}
		if c.memsw {
			writes = append(writes, [3]string{"memory", "memory.memsw.limit_in_bytes", mem})
		}
	}
	for _, w := range writes {
		if err := write(w[0], w[1], w[2]); err != nil {
			// memory.swap.max is absent where swap accounting is off.
			if w[1] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
	}
	if c.V2 {
		for _, dir := range j.Dirs {
			fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return nil, fmt.Errorf("opening the run's cgroup: %w", err)
			}
			j.FD = fd
			break
		}
	}
	return j, nil
}

// Join moves the processes pids into the run's cgroups (v1; under v2 the
// sandbox is cloned into its cgroup).
func (j *Group) Join(pids ...int) error {
	if j == nil || j.c.V2 {
		return nil
	}
	for _, dir := range j.Dirs {
		for _, pid := range pids {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				return fmt.Errorf("moving the sandbox into its cgroup %s: %w", dir, err)
			}
		}
	}
	return nil
}

// OOMKilled reports whether the kernel killed a process of the run for
// passing its memory limit.
func (j *Group) OOMKilled() bool {
	if j == nil {
		return false
	}
	dir, ok := j.Dirs["memory"]
	if !ok {
		return false
	}
	file := "memory.oom_control"
	if j.c.V2 {
		file = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// ProcsIn lists the processes still in the folders dirs and the folders
// below them (a runtime such as runsc makes its own under a run's).
func ProcsIn(dirs map[string]string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, top := range dirs {
		for _, dir := range subtree(top) {
			data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// subtree lists dir and the folders below it, the deepest first, so they
// can be removed in that order.
func subtree(dir string) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, subtree(filepath.Join(dir, e.Name()))...)
		}
	}
	return append(out, dir)
}

// KillAll kills every process in dirs: through cgroup.kill where v2 has
// it, else by pid (a process that forks meanwhile is caught by the next
// round of the caller's loop).
func KillAll(v2 bool, dirs map[string]string) {
	if v2 {
		for _, dir := range dirs {
			if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
				return
			}
		}
	}
	for _, pid := range ProcsIn(dirs) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Remove waits until the run's cgroups are empty, killing what is left,
// and removes them; an error means processes may remain.
func (j *Group) Remove(wait time.Duration) error {
	if j == nil {
		return nil
	}
	if j.FD >= 0 {
		syscall.Close(j.FD)
		j.FD = -1
	}
	dirs := maps.Clone(j.Dirs)
	maps.Copy(dirs, j.c.othersOf(j.name))
	return RemoveDirs(j.c.V2, dirs, wait)
}

// othersOf returns the folders of the run name that a runtime made in the
// other controllers' hierarchies (v1).
func (c *Hierarchy) othersOf(name string) map[string]string {
	dirs := map[string]string{}
	for h, owner := range c.others {
		dir := filepath.Join(owner, name)
		if _, err := os.Stat(dir); err == nil {
			dirs[h] = dir
		}
	}
	return dirs
}

// RemoveDirs removes the folders dirs (and any below them), killing what
// they hold, until they are gone or wait has passed; an error means
// processes may remain.
func RemoveDirs(v2 bool, dirs map[string]string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	left := map[string]string{}
	for k, v := range dirs {
		left[k] = v
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		for ctl, dir := range left {
			gone := true
			for _, d := range subtree(dir) {
				if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
					gone = false
				}
			}
			if gone {
				delete(left, ctl)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the run's cgroup still holds processes %v after %v", ProcsIn(left), wait)
		}
		KillAll(v2, left)
		time.Sleep(delay)
	}
}

// Leftovers lists the names of the run folders under the parents (and,
// under v1, under the owner's folders of the other controllers, where a
// runtime may have made them), with whether any still holds a process.
func (c *Hierarchy) Leftovers() map[string]bool {
	names := map[string]bool{}
	parents := maps.Clone(c.parent)
	maps.Copy(parents, c.others)
	for ctl, parent := range parents {
		ents, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			busy := len(ProcsIn(map[string]string{ctl: filepath.Join(parent, e.Name())})) > 0
			names[e.Name()] = names[e.Name()] || busy
		}
	}
	return names
}

// DirsOf returns the folders a run named name has: its own, and under v1
// those a runtime made for it in the other controllers' hierarchies.
func (c *Hierarchy) DirsOf(name string) map[string]string {
	dirs := c.othersOf(name)
	for ctl, parent := range c.parent {
		dir := filepath.Join(parent, name)
		if _, err := os.Stat(dir); err == nil {
			dirs[ctl] = dir
		}
	}
	return dirs
}

// Disabled is a hierarchy that makes nothing, for a backend whose cgroups
// are turned off; why says so in Missing.
func Disabled(why string) *Hierarchy {
	return &Hierarchy{parent: map[string]string{}, others: map[string]string{}, Missing: []string{why}}
}

// V2 reports whether the group is on the unified hierarchy.
func (j *Group) V2() bool { return j != nil && j.c.V2 }

// HitMemoryLimit reports whether the run's memory use reached its limit
// (v1 memory.failcnt, v2 memory.events "max"), which with a kill means
// the kernel killed for memory in a folder below the run's.
func (j *Group) HitMemoryLimit() bool {
	if j == nil {
		return false
	}
	dir, ok := j.Dirs["memory"]
	if !ok {
		return false
	}
	if j.c.V2 {
		data, _ := os.ReadFile(filepath.Join(dir, "memory.events"))
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "max" && f[1] != "0" {
				return true
			}
		}
		return false
	}
	data, _ := os.ReadFile(filepath.Join(dir, "memory.failcnt"))
	n := strings.TrimSpace(string(data))
	return n != "" && n != "0"
}

// RemoveStale removes the empty folders of the run name that are older
// than age: leftovers of a process that ended. A younger one may be a run
// of another process of the same owner in its setup (not yet joined).
func (c *Hierarchy) RemoveStale(name string, age time.Duration) {
	for ctl, dir := range c.DirsOf(name) {
		if st, err := os.Stat(dir); err == nil && time.Since(st.ModTime()) > age {
			RemoveDirs(c.V2, map[string]string{ctl: dir}, 0)
		}
	}
}

// StaleAge is how old an empty run folder must be before a sweep takes
// it for a leftover.
const StaleAge = time.Minute

// Close removes the owner's folder in each hierarchy when it is empty,
// then the Name folder above it when no other owner's folder is left in
// it, and returns the folders it removed. A folder that still holds a run
// (of this process or of another of the same owner) or another owner's
// folder stays: the kernel refuses to remove a cgroup with folders or
// processes in it (EBUSY), and that refusal is not an error. The error
// joins the unexpected ones. Nothing else is ever removed, and the
// hierarchy may be used again: Create makes the folders again.
func (c *Hierarchy) Close() (removed []string, err error) {
	var errs []error
	for _, o := range c.owned {
		for i, dir := range o {
			rerr := os.Remove(dir)
			if rerr == nil {
				removed = append(removed, dir)
				continue
			}
			// Busy or not empty: a run, or another owner, is in it. Not
			// there: never made, or removed already. The Name folder of a
			// hierarchy delegated to an unprivileged server is in one it
			// may not change.
			expected := errors.Is(rerr, syscall.EBUSY) || errors.Is(rerr, syscall.ENOTEMPTY) || errors.Is(rerr, syscall.EEXIST) ||
				errors.Is(rerr, os.ErrNotExist) || (i == 1 && errors.Is(rerr, os.ErrPermission))
			if !expected {
				errs = append(errs, fmt.Errorf("removing the empty cgroup folder %s: %w; remove it by hand (rmdir) once no run is in it", dir, rerr))
			}
			// The Name folder is left alone while the owner's stays.
			if i == 0 && !errors.Is(rerr, os.ErrNotExist) {
				break
			}
		}
	}
	return removed, errors.Join(errs...)
}

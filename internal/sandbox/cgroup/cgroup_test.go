package cgroup_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/cgroup"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

// root is where the host mounts its cgroup hierarchies.
const root = "/sys/fs/cgroup"

var seq atomic.Int64

// names returns a Name folder and an owner of this test alone, so that
// test runs in parallel on one host never share them, and removes what a
// failing test leaves behind.
func names(t *testing.T) (name, owner string) {
	name = fmt.Sprintf("skills-mcp-cgtest-%d-%d", os.Getpid(), seq.Add(1))
	owner = "owner-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() {
		ms, _ := filepath.Glob(filepath.Join(root, "*", name))
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			ms = append(ms, filepath.Join(root, name))
		}
		for _, m := range ms {
			var dirs []string
			filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			slices.Reverse(dirs)
			for _, d := range dirs {
				os.Remove(d)
			}
		}
	})
	return name, owner
}

// detect is cgroup.Detect, skipped loudly (failed under CI=true) where
// this process may not make cgroups.
func detect(t *testing.T, name, owner string) *cgroup.Hierarchy {
	t.Helper()
	h := cgroup.Detect(root, name, owner)
	if len(h.Enforced) == 0 {
		h.Close()
		sandboxtest.Need(t, "a writable cgroup hierarchy (run as root)", errors.New(strings.Join(h.Missing, "; ")))
	}
	return h
}

// sleeper starts a process for a test and stops it when the test ends.
func sleeper(t *testing.T) *exec.Cmd {
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// join moves pid into every folder of g (v1 and v2 alike: the test's
// process is not cloned into it).
func join(t *testing.T, g *cgroup.Group, pid int) {
	t.Helper()
	for _, dir := range g.Dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// folders returns the owner's folders and the Name folders above the
// group's.
func folders(g *cgroup.Group) (owners, names []string) {
	for _, dir := range g.Dirs {
		owners = append(owners, filepath.Dir(dir))
		names = append(names, filepath.Dir(filepath.Dir(dir)))
	}
	slices.Sort(owners)
	slices.Sort(names)
	return slices.Compact(owners), slices.Compact(names)
}

func exist(t *testing.T, want bool, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_, err := os.Stat(d)
		if got := err == nil; got != want {
			t.Errorf("%s exists: %v, want %v (%v)", d, got, want, err)
		}
	}
}

func TestCloseRemovesTheOwnersEmptyFolders(t *testing.T) {
	name, owner := names(t)
	h := detect(t, name, owner)
	g, err := h.Create("run-1", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	owners, nameDirs := folders(g)
	p := sleeper(t)
	join(t, g, p.Process.Pid)
	p.Process.Kill()
	p.Wait()
	if err := g.Remove(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	exist(t, true, append(owners, nameDirs...)...)

	removed, err := h.Close()
	if err != nil {
		t.Fatal(err)
	}
	exist(t, false, append(owners, nameDirs...)...)
	for _, d := range append(owners, nameDirs...) {
		if !slices.Contains(removed, d) {
			t.Errorf("Close removed %v, not %s", removed, d)
		}
	}

	// The hierarchy is used again after Close: a run makes the folders
	// again, and a second Close removes them again.
	g, err = h.Create("run-2", sandbox.DefaultLimits)
	if err != nil {
		t.Fatalf("a run after Close: %v", err)
	}
	if err := g.Remove(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Close(); err != nil {
		t.Fatal(err)
	}
	exist(t, false, append(owners, nameDirs...)...)
}

func TestCloseKeepsAFolderARunIsIn(t *testing.T) {
	name, owner := names(t)
	// Two hierarchies of one owner: two processes of it, or two backends.
	h1, h2 := detect(t, name, owner), detect(t, name, owner)
	g1, err := h1.Create("run-a", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := h2.Create("run-b", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	p := sleeper(t)
	join(t, g2, p.Process.Pid)
	owners, nameDirs := folders(g1)
	if err := g1.Remove(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	removed, err := h1.Close()
	if err != nil || len(removed) != 0 {
		t.Fatalf("Close with another run of the owner in progress: removed %v, %v", removed, err)
	}
	exist(t, true, append(owners, nameDirs...)...)
	for _, dir := range g2.Dirs {
		exist(t, true, dir)
	}
	if pids := cgroup.ProcsIn(g2.Dirs); !slices.Contains(pids, p.Process.Pid) {
		t.Fatalf("the live run's cgroups hold %v, not its process %d", pids, p.Process.Pid)
	}

	// Once that run is over, its hierarchy's Close takes the folders.
	p.Process.Kill()
	p.Wait()
	if err := g2.Remove(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.Close(); err != nil {
		t.Fatal(err)
	}
	exist(t, false, append(owners, nameDirs...)...)
}

func TestCloseLeavesAnotherOwnersFolders(t *testing.T) {
	name, owner := names(t)
	h, other := detect(t, name, owner), detect(t, name, owner+"-other")
	g, err := h.Create("run", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	og, err := other.Create("run", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	owners, nameDirs := folders(g)
	others, _ := folders(og)
	g.Remove(10 * time.Second)
	if _, err := h.Close(); err != nil {
		t.Fatal(err)
	}
	exist(t, false, owners...)
	exist(t, true, append(nameDirs, others...)...)
	for _, dir := range og.Dirs {
		exist(t, true, dir)
	}
	og.Remove(10 * time.Second)
	if _, err := other.Close(); err != nil {
		t.Fatal(err)
	}
	exist(t, false, append(nameDirs, others...)...)
}

func TestRemoveTakesARuntimesFoldersInOtherHierarchies(t *testing.T) {
	name, owner := names(t)
	h := detect(t, name, owner)
	if h.V2 {
		t.Skip("one hierarchy under cgroup v2: there are no others")
	}
	// runsc makes a run's folders by its path in every hierarchy; the
	// blkio one stands for them.
	other := filepath.Join(root, "blkio", name, owner, "run", "runsc")
	if err := os.MkdirAll(other, 0o755); err != nil {
		sandboxtest.Need(t, "a cgroup v1 blkio hierarchy", err)
	}
	g, err := h.Create("run", sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if dirs := h.DirsOf("run"); dirs["blkio"] != filepath.Dir(other) {
		t.Fatalf("DirsOf lists %v, not the run's blkio folder", dirs)
	}
	if err := g.Remove(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	exist(t, false, filepath.Dir(other))
	if _, err := h.Close(); err != nil {
		t.Fatal(err)
	}
	exist(t, false, filepath.Join(root, "blkio", name))
}

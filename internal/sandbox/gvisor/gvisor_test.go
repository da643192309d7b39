package gvisor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/gvisor"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

// owner is this test process's owner name (inherited by the crash test's
// child server), so parallel test runs on one host never see each
// other's sandboxes.
var owner string

const testCgroup = "skills-mcp-gvisor-test"

func opts() *gvisor.Options {
	return &gvisor.Options{CgroupName: testCgroup, Owner: owner, StateRoot: filepath.Join(os.TempDir(), "skills-mcp-runsc-test")}
}

func TestMain(m *testing.M) {
	owner = os.Getenv("SANDBOXTEST_OWNER")
	if owner == "" {
		owner = fmt.Sprintf("test-%d", os.Getpid())
		os.Setenv("SANDBOXTEST_OWNER", owner)
	}
	code := m.Run()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	for _, ctl := range []string{"memory", "pids", "cpu"} {
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, testCgroup, owner))
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, testCgroup))
	}
	os.Remove(filepath.Join("/sys/fs/cgroup", testCgroup, owner))
	os.Remove(filepath.Join("/sys/fs/cgroup", testCgroup))
	os.RemoveAll(filepath.Join(opts().StateRoot, owner))
	os.Exit(code)
}

func needRunsc(t testing.TB) {
	_, err := exec.LookPath("runsc")
	if err == nil && os.Geteuid() != 0 {
		err = fmt.Errorf("runsc needs root here")
	}
	sandboxtest.Need(t, "gVisor (runsc)", err)
}

func TestIsolation(t *testing.T) {
	needRunsc(t)
	sandboxtest.Run(t, gvisor.New(opts()), sandboxtest.Options{Prefix: "gvt-", Restarted: func() sandbox.Executor { return gvisor.New(opts()) }})
}

func TestMissingBinaryIsRefused(t *testing.T) {
	x := gvisor.New(&gvisor.Options{Path: "/nonexistent/runsc"})
	if _, err := x.Check(context.Background()); err == nil {
		t.Fatal("Check passed without a runsc binary")
	}
	if _, _, err := sandbox.Select(context.Background(), "gvisor", x); err == nil {
		t.Fatal("--sandbox gvisor was selected without runsc")
	}
}

func BenchmarkRunPython(b *testing.B) {
	needRunsc(b)
	sandboxtest.Bench(b, gvisor.New(opts()), sandboxtest.Options{})
}

func TestCrashServer(t *testing.T) {
	sandboxtest.CrashServer(t, gvisor.New(opts()), sandboxtest.Options{Prefix: "gvc-"})
}

func TestCrashRecovery(t *testing.T) {
	needRunsc(t)
	sandboxtest.Crash(t, gvisor.New(opts()), sandboxtest.Options{Prefix: "gvc-"}, "TestCrashServer")
}

// cgroupFolders lists the folders named name in each cgroup hierarchy of
// the host, and below them.
func cgroupFolders(name string) []string {
	var out []string
	ms, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", name))
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", name)); err == nil {
		ms = append(ms, filepath.Join("/sys/fs/cgroup", name))
	}
	for _, m := range ms {
		filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

func TestCloseLeavesNoCgroupFolders(t *testing.T) {
	needRunsc(t)
	// A Name folder of this test's own. runsc makes a run's folders in
	// every hierarchy (blkio, cpuset, freezer...), not only in those the
	// limits are in: a run's end and Close take them all.
	o := opts()
	o.CgroupName = fmt.Sprintf("%s-close-%d", testCgroup, os.Getpid())
	x := gvisor.New(o)
	t.Cleanup(func() {
		x.Close()
		// What a failing test left, the deepest first.
		left := cgroupFolders(o.CgroupName)
		slices.Reverse(left)
		for _, d := range left {
			os.Remove(d)
		}
	})
	if _, err := x.Check(context.Background()); err != nil {
		sandboxtest.Need(t, "a gVisor sandbox", err)
	}
	if len(cgroupFolders(o.CgroupName)) == 0 {
		t.Fatal("a run made no cgroup folders")
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if left := cgroupFolders(o.CgroupName); len(left) > 0 {
		t.Fatalf("Close left %v", left)
	}
}

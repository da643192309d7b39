package bwrap_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/bwrap"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

func needBwrap(t testing.TB) {
	_, err := exec.LookPath("bwrap")
	sandboxtest.Need(t, "bubblewrap (bwrap)", err)
}

// testCgroup names the tests' cgroup folder, removed when they end.
const testCgroup = "skills-mcp-test"

func TestMain(m *testing.M) {
	code := m.Run()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	for _, ctl := range []string{"memory", "pids", "cpu"} {
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, testCgroup))
	}
	os.Remove(filepath.Join("/sys/fs/cgroup", testCgroup))
	os.Exit(code)
}

func TestIsolation(t *testing.T) {
	needBwrap(t)
	opts := &bwrap.Options{CgroupName: testCgroup}
	sandboxtest.Run(t, bwrap.New(opts), sandboxtest.Options{Prefix: "bwt-", Restarted: func() sandbox.Executor { return bwrap.New(opts) }})
}

func TestIsolationWithoutCgroups(t *testing.T) {
	needBwrap(t)
	// The rlimit-only path, as on a host without usable cgroups.
	sandboxtest.Run(t, bwrap.New(&bwrap.Options{NoCgroups: true}), sandboxtest.Options{Prefix: "bwn-"})
}

func TestCheckSaysWhatIsEnforced(t *testing.T) {
	needBwrap(t)
	enf, err := bwrap.New(&bwrap.Options{CgroupName: testCgroup}).Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if enf.Backend != "bwrap" || len(enf.Limits) == 0 {
		t.Fatalf("Check: %+v", enf)
	}
}

func TestMissingBinaryIsRefused(t *testing.T) {
	x := bwrap.New(&bwrap.Options{Path: "/nonexistent/bwrap"})
	if _, err := x.Check(context.Background()); err == nil {
		t.Fatal("Check passed without a bwrap binary")
	}
}

func BenchmarkRunPython(b *testing.B) {
	needBwrap(b)
	sandboxtest.Bench(b, bwrap.New(&bwrap.Options{CgroupName: testCgroup}), sandboxtest.Options{})
}

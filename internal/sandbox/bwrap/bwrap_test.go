package bwrap_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// owner is this test process's owner name (inherited by the crash test's
// child server), so parallel test runs on one host never see each
// other's sandboxes.
var owner string

// opts are the options of the tests' backends.
func opts() *bwrap.Options { return &bwrap.Options{CgroupName: testCgroup, Owner: owner} }

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
	os.Exit(code)
}

func TestIsolation(t *testing.T) {
	needBwrap(t)
	sandboxtest.Run(t, bwrap.New(opts()), sandboxtest.Options{Prefix: "bwt-", Restarted: func() sandbox.Executor { return bwrap.New(opts()) }})
}

func TestIsolationWithoutCgroups(t *testing.T) {
	needBwrap(t)
	// The rlimit-only path, as on a host without usable cgroups.
	sandboxtest.Run(t, bwrap.New(&bwrap.Options{NoCgroups: true}), sandboxtest.Options{Prefix: "bwn-"})
}

func TestCheckSaysWhatIsEnforced(t *testing.T) {
	needBwrap(t)
	enf, err := bwrap.New(opts()).Check(context.Background())
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
	sandboxtest.Bench(b, bwrap.New(opts()), sandboxtest.Options{})
}

func TestUnreachableMountIsRefused(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("the sandbox runs as the server's own uid, which reaches its folders")
	}
	dir := t.TempDir() // 0700, root's
	os.Chmod(filepath.Dir(dir), 0o700)
	x := bwrap.New(opts())
	_, err := x.Run(context.Background(), sandbox.Spec{Name: "unreachable", Argv: []string{"/usr/bin/true"},
		Mounts: []sandbox.Mount{{Host: dir, Target: "/work", Writable: true}}})
	if err == nil || !strings.Contains(err.Error(), "o+x") {
		t.Fatalf("want a refusal that says how to fix it, got %v", err)
	}
}

func TestNetworkWhenAllowed(t *testing.T) {
	needBwrap(t)
	// The negative cases are only meaningful if the positive one works.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	x := bwrap.New(opts())
	res, err := x.Run(context.Background(), sandbox.Spec{Name: "network-on", Network: true,
		Argv: []string{sandboxtest.Bash, "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED", ln.Addr().(*net.TCPAddr).Port)}})
	if err != nil || string(res.Stdout) != "CONNECTED\n" {
		t.Fatalf("with Network the host's loopback is reachable: %+v %v", res, err)
	}
}

func TestRootFSWithoutPrlimitIsRefused(t *testing.T) {
	needBwrap(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755)
	x := bwrap.New(opts())
	_, err := x.Run(context.Background(), sandbox.Spec{Name: "rootfs", RootFS: root, Argv: []string{"/usr/bin/true"}})
	if err == nil || !strings.Contains(err.Error(), "prlimit") {
		t.Fatalf("want a refusal naming prlimit, got %v", err)
	}
}

func TestRootFS(t *testing.T) {
	needBwrap(t)
	// An administrator's tree: here one whose /usr is the host's.
	root := t.TempDir()
	os.Chmod(filepath.Dir(root), 0o711)
	if err := os.Symlink("/usr", filepath.Join(root, "usr")); err != nil {
		t.Fatal(err)
	}
	x := bwrap.New(opts())
	res, err := x.Run(context.Background(), sandbox.Spec{Name: "rootfs-ok", RootFS: root, Argv: []string{sandboxtest.Python, "-c", "print('ok')"}})
	if err != nil || string(res.Stdout) != "ok\n" {
		t.Fatalf("run on a root tree: %+v %v", res, err)
	}
}

func TestCrashServer(t *testing.T) {
	sandboxtest.CrashServer(t, bwrap.New(opts()), sandboxtest.Options{Prefix: "bwc-"})
}

func TestCrashRecovery(t *testing.T) {
	needBwrap(t)
	sandboxtest.Crash(t, bwrap.New(opts()), sandboxtest.Options{Prefix: "bwc-"}, "TestCrashServer")
}

func TestCloseLeavesNoCgroupFolders(t *testing.T) {
	needBwrap(t)
	// A Name folder of this test's own: no other test's owner is in it.
	name := fmt.Sprintf("%s-close-%d", testCgroup, os.Getpid())
	x := bwrap.New(&bwrap.Options{CgroupName: name, Owner: owner})
	t.Cleanup(func() {
		x.Close()
		// What a failing test left, the deepest first.
		left := sandboxtest.CgroupFolders(name)
		slices.Reverse(left)
		for _, d := range left {
			os.Remove(d)
		}
	})
	enf, err := x.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(enf.Limits, "\n"), "cgroup") {
		sandboxtest.Need(t, "cgroups for bubblewrap's runs (run as root)", fmt.Errorf("missing: %s", strings.Join(enf.Missing, "; ")))
	}
	if len(sandboxtest.CgroupFolders(name)) == 0 {
		t.Fatal("a run made no cgroup folders")
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if left := sandboxtest.CgroupFolders(name); len(left) > 0 {
		t.Fatalf("Close left %v", left)
	}
	// The executor runs again after Close, and closes clean again.
	if _, err := x.Check(context.Background()); err != nil {
		t.Fatalf("a run after Close: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if left := sandboxtest.CgroupFolders(name); len(left) > 0 {
		t.Fatalf("the second Close left %v", left)
	}
}

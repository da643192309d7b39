package gvisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

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
	os.Remove(opts().StateRoot) // when no other test process's is in it
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
		left := sandboxtest.CgroupFolders(o.CgroupName)
		slices.Reverse(left)
		for _, d := range left {
			os.Remove(d)
		}
	})
	if _, err := x.Check(context.Background()); err != nil {
		sandboxtest.Need(t, "a gVisor sandbox", err)
	}
	if len(sandboxtest.CgroupFolders(o.CgroupName)) == 0 {
		t.Fatal("a run made no cgroup folders")
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if left := sandboxtest.CgroupFolders(o.CgroupName); len(left) > 0 {
		t.Fatalf("Close left %v", left)
	}
}

// stateOpts are the options of a test that looks at the runsc folders: a
// state root and a cgroup name of its own, so no other test's runs are
// in them. Its cleanup removes what a failing test left.
func stateOpts(t *testing.T, tag string) *gvisor.Options {
	o := opts()
	o.CgroupName = fmt.Sprintf("%s-%s-%d", testCgroup, tag, os.Getpid())
	o.StateRoot = filepath.Join(t.TempDir(), "runsc")
	t.Cleanup(func() {
		for _, c := range listContainers(t, filepath.Join(o.StateRoot, owner, "state")) {
			exec.Command("runsc", "--root", filepath.Join(o.StateRoot, owner, "state"), "delete", "--force", c.ID).Run()
		}
		for _, name := range []string{o.CgroupName, o.CgroupName + "-planted"} {
			left := sandboxtest.CgroupFolders(name)
			slices.Reverse(left)
			for _, d := range left {
				os.Remove(d)
			}
		}
	})
	return o
}

type runscContainer struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Pid    int    `json:"pid"`
}

// listContainers is what runsc keeps state of in the folder state.
func listContainers(t *testing.T, state string) []runscContainer {
	t.Helper()
	if _, err := os.Stat(state); err != nil {
		return nil
	}
	out, err := exec.Command("runsc", "--root", state, "list", "-format=json").Output()
	if err != nil {
		t.Fatalf("runsc --root %s list: %v", state, err)
	}
	var cs []runscContainer
	if err := json.Unmarshal(out, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// plantDeadContainer leaves in state what a run killed during its start
// leaves: a container runsc keeps the state of ("created" or "stopped"),
// whose sandbox is gone. Its cgroups are outside the owner's folder, as those of a run
// whose folders were removed.
func plantDeadContainer(t *testing.T, o *gvisor.Options, name string) {
	t.Helper()
	bundle := t.TempDir()
	os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755)
	spec := map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"user": map[string]any{"uid": 65534, "gid": 65534},
			"args": []string{"/usr/bin/true"}, "cwd": "/",
		},
		"root": map[string]any{"path": "/", "readonly": true},
		"linux": map[string]any{
			"namespaces":  []map[string]string{{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}},
			"cgroupsPath": "/" + o.CgroupName + "-planted/" + name,
		},
	}
	data, _ := json.Marshal(spec)
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(o.StateRoot, owner, "state")
	// The sandbox keeps the streams it is given: a file, not a pipe
	// that would be read until it ends.
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("runsc", "--root", state, "--network=none", "create", "--bundle", bundle, name)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		msg, _ := os.ReadFile(out.Name())
		t.Fatalf("runsc create: %v: %s", err, msg)
	}
	var pid int
	for _, c := range listContainers(t, state) {
		if c.ID == name {
			pid = c.Pid
		}
	}
	if pid <= 0 {
		t.Fatalf("runsc lists no sandbox process of %s", name)
	}
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Gone once the kernel has reaped it.
	for unix.Kill(pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if cs := listContainers(t, state); len(cs) != 1 || cs[0].ID != name {
		t.Fatalf("runsc lists %+v, want %s alone", cs, name)
	}
}

// plantedCgroups lists the cgroup folders of the planted container name
// (runsc deletes them with it).
func plantedCgroups(o *gvisor.Options, name string) []string {
	var out []string
	for _, d := range sandboxtest.CgroupFolders(o.CgroupName + "-planted") {
		if filepath.Base(d) == name {
			out = append(out, d)
		}
	}
	return out
}

func TestRunningSweepsDeadContainers(t *testing.T) {
	needRunsc(t)
	o := stateOpts(t, "sweep")
	x := gvisor.New(o)
	t.Cleanup(func() { x.Close() })
	plantDeadContainer(t, o, "gvs-dead")
	names, err := x.Running(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, "gvs-dead") {
		t.Fatalf("Running lists the dead container: %v", names)
	}
	if cs := listContainers(t, filepath.Join(o.StateRoot, owner, "state")); len(cs) > 0 {
		t.Fatalf("the sweep left runsc's state of %+v", cs)
	}
	if left := plantedCgroups(o, "gvs-dead"); len(left) > 0 {
		t.Fatalf("the dead container was not deleted by runsc: its cgroups %v are left", left)
	}
}

func TestCloseRemovesTheOwnersState(t *testing.T) {
	needRunsc(t)
	o := stateOpts(t, "state")
	x := gvisor.New(o)
	t.Cleanup(func() { x.Close() })
	if _, err := x.Check(context.Background()); err != nil {
		sandboxtest.Need(t, "a gVisor sandbox", err)
	}
	ownDir := filepath.Join(o.StateRoot, owner)
	if _, err := os.Stat(filepath.Join(ownDir, "state")); err != nil {
		t.Fatalf("a run made no runsc state folder: %v", err)
	}
	// What runs that are over left: a dead container and an old bundle
	// runsc knows nothing of. Beside them, another owner's folder.
	plantDeadContainer(t, o, "gvs-dead")
	old := filepath.Join(ownDir, "bundles", "gvs-old")
	if err := os.MkdirAll(filepath.Join(old, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)
	other := filepath.Join(o.StateRoot, "another-owner", "state")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}

	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(ownDir); !errors.Is(err, fs.ErrNotExist) {
		left, _ := filepath.Glob(filepath.Join(ownDir, "*", "*"))
		t.Fatalf("Close left the owner's runsc folder (%v): %v", err, left)
	}
	if left := plantedCgroups(o, "gvs-dead"); len(left) > 0 {
		t.Fatalf("the dead container was not deleted by runsc: its cgroups %v are left", left)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("Close removed another owner's folder: %v", err)
	}
	// Once no other owner's is left, the state root goes too.
	os.RemoveAll(filepath.Join(o.StateRoot, "another-owner"))
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(o.StateRoot); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Close left the empty state root (%v)", err)
	}
}

func TestCloseKeepsALiveRunOfTheSameOwner(t *testing.T) {
	needRunsc(t)
	o := stateOpts(t, "live")
	first, second := gvisor.New(o), gvisor.New(o)
	t.Cleanup(func() { first.Close(); second.Close() })
	if _, err := first.Check(context.Background()); err != nil {
		sandboxtest.Need(t, "a gVisor sandbox", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ended struct {
		res sandbox.Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := second.Run(ctx, sandbox.Spec{Name: "gvs-live", Argv: []string{"/usr/bin/sleep", "600"}, Limits: sandbox.Limits{Wall: 10 * time.Minute}})
		done <- ended{res, err}
	}()
	state := filepath.Join(o.StateRoot, owner, "state")
	running := func() bool {
		for _, c := range listContainers(t, state) {
			if c.ID == "gvs-live" && c.Status == "running" {
				return true
			}
		}
		return false
	}
	for !running() {
		select {
		case e := <-done:
			t.Fatalf("the run ended before it was seen running: %+v, %v", e.res, e.err)
		case <-time.After(20 * time.Millisecond):
		}
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if !running() {
		t.Fatalf("after the first executor's Close, runsc lists %+v: the second's run is not running", listContainers(t, state))
	}
	if _, err := os.Stat(filepath.Join(o.StateRoot, owner, "bundles", "gvs-live", "config.json")); err != nil {
		t.Fatalf("the first executor's Close removed the second's bundle: %v", err)
	}
	cancel()
	e := <-done
	if e.err != nil || e.res.Reason != sandbox.ReasonKilled {
		t.Fatalf("the run ended with %+v, %v; want killed on request", e.res, e.err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(o.StateRoot); !errors.Is(err, fs.ErrNotExist) {
		left, _ := filepath.Glob(filepath.Join(o.StateRoot, "*", "*", "*"))
		t.Fatalf("the last Close left the state root (%v): %v", err, left)
	}
}

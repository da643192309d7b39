package sandboxtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// crashEnv carries the job folder to the server process Crash starts.
const crashEnv = "SANDBOXTEST_CRASH_DIR"

// CrashServer is the body of the test that Crash runs in a child process
// (the "server"): outside that child it returns at once. In the child it
// starts a run whose double-forked daemon keeps writing a marker, and
// blocks until the parent kills the process with SIGKILL.
func CrashServer(t *testing.T, x sandbox.Executor, o Options) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		return
	}
	j := job{pkg: filepath.Join(dir, "package"), work: filepath.Join(dir, "work")}
	spec := j.spec(o, "crash", Bash, "/package/scripts/d.sh")
	spec.Limits.Wall = 5 * time.Minute
	x.Run(context.Background(), spec) // never returns: the parent kills us
	t.Fatal("the crash run ended by itself")
}

// Crash is the kill -9 recovery run: it starts the test named serverTest
// (which calls CrashServer) as a child process, waits until its run's
// daemon writes, kills the child with SIGKILL mid-run, and then, as a
// restarted server would, uses x (a fresh backend) to reconcile: the run is
// either gone with its server or listed by Running; Kill must stop it
// (the daemon's marker stops growing), Running must no longer list it, and
// a new run of the same name must start (nothing left behind).
func Crash(t *testing.T, x sandbox.Executor, o Options, serverTest string) {
	j := newJob(t, map[string]string{"d.sh": `( setsid bash -c 'while :; do date +%s%N >> /work/marker; sleep 0.05; done' & ) &
sleep 300
`})
	cmd := exec.Command(os.Args[0], "-test.run=^"+serverTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+filepath.Dir(j.work))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(j.work, "marker")
	waitFor(t, "the crash run's daemon to write", func() bool {
		b, _ := os.ReadFile(marker)
		return len(b) > 0
	})
	t.Log("1. the server runs a job whose double-forked daemon writes a marker every 50 ms")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	t.Logf("2. the server was killed with SIGKILL mid-run (its output: %q)", out.String())

	name := o.Prefix + "crash"
	names, err := x.Running(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3. a restarted backend's Running lists %q", names)
	if err := x.Kill(context.Background(), name); err != nil {
		t.Fatalf("Kill after the restart: %v", err)
	}
	t.Log("4. Kill of the unfinished run returned: confirmed gone")
	first, _ := os.ReadFile(marker)
	for range 6 {
		time.Sleep(50 * time.Millisecond)
		if now, _ := os.ReadFile(marker); !bytes.Equal(now, first) {
			t.Fatal("the daemon still writes after the restarted backend's Kill")
		}
	}
	if names, _ := x.Running(context.Background()); slices.Contains(names, name) {
		t.Fatalf("Running still lists %s: %q", name, names)
	}
	t.Log("5. the marker no longer grows and Running no longer lists the run")
	res, err := x.Run(context.Background(), j.spec(o, "crash", Bash, "-c", "echo again"))
	if err != nil || string(res.Stdout) != "again\n" {
		t.Fatalf("a new run of the same name: %+v %v", res, err)
	}
	t.Log("6. a new run of the same name starts: nothing was left behind")
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

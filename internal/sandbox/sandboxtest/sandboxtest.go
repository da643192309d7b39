// Package sandboxtest is the isolation suite every real sandbox backend
// passes: one script per property (network, filesystem, environment,
// memory, processes, file size, CPU time, wall time, output, work-tree
// quota, kills), each run for real in the backend under test. Backends'
// tests call Run:
//
//	func TestIsolation(t *testing.T) { sandboxtest.Run(t, bwrap.New(nil), sandboxtest.Options{}) }
//
// The scripts run with the host's /usr/bin/python3, /usr/bin/node and
// /usr/bin/bash (never a PATH shim under a home folder the sandbox cannot
// see).
package sandboxtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Options adapt the suite to a backend.
type Options struct {
	// Image is Spec.Image for every run (Docker).
	Image string
	// Prefix starts every run's name, so suites of several packages never
	// share one.
	Prefix string
	// Restarted, when set, returns a second backend configured like the
	// first, as a restarted server would make it: it must find the first
	// one's run through Running and stop it with Kill.
	Restarted func() sandbox.Executor
	// KnownGaps names escape attempts this backend is known not to hold,
	// each with why: the run records them as reached instead of failing.
	KnownGaps map[string]string
}

// The interpreters of the scripts.
const (
	Python = "/usr/bin/python3"
	Node   = "/usr/bin/node"
	Bash   = "/usr/bin/bash"
)

// job is one run's folders on the host.
type job struct {
	pkg, work string
}

func newJob(t *testing.T, scripts map[string]string) job {
	t.Helper()
	dir := t.TempDir()
	// The sandbox user of a root server may walk to the job's folders,
	// as it may to the hub's (see DESIGN.md, "Sandboxes").
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	j := job{pkg: filepath.Join(dir, "package"), work: filepath.Join(dir, "work")}
	for _, d := range []string{filepath.Join(j.pkg, "scripts"), j.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(j.pkg, "scripts", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

func (j job) spec(o Options, name string, argv ...string) sandbox.Spec {
	return sandbox.Spec{
		Name:  o.Prefix + name,
		Argv:  argv,
		Dir:   "/work",
		Env:   []string{"PATH=/usr/bin:/bin", "HOME=/work", "LANG=C.UTF-8"},
		Image: o.Image,
		Mounts: []sandbox.Mount{
			{Host: j.pkg, Target: "/package"},
			{Host: j.work, Target: "/work", Writable: true},
		},
		Limits: sandbox.Limits{Wall: 20 * time.Second},
	}
}

func run(t *testing.T, x sandbox.Executor, spec sandbox.Spec) sandbox.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := x.Run(ctx, spec)
	if err != nil {
		t.Fatalf("run %s: %v", spec.Name, err)
	}
	t.Logf("%s: reason %s, exit %d %s, %v; stdout %q; stderr %q", spec.Name, res.Reason, res.ExitCode, res.Signal,
		res.Duration.Round(time.Millisecond), head(res.Stdout), head(res.Stderr))
	return res
}

func head(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func wantExit0(t *testing.T, res sandbox.Result) {
	t.Helper()
	if res.Reason != sandbox.ReasonExited || res.ExitCode != 0 {
		t.Fatalf("want a clean exit, got %s exit %d %s; stderr %q", res.Reason, res.ExitCode, res.Signal, res.Stderr)
	}
}

// secretEnv is set in the test process; no sandbox may see it.
const secretEnv = "SANDBOXTEST_SERVER_SECRET"

// Run runs the suite against x, which must pass its Check.
func Run(t *testing.T, x sandbox.Executor, o Options) {
	enf, err := x.Check(context.Background())
	if err != nil {
		t.Fatalf("%s: Check: %v", x.Name(), err)
	}
	t.Logf("%s enforces %q; missing %q", x.Name(), enf.Limits, enf.Missing)
	memory := slices.ContainsFunc(enf.Limits, func(s string) bool { return strings.HasPrefix(s, "memory:") })
	cpuTime := !slices.ContainsFunc(enf.Missing, func(s string) bool { return strings.HasPrefix(s, "cpu time:") })
	t.Setenv(secretEnv, "hunter2")

	// A listener on the host's loopback, which no sandbox may reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	other := newJob(t, nil) // another job's folders, which no sandbox may see
	if err := os.WriteFile(filepath.Join(other.work, "secret.txt"), []byte("other job"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A host abstract unix socket, which no sandbox may reach.
	abstract := fmt.Sprintf("skills-mcp-sandboxtest-%d", os.Getpid())
	uln, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uln.Close() })
	go func() {
		for {
			c, err := uln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	escapes := newEscapeTable(x.Name())
	t.Cleanup(func() { escapes.check(t) })

	// The table of isolation properties (PWD and a container's HOSTNAME
	// are the only variables a backend may add): each case gets its own job.
	cases := []struct {
		name    string
		scripts map[string]string
		argv    []string
		limits  sandbox.Limits
		skip    string
		// escape names the escape attempt the case is, a row of the
		// README's isolation table; empty: a limit, not an escape.
		escape string
		check  func(t *testing.T, j job, res sandbox.Result)
	}{
		{
			name:   "loopback-python",
			escape: "reach a host loopback listener (the hub's API)",
			scripts: map[string]string{"c.py": fmt.Sprintf(`import socket
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", %d)); print("CONNECTED")
except OSError as e:
    print("BLOCKED", e.errno)
`, port)},
			argv: []string{Python, "/package/scripts/c.py"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.HasPrefix(res.Stdout, []byte("BLOCKED")) {
					t.Errorf("the host's loopback listener was reachable: %q", res.Stdout)
				}
			},
		},
		{
			name: "loopback-bash",
			scripts: map[string]string{"c.sh": fmt.Sprintf(`if exec 3<>/dev/tcp/127.0.0.1/%d; then echo CONNECTED; else echo BLOCKED; fi
`, port)},
			argv: []string{Bash, "/package/scripts/c.sh"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if !bytes.HasPrefix(res.Stdout, []byte("BLOCKED")) {
					t.Errorf("the host's loopback listener was reachable: %q", res.Stdout)
				}
			},
		},
		{
			name:   "other-addresses-node",
			escape: "reach other addresses, DNS, UDP",
			scripts: map[string]string{"n.js": `const net = require("net"), dns = require("dns"), dgram = require("dgram");
const out = [];
function tcp(host, port) {
  return new Promise(r => {
    const s = net.connect({host, port, timeout: 3000});
    s.on("connect", () => { out.push("CONNECTED " + host); s.destroy(); r(); });
    s.on("timeout", () => { out.push("timeout " + host); s.destroy(); r(); });
    s.on("error", e => { out.push("blocked " + host + " " + e.code); r(); });
  });
}
(async () => {
  await new Promise(r => dns.lookup("example.com", (e, a) => { out.push(e ? "noresolve " + e.code : "RESOLVED " + a); r(); }));
  await tcp("1.1.1.1", 80);
  await tcp("10.0.0.1", 80);
  await new Promise(r => { const u = dgram.createSocket("udp4"); u.send("x", 53, "1.1.1.1", e => { out.push(e ? "blocked udp " + e.code : "SENT udp"); u.close(); r(); }); });
  console.log(out.join("\n"));
})();
`},
			argv: []string{Node, "/package/scripts/n.js"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				for _, bad := range []string{"CONNECTED", "RESOLVED", "SENT"} {
					if bytes.Contains(res.Stdout, []byte(bad)) {
						t.Errorf("the sandbox reached the network (%s): %q", bad, res.Stdout)
					}
				}
				if bytes.Count(res.Stdout, []byte("\n")) < 3 {
					t.Errorf("the probe did not finish: %q", res.Stdout)
				}
			},
		},
		{
			name:    "write-package",
			escape:  "write outside /work (package, /usr, root)",
			scripts: map[string]string{"w.sh": "echo x > /package/new.txt && echo WROTE1; echo x >> /package/scripts/w.sh && echo WROTE2; echo x > /usr/new.txt && echo WROTE3; echo x > /new.txt && echo WROTE4; true\n"},
			argv:    []string{Bash, "/package/scripts/w.sh"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if bytes.Contains(res.Stdout, []byte("WROTE")) {
					t.Errorf("the sandbox wrote where it must not: %q", res.Stdout)
				}
				// EROFS, or EACCES where a backend checks permissions first.
				if !bytes.Contains(res.Stderr, []byte("Read-only file system")) && !bytes.Contains(res.Stderr, []byte("Permission denied")) {
					t.Errorf("want EROFS (or EACCES) for /package, got %q", res.Stderr)
				}
				if _, err := os.Stat(filepath.Join(j.pkg, "new.txt")); err == nil {
					t.Error("a file appeared in the package")
				}
			},
		},
		{
			name:   "host-folders-and-environment",
			escape: "read host files, other jobs' folders, the server's environment",
			scripts: map[string]string{"h.py": fmt.Sprintf(`import os, sys
leaks = []
for p in ["/root", "/home", %q, %q, "/var/run/docker.sock", "/run/docker.sock", "/etc/shadow", "/etc/passwd-"]:
    if os.path.exists(p): leaks.append(p)
if %q in os.environ: leaks.append("env")
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            if b%q in open("/proc/%%s/environ" %% pid, "rb").read(): leaks.append("proc env " + pid)
        except OSError: pass
print("LEAKS", leaks)
print("ENV", sorted(k for k in os.environ if k not in ("PWD", "HOSTNAME")))
print("UID", os.getuid())
`, other.work, filepath.Dir(other.work), secretEnv, secretEnv)},
			argv: []string{Python, "/package/scripts/h.py"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.Contains(res.Stdout, []byte("LEAKS []")) {
					t.Errorf("the sandbox sees the host: %q", res.Stdout)
				}
				if bytes.Contains(res.Stdout, []byte("UID 0\n")) {
					t.Errorf("the sandbox runs as uid 0: %q", res.Stdout)
				}
				if !bytes.Contains(res.Stdout, []byte("ENV ['HOME', 'LANG', 'PATH']")) {
					t.Errorf("the environment is not exactly the spec's: %q", res.Stdout)
				}
			},
		},
		{
			name:    "memory-python",
			escape:  "memory bomb",
			scripts: map[string]string{"m.py": "b = bytearray(400 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('ALLOCATED')\n"},
			argv:    []string{Python, "/package/scripts/m.py"},
			limits:  sandbox.Limits{Memory: 128 << 20},
			skip:    map[bool]string{false: "memory is not enforced by this backend here"}[memory],
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonMemory || bytes.Contains(res.Stdout, []byte("ALLOCATED")) {
					t.Errorf("want the run killed for memory, got %s exit %d: %q", res.Reason, res.ExitCode, res.Stdout)
				}
			},
		},
		{
			name:    "memory-node",
			scripts: map[string]string{"m.js": "const b = Buffer.alloc(400 << 20, 1); console.log('ALLOCATED', b.length);\n"},
			argv:    []string{Node, "/package/scripts/m.js"},
			limits:  sandbox.Limits{Memory: 128 << 20},
			skip:    map[bool]string{false: "memory is not enforced by this backend here"}[memory],
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonMemory || bytes.Contains(res.Stdout, []byte("ALLOCATED")) {
					t.Errorf("want the run killed for memory, got %s exit %d: %q", res.Reason, res.ExitCode, res.Stdout)
				}
			},
		},
		{
			name:   "fork-bomb",
			escape: "fork bomb",
			scripts: map[string]string{"f.py": `import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60); os._exit(0)
        n += 1
except OSError as e:
    print("CAPPED", n, e.errno, flush=True)
`},
			argv:   []string{Python, "/package/scripts/f.py"},
			limits: sandbox.Limits{Processes: 32},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				var n, errno int
				if _, err := fmt.Sscanf(string(res.Stdout), "CAPPED %d %d", &n, &errno); err != nil || n > 32 {
					t.Errorf("the fork bomb was not capped at 32 processes: %q", res.Stdout)
				}
				if res.Duration > 30*time.Second {
					t.Errorf("the sleeping children outlived the run (%v)", res.Duration)
				}
			},
		},
		{
			name:    "fork-bomb-bash",
			scripts: map[string]string{"b.sh": "b() { b | b & }; b\nwait\n"},
			argv:    []string{Bash, "/package/scripts/b.sh"},
			limits:  sandbox.Limits{Processes: 32, Wall: 2 * time.Second},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonTimeout && res.Reason != sandbox.ReasonExited {
					t.Errorf("want the bomb contained (exit or timeout), got %s", res.Reason)
				}
			},
		},
		{
			name: "file-size",
			scripts: map[string]string{"s.py": `try:
    with open("/work/big", "wb") as f:
        for i in range(4): f.write(b"x" * (1 << 20)); f.flush()
    print("WROTE")
except OSError as e:
    print("LIMITED", e.errno)
`},
			argv:   []string{Python, "/package/scripts/s.py"},
			limits: sandbox.Limits{FileSize: 1 << 20},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.HasPrefix(res.Stdout, []byte("LIMITED 27")) {
					t.Errorf("want EFBIG past 1 MiB, got %q", res.Stdout)
				}
				if st, err := os.Stat(filepath.Join(j.work, "big")); err != nil || st.Size() > 1<<20 {
					t.Errorf("the file passed 1 MiB: %v %v", st.Size(), err)
				}
			},
		},
		{
			name:    "cpu-time",
			scripts: map[string]string{"c.py": "while True: pass\n"},
			argv:    []string{Python, "/package/scripts/c.py"},
			limits:  sandbox.Limits{CPUTime: time.Second, Wall: 30 * time.Second},
			skip:    map[bool]string{false: "cpu time is not enforced by this backend (Enforced.Missing says so)"}[cpuTime],
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonExited || (res.Signal != "SIGKILL" && res.Signal != "SIGXCPU") {
					t.Errorf("want the busy loop killed by its CPU limit, got %s %s", res.Reason, res.Signal)
				}
				if res.Duration > 25*time.Second {
					t.Errorf("the CPU limit did not act before the wall limit (%v)", res.Duration)
				}
			},
		},
		{
			name: "wall-time-daemon",
			scripts: map[string]string{"d.sh": `( setsid bash -c 'while :; do date +%s%N >> /work/marker; sleep 0.05; done' & ) &
sleep 100
`},
			argv: []string{Bash, "/package/scripts/d.sh"},
			// Long enough for a slow backend (gVisor on a loaded host) to
			// start the daemon.
			limits: sandbox.Limits{Wall: 8 * time.Second},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonTimeout || res.ExitCode != -1 {
					t.Errorf("want a timeout, got %s exit %d", res.Reason, res.ExitCode)
				}
				marker := filepath.Join(j.work, "marker")
				first, err := os.ReadFile(marker)
				if err != nil || len(first) == 0 {
					t.Fatalf("the daemon never wrote its marker: %v", err)
				}
				// The daemon wrote every 50 ms; six periods without a
				// write show it is gone.
				for range 6 {
					time.Sleep(50 * time.Millisecond)
					now, _ := os.ReadFile(marker)
					if !bytes.Equal(now, first) {
						t.Fatal("the double-forked daemon still writes after the kill")
					}
				}
			},
		},
		{
			name:    "output-cut",
			escape:  "output bomb (5 MiB to each stream)",
			scripts: map[string]string{"o.py": "import sys\nsys.stdout.buffer.write(b'o' * (5 << 20))\nsys.stderr.buffer.write(b'e' * (5 << 20))\n"},
			argv:    []string{Python, "/package/scripts/o.py"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if len(res.Stdout) != 1<<20 || !res.StdoutCut || len(res.Stderr) != 1<<20 || !res.StderrCut {
					t.Errorf("want exactly 1 MiB of each stream, cut: stdout %d %v, stderr %d %v", len(res.Stdout), res.StdoutCut, len(res.Stderr), res.StderrCut)
				}
			},
		},
		{
			name: "work-quota",
			scripts: map[string]string{"q.py": `import time
with open("/work/grow", "wb") as f:
    for i in range(200):
        f.write(b"x" * (256 << 10)); f.flush(); time.sleep(0.02)
print("DONE")
`},
			argv:   []string{Python, "/package/scripts/q.py"},
			limits: sandbox.Limits{WorkTree: 2 << 20},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonQuota || bytes.Contains(res.Stdout, []byte("DONE")) {
					t.Errorf("want the run stopped at its work-tree quota, got %s %q", res.Reason, res.Stdout)
				}
			},
		},
		{
			name:    "work-files",
			scripts: map[string]string{"f.sh": "for i in $(seq 1 500); do : > /work/f$i; sleep 0.002; done; echo DONE\n"},
			argv:    []string{Bash, "/package/scripts/f.sh"},
			limits:  sandbox.Limits{WorkFiles: 50},
			check: func(t *testing.T, j job, res sandbox.Result) {
				if res.Reason != sandbox.ReasonQuota || bytes.Contains(res.Stdout, []byte("DONE")) {
					t.Errorf("want the run stopped at its file count, got %s %q", res.Reason, res.Stdout)
				}
			},
		},
		{
			name:   "abstract-unix-socket",
			escape: "connect to a host abstract unix socket",
			scripts: map[string]string{"u.py": fmt.Sprintf(`import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0%s"); print("CONNECTED")
except OSError as e:
    print("BLOCKED", e.errno)
`, abstract)},
			argv: []string{Python, "/package/scripts/u.py"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.HasPrefix(res.Stdout, []byte("BLOCKED")) {
					t.Errorf("the host's abstract socket was reachable: %q", res.Stdout)
				}
			},
		},
		{
			name:    "privileges",
			escape:  "become root (setuid(0), capabilities, setuid binaries)",
			scripts: map[string]string{"p.py": privilegesPy},
			argv:    []string{Python, "/package/scripts/p.py"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.Contains(res.Stdout, []byte("HELD")) || bytes.Contains(res.Stdout, []byte("ESCAPED")) {
					t.Errorf("the sandbox gained privileges: %q", res.Stdout)
				}
			},
		},
		{
			name:    "namespaces-and-ptrace",
			escape:  "new user namespaces, ptrace",
			scripts: map[string]string{"n.py": namespacesPy},
			argv:    []string{Python, "/package/scripts/n.py", x.Name()},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.Contains(res.Stdout, []byte("HELD")) || bytes.Contains(res.Stdout, []byte("ESCAPED")) {
					t.Errorf("a namespace or ptrace call worked: %q", res.Stdout)
				}
			},
		},
		{
			name:    "refused-syscalls",
			escape:  "kernel attack surface: keyring, io_uring, bpf, perf, userfaultfd, kexec, modules, mount, personality, TIOCSTI",
			scripts: map[string]string{"s.py": syscallsPy},
			argv:    []string{Python, "/package/scripts/s.py", x.Name()},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if !bytes.Contains(res.Stdout, []byte("HELD")) || bytes.Contains(res.Stdout, []byte("ESCAPED")) {
					if why := o.KnownGaps[Escapes[7]]; why != "" {
						t.Logf("KNOWN GAP (%s): %q", why, res.Stdout)
						escapes.gap(Escapes[7])
						return
					}
					t.Errorf("a refused system call reached the kernel: %q", res.Stdout)
				}
			},
		},
		{
			name:    "disk-fallocate",
			escape:  "disk bomb: fallocate 1 GiB in /work",
			scripts: map[string]string{"f.sh": "touch /work/big; fallocate -n -l 1G /work/big && echo RESERVED\n"},
			argv:    []string{Bash, "/package/scripts/f.sh"},
			// A file may be larger than the folder: the folder's size is
			// what stops it.
			limits: sandbox.Limits{WorkTree: 16 << 20, FileSize: 2 << 30},
			skip:   map[bool]string{false: "no hard-sized work folder here (mounting needs root)"}[sandbox.WorkspaceSupported()],
			check: func(t *testing.T, j job, res sandbox.Result) {
				if bytes.Contains(res.Stdout, []byte("RESERVED")) {
					t.Errorf("1 GiB was reserved in a 16 MiB work folder: stdout %q stderr %q", res.Stdout, res.Stderr)
				}
				// gVisor refuses fallocate's keep-size mode outright.
				if saysNoSpace(res.Stderr) && res.Reason != sandbox.ReasonQuota {
					t.Errorf("want the reason quota after ENOSPC, got %s", res.Reason)
				}
				if used, _, _ := sandbox.WorkUsage([]string{j.work}, 0, 0); used > 16<<20 {
					t.Errorf("the work folder holds %d bytes, more than its 16 MiB", used)
				}
			},
		},
		{
			name:    "disk-unlinked",
			escape:  "disk bomb: 320 MiB in unlinked open files",
			scripts: map[string]string{"u.py": unlinkedPy},
			argv:    []string{Python, "/package/scripts/u.py"},
			limits:  sandbox.Limits{WorkTree: 16 << 20},
			skip:    map[bool]string{false: "no hard-sized work folder here (mounting needs root)"}[sandbox.WorkspaceSupported()],
			check: func(t *testing.T, j job, res sandbox.Result) {
				if bytes.Contains(res.Stdout, []byte("WROTE ALL")) || !bytes.Contains(res.Stdout, []byte("ENOSPC")) {
					t.Errorf("want ENOSPC past the work folder's 16 MiB: %q", res.Stdout)
				}
				if res.Reason != sandbox.ReasonQuota {
					t.Errorf("want the reason quota, got %s", res.Reason)
				}
			},
		},
		{
			name:    "argv-without-shell",
			scripts: map[string]string{"a.py": "import sys, json\nprint(json.dumps(sys.argv[1:]))\n"},
			argv:    []string{Python, "/package/scripts/a.py", "$(id)", "a b", "; rm -rf /work", "*"},
			check: func(t *testing.T, j job, res sandbox.Result) {
				wantExit0(t, res)
				if want := `["$(id)", "a b", "; rm -rf /work", "*"]` + "\n"; string(res.Stdout) != want {
					t.Errorf("arguments changed on the way: got %q, want %q", res.Stdout, want)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.skip != "" {
				t.Skip("SKIPPED LOUDLY: " + c.skip)
			}
			if c.escape != "" {
				t.Cleanup(func() { escapes.record(c.escape, t.Failed(), t.Skipped()) })
			}
			j := newJob(t, c.scripts)
			spec := j.spec(o, c.name, c.argv...)
			if c.limits != (sandbox.Limits{}) {
				if c.limits.Wall == 0 {
					c.limits.Wall = spec.Limits.Wall
				}
				spec.Limits = c.limits
			}
			j.mountWork(t, spec.Limits.WithDefaults())
			c.check(t, j, run(t, x, spec))
		})
	}
	t.Run("loopback-listener-untouched", func(t *testing.T) {
		t.Parallel()
		// Runs beside the others; checked after them through Cleanup.
		t.Cleanup(func() {
			select {
			case <-accepted:
				t.Error("a sandbox connected to the host's loopback listener")
			default:
			}
		})
	})
	t.Run("interpreters", func(t *testing.T) { interpreters(t, x, o) })
	t.Run("kill", func(t *testing.T) { kills(t, x, o) })
	t.Run("parallel", func(t *testing.T) { parallel(t, x, o) })
	if o.Restarted != nil {
		t.Run("restart", func(t *testing.T) { restart(t, x, o) })
	}
}

// restart: a second backend (a restarted server) finds a run of the first
// and kills it; the first one's Run then ends without a confirmed result
// being faked.
func restart(t *testing.T, x sandbox.Executor, o Options) {
	t.Parallel()
	j := newJob(t, map[string]string{"s.sh": ": > /work/started; sleep 100\n"})
	spec := j.spec(o, "restart", Bash, "/package/scripts/s.sh")
	done := make(chan error, 1)
	go func() { _, err := x.Run(context.Background(), spec); done <- err }()
	// The command runs (its setup is over) once it has made its marker.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(j.work, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never started its command")
		}
	}
	y := o.Restarted()
	// The second backend sees it once it is really running.
	waitRunning(t, y, spec.Name, true)
	if err := y.Kill(context.Background(), spec.Name); err != nil {
		t.Fatalf("Kill from the restarted backend: %v", err)
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, sandbox.ErrUnconfirmed) {
			t.Errorf("the first run ended with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the first run did not end after the restarted backend killed it")
	}
	waitRunning(t, y, spec.Name, false)
}

// interpreters: Python, Node and Bash each read an uploaded input and
// write an output, verified by digest.
func interpreters(t *testing.T, x sandbox.Executor, o Options) {
	input := bytes.Repeat([]byte("skills-mcp input line\n"), 3000)
	for _, c := range []struct {
		name, file, body, interp string
	}{
		{"python", "copy.py", "import sys\nopen(sys.argv[2], 'wb').write(open(sys.argv[1], 'rb').read())\n", Python},
		{"node", "copy.js", "const fs = require('fs'); fs.writeFileSync(process.argv[3], fs.readFileSync(process.argv[2]));\n", Node},
		{"bash", "copy.sh", "cat \"$1\" > \"$2\"\n", Bash},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, map[string]string{c.file: c.body})
			if err := os.WriteFile(filepath.Join(j.work, "in.txt"), input, 0o644); err != nil {
				t.Fatal(err)
			}
			res := run(t, x, j.spec(o, "interp-"+c.name, c.interp, "/package/scripts/"+c.file, "in.txt", "out.txt"))
			wantExit0(t, res)
			got, err := os.ReadFile(filepath.Join(j.work, "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(got) != sha256.Sum256(input) {
				t.Errorf("the output's digest differs from the input's (%d bytes vs %d)", len(got), len(input))
			}
		})
	}
}

// kills: ending the context, Kill by name, Running while it runs.
func kills(t *testing.T, x sandbox.Executor, o Options) {
	t.Run("context", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, map[string]string{"s.sh": "echo started; sleep 100\n"})
		ctx, cancel := context.WithCancel(context.Background())
		spec := j.spec(o, "kill-ctx", Bash, "/package/scripts/s.sh")
		done := make(chan struct{})
		var res sandbox.Result
		var err error
		go func() { defer close(done); res, err = x.Run(ctx, spec) }()
		waitRunning(t, x, spec.Name, true)
		cancel()
		<-done
		if err != nil || res.Reason != sandbox.ReasonKilled {
			t.Fatalf("want ReasonKilled, got %s, %v", res.Reason, err)
		}
		waitRunning(t, x, spec.Name, false)
	})
	t.Run("by-name", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, map[string]string{"s.sh": "sleep 100\n"})
		spec := j.spec(o, "kill-name", Bash, "/package/scripts/s.sh")
		done := make(chan struct{})
		var res sandbox.Result
		var err error
		go func() { defer close(done); res, err = x.Run(context.Background(), spec) }()
		waitRunning(t, x, spec.Name, true)
		// A second run of the same name is refused while the first runs.
		if _, err := x.Run(context.Background(), spec); err == nil {
			t.Error("a second run of a running name was accepted")
		}
		if err := x.Kill(context.Background(), spec.Name); err != nil {
			t.Fatalf("Kill: %v", err)
		}
		<-done
		if err != nil || res.Reason != sandbox.ReasonKilled {
			t.Fatalf("want ReasonKilled, got %s, %v", res.Reason, err)
		}
		if err := x.Kill(context.Background(), spec.Name); err != nil {
			t.Errorf("Kill of a finished run: %v", err)
		}
	})
}

func waitRunning(t *testing.T, x sandbox.Executor, name string, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names, err := x.Running(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(names, name) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want running=%v, Running says %q", name, want, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Need skips t loudly when a backend cannot run here, except under
// CI=true, where it fails.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true: %v", what, err)
	}
	t.Skipf("SKIPPED LOUDLY: %s is not available here: %v", what, err)
}

// Bench runs a trivial Python script b.N times in x and reports the
// median run, from the Run call to its return, as "ms-median/run".
func Bench(b *testing.B, x sandbox.Executor, o Options) {
	dir := b.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		b.Fatal(err)
	}
	j := job{pkg: filepath.Join(dir, "package"), work: filepath.Join(dir, "work")}
	os.MkdirAll(filepath.Join(j.pkg, "scripts"), 0o755)
	os.MkdirAll(j.work, 0o755)
	os.WriteFile(filepath.Join(j.pkg, "scripts", "t.py"), []byte("print('ok')\n"), 0o644)
	var times []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		spec := j.spec(o, fmt.Sprintf("bench-%d", i), Python, "/package/scripts/t.py")
		start := time.Now()
		res, err := x.Run(context.Background(), spec)
		if err != nil || res.ExitCode != 0 || string(res.Stdout) != "ok\n" {
			b.Fatalf("run: %v %+v", err, res)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median/run")
}

// parallel: 20 runs at once, each waiting until all 20 have started, so a
// backend that ran them one after another would never finish them.
func parallel(t *testing.T, x sandbox.Executor, o Options) {
	t.Parallel()
	const n = 20
	shared := newJob(t, map[string]string{"p.sh": fmt.Sprintf(`: > /work/started-$1
shopt -s nullglob
while f=(/work/*); [ "${#f[@]}" -lt %d ]; do sleep 0.02; done
echo all
`, n)})
	errs := make(chan error, n)
	for i := range n {
		go func() {
			spec := shared.spec(o, fmt.Sprintf("parallel-%d", i), Bash, "/package/scripts/p.sh", fmt.Sprint(i))
			spec.Limits.Wall = 90 * time.Second
			res, err := x.Run(context.Background(), spec)
			if err == nil && string(res.Stdout) != "all\n" {
				err = fmt.Errorf("run %d: %s, exit %d, %q", i, res.Reason, res.ExitCode, res.Stderr)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

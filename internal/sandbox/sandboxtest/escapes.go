package sandboxtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

var updateEscapes = flag.Bool("update-escapes", false, "rewrite sandboxtest's testdata/escapes/BACKEND.txt from this run")

// escapeTable collects, for one backend, whether each escape attempt of
// the suite held; at the end of the run it is compared with
// testdata/escapes/BACKEND.txt, which the README's isolation table is
// checked against (TestREADMETable).
type escapeTable struct {
	backend string
	mu      sync.Mutex
	rows    map[string]string
}

func newEscapeTable(backend string) *escapeTable {
	return &escapeTable{backend: backend, rows: map[string]string{}}
}

func (e *escapeTable) record(attempt string, failed, skipped bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if strings.HasPrefix(e.rows[attempt], "REACHED (known") {
		return
	}
	switch {
	case skipped:
		e.rows[attempt] = "not tested here"
	case failed:
		e.rows[attempt] = "REACHED"
	default:
		e.rows[attempt] = "held"
	}
}

// gap records a known gap as reached.
func (e *escapeTable) gap(attempt string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rows[attempt] = "REACHED (known gap)"
}

func (e *escapeTable) check(t *testing.T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.rows) == 0 {
		return // the cases did not run (-run picked others)
	}
	var b bytes.Buffer
	names := make([]string, 0, len(e.rows))
	for n := range e.rows {
		names = append(names, n)
	}
	sort.Strings(names)
	held := 0
	for _, n := range names {
		if e.rows[n] == "held" {
			held++
		}
		fmt.Fprintf(&b, "%s\t%s\n", n, e.rows[n])
	}
	t.Logf("escape attempts against %s: %d, held %d", e.backend, len(names), held)
	if len(names) < len(Escapes) || strings.Contains(b.String(), "not tested") {
		// A partial run (-run, a skipped case) is not the backend's table.
		return
	}
	golden.Check(t, filepath.Join(testdataDir(), "escapes", e.backend+".txt"), b.Bytes(), *updateEscapes, "update-escapes")
}

// Escapes lists the escape attempts of the suite, the rows of the README's
// isolation table, in its order.
var Escapes = []string{
	"read host files, other jobs' folders, the server's environment",
	"write outside /work (package, /usr, root)",
	"reach a host loopback listener (the hub's API)",
	"reach other addresses, DNS, UDP",
	"connect to a host abstract unix socket",
	"become root (setuid(0), capabilities, setuid binaries)",
	"new user namespaces, ptrace",
	"kernel attack surface: keyring, io_uring, bpf, perf, userfaultfd, kexec, modules, mount, personality, TIOCSTI",
	"fork bomb",
	"memory bomb",
	"disk bomb: fallocate 1 GiB in /work",
	"disk bomb: 320 MiB in unlinked open files",
	"output bomb (5 MiB to each stream)",
}

func testdataDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// mountWork gives the job's work folder a hard size, as the hub does,
// where this process may mount one.
func (j job) mountWork(t *testing.T, l sandbox.Limits) {
	if err := sandbox.MountWorkspace(j.work, l.WorkTree, l.WorkFiles); err != nil {
		return // not root: the suite measures instead
	}
	os.Chmod(j.work, 0o777)
	t.Cleanup(func() { sandbox.UnmountWorkspace(j.work) })
}

func saysNoSpace(b []byte) bool {
	return bytes.Contains(b, []byte("No space left on device")) || bytes.Contains(b, []byte("ENOSPC"))
}

// privilegesPy tries to become root.
const privilegesPy = `import os, glob
bad = []
try:
    os.setuid(0); bad.append("setuid(0)")
except OSError: pass
if os.geteuid() == 0: bad.append("euid 0")
try:
    for l in open("/proc/self/status"):
        if l.startswith("CapEff:") and int(l.split()[1], 16) != 0: bad.append("capabilities " + l.split()[1])
except OSError: pass
import subprocess
for f in glob.glob("/usr/bin/*"):
    try:
        if os.stat(f).st_mode & 0o4000:
            r = subprocess.run([f, "--version"], capture_output=True, timeout=10)
    except Exception: pass
if os.geteuid() == 0: bad.append("euid 0 after setuid binaries")
print("ESCAPED" if bad else "HELD", bad)
`

// namespacesPy tries to make a user namespace and to trace its parent.
// argv[1] is the backend: gVisor's Sentry implements namespaces and
// ptrace itself, inside the sandbox, so those are not escapes there.
const namespacesPy = `import ctypes, os, sys
if sys.argv[1] == "gvisor":
    print("HELD (served by gVisor's Sentry, not the host kernel)"); sys.exit(0)
libc = ctypes.CDLL(None, use_errno=True)
bad = []
if libc.unshare(0x10000000) == 0: bad.append("unshare(CLONE_NEWUSER)")
if libc.unshare(0x00020000) == 0: bad.append("unshare(CLONE_NEWNS)")
PTRACE_ATTACH = 16
if libc.ptrace(PTRACE_ATTACH, os.getppid(), 0, 0) == 0: bad.append("ptrace(parent)")
if libc.ptrace(PTRACE_ATTACH, 1, 0, 0) == 0: bad.append("ptrace(1)")
print("ESCAPED" if bad else "HELD", bad)
`

// syscallsPy calls what the bubblewrap filter refuses. argv[1] is the
// backend: gVisor's Sentry serves io_uring itself (the host's is never
// reached), so a ring there is not an escape.
const syscallsPy = `import ctypes, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": dict(add_key=248, keyctl=250, request_key=249, io_uring_setup=425, bpf=321, perf_event_open=298, userfaultfd=323,
        kexec_load=246, init_module=175, finit_module=313, mount=165, umount2=166, pivot_root=155, personality=135, ioctl=16),
      "aarch64": dict(add_key=217, keyctl=219, request_key=218, io_uring_setup=425, bpf=280, perf_event_open=241, userfaultfd=282,
        kexec_load=104, init_module=105, finit_module=273, mount=40, umount2=39, pivot_root=41, personality=92, ioctl=29)}[platform.machine()]
buf = ctypes.create_string_buffer(256)
calls = [("add_key", (b"user", b"k", b"x", 1, -3)), ("keyctl", (0, -3)), ("request_key", (b"user", b"k", None, 0)),
         ("io_uring_setup", (8, buf)), ("bpf", (0, buf, 72)), ("perf_event_open", (buf, 0, -1, -1, 0)), ("userfaultfd", (0,)),
         ("kexec_load", (0, 0, 0, 0)), ("init_module", (buf, 0, b"")), ("finit_module", (0, b"", 0)),
         ("mount", (b"none", b"/tmp", b"tmpfs", 0, None)), ("umount2", (b"/work", 2)), ("pivot_root", (b".", b".")),
         ("personality", (0x0040000,)), ("ioctl", (0, 0x5412, buf))]
bad, out = [], []
for name, args in calls:
    r = libc.syscall(nr[name], *args)
    e = ctypes.get_errno()
    out.append("%s=%d/%d" % (name, r, e if r < 0 else 0))
    if r >= 0 and not (name == "io_uring_setup" and sys.argv[1] == "gvisor"):
        bad.append(name)
print("ESCAPED" if bad else "HELD", bad, " ".join(out))
`

// unlinkedPy writes 320 MiB into ten files it has unlinked, so no walk of
// the folder sees them.
const unlinkedPy = `import os
fs = []
try:
    for i in range(10):
        f = open("/work/u%d" % i, "wb"); os.unlink("/work/u%d" % i); fs.append(f)
        for _ in range(32): f.write(b"x" * (1 << 20)); f.flush()
    print("WROTE ALL")
except OSError as e:
    print("ENOSPC" if e.errno == 28 else "ERROR", e.errno, flush=True)
    raise
`

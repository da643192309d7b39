// Package seccomp is the syscall filter of the bubblewrap sandboxes (jobs
// and preparations alike): one reviewed table, Refused, of the system
// calls a job may not make, compiled for the running architecture (amd64
// or arm64) into a classic BPF program that bwrap installs with
// --seccomp FD just before it executes the command.
//
// A refused call fails with EPERM; it never kills, so an ordinary program
// that probes for a feature (io_uring, the keyring, perf) degrades as it
// does on a host without it. clone3 fails with ENOSYS instead: its flags
// are in memory a filter cannot read, and the C library falls back to
// clone, whose flags the filter does check. Every other system call this
// architecture's table knows is allowed; one it does not know, and any
// call through another architecture's entry (i386's int 0x80 on amd64,
// which would otherwise bypass a list kept by number), fails with EPERM.
//
// The program is assembled by github.com/elastic/go-seccomp-bpf (pure Go,
// no cgo), which also carries the syscall number tables per architecture.
package seccomp

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	libseccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// Rule is one line of the table: a system call refused, always or when
// its arguments match When.
type Rule struct {
	// Name is the call's name in the kernel's table.
	Name string
	// Arch, when set, is the one architecture that has the call
	// ("amd64"); elsewhere the rule does not apply.
	Arch string
	// When, if not empty, refuses the call only when every condition
	// holds; several rules of one name are alternatives.
	When []libseccomp.Condition
	// ENOSYS answers "not implemented" instead of EPERM.
	ENOSYS bool
	// Why says what the call gives an attacker.
	Why string
}

// ioctl requests refused; ioctl's request is an unsigned int, so only its
// low 32 bits are compared (the kernel ignores the rest, and a filter that
// compared all 64 would let 0x1_00005412 through).
const (
	tiocsti   = 0x5412 // push bytes into a terminal's input
	tioclinux = 0x541C // the virtual console's selection and more
)

// The namespace flags of clone: a job makes no namespace (bwrap already
// refuses user namespaces; this also covers the others). They are the
// Linux kernel's values, written here rather than taken from the build's
// system, so the table means the same wherever it is compiled.
const (
	cloneNewTime   = 0x00000080
	cloneNewNS     = 0x00020000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000

	cloneNamespaces = cloneNewNS | cloneNewUTS | cloneNewIPC | cloneNewUser | cloneNewPID | cloneNewNet | cloneNewCgroup | cloneNewTime
)

// linuxENOSYS is the Linux kernel's ENOSYS ("function not implemented"),
// whatever the build's system calls it.
const linuxENOSYS = 38

// personas are the personality(2) values a job may set or query, as
// Docker's default profile allows them: Linux, the 32-bit one, UNAME26,
// both, and the query (0xffffffff).
var personas = []uint64{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Refused is the reviewed table. It follows Docker's default profile for
// an unprivileged container: what that profile refuses without a
// capability is refused here, plus the newer mount and io_uring calls.
var Refused = []Rule{
	// The kernel keyring: shared kernel state, a long CVE history.
	{Name: "add_key", Why: "kernel keyring"},
	{Name: "keyctl", Why: "kernel keyring"},
	{Name: "request_key", Why: "kernel keyring"},
	// io_uring: a large attack surface that bypasses syscall filtering.
	{Name: "io_uring_setup", Why: "io_uring"},
	{Name: "io_uring_enter", Why: "io_uring"},
	{Name: "io_uring_register", Why: "io_uring"},
	// Kernel programs, tracing and debugging other processes.
	{Name: "bpf", Why: "eBPF programs"},
	{Name: "perf_event_open", Why: "performance counters: kernel addresses, side channels"},
	{Name: "userfaultfd", Why: "userfaultfd: stalls the kernel at will (race exploits)"},
	{Name: "ptrace", Why: "debugging another process"},
	{Name: "process_vm_readv", Why: "reading another process's memory"},
	{Name: "process_vm_writev", Why: "writing another process's memory"},
	{Name: "kcmp", Why: "comparing kernel objects of processes"},
	{Name: "lookup_dcookie", Why: "kernel profiling"},
	// Loading code into the kernel or replacing it.
	{Name: "kexec_load", Why: "loading a new kernel"},
	{Name: "kexec_file_load", Why: "loading a new kernel"},
	{Name: "init_module", Why: "kernel modules"},
	{Name: "finit_module", Why: "kernel modules"},
	{Name: "delete_module", Why: "kernel modules"},
	{Name: "create_module", Arch: "amd64", Why: "kernel modules (obsolete)"},
	{Name: "query_module", Arch: "amd64", Why: "kernel modules (obsolete)"},
	{Name: "get_kernel_syms", Arch: "amd64", Why: "kernel modules (obsolete)"},
	// File systems and namespaces: the sandbox's view of the world is fixed.
	{Name: "mount", Why: "mounting"},
	{Name: "umount2", Why: "unmounting"},
	{Name: "pivot_root", Why: "changing the root"},
	{Name: "fsopen", Why: "mounting (new API)"},
	{Name: "fsconfig", Why: "mounting (new API)"},
	{Name: "fsmount", Why: "mounting (new API)"},
	{Name: "fspick", Why: "mounting (new API)"},
	{Name: "move_mount", Why: "mounting (new API)"},
	{Name: "open_tree", Why: "mounting (new API)"},
	{Name: "mount_setattr", Why: "mounting (new API)"},
	{Name: "unshare", Why: "new namespaces"},
	{Name: "setns", Why: "joining namespaces"},
	{Name: "clone", When: []libseccomp.Condition{{Argument: 0, Operation: libseccomp.BitsSet, Value: cloneNamespaces}}, Why: "new namespaces through clone's flags"},
	{Name: "clone3", ENOSYS: true, Why: "its flags cannot be read by a filter: the C library falls back to clone"},
	{Name: "name_to_handle_at", Why: "file handles: opening files by handle bypasses paths"},
	{Name: "open_by_handle_at", Why: "file handles: the classic container escape"},
	{Name: "chroot", Why: "changing the root"},
	// The machine's own state.
	{Name: "reboot", Why: "rebooting"},
	{Name: "swapon", Why: "swap"},
	{Name: "swapoff", Why: "swap"},
	{Name: "acct", Why: "process accounting"},
	{Name: "quotactl", Why: "disk quotas"},
	{Name: "quotactl_fd", Why: "disk quotas"},
	{Name: "settimeofday", Why: "the clock"},
	{Name: "clock_settime", Why: "the clock"},
	{Name: "clock_adjtime", Why: "the clock"},
	{Name: "syslog", Why: "the kernel log: kernel addresses"},
	{Name: "vhangup", Why: "terminals"},
	{Name: "uselib", Arch: "amd64", Why: "obsolete loader call"},
	{Name: "ustat", Arch: "amd64", Why: "obsolete"},
	{Name: "sysfs", Arch: "amd64", Why: "obsolete"},
	{Name: "_sysctl", Arch: "amd64", Why: "obsolete sysctl"},
	{Name: "nfsservctl", Why: "obsolete"},
	{Name: "iopl", Arch: "amd64", Why: "I/O port access"},
	{Name: "ioperm", Arch: "amd64", Why: "I/O port access"},
	{Name: "fanotify_init", Why: "watching the whole file system"},
	// Arguments that matter.
	{Name: "ioctl", When: low32Equal(1, tiocsti), Why: "TIOCSTI: typing into a terminal"},
	{Name: "ioctl", When: low32Equal(1, tioclinux), Why: "TIOCLINUX: the console"},
	{Name: "personality", When: notAny(0, personas), Why: "personality flags such as ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC"},
}

// low32Equal is "the low 32 bits of argument arg equal v": every bit of v
// set and every other low bit clear, whatever the high half holds.
func low32Equal(arg uint32, v uint32) []libseccomp.Condition {
	var c []libseccomp.Condition
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if v&bit != 0 {
			c = append(c, libseccomp.Condition{Argument: arg, Operation: libseccomp.BitsSet, Value: uint64(bit)})
		}
	}
	return append(c, libseccomp.Condition{Argument: arg, Operation: libseccomp.BitsNotSet, Value: uint64(^v)})
}

// notAny is "argument arg is none of values".
func notAny(arg uint32, values []uint64) []libseccomp.Condition {
	c := make([]libseccomp.Condition, len(values))
	for i, v := range values {
		c[i] = libseccomp.Condition{Argument: arg, Operation: libseccomp.NotEqual, Value: v}
	}
	return c
}

// Policies is the table as policies for the architecture goarch
// ("amd64", "arm64"). The first holds the calls refused whatever their
// arguments, then every other call the architecture's table knows,
// allowed; anything else (an unknown call, another architecture's entry)
// is refused with EPERM. Each call refused by its arguments gets a policy
// of its own that refuses it when they match and allows everything else:
// the kernel runs every filter and keeps the strictest verdict. One policy
// per such call is not a choice of style: the library (v1.6.0) does not
// load the call's number again after comparing a call's arguments, so a
// comparison of another call's number after them would compare an
// argument instead.
func Policies(goarch string) ([]*libseccomp.Policy, error) {
	info, err := archInfo(goarch)
	if err != nil {
		return nil, err
	}
	eperm := libseccomp.ActionErrno // the library adds EPERM
	enosys := libseccomp.Action(uint32(libseccomp.ActionErrno) | linuxENOSYS)
	refused := libseccomp.SyscallGroup{Action: eperm}
	unimplemented := libseccomp.SyscallGroup{Action: enosys}
	byArgs := map[string]*libseccomp.SyscallGroup{}
	var argNames []string
	whole := map[string]bool{}
	for _, r := range Refused {
		if r.Arch != "" && r.Arch != goarch {
			continue
		}
		if _, ok := info.SyscallNames[r.Name]; !ok {
			return nil, fmt.Errorf("seccomp: %s has no system call %q (mark the rule with its architecture)", goarch, r.Name)
		}
		switch {
		case r.ENOSYS:
			unimplemented.Names = append(unimplemented.Names, r.Name)
			whole[r.Name] = true
		case len(r.When) > 0:
			g := byArgs[r.Name]
			if g == nil {
				g = &libseccomp.SyscallGroup{Action: eperm}
				byArgs[r.Name] = g
				argNames = append(argNames, r.Name)
			}
			g.NamesWithCondtions = append(g.NamesWithCondtions, libseccomp.NameWithConditions{Name: r.Name, Conditions: r.When})
		default:
			if !slices.Contains(refused.Names, r.Name) {
				refused.Names = append(refused.Names, r.Name)
			}
			whole[r.Name] = true
		}
	}
	for name := range byArgs {
		if whole[name] {
			return nil, fmt.Errorf("seccomp: %s is refused both whole and by its arguments", name)
		}
	}
	allowed := libseccomp.SyscallGroup{Action: libseccomp.ActionAllow}
	for name := range info.SyscallNames {
		if !whole[name] {
			allowed.Names = append(allowed.Names, name)
		}
	}
	// Sorted, so the same table always makes the same programs.
	slices.Sort(allowed.Names)
	policies := []*libseccomp.Policy{{
		DefaultAction: libseccomp.ActionErrno,
		Syscalls:      []libseccomp.SyscallGroup{refused, unimplemented, allowed},
	}}
	for _, name := range argNames {
		policies = append(policies, &libseccomp.Policy{DefaultAction: libseccomp.ActionAllow, Syscalls: []libseccomp.SyscallGroup{*byArgs[name]}})
	}
	return policies, nil
}

func archInfo(goarch string) (*arch.Info, error) {
	switch goarch {
	case "amd64":
		return arch.X86_64, nil
	case "arm64":
		return arch.AARCH64, nil
	}
	return nil, fmt.Errorf("seccomp: no filter for %s (amd64 and arm64 have one)", goarch)
}

var (
	once     sync.Once
	programs [][]byte
	progErr  error
)

// Programs returns the filters for the running architecture as the kernel
// takes them (struct sock_filter records, in native byte order), ready
// for bwrap's --add-seccomp-fd, one each. They are built once.
func Programs() ([][]byte, error) {
	once.Do(func() { programs, progErr = build(runtime.GOARCH) })
	return programs, progErr
}

func build(goarch string) ([][]byte, error) {
	if runtime.GOOS != "linux" {
		// Nothing else runs them; the bubblewrap backend needs Linux anyway.
		return nil, fmt.Errorf("seccomp: syscall filters are the Linux kernel's; this is %s", runtime.GOOS)
	}
	if goarch != runtime.GOARCH {
		// The library assembles for the running architecture only.
		return nil, fmt.Errorf("seccomp: cannot build %s's programs on %s", goarch, runtime.GOARCH)
	}
	policies, err := Policies(goarch)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, p := range policies {
		insns, err := p.Assemble()
		if err != nil {
			return nil, fmt.Errorf("seccomp: assembling the filter: %w", err)
		}
		raw, err := bpf.Assemble(insns)
		if err != nil {
			return nil, fmt.Errorf("seccomp: assembling the filter: %w", err)
		}
		if len(raw) > 4096 {
			return nil, fmt.Errorf("seccomp: a filter has %d instructions, more than the kernel's 4096", len(raw))
		}
		b := make([]byte, 0, 8*len(raw))
		for _, in := range raw {
			b = binary.NativeEndian.AppendUint16(b, in.Op)
			b = append(b, in.Jt, in.Jf)
			b = binary.NativeEndian.AppendUint32(b, in.K)
		}
		out = append(out, b)
	}
	return out, nil
}

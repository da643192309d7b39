package seccomp

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// verdict runs the running architecture's program on one call, as the
// kernel would (struct seccomp_data: nr, arch, ip, args).
// verdict runs every program on one call and keeps the strictest answer,
// as the kernel does.
func verdict(t *testing.T, vms []*bpf.VM, auditArch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.NativeEndian.PutUint32(data[0:], uint32(nr))
	binary.NativeEndian.PutUint32(data[4:], auditArch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(data[16+8*i:], a)
	}
	// x/net/bpf's VM loads words big-endian: give it the words swapped.
	for i := 0; i < len(data); i += 4 {
		binary.BigEndian.PutUint32(data[i:], binary.NativeEndian.Uint32(data[i:]))
	}
	best := uint32(unix.SECCOMP_RET_ALLOW)
	for _, vm := range vms {
		out, err := vm.Run(data)
		if err != nil {
			t.Fatal(err)
		}
		// The action with the lowest signed value wins.
		if v := uint32(out); int32(v&unix.SECCOMP_RET_ACTION_FULL) < int32(best&unix.SECCOMP_RET_ACTION_FULL) {
			best = v
		}
	}
	return best
}

func TestProgramVerdicts(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("no filter for", runtime.GOARCH)
	}
	ps, err := Policies(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	var vm []*bpf.VM
	for _, p := range ps {
		insns, err := p.Assemble()
		if err != nil {
			t.Fatal(err)
		}
		v, err := bpf.NewVM(insns)
		if err != nil {
			t.Fatal(err)
		}
		vm = append(vm, v)
	}
	info, _ := archInfo(runtime.GOARCH)
	nr := func(name string) int { return info.SyscallNames[name] }
	native := uint32(info.ID)
	const allow, eperm, enosys = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM), unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	for _, c := range []struct {
		name string
		args []uint64
		want uint32
	}{
		{"openat", nil, allow}, {"read", nil, allow}, {"write", nil, allow}, {"execve", nil, allow},
		{"clone", []uint64{0x01200011}, allow}, // fork
		{"clone", []uint64{0x3d0f00}, allow},   // a thread
		{"clone", []uint64{unix.CLONE_NEWUSER}, eperm},
		{"clone", []uint64{unix.CLONE_NEWNET | 0x11}, eperm},
		{"clone3", nil, enosys},
		{"ioctl", []uint64{1, unix.TCGETS}, allow},
		{"ioctl", []uint64{1, tiocsti}, eperm},
		{"ioctl", []uint64{1, 1<<32 | tiocsti}, eperm},
		{"ioctl", []uint64{1, tiocsti | 1}, allow},
		{"personality", []uint64{0}, allow},
		{"personality", []uint64{0xffffffff}, allow},
		{"personality", []uint64{0x0040000}, eperm}, // ADDR_NO_RANDOMIZE
		{"add_key", nil, eperm}, {"keyctl", nil, eperm}, {"io_uring_setup", nil, eperm}, {"bpf", nil, eperm},
		{"perf_event_open", nil, eperm}, {"userfaultfd", nil, eperm}, {"ptrace", nil, eperm},
		{"kexec_load", nil, eperm}, {"init_module", nil, eperm}, {"mount", nil, eperm}, {"umount2", nil, eperm},
		{"pivot_root", nil, eperm}, {"unshare", nil, eperm}, {"setns", nil, eperm},
	} {
		if got := verdict(t, vm, native, nr(c.name), c.args...); got != c.want {
			t.Errorf("%s%x: verdict %#x, want %#x", c.name, c.args, got, c.want)
		}
	}
	// A call through another architecture's entry is refused whatever it is.
	if got := verdict(t, vm, uint32(arch.I386.ID), 0); runtime.GOARCH == "amd64" && got != eperm {
		t.Errorf("an i386 call: verdict %#x, want EPERM", got)
	}
}

// TestTableNamesBothArchitectures: every rule names a call both
// architectures have, or says which one has it.
func TestTableNamesBothArchitectures(t *testing.T) {
	for _, goarch := range []string{"amd64", "arm64"} {
		if _, err := Policies(goarch); err != nil {
			t.Errorf("%s: %v", goarch, err)
		}
	}
	if _, err := Programs(); err != nil {
		t.Fatal(err)
	}
}

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/fake"
)

func TestSelect(t *testing.T) {
	broken := fake.New()
	broken.CheckErr = errors.New("bwrap is not installed")
	ok := fake.New()

	if _, _, err := sandbox.Select(context.Background(), "auto", broken); !errors.Is(err, sandbox.ErrUnavailable) ||
		!strings.Contains(err.Error(), "bwrap is not installed") {
		t.Errorf("auto with only a broken backend: %v", err)
	}
	x, enf, err := sandbox.Select(context.Background(), "auto", broken, ok)
	if err != nil || x != ok || enf.Backend != "fake" {
		t.Errorf("auto skips a broken backend: %v %v %+v", x, err, enf)
	}
	if _, _, err := sandbox.Select(context.Background(), "docker", ok); !errors.Is(err, sandbox.ErrUnavailable) ||
		!strings.Contains(err.Error(), `"docker"`) {
		t.Errorf("a name no candidate has: %v", err)
	}
	if _, _, err := sandbox.Select(context.Background(), "fake", broken); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("a named backend that fails its check: %v", err)
	}
}

func TestCapture(t *testing.T) {
	c := sandbox.NewCapture(10)
	for _, p := range []string{"hello", " world", "!!!"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: a capture must drain everything", p, n, err)
		}
	}
	got, cut := c.Result()
	if string(got) != "hello worl" || !cut {
		t.Errorf("got %q cut=%v", got, cut)
	}
	c = sandbox.NewCapture(10)
	c.Write(bytes.Repeat([]byte("x"), 10))
	if _, cut := c.Result(); cut {
		t.Error("exactly the limit is not cut")
	}
}

func TestCheckSpec(t *testing.T) {
	good := sandbox.Spec{Name: "job-1_a", Argv: []string{"/usr/bin/python3"}, Dir: "/work",
		Mounts: []sandbox.Mount{{Host: "/srv/x", Target: "/package"}, {Host: "/srv/w", Target: "/work", Writable: true}}}
	if err := sandbox.CheckSpec(good); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*sandbox.Spec){
		"bad name":        func(s *sandbox.Spec) { s.Name = "../x" },
		"empty name":      func(s *sandbox.Spec) { s.Name = "" },
		"no argv":         func(s *sandbox.Spec) { s.Argv = nil },
		"relative argv":   func(s *sandbox.Spec) { s.Argv = []string{"python3"} },
		"relative dir":    func(s *sandbox.Spec) { s.Dir = "work" },
		"env without =":   func(s *sandbox.Spec) { s.Env = []string{"PATH"} },
		"relative host":   func(s *sandbox.Spec) { s.Mounts = []sandbox.Mount{{Host: "x", Target: "/package"}} },
		"unclean target":  func(s *sandbox.Spec) { s.Mounts = []sandbox.Mount{{Host: "/x", Target: "/work/../etc"}} },
		"mount over /usr": func(s *sandbox.Spec) { s.Mounts = []sandbox.Mount{{Host: "/x", Target: "/usr/lib"}} },
		"mount over root": func(s *sandbox.Spec) { s.Mounts = []sandbox.Mount{{Host: "/x", Target: "/"}} },
		"two on one": func(s *sandbox.Spec) {
			s.Mounts = []sandbox.Mount{{Host: "/x", Target: "/a"}, {Host: "/y", Target: "/a"}}
		},
		"negative limit": func(s *sandbox.Spec) { s.Limits.Memory = -1 },
	} {
		s := good
		mod(&s)
		if err := sandbox.CheckSpec(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWorkUsage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 1000), 0o644)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "b"), make([]byte, 500), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	// A file counts its allocated blocks when they are more than its size.
	if b, n, over := sandbox.WorkUsage([]string{dir}, 0, 0); b < 1500 || b > 2*8192 || n != 4 || over {
		t.Errorf("got %d bytes, %d entries, over=%v; want 1500 to 16384, 4 (links not followed)", b, n, over)
	}
	// A reserved (fallocated) or sparse file counts what it holds or
	// claims, whichever is more.
	f, err := os.Create(filepath.Join(dir, "reserved"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fallocate(int(f.Fd()), 1 /* FALLOC_FL_KEEP_SIZE */, 0, 4<<20); err != nil {
		t.Skip("no fallocate here:", err)
	}
	f.Close()
	if b, _, _ := sandbox.WorkUsage([]string{dir}, 0, 0); b < 4<<20 {
		t.Errorf("a 4 MiB reservation of size 0 counts %d bytes", b)
	}
	if _, _, over := sandbox.WorkUsage([]string{dir}, 1200, 0); !over {
		t.Error("1500 bytes are over 1200")
	}
	if _, _, over := sandbox.WorkUsage([]string{dir}, 0, 3); !over {
		t.Error("4 entries are over 3")
	}
}

func TestDefaults(t *testing.T) {
	l := sandbox.Limits{Wall: 10e9, CPUs: 0.5}.WithDefaults()
	if l.CPUTime != 5e9 || l.Memory != sandbox.DefaultLimits.Memory || l.Output != 1<<20 {
		t.Errorf("%+v", l)
	}
}

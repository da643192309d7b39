package docker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/docker"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

var engine dockertest.Shared

func TestMain(m *testing.M) {
	code := engine.Main(m)
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	os.Exit(code)
}

func newExecutor(t testing.TB) (*docker.Executor, *dockertest.Engine) {
	e := engine.Engine(t)
	x, err := docker.New(&docker.Options{Host: e.Host, BindUsr: "/usr"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, e
}

func TestIsolation(t *testing.T) {
	x, e := newExecutor(t)
	sandboxtest.Run(t, x, sandboxtest.Options{Image: e.Image, Prefix: "dkt-", KnownGaps: map[string]string{
		sandboxtest.Escapes[7]: "Docker 20.10's default seccomp profile allows io_uring (refused from Docker 25)",
	}, Restarted: func() sandbox.Executor {
		y, _ := newExecutor(t)
		return y
	}})
}

func TestCheckNamesTheEngine(t *testing.T) {
	x, _ := newExecutor(t)
	enf, err := x.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if enf.Backend != "docker" || !strings.Contains(strings.Join(enf.Limits, "\n"), "engine: API 1.") {
		t.Errorf("Check: %+v", enf)
	}
}

func TestUnreachableEngineIsRefused(t *testing.T) {
	x, err := docker.New(&docker.Options{Host: "unix:///nonexistent/docker.sock"})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	_, _, err = sandbox.Select(context.Background(), "auto", x)
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "docker:") {
		t.Errorf("Select with an unreachable engine: %v", err)
	}
}

func TestRootUserIsRefused(t *testing.T) {
	if _, err := docker.New(&docker.Options{User: "0:0"}); err == nil {
		t.Error("a root container user was accepted")
	}
}

func BenchmarkRunPython(b *testing.B) {
	x, e := newExecutor(b)
	sandboxtest.Bench(b, x, sandboxtest.Options{Image: e.Image})
}

func TestNoImageIsRefused(t *testing.T) {
	x, err := docker.New(&docker.Options{Host: "unix:///nonexistent/docker.sock"})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := x.Run(context.Background(), sandbox.Spec{Name: "x", Argv: []string{"/usr/bin/true"}}); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Errorf("a spec without an image: %v", err)
	}
}

func TestCrashServer(t *testing.T) {
	if os.Getenv("SANDBOXTEST_CRASH_DIR") == "" {
		return
	}
	x, err := docker.New(&docker.Options{Host: os.Getenv("SANDBOXTEST_DOCKER_HOST"), BindUsr: "/usr"})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.CrashServer(t, x, sandboxtest.Options{Prefix: "dkc-", Image: os.Getenv("SANDBOXTEST_DOCKER_IMAGE")})
}

func TestCrashRecovery(t *testing.T) {
	x, e := newExecutor(t)
	// The child server uses this package's engine.
	t.Setenv("SANDBOXTEST_DOCKER_HOST", e.Host)
	t.Setenv("SANDBOXTEST_DOCKER_IMAGE", e.Image)
	sandboxtest.Crash(t, x, sandboxtest.Options{Prefix: "dkc-", Image: e.Image}, "TestCrashServer")
}

// TestImageIDFollowsTheTag: ImageID resolves a tag to the image it names
// now; a run given the id keeps its image after the tag moves; an image
// the engine lacks is ErrNoImage, named, for a lookup and for a run.
func TestImageIDFollowsTheTag(t *testing.T) {
	x, e := newExecutor(t)
	ctx := context.Background()
	const ref = "skills-mcp-test/pin:2"
	ids := map[string]string{}
	for _, v := range []string{"A", "B"} {
		tar, err := dockertest.ImageTar(map[string]string{"etc/marker": v + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Import(tar, ref); err != nil {
			t.Fatal(err)
		}
		id, err := x.ImageID(ctx, ref)
		if err != nil || !strings.HasPrefix(id, "sha256:") {
			t.Fatalf("ImageID(%s) after importing %s = %q, %v", ref, v, id, err)
		}
		ids[v] = id
	}
	if ids["A"] == ids["B"] {
		t.Fatalf("the tag names the same image after it moved: %s", ids["A"])
	}
	for _, v := range []string{"A", "B"} {
		res, err := x.Run(ctx, sandbox.Spec{Name: "pin-" + strings.ToLower(v), Image: ids[v],
			Argv: []string{"/usr/bin/bash", "-c", "read -r m < /etc/marker; echo $m"}})
		if err != nil || string(res.Stdout) != v+"\n" {
			t.Errorf("run on image %s (%s): %+v %v", v, ids[v], res, err)
		}
	}
	_, err := x.ImageID(ctx, "skills-mcp-test/absent:1")
	if !errors.Is(err, sandbox.ErrNoImage) || !strings.Contains(err.Error(), "skills-mcp-test/absent:1") || !strings.Contains(err.Error(), "docker pull") {
		t.Errorf("ImageID of an image the engine lacks: %v; want ErrNoImage naming it and how to get it", err)
	}
	gone := "sha256:" + strings.Repeat("0", 64)
	if _, err := x.Run(ctx, sandbox.Spec{Name: "pin-gone", Image: gone, Argv: []string{"/usr/bin/true"}}); !errors.Is(err, sandbox.ErrNoImage) || !strings.Contains(err.Error(), gone) {
		t.Errorf("a run on an image the engine lacks: %v; want ErrNoImage naming it", err)
	}
}

// TestImageTarRunsHostPrograms: an image made of the skeleton and a host
// program with its libraries runs it without the host's /usr.
func TestImageTarRunsHostPrograms(t *testing.T) {
	e := engine.Engine(t)
	x, err := docker.New(&docker.Options{Host: e.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	tar, err := dockertest.ImageTar(map[string]string{"etc/marker": "own\n"}, "/usr/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.Import(tar, "skills-mcp-test/bash:1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background(), sandbox.Spec{Name: "own-bash", Image: id,
		Argv: []string{"/usr/bin/bash", "-c", "read -r m < /etc/marker; echo $m; [ -e /usr/bin/python3 ] || echo no-host-usr"}})
	if err != nil || string(res.Stdout) != "own\nno-host-usr\n" {
		t.Fatalf("bash from its own image: %+v %v", res, err)
	}
}

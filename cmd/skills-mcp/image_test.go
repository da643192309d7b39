package main_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
)

// TestImage builds the Dockerfile's image with a Docker engine of the
// test's own (no registry: the base is empty), runs it read-only as its
// unprivileged user over a mounted library, and waits for the readiness
// probe to answer 200.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an image")
	}
	docker, err := exec.LookPath("docker")
	engine, serr := dockertest.Start()
	if err != nil || serr != nil {
		msg := "SKIPPED LOUDLY: the image test needs dockerd and the docker command: "
		if err != nil {
			msg += err.Error()
		} else {
			msg += serr.Error()
		}
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(engine.Stop)
	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "skills-mcp"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // a static binary: the image has no C library
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "ca-certificates.crt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DOCKER_HOST="+engine.Host, "DOCKER_BUILDKIT=0")
	dockerRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(docker, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	dockerRun("build", "-q", "-f", "../../Dockerfile", "-t", "skills-mcp:test", ctxDir)
	size := dockerRun("image", "inspect", "-f", "{{.Size}}", "skills-mcp:test")
	t.Logf("image size: %s bytes", size)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	lib, err := filepath.Abs(testLibrary)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	id := dockerRun("run", "-d", "--network", "host", "--read-only", "--tmpfs", "/tmp",
		"-v", lib+":/library:ro", "-e", "SKILLS_HTTP=127.0.0.1:"+port, "skills-mcp:test")
	t.Cleanup(func() {
		cmd := exec.Command(docker, "rm", "-f", id)
		cmd.Env = env
		cmd.Run()
	})
	probe := "http://127.0.0.1:" + port + readyPath
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			cmd := exec.Command(docker, "logs", id)
			cmd.Env = env
			logs, _ := cmd.CombinedOutput()
			t.Fatalf("%s never answered 200: %v\n%s", probe, err, logs)
		}
		time.Sleep(20 * time.Millisecond) // polling for the state wanted, bounded by ctx
	}
	t.Logf("ready %v after docker run", time.Since(start).Round(time.Millisecond))
	if user := dockerRun("inspect", "-f", "{{.Config.User}}", id); user != "65532:65532" {
		t.Errorf("the container runs as %q, want 65532:65532", user)
	}
}

// readyPath is the readiness probe the image test waits for.
const readyPath = "/readyz"

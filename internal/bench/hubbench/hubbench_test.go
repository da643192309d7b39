package hubbench_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/bench/hubbench"
)

// A small run against the real binary: every stage answers, and the report
// says what it measured.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs skills-hub")
	}
	bin := filepath.Join(t.TempDir(), "skills-hub")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/skills-hub").CombinedOutput(); err != nil {
		t.Fatalf("building skills-hub: %v\n%s", err, out)
	}
	var log bytes.Buffer
	r, err := hubbench.Run(context.Background(), hubbench.Options{Server: bin, Dir: filepath.Join(t.TempDir(), "data"),
		Projects: 12, Bindings: 3, Versions: 5, Requests: 64, Clients: 4, Changes: 3, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if r.RSSMiB <= 0 || r.GetP99 <= 0 || r.GetP50 > r.GetP99 || r.ChangeRuns != 3 || r.ChangeP50 <= 0 {
		t.Fatalf("report: %+v", r)
	}
	var out bytes.Buffer
	r.WriteText(&out)
	for _, want := range []string{"12 projects × 3 bindings over 5 versions", "RSS after the listings", "p99", "binding change"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := hubbench.Main(context.Background(), []string{"--projects", "3"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "--server") {
		t.Fatalf("no --server: %d %s", code, stderr.String())
	}
	if code := hubbench.Main(context.Background(), []string{"--server", "x", "--bindings", "300"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("bindings over versions: %d", code)
	}
}

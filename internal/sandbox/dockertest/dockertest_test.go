package dockertest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
)

var engine dockertest.Shared

func TestMain(m *testing.M) { os.Exit(engine.Main(m)) }

func TestEngineStarts(t *testing.T) {
	e := engine.Engine(t)
	if e.Image == "" || e.Host == "" {
		t.Fatalf("engine %+v", e)
	}
	t.Logf("dockerd on %s, driver %s, image %s", e.Host, e.Driver, e.Image)
}

// TestImport: a root file system tar becomes an image, tagged and named
// by its id, which the engine runs; a broken tar is refused. The hub never
// imports images (an operator pulls, loads or builds them), so this is
// the tests' way to have images without a registry.
func TestImport(t *testing.T) {
	e := engine.Engine(t)
	id, err := e.Import(dockertest.Skeleton(), "skills-mcp-test/import:1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("image id %q", id)
	}
	if _, err := e.Import([]byte("not a tar"), "skills-mcp-test/import:bad"); err == nil {
		t.Error("a broken tar was imported")
	}
}

package dockertest_test

import (
	"os"
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

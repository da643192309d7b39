package endpoint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// A sandbox backend's probe failure (which names host paths and carries
// the backend's stderr) reaches a tool's caller as what it means, never as
// its detail.
func TestJobErrorHidesSandboxDetail(t *testing.T) {
	err := fmt.Errorf("%w: bwrap: bwrap check: a trivial sandbox failed (exit 1): bwrap: cannot open /srv/hub/jobs/run-1: denied", sandbox.ErrUnavailable)
	msg := jobError(err, "j1").Error()
	if strings.Contains(msg, "/srv/hub") || strings.Contains(msg, "trivial sandbox") {
		t.Fatalf("jobError passes the backend's detail on: %q", msg)
	}
	if !strings.Contains(msg, "bubblewrap or Docker") {
		t.Fatalf("jobError = %q; want it to say what is missing", msg)
	}
}

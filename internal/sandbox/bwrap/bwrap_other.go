//go:build !linux

package bwrap

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// supported says why there is no bubblewrap sandbox here: Check and Run
// report it, so the backend is unavailable with the reason, and auto
// passes it by.
func supported() error {
	return fmt.Errorf("bubblewrap sandboxes need Linux (namespaces, cgroups, a seccomp filter); this is %s: run the hub's jobs on a Linux host", runtime.GOOS)
}

// run is never reached: Run calls supported first.
func (e *Executor) run(context.Context, string, sandbox.Spec, *sandbox.Run) (sandbox.Result, error) {
	return sandbox.Result{}, supported()
}

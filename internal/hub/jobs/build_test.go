package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// A build folder an unconfirmed preparation left is removed by Recover once
// its sandbox is confirmed gone and no preparation runs; while one runs, or
// the orphaned build sandbox cannot be killed, it stays.
func TestRecoverRemovesLeftBuildFolders(t *testing.T) {
	e := setup(t, false)
	ctx := context.Background()
	leave := func() string {
		t.Helper()
		b, err := os.MkdirTemp(e.svc.dir("layers"), e.svc.buildPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(b, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b, "pkg", "m.py"), []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(b, "pkg"), 0o555)
		return b
	}
	exists := func(p string) bool {
		_, err := os.Lstat(p)
		return !errors.Is(err, os.ErrNotExist)
	}
	other := filepath.Join(e.svc.dir("layers"), ".build-otherreplica-1")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}

	// The orphaned build sandbox cannot be confirmed gone: kept.
	b := leave()
	orphan := e.svc.prepName()
	e.fake.mu.Lock()
	e.fake.running[orphan] = true
	e.fake.killErr = sandbox.ErrUnconfirmed
	e.fake.mu.Unlock()
	if _, err := e.svc.Recover(ctx); err == nil {
		t.Error("Recover with an unkillable build sandbox: no error")
	}
	if !exists(b) {
		t.Fatal("a build folder whose sandbox may still run was removed")
	}

	// A preparation runs: kept.
	e.fake.mu.Lock()
	e.fake.killErr = nil
	e.fake.mu.Unlock()
	running := e.svc.prepName()
	e.svc.mu.Lock()
	e.svc.runs[running] = &runHandle{done: make(chan struct{})}
	e.svc.mu.Unlock()
	if _, err := e.svc.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(b) {
		t.Fatal("build folders were removed while a preparation runs")
	}
	e.svc.mu.Lock()
	delete(e.svc.runs, running)
	e.svc.mu.Unlock()

	// Nothing runs: removed; another replica's stays.
	if _, err := e.svc.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(b) {
		t.Error("Recover left the build folder of a preparation confirmed gone")
	}
	if !exists(other) {
		t.Error("Recover removed another replica's build folder")
	}
}

package jobs

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// A job whose sandbox could not be confirmed gone keeps its work folder
// (the sandbox may still write there) until recovery confirms it gone.
func TestUnconfirmedRunKeepsItsWorkFolder(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	j := e.job("secret")
	if st := e.run(j, "mode:unconfirmed"); st.Job.State != store.JobLocked {
		t.Fatalf("unconfirmed: %s; want locked", st.Job.State)
	}
	work := e.svc.dir("work", j.ID)
	if _, err := os.Stat(work); err != nil {
		t.Fatalf("the work folder of a sandbox that may still run was removed: %v", err)
	}
	if rep, err := e.svc.Recover(ctx); err != nil || len(rep.Stopped) != 1 {
		t.Fatalf("Recover = %+v, %v", rep, err)
	}
	if _, err := os.Stat(work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after recovery confirmed the sandbox gone, the work folder is still there: %v", err)
	}
}

// Close during a preparation kills its sandbox and waits for it; it does
// not panic on the preparation's handle.
func TestCloseDuringPrepare(t *testing.T) {
	e := setup(t, false)
	started := make(chan struct{})
	e.fake.behave = func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
		close(started)
		<-ctx.Done()
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1, Signal: "KILL"}, nil
	}
	errc := make(chan error, 1)
	go func() {
		_, err := e.svc.Prepare(context.Background(), e.version)
		errc <- err
	}()
	<-started
	closed := make(chan struct{})
	go func() { e.svc.Close(); close(closed) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Prepare succeeded although Close killed its sandbox")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not stop the preparation")
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
	}
}

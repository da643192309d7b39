package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/fake"
)

func TestFakeRecordsAndKills(t *testing.T) {
	x := fake.New()
	started := make(chan struct{})
	x.Respond = func(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
		if spec.Name == "quick" {
			return sandbox.Result{Reason: sandbox.ReasonExited, Stdout: []byte("hi")}, nil
		}
		close(started)
		<-ctx.Done()
		return sandbox.Result{}, nil
	}
	res, err := x.Run(context.Background(), sandbox.Spec{Name: "quick", Argv: []string{"/bin/true"}})
	if err != nil || string(res.Stdout) != "hi" {
		t.Fatal(res, err)
	}
	done := make(chan sandbox.Result)
	go func() {
		res, _ := x.Run(context.Background(), sandbox.Spec{Name: "slow", Argv: []string{"/bin/true"}})
		done <- res
	}()
	<-started
	if names, _ := x.Running(context.Background()); len(names) != 1 || names[0] != "slow" {
		t.Fatalf("Running = %q", names)
	}
	if err := x.Kill(context.Background(), "slow"); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Reason != sandbox.ReasonKilled {
		t.Errorf("reason %s", res.Reason)
	}
	if got := len(x.Specs()); got != 2 {
		t.Errorf("%d specs recorded", got)
	}
	x.Unkillable("stuck")
	if err := x.Kill(context.Background(), "stuck"); !errors.Is(err, sandbox.ErrUnconfirmed) {
		t.Errorf("Kill of an unkillable run: %v", err)
	}
}

// Package fake is a sandbox.Executor for unit tests of the hub's job
// layer: it runs nothing. Each Run records its Spec and returns the result
// a test scripted for it, or waits until the test releases it, so tests
// can observe a run in progress, cancel it, or make a kill unconfirmed.
// It is never used outside tests: a hub given it would report jobs as run
// that never ran.
package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// Executor is the fake backend. The zero value is not usable; call New.
type Executor struct {
	// CheckErr, when set, is what Check returns (the backend "does not
	// work on this host").
	CheckErr error
	// Respond, when set, computes the result of each run; otherwise a run
	// exits 0 with empty output. Respond runs while the run is listed by
	// Running, so it may block (for instance on ctx) to model a long run.
	Respond func(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)

	mu      sync.Mutex
	specs   []sandbox.Spec
	running map[string]*live
	// unkillable names runs whose kill is not confirmed.
	unkillable map[string]bool
}

var _ sandbox.Executor = (*Executor)(nil)

// live is one run in progress.
type live struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returns
}

// New returns a fake backend with no scripted results.
func New() *Executor {
	return &Executor{running: map[string]*live{}, unkillable: map[string]bool{}}
}

// Name is "fake".
func (e *Executor) Name() string { return "fake" }

// Check returns CheckErr, or what the fake "enforces".
func (e *Executor) Check(context.Context) (sandbox.Enforced, error) {
	if e.CheckErr != nil {
		return sandbox.Enforced{}, e.CheckErr
	}
	return sandbox.Enforced{Backend: "fake", Missing: []string{"everything: the fake backend runs nothing (tests only)"}}, nil
}

// Run records spec and answers with Respond. Ending ctx (or Kill) ends the
// context Respond sees; if Respond then returns without a result error,
// the run reports ReasonKilled, or ErrUnconfirmed for a name passed to
// Unkillable.
func (e *Executor) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	if err := sandbox.CheckSpec(spec); err != nil {
		return sandbox.Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.mu.Lock()
	if _, dup := e.running[spec.Name]; dup {
		e.mu.Unlock()
		return sandbox.Result{}, fmt.Errorf("fake: a run named %s is already running", spec.Name)
	}
	e.specs = append(e.specs, spec)
	l := &live{cancel: cancel, done: make(chan struct{})}
	e.running[spec.Name] = l
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.running, spec.Name)
		e.mu.Unlock()
		close(l.done)
	}()

	res := sandbox.Result{Reason: sandbox.ReasonExited}
	var err error
	if e.Respond != nil {
		res, err = e.Respond(ctx, spec)
	}
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		e.mu.Lock()
		stuck := e.unkillable[spec.Name]
		e.mu.Unlock()
		if stuck {
			return sandbox.Result{}, fmt.Errorf("fake: run %s: %w", spec.Name, sandbox.ErrUnconfirmed)
		}
		res.Reason, res.ExitCode, res.Signal = sandbox.ReasonKilled, -1, "killed"
	}
	return res, nil
}

// Running lists the runs in progress.
func (e *Executor) Running(context.Context) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, 0, len(e.running))
	for n := range e.running {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Kill ends the named run's context and waits until its Run has
// returned; an unknown name is not an error. A name passed to Unkillable
// fails with ErrUnconfirmed.
func (e *Executor) Kill(ctx context.Context, name string) error {
	e.mu.Lock()
	stuck, l := e.unkillable[name], e.running[name]
	e.mu.Unlock()
	if stuck {
		return fmt.Errorf("fake: kill %s: %w", name, sandbox.ErrUnconfirmed)
	}
	if l == nil {
		return nil
	}
	l.cancel()
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("fake: kill %s: %w (%v)", name, sandbox.ErrUnconfirmed, ctx.Err())
	}
}

// Unkillable makes every kill of the named run unconfirmed.
func (e *Executor) Unkillable(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unkillable[name] = true
}

// Specs returns the specs of every run so far, in order.
func (e *Executor) Specs() []sandbox.Spec {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.specs)
}

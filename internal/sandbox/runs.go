package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Runs is the registry of a backend's runs in progress in this process:
// one run per name, killed by name. Its zero value is ready to use and it
// is safe for concurrent use.
type Runs struct {
	mu sync.Mutex
	m  map[string]*Run
}

// Run is one registered run.
type Run struct {
	killed chan struct{}
	once   sync.Once
	done   chan struct{}
	err    error // Run's error, read after done
}

// Killed is closed when Runs.Kill asks the run to stop.
func (r *Run) Killed() <-chan struct{} { return r.killed }

// Add registers a run of name; a name already running is refused.
func (rs *Runs) Add(name string) (*Run, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]*Run{}
	}
	if _, dup := rs.m[name]; dup {
		return nil, fmt.Errorf("a run named %s is already running", name)
	}
	r := &Run{killed: make(chan struct{}), done: make(chan struct{})}
	rs.m[name] = r
	return r, nil
}

// Done records the end of a run with its error. A run whose end is not
// confirmed (err matches ErrUnconfirmed) stays registered: it may still
// run, and Kill then reports so until Forget.
func (rs *Runs) Done(name string, r *Run, err error) {
	r.err = err
	rs.mu.Lock()
	if !errors.Is(err, ErrUnconfirmed) && rs.m[name] == r {
		delete(rs.m, name)
	}
	rs.mu.Unlock()
	close(r.done)
}

// Forget drops an unconfirmed run once its backend confirmed it gone
// another way.
func (rs *Runs) Forget(name string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.m[name]; r != nil {
		select {
		case <-r.done:
			delete(rs.m, name)
		default:
		}
	}
}

// Kill asks the named run of this process to stop and waits until its
// Run has returned. It reports whether the run was confirmed gone that
// way; false with a nil error means no run of that name is registered,
// false with an error matching ErrUnconfirmed that its Run could not
// confirm its end (the backend may try another way).
func (rs *Runs) Kill(ctx context.Context, name string) (bool, error) {
	rs.mu.Lock()
	r := rs.m[name]
	rs.mu.Unlock()
	if r == nil {
		return false, nil
	}
	r.once.Do(func() { close(r.killed) })
	select {
	case <-r.done:
		if errors.Is(r.err, ErrUnconfirmed) {
			return false, r.err
		}
		return true, nil
	case <-ctx.Done():
		return false, fmt.Errorf("kill %s: %w (%v)", name, ErrUnconfirmed, ctx.Err())
	}
}

// Names lists the registered runs, sorted.
func (rs *Runs) Names() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	names := make([]string, 0, len(rs.m))
	for n := range rs.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Has reports whether a run of name is registered.
func (rs *Runs) Has(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.m[name] != nil
}

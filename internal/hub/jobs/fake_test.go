package jobs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// fakeExec is this package's test Executor: it runs nothing itself, but
// hands each Spec to behave, with a function that maps a path inside the
// sandbox to the host path its mount gives it.
type fakeExec struct {
	behave   func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error)
	checkErr error
	killErr  error

	mu      sync.Mutex
	specs   []sandbox.Spec
	running map[string]bool // names Running reports
	killed  []string
	runs    map[string]int // runs per sandbox name
}

func newFake(behave func(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error)) *fakeExec {
	return &fakeExec{behave: behave, running: map[string]bool{}, runs: map[string]int{}}
}

var _ sandbox.Executor = (*fakeExec)(nil)

func (f *fakeExec) Name() string { return "fake" }

func (f *fakeExec) Check(context.Context) (sandbox.Enforced, error) {
	return sandbox.Enforced{Backend: "fake", Limits: []string{"none: a test fake"}}, f.checkErr
}

func hostOf(spec sandbox.Spec) func(string) string {
	return func(p string) string {
		best := -1
		for i, m := range spec.Mounts {
			if (p == m.Target || strings.HasPrefix(p, m.Target+"/")) && (best < 0 || len(m.Target) > len(spec.Mounts[best].Target)) {
				best = i
			}
		}
		if best < 0 {
			return p
		}
		m := spec.Mounts[best]
		return m.Host + strings.TrimPrefix(p, m.Target)
	}
}

func (f *fakeExec) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.running[spec.Name] = true
	f.runs[spec.Name]++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.running, spec.Name)
		f.mu.Unlock()
	}()
	r, err := f.behave(ctx, spec, hostOf(spec))
	if err == nil && ctx.Err() != nil && r.Reason == "" {
		return sandbox.Result{Reason: sandbox.ReasonKilled, ExitCode: -1, Signal: "KILL"}, nil
	}
	return r, err
}

func (f *fakeExec) Running(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.running {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeExec) Kill(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.killErr != nil {
		return f.killErr
	}
	delete(f.running, name)
	f.killed = append(f.killed, name)
	return nil
}

func (f *fakeExec) lastSpec() sandbox.Spec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.specs[len(f.specs)-1]
}

// hostExec runs the spec's command on the host with its paths mapped
// through the mounts: only for trusted commands of the tests (pip with a
// local wheel, a copy script), never a sandbox.
func hostExec(ctx context.Context, spec sandbox.Spec, host func(string) string) (sandbox.Result, error) {
	mapped := func(s string) string {
		for _, m := range spec.Mounts {
			s = strings.ReplaceAll(s, m.Target+"/", m.Host+"/")
			if s == m.Target {
				s = m.Host
			}
		}
		return s
	}
	argv := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		argv[i] = mapped(a)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = host(spec.Dir)
	for _, e := range spec.Env {
		k, v, _ := strings.Cut(e, "=")
		if k == "PATH" {
			v = os.Getenv("PATH")
		} else {
			v = mapped(v)
			if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "/usr") {
				v = host(v)
			}
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := sandbox.Result{Reason: sandbox.ReasonExited, Stdout: []byte(stdout.String()), Stderr: []byte(stderr.String()), Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	case err != nil:
		return sandbox.Result{}, err
	}
	return r, nil
}

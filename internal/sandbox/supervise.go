package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Process is one started sandbox as Supervise drives it. A backend
// implements the three things that differ between backends; everything
// else about a run's end (wall time, kills, quotas, output, the reason)
// is Supervise's.
type Process interface {
	// Exited is closed once the sandbox's command has ended, by itself or
	// killed.
	Exited() <-chan struct{}
	// Kill kills every process of the sandbox. It does not wait: Confirm
	// does.
	Kill()
	// Confirm waits, at most until ctx ends, until every process of the
	// sandbox is gone and its resources are released, and says how the
	// command ended. An error means the sandbox may still run.
	Confirm(ctx context.Context) (Exit, error)
}

// Exit is how a sandbox's command ended, as its backend saw it.
type Exit struct {
	Code   int    // the exit status; -1 when a signal ended it
	Signal string // the signal's name, when one ended it
	OOM    bool   // the kernel killed a process for passing Limits.Memory
	// Gone says the sandbox was removed from outside (another process's
	// Kill) before its status could be read: a kill.
	Gone bool
}

// Watch is what Supervise watches besides the process.
type Watch struct {
	// Limits are the run's, defaults applied.
	Limits Limits
	// Killed is closed when the run must stop (Runs.Kill).
	Killed <-chan struct{}
	// Writable are the host folders of the writable mounts, measured
	// against Limits.WorkTree and WorkFiles every Poll.
	Writable []string
	// Poll is how often they are measured; zero: DefaultPoll.
	Poll time.Duration
	// Stdout and Stderr capture the command's streams; Confirm returns
	// only once nothing more is written to them.
	Stdout, Stderr *Capture
}

// DefaultPoll is how often a run's writable mounts are measured.
const DefaultPoll = 100 * time.Millisecond

// ConfirmWait bounds how long a killed sandbox may take to be gone before
// its end is reported as not confirmed.
const ConfirmWait = 20 * time.Second

// Supervise drives a started sandbox to its end: it waits for the command
// to exit, and kills the sandbox when the wall time passes, ctx ends, the
// run is killed by name or its work tree passes its quota. It returns only
// once Confirm says the sandbox is gone; when it cannot, the error matches
// ErrUnconfirmed. The Result's Duration counts from the call.
func Supervise(ctx context.Context, p Process, w Watch) (Result, error) {
	start := time.Now()
	lim := w.Limits
	poll := w.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	timer := time.NewTimer(lim.Wall)
	defer timer.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var reason Reason
loop:
	for {
		select {
		case <-p.Exited():
			break loop
		case <-timer.C:
			reason = ReasonTimeout
		case <-ctx.Done():
			reason = ReasonKilled
		case <-w.Killed:
			reason = ReasonKilled
		case <-tick.C:
			if len(w.Writable) > 0 {
				if _, _, over := WorkUsage(w.Writable, lim.WorkTree, lim.WorkFiles); over || workspaceFull(w.Writable) {
					reason = ReasonQuota
				}
			}
		}
		if reason != "" {
			break loop
		}
	}
	if reason != "" {
		p.Kill()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ConfirmWait)
	defer cancel()
	exit, err := p.Confirm(cctx)
	if err != nil {
		if !errors.Is(err, ErrUnconfirmed) {
			err = fmt.Errorf("%w: %v", ErrUnconfirmed, err)
		}
		return Result{}, err
	}
	res := Result{Duration: time.Since(start), ExitCode: exit.Code, Signal: exit.Signal}
	if w.Stdout != nil {
		res.Stdout, res.StdoutCut = w.Stdout.Result()
	}
	if w.Stderr != nil {
		res.Stderr, res.StderrCut = w.Stderr.Result()
	}
	if reason == "" && exit.Gone {
		reason = ReasonKilled
	}
	switch {
	case reason != "":
		res.Reason, res.ExitCode, res.Signal = reason, -1, "SIGKILL"
	case exit.OOM:
		res.Reason = ReasonMemory
	case workspaceFull(w.Writable) || (exit.Code != 0 && saysNoSpace(res.Stderr)):
		// The work folder's file system is full, or the command failed
		// on ENOSPC (the file system refuses a write, a fallocate or a
		// new file whole, so it need not be full afterwards).
		res.Reason = ReasonQuota
	default:
		res.Reason = ReasonExited
	}
	return res, nil
}

// saysNoSpace reports whether a command's stderr names ENOSPC, as the C
// library, Python and Node word it.
func saysNoSpace(stderr []byte) bool {
	return bytes.Contains(stderr, []byte("No space left on device")) || bytes.Contains(stderr, []byte("ENOSPC"))
}

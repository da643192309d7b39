// Package sandbox runs one command in a locked-down sandbox: the skill hub's
// job scripts and its environment preparation. Every backend (bubblewrap,
// the Docker engine, and a fake for unit tests of callers) implements
// Executor; callers never run a script any other way. A host with no working
// backend refuses jobs: nothing here falls back to a plain exec.
//
// The package knows commands, mounts and limits, not skills: the hub's job
// layer turns a profile, a script and its arguments into a Spec.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Mount makes a host folder visible inside the sandbox at Target. A mount is
// read-only unless Writable is set.
type Mount struct {
	Host     string // an absolute host path
	Target   string // an absolute path inside the sandbox, e.g. "/package"
	Writable bool
}

// Limits bound one run. A zero field takes the default of DefaultLimits.
type Limits struct {
	// Wall is the wall-clock time the run may take; the sandbox is killed
	// when it has passed (Result.Reason ReasonTimeout).
	Wall time.Duration
	// Memory bounds the sandbox's memory in bytes.
	Memory int64
	// CPUs is the share of CPUs the sandbox may use (1: one CPU).
	CPUs float64
	// CPUTime bounds the CPU time of each process of the sandbox
	// (RLIMIT_CPU: the process is killed with SIGKILL when it passes it);
	// zero means Wall × CPUs, rounded up to a second.
	CPUTime time.Duration
	// Processes bounds the processes and threads of the sandbox.
	Processes int
	// FileSize bounds each file the sandbox writes, in bytes.
	FileSize int64
	// Output bounds what is kept of stdout and of stderr, each, in bytes;
	// the rest is read and dropped, and the Result says it was cut.
	Output int64
	// WorkTree bounds the total size of the writable mounts, measured while
	// the run goes on; passing it stops the run (ReasonQuota). Measuring is
	// periodic, so a run can overshoot briefly.
	WorkTree int64
	// WorkFiles bounds the number of files in the writable mounts.
	WorkFiles int
}

// DefaultLimits are the seed's: 300 s at most per run is the caller's
// ceiling, these are the defaults when a field is zero.
var DefaultLimits = Limits{
	Wall:      60 * time.Second,
	Memory:    512 << 20,
	CPUs:      1,
	Processes: 128,
	FileSize:  32 << 20,
	Output:    1 << 20,
	WorkTree:  128 << 20,
	WorkFiles: 2000,
}

// Spec is one command to run.
type Spec struct {
	// Name names the run uniquely on this host (the container's name in
	// Docker); Kill and Running use it. Letters, digits, '-' and '_' only.
	Name string
	// Argv is the command and its arguments, run directly (never through a
	// shell), e.g. {"/usr/bin/python3", "/package/scripts/x.py", "in.csv"}.
	Argv []string
	// Dir is the working directory inside the sandbox ("/work").
	Dir string
	// Env is the whole environment of the command, "KEY=value"; nothing of
	// the host's environment is passed.
	Env []string
	// Mounts are the host folders the command sees.
	Mounts []Mount
	// Image is the Docker image (an id or a local tag); bubblewrap ignores
	// it. RootFS is bubblewrap's root tree (empty: the host's /usr,
	// read-only); Docker ignores it.
	Image  string
	RootFS string
	// Network gives the sandbox the host's network; off by default.
	Network bool
	Limits  Limits
}

// Reason says how a run ended.
type Reason string

// The reasons a run ends.
const (
	ReasonExited  Reason = "exited"  // the command ended by itself (any exit code)
	ReasonTimeout Reason = "timeout" // Limits.Wall passed; the sandbox was killed
	ReasonMemory  Reason = "memory"  // killed for passing Limits.Memory
	ReasonQuota   Reason = "quota"   // the work tree passed Limits.WorkTree or WorkFiles
	ReasonKilled  Reason = "killed"  // the context ended or Kill was called
)

// Result is what a run left.
type Result struct {
	Reason   Reason
	ExitCode int // the command's exit status; -1 when it was killed by a signal
	Signal   string
	// Stdout and Stderr are the first Limits.Output bytes of each stream;
	// StdoutCut and StderrCut say more was written and dropped.
	Stdout, Stderr       []byte
	StdoutCut, StderrCut bool
	Duration             time.Duration
}

// Enforced says which limits a backend enforces on this host, for the
// start-up log and for refusals.
type Enforced struct {
	Backend string
	// Limits lists what is enforced and how, e.g. "memory: cgroup v1",
	// "processes: rlimit", "network: none (net namespace)".
	Limits []string
	// Missing lists what cannot be enforced here and why.
	Missing []string
}

// Executor runs commands in sandboxes of one kind.
type Executor interface {
	// Name is the backend's name: "bwrap", "docker", "fake".
	Name() string
	// Check verifies that the backend works on this host (binary present,
	// namespaces allowed, engine reachable) and says what it enforces. An
	// error says why it cannot be used.
	Check(ctx context.Context) (Enforced, error)
	// Run runs spec and waits for it to end. Ending ctx kills the sandbox
	// (its whole process tree, or its container) and Run returns only once
	// the kill is confirmed, with Reason ReasonKilled; when it cannot be
	// confirmed Run returns an error matching ErrUnconfirmed.
	Run(ctx context.Context, spec Spec) (Result, error)
	// Running lists the names of this backend's sandboxes that are still
	// running on this host, for recovery after a restart.
	Running(ctx context.Context) ([]string, error)
	// Kill stops the named sandbox and confirms it is gone; a name that is
	// not running is not an error.
	Kill(ctx context.Context, name string) error
}

// ErrUnconfirmed is matched by the error of a kill that could not be
// confirmed: the sandbox may still run, so its files must not be served.
var ErrUnconfirmed = errors.New("sandbox: termination not confirmed")

// ErrNoImage is matched by the error of a backend that runs images (the
// Docker engine) when the image a spec or a lookup names is not on it.
var ErrNoImage = errors.New("sandbox: no such image")

// ErrUnavailable is matched by the error of Select when no backend works.
var ErrUnavailable = errors.New("sandbox: no backend available")

var ownerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// CheckOwner reports what is wrong with a backend's owner name: it names
// cgroup folders, containers and state folders, so it is a plain
// identifier of at most 64 letters, digits, '-' or '_'.
func CheckOwner(owner string) error {
	if !ownerRE.MatchString(owner) {
		return fmt.Errorf("sandbox: owner %q: want 1-64 letters, digits, '-' or '_', starting with a letter or digit", owner)
	}
	return nil
}

// WorkTreeEnforced adds to a backend's Enforced lists how the work folder
// is bounded on this host: a tmpfs of its own with a hard size when this
// process may mount one (MountWorkspace), else measured during the run.
func WorkTreeEnforced(limits, missing []string) ([]string, []string) {
	if WorkspaceSupported() {
		return append(limits, "work folder: a tmpfs of its own of Limits.WorkTree bytes and WorkFiles entries when the caller mounts one (ENOSPC inside; reserved, sparse and unlinked-open files count)"), missing
	}
	return append(limits, "work tree: measured every 100ms, killed when over (may overshoot briefly)"),
		append(missing, "disk: no hard size for the work folder (mounting one needs root); it is measured instead")
}

package sandbox

import (
	"context"
	"fmt"
	"strings"
)

// Select picks the backend for --sandbox NAME among candidates: "auto"
// takes the first candidate whose Check passes, in the order given (the
// hub passes bubblewrap, then Docker); any other name takes the candidate
// of that name, which must pass its Check. When none can be used the error
// matches ErrUnavailable and says, for each backend tried, why it failed.
// Nothing ever falls back to running a command without a sandbox.
func Select(ctx context.Context, name string, candidates ...Executor) (Executor, Enforced, error) {
	var tried []string
	known := make([]string, 0, len(candidates))
	for _, c := range candidates {
		known = append(known, c.Name())
		if name != "auto" && c.Name() != name {
			continue
		}
		enf, err := c.Check(ctx)
		if err == nil {
			if enf.Backend == "" {
				enf.Backend = c.Name()
			}
			return c, enf, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", c.Name(), err))
	}
	if len(tried) == 0 {
		return nil, Enforced{}, fmt.Errorf("%w: --sandbox %q names no backend (want auto or one of %s)", ErrUnavailable, name, strings.Join(known, ", "))
	}
	return nil, Enforced{}, &unavailableError{tried: tried}
}

// unavailableError lists why each backend was refused.
type unavailableError struct{ tried []string }

func (e *unavailableError) Error() string {
	return "sandbox: no backend available, so script jobs are refused (tried " + strings.Join(e.tried, "; ") +
		"); install bubblewrap or start the Docker engine, or choose one with --sandbox"
}

func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

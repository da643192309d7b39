package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// defaultDeadline bounds a whole pull or check. Each request has its own
// timeout, but a server that answers every request just in time (a body
// dripped a byte at a time, a listing whose cursors never end) could
// otherwise hold a client for hours; a few minutes is ample for any
// library a server may serve within the SEP-2640 limits on a working link.
const defaultDeadline = 5 * time.Minute

// deadlineEnv is the environment twin of --deadline for pull and check.
const deadlineEnv = "SKILLS_DEADLINE"

// errDeadline is the cause of a context that reached its --deadline.
var errDeadline = errors.New("the --deadline was reached")

// withDeadline bounds ctx by d, with errDeadline as the cause.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errDeadline)
}

// pastDeadline reports whether ctx ended at its --deadline.
func pastDeadline(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errDeadline)
}

// deadlineError says that cmd stopped at its deadline, what it was doing
// (err, if any, without the bare "context deadline exceeded" it ends
// with), what that left, and the way out.
func deadlineError(cmd string, d time.Duration, err error, left string) error {
	doing := ""
	if err != nil {
		msg := strings.TrimSuffix(err.Error(), ": "+context.DeadlineExceeded.Error())
		msg = strings.TrimSuffix(msg, ": "+errDeadline.Error())
		if msg != context.DeadlineExceeded.Error() {
			doing = " (" + msg + ")"
		}
	}
	return fmt.Errorf("%s stopped at its --deadline of %s before it finished%s; %s. The server is too slow or never ends a listing; raise --deadline (or %s) if it is only slow", cmd, d, doing, left, deadlineEnv)
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// follow acts on the job feed until the service closes: a job queued
// anywhere wakes an idle worker; a job this replica runs that was stopped,
// settled or taken elsewhere has its run cancelled; whoever waits for a
// job hears of its change; a preparation running here whose profile
// changed is cancelled (its result could not be recorded). The feed's
// periodic look is the fallback for announcements lost on the way.
func (s *Service) follow(changes <-chan store.JobChange) {
	for c := range changes {
		switch c.Kind {
		case store.JobsWaiting:
			s.kick()
		case store.JobChanged, store.JobGone:
			if c.State == store.JobQueued {
				s.kick()
			}
			s.mu.Lock()
			h := s.runs[c.JobID]
			s.mu.Unlock()
			if h != nil && !h.ending.Load() && (c.Kind == store.JobGone || c.StopRequested || c.State != store.JobRunning || c.ClaimedBy != s.opts.Replica) {
				// The change may have been read before this replica's
				// claim: judge by the job as it is now.
				s.judge(c.JobID, h)
			}
			s.announce(c.JobID)
		case store.ProfileChanged:
			s.mu.Lock()
			p := s.preps[c.VersionID]
			s.mu.Unlock()
			if p != nil && c.Revision != 0 && c.Revision != p.revision {
				p.cancel(fmt.Errorf("%w: the execution profile changed during the preparation (revision %d, now %d): prepare it again", errStopped, p.revision, c.Revision))
			}
		}
	}
}

// judge cancels the run h of job id when the job, read now, was stopped,
// deleted or settled elsewhere (by force, or after this replica's lease
// lapsed): nothing of the run can be stored then.
func (s *Service) judge(id string, h *runHandle) {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	j, err := s.st.GetJob(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.cancel(fmt.Errorf("%w: the job was deleted", errStopped))
	case err != nil:
		// Unreadable now: the next announcement or the feed's look tells.
	case j.StopRequested && j.State == store.JobRunning:
		h.cancel(stopCause(j.Reason))
	case j.State != store.JobRunning || j.ClaimedBy != s.opts.Replica:
		h.cancel(fmt.Errorf("%w: the job was settled elsewhere (it is %s: %s)", errStopped, j.State, j.Reason))
	}
}

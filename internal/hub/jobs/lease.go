package jobs

import (
	"context"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// keepLease renews this replica's lease every quarter of it until the
// service closes, and after each renewal settles what replicas whose lease
// lapsed left: once this replica has seen a lease lapsed, in the
// database's time, for a whole lease more (so that a replica that merely
// lost the database for a while, as every replica does when the database
// restarts, has renewed it by then), their locked jobs and preparations
// are settled at once and their running jobs once the job's timeout plus
// a lease has passed since it started (no run can still be going on or
// still have a result to store). A replica replaced by a new one with
// another id, one that never comes back, is settled this way within about
// three leases, plus the job's timeout.
func (s *Service) keepLease() {
	lease := s.opts.Lease
	every := lease / 4
	timer := time.NewTimer(every)
	defer timer.Stop()
	seen := map[string]time.Time{} // replica → when its lease was first seen lapsed
	failing := false
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		}
		next := every
		now, err := s.st.Heartbeat(s.ctx, s.opts.Replica, lease)
		switch {
		case err != nil && s.ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				failing = true
				s.log.Warn("this replica's lease cannot be renewed; its runs go on, and their ends are kept until the database is back", "replica", s.opts.Replica, "err", err)
			}
			next = min(every, time.Second)
		default:
			if failing {
				failing = false
				s.log.Info("this replica's lease is renewed again", "replica", s.opts.Replica, "at", now)
			}
			s.settleLapsed(seen)
		}
		timer.Reset(next)
	}
}

// settleLapsed settles what the replicas whose lease has been seen lapsed
// for a whole lease left (see keepLease).
func (s *Service) settleLapsed(seen map[string]time.Time) {
	leases, now, err := s.st.Leases(s.ctx)
	if err != nil {
		return // the next heartbeat tries again
	}
	lapsed := map[string]bool{}
	for _, l := range leases {
		if l.Replica == s.opts.Replica || !l.Lapsed {
			continue
		}
		lapsed[l.Replica] = true
		first, ok := seen[l.Replica]
		if !ok {
			seen[l.Replica] = now
			if l.ActiveJobs > 0 || l.Preparations > 0 {
				s.log.Warn("a replica's lease has lapsed; its jobs are settled if it does not renew it", "replica", l.Replica, "until", l.Until, "jobs", l.ActiveJobs, "preparations", l.Preparations)
			}
			continue
		}
		if now.Sub(first) < s.opts.Lease {
			continue
		}
		got, err := s.st.SettleOrphans(s.ctx, l.Replica, s.opts.Replica, s.opts.Lease)
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Warn("settling the jobs of a replica whose lease lapsed", "replica", l.Replica, "err", err)
			}
			continue
		}
		for _, j := range got.Jobs {
			s.log.Warn("settled a job of a replica whose lease lapsed", "job", j.ID, "replica", l.Replica, "state", j.State, "reason", j.Reason)
			s.audit(context.Background(), store.AuditEntry{Actor: "replica", Action: "job.settle", ObjectKind: "job", ObjectID: j.ProjectID + "/" + j.ID, Result: string(j.State)})
		}
		for _, v := range got.Preparations {
			s.log.Warn("settled a preparation of a replica whose lease lapsed", "version", v, "replica", l.Replica)
		}
		if got.Waiting == 0 {
			delete(seen, l.Replica)
		}
	}
	for r := range seen {
		if !lapsed[r] {
			delete(seen, r) // renewed, or forgotten
		}
	}
}

// Leases lists the replicas' leases in the database, with the database's
// time they were judged at.
func (s *Service) Leases(ctx context.Context) ([]store.Lease, time.Time, error) {
	return s.st.Leases(ctx)
}

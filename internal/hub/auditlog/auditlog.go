// Package auditlog writes the skill hub's audit entries so that none is
// dropped when the database is briefly away: an entry that cannot be
// written at once is kept, in order, with the time of its event and the
// replica that acted, and retried with backoff until it is written. The
// admin API's changes and the job service's runs record through it.
//
// Only a full queue (MaxPending entries waiting while the database stays
// away) or a Close whose deadline passes loses entries, and each loss is
// logged with what was lost.
package auditlog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Appender is where entries are written; *store.DB is one.
type Appender interface {
	AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error)
}

// Defaults of Options.
const (
	DefaultMaxPending = 10_000
	// writeTimeout bounds one attempt to write an entry.
	writeTimeout = 5 * time.Second
	// Backoff between attempts while the database is away.
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Replica names this process in every entry that names none.
	Replica string
	// Logger receives entries that had to wait and entries lost. If nil,
	// nothing is logged.
	Logger *slog.Logger
	// MaxPending bounds the entries waiting to be written. If zero,
	// DefaultMaxPending.
	MaxPending int
	// Now is the clock of entries' times. If nil, time.Now.
	Now func() time.Time
}

// Log records audit entries. Its methods are safe for concurrent use.
// Close it when done: it stops the goroutine that retries.
type Log struct {
	st      Appender
	replica string
	log     *slog.Logger
	max     int
	now     func() time.Time

	mu      sync.Mutex
	pending []store.AuditEntry
	closed  bool
	wake    chan struct{}
	stop    chan struct{} // closed by Close: retry once more, then give up
	done    chan struct{} // closed when the retrying goroutine has ended
}

// New starts a log writing to st.
func New(st Appender, opts *Options) *Log {
	if opts == nil {
		opts = &Options{}
	}
	l := &Log{st: st, replica: opts.Replica, log: opts.Logger, max: opts.MaxPending, now: opts.Now,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.max <= 0 {
		l.max = DefaultMaxPending
	}
	if l.now == nil {
		l.now = time.Now
	}
	go l.run()
	return l
}

// Record writes e: at once when the database takes it (within a few
// seconds, also when ctx has ended, so that a client that hung up is
// still recorded), else later, retried until it is written. e.At and
// e.Replica default to now and the log's replica. An entry the store
// refuses as invalid is logged and dropped: retrying cannot help.
func (l *Log) Record(ctx context.Context, e store.AuditEntry) {
	if e.At.IsZero() {
		e.At = l.now()
	}
	if e.Replica == "" {
		e.Replica = l.replica
	}
	l.mu.Lock()
	queued := len(l.pending) > 0 // keep the order: behind what waits
	closed := l.closed
	l.mu.Unlock()
	if !queued || closed {
		err := l.write(ctx, e)
		if err == nil || errors.Is(err, store.ErrInvalid) || closed {
			if err != nil {
				l.log.Error("audit: an entry was not recorded", "action", e.Action, "object", e.ObjectID, "actor", e.Actor, "result", e.Result, "err", err)
			}
			return
		}
		l.log.Warn("audit: an entry waits for the database; it is retried until it is written", "action", e.Action, "object", e.ObjectID, "err", err)
	}
	l.mu.Lock()
	if len(l.pending) >= l.max {
		lost := l.pending[0]
		l.pending = l.pending[1:]
		l.log.Error("audit: too many entries wait for the database; the oldest is lost", "action", lost.Action, "object", lost.ObjectID, "actor", lost.Actor, "at", lost.At)
	}
	l.pending = append(l.pending, e)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Pending counts the entries waiting to be written.
func (l *Log) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

func (l *Log) write(ctx context.Context, e store.AuditEntry) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	_, err := l.st.AppendAudit(ctx, e)
	return err
}

// run writes the waiting entries in order, with backoff while the
// database refuses them, until Close.
func (l *Log) run() {
	defer close(l.done)
	backoff := backoffMin
	for {
		l.mu.Lock()
		var e store.AuditEntry
		have := len(l.pending) > 0
		if have {
			e = l.pending[0]
		}
		l.mu.Unlock()
		if !have {
			select {
			case <-l.wake:
				continue
			case <-l.stop:
				return
			}
		}
		err := l.write(context.Background(), e)
		if err == nil || errors.Is(err, store.ErrInvalid) {
			if err != nil {
				l.log.Error("audit: an entry was not recorded", "action", e.Action, "object", e.ObjectID, "err", err)
			}
			l.mu.Lock()
			l.pending = l.pending[1:]
			left := len(l.pending)
			l.mu.Unlock()
			if left == 0 {
				l.log.Info("audit: the entries that waited for the database are recorded")
			}
			backoff = backoffMin
			continue
		}
		select {
		case <-time.After(backoff):
			backoff = min(2*backoff, backoffMax)
		case <-l.stop:
			return
		}
	}
}

// Close stops retrying once the waiting entries are written or ctx ends,
// and logs each entry it could not write. Entries recorded afterwards are
// tried once.
func (l *Log) Close(ctx context.Context) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	for l.Pending() > 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(l.stop)
	<-l.done
	l.mu.Lock()
	lost := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, e := range lost {
		l.log.Error("audit: the hub stopped before the database took an entry; it is lost", "action", e.Action, "object", e.ObjectID, "actor", e.Actor, "result", e.Result, "at", e.At)
	}
}

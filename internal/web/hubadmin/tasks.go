package hubadmin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// A task is long work a page started (an install, a catalog refresh): it
// runs in the background, owned by the Admin, while its page shows its
// progress, polled by script or refreshed without it.
type task struct {
	id      string
	owner   string // a hash of the session's credential: only its sessions see the task
	title   string
	started time.Time

	mu     sync.Mutex
	state  string // running, done, failed
	lines  []string
	result string // a page to go on to when done
	ended  time.Time
}

// taskView is a task as its page and its JSON route show it.
type taskView struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	State   string   `json:"state"`
	Lines   []string `json:"lines"`
	Result  string   `json:"result,omitempty"`
	Seconds float64  `json:"seconds"`
}

func (t *task) view(now time.Time) taskView {
	t.mu.Lock()
	defer t.mu.Unlock()
	end := now
	if !t.ended.IsZero() {
		end = t.ended
	}
	return taskView{ID: t.id, Title: t.title, State: t.state, Lines: append([]string(nil), t.lines...),
		Result: t.result, Seconds: end.Sub(t.started).Round(100 * time.Millisecond).Seconds()}
}

// say adds a line to the task's log (at most maxTaskLines are kept).
func (t *task) say(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) < maxTaskLines {
		t.lines = append(t.lines, line)
	}
}

const (
	maxTaskLines = 200
	maxTasks     = 200
	// taskTimeout bounds one task's work.
	taskTimeout = 30 * time.Minute
)

// tasks holds the tasks of one Admin; Close cancels those still running
// and waits for them.
type tasks struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	byID  map[string]*task
	order []string
}

func newTasks() *tasks {
	ctx, cancel := context.WithCancel(context.Background())
	return &tasks{ctx: ctx, cancel: cancel, byID: map[string]*task{}}
}

// start runs work in the background as a task and returns it. work says
// where to go when it is done, or fails with the error to show.
func (ts *tasks) start(owner, title string, work func(ctx context.Context, t *task) (string, error)) *task {
	b := make([]byte, 12)
	rand.Read(b)
	t := &task{id: hex.EncodeToString(b), owner: owner, title: title, started: time.Now(), state: "running"}
	ts.mu.Lock()
	if ts.ctx.Err() != nil {
		// Closed: the work never starts, and no goroutine outlives Close.
		ts.mu.Unlock()
		t.state, t.ended = "failed", t.started
		t.lines = []string{"Failed: the server is shutting down; try again once it is back."}
		return t
	}
	ts.evict()
	ts.byID[t.id] = t
	ts.order = append(ts.order, t.id)
	ts.wg.Add(1)
	ts.mu.Unlock()
	go func() {
		defer ts.wg.Done()
		ctx, cancel := context.WithTimeout(ts.ctx, taskTimeout)
		defer cancel()
		result, err := work(ctx, t)
		t.mu.Lock()
		defer t.mu.Unlock()
		t.ended = time.Now()
		if err != nil {
			t.state = "failed"
			t.lines = append(t.lines, "Failed: "+err.Error())
			return
		}
		t.state, t.result = "done", result
		t.lines = append(t.lines, "Done.")
	}()
	return t
}

// evict drops the oldest ended tasks until there is room for one more
// under maxTasks; running tasks are kept, wherever they are in the order.
// ts.mu is held.
func (ts *tasks) evict() {
	keep := ts.order[:0]
	over := len(ts.order) - maxTasks + 1
	for _, id := range ts.order {
		t := ts.byID[id]
		t.mu.Lock()
		running := t.state == "running"
		t.mu.Unlock()
		if over > 0 && !running {
			delete(ts.byID, id)
			over--
			continue
		}
		keep = append(keep, id)
	}
	clear(ts.order[len(keep):])
	ts.order = keep
}

// get returns the task id of owner.
func (ts *tasks) get(owner, id string) *task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil || t.owner != owner {
		return nil
	}
	return t
}

func (ts *tasks) close() {
	// Cancelled under the lock start checks it under: a task either sees
	// the cancellation or is counted before Wait begins.
	ts.mu.Lock()
	ts.cancel()
	ts.mu.Unlock()
	ts.wg.Wait()
}

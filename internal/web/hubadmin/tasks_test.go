package hubadmin

import (
	"context"
	"testing"
	"time"
)

// waitEnded waits, with a generous deadline, for t to leave running.
func waitEnded(t *testing.T, tk *task) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if tk.view(time.Now()).State != "running" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still runs", tk.id)
		}
	}
}

// TestTasksBounded: the ended tasks are dropped, oldest first, to keep at
// most maxTasks, even behind an older task that still runs; the running
// one is kept.
func TestTasksBounded(t *testing.T) {
	ts := newTasks()
	defer ts.close()
	long := ts.start("o", "long", func(ctx context.Context, _ *task) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	for range maxTasks + 50 {
		tk := ts.start("o", "quick", func(context.Context, *task) (string, error) { return "/", nil })
		waitEnded(t, tk)
	}
	ts.mu.Lock()
	n, orderLen := len(ts.byID), len(ts.order)
	ts.mu.Unlock()
	if n > maxTasks || orderLen != n {
		t.Fatalf("%d tasks kept (%d in order), want at most %d", n, orderLen, maxTasks)
	}
	if ts.get("o", long.id) == nil {
		t.Fatal("the running task was dropped")
	}
}

// TestTasksAfterClose: a task started once the tasks are closed never runs
// its work and says why.
func TestTasksAfterClose(t *testing.T) {
	ts := newTasks()
	ts.close()
	ran := false
	tk := ts.start("o", "late", func(context.Context, *task) (string, error) { ran = true; return "/", nil })
	ts.wg.Wait()
	if v := tk.view(time.Now()); ran || v.State != "failed" || len(v.Lines) == 0 {
		t.Fatalf("a task after close: ran %v, %+v", ran, v)
	}
}

// TestAgo: the dashboard's ages and a heartbeat's read as people say
// them.
func TestAgo(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second:    "less than a minute",
		time.Minute:         "1 minute",
		59 * time.Minute:    "59 minutes",
		time.Hour:           "1 hour",
		47 * time.Hour:      "47 hours",
		48 * time.Hour:      "2 days",
		45 * 24 * time.Hour: "45 days",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
	// A heartbeat's age, to the second under a minute.
	for d, want := range map[time.Duration]string{
		-time.Second:            "less than a second",
		900 * time.Millisecond:  "less than a second",
		1500 * time.Millisecond: "1 second",
		59 * time.Second:        "59 seconds",
		3 * time.Minute:         "3 minutes",
	} {
		if got := since(d); got != want {
			t.Errorf("since(%s) = %q, want %q", d, got, want)
		}
	}
}

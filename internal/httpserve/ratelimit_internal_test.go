package httpserve

import (
	"testing"
	"time"
)

// clock is a fake clock that moves only when told.
type clock struct{ t time.Time }

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLimiterBucket(t *testing.T) {
	c := newClock()
	l := newLimiter[string](10, time.Second, 100, c.now) // 10 per second, bursts of 10
	for i := range 10 {
		if v := l.allow("a"); !v.ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	v := l.allow("a")
	if v.ok {
		t.Fatal("request 11 of a burst of 10 allowed")
	}
	if v.retryAfter != 100*time.Millisecond {
		t.Errorf("retryAfter = %v, want 100ms (one token at 10 per second)", v.retryAfter)
	}
	c.advance(99 * time.Millisecond)
	if l.allow("a").ok {
		t.Error("allowed before a token was back")
	}
	c.advance(2 * time.Millisecond)
	if !l.allow("a").ok {
		t.Error("refused after a token was back")
	}
	if !l.allow("b").ok {
		t.Error("key b refused because key a emptied its bucket")
	}
}

func TestLimiterOff(t *testing.T) {
	for _, rate := range []float64{-1, 0} {
		if l := newLimiter[string](rate, time.Second, 100, time.Now); l != nil {
			t.Errorf("newLimiter(%v) is a limit; want none", rate)
		}
	}
}

// TestLimiterBounded sends one request from each of 100,000 keys (an
// attacker rotating addresses, through 200 generations) and checks that the limiter never holds
// more than its bound, while a key that keeps coming back keeps its
// (empty) bucket.
func TestLimiterBounded(t *testing.T) {
	c := newClock()
	const bound = 1000
	l := newLimiter[int](1, time.Second, bound, c.now) // bursts of 1
	if !l.allow(-1).ok {
		t.Fatal("first request of the hot key refused")
	}
	most := 0
	for i := range 100_000 {
		l.allow(i)
		if i%(bound/4) == 0 {
			// Every bound/4 new keys, well within a generation, the hot
			// key comes back: its bucket is still empty.
			if l.allow(-1).ok {
				t.Fatalf("after %d other keys the hot key got a fresh bucket", i)
			}
		}
		most = max(most, l.len())
	}
	if most > bound {
		t.Errorf("limiter held %d buckets; the bound is %d", most, bound)
	}
}

// TestLimiterIdle checks that idle buckets are dropped with time, without
// any eviction pressure, and that a dropped key starts full.
func TestLimiterIdle(t *testing.T) {
	c := newClock()
	l := newLimiter[int](10, time.Second, 1000, c.now)
	for i := range 100 {
		l.allow(i)
	}
	if n := l.len(); n != 100 {
		t.Fatalf("len = %d, want 100", n)
	}
	c.advance(2*l.period + time.Second)
	l.allow(1000)
	if n := l.len(); n != 1 {
		t.Errorf("after two idle periods len = %d, want 1 (the new key)", n)
	}
}

func TestLimiterLogsOncePerMinute(t *testing.T) {
	c := newClock()
	l := newLimiter[string](1, time.Second, 100, c.now)
	l.allow("x") // the one token
	logged := 0
	for range 50 {
		v := l.allow("x")
		if v.ok {
			t.Fatal("allowed with an empty bucket")
		}
		if v.log {
			logged++
			if v.refused != 1 {
				t.Errorf("first logged refusal stands for %d, want 1", v.refused)
			}
		}
		c.advance(time.Millisecond) // never enough for a token at 1/s
	}
	if logged != 1 {
		t.Fatalf("50 refusals within a second logged %d times, want 1", logged)
	}
	c.advance(refusalLogEvery - 50*time.Millisecond - time.Millisecond)
	l.allow("x") // a token came back meanwhile
	for i := range 10 {
		v := l.allow("x")
		if v.log {
			t.Fatalf("refusal %d logged before a minute had passed", i)
		}
	}
	c.advance(time.Second + 10*time.Millisecond)
	l.allow("x")
	v := l.allow("x")
	if !v.log {
		t.Fatal("refusal a minute after the logged one not logged")
	}
	if v.refused != 60 {
		t.Errorf("line stands for %d refusals, want 60 (49 and 10 unlogged, and this one)", v.refused)
	}
}

// TestLimiterLogBudget checks that many offenders at once write at most
// maxRefusalLogs lines a minute, and that the next line counts the rest.
func TestLimiterLogBudget(t *testing.T) {
	c := newClock()
	l := newLimiter[int](1, time.Second, 10000, c.now)
	lines := 0
	for k := range 100 {
		l.allow(k)
		if l.allow(k).log {
			lines++
		}
	}
	if lines != maxRefusalLogs {
		t.Fatalf("100 offenders wrote %d lines, want %d", lines, maxRefusalLogs)
	}
	c.advance(refusalLogEvery)
	l.allow(500)
	v := l.allow(500)
	if !v.log || v.unlogged != 100-maxRefusalLogs {
		t.Errorf("next window's first line: log %v, unlogged %d; want true, %d", v.log, v.unlogged, 100-maxRefusalLogs)
	}
}

func TestAddressKey(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:5000", "192.0.2.7/32"},
		{"[::ffff:192.0.2.7]:5000", "192.0.2.7/32"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"pipe", "invalid Prefix"},
		{"", "invalid Prefix"},
	} {
		if got := addressKey(tc.remote).String(); got != tc.want {
			t.Errorf("addressKey(%q) = %s, want %s", tc.remote, got, tc.want)
		}
	}
	if addressKey("[2001:db8:1:2::1]:1") != addressKey("[2001:db8:1:2::2]:2") {
		t.Error("two addresses of one IPv6 /64 are two clients")
	}
	if addressKey("192.0.2.1:1") == addressKey("192.0.2.2:1") {
		t.Error("two IPv4 addresses are one client")
	}
}

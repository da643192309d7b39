package pull_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/pull"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
)

// TestDeadline: a caller's deadline over the whole pull (the CLI's
// --deadline) stops a server that drips its answers or never ends its
// listing, though no single request is over its own timeout, and leaves the
// destination as it was.
func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(f *pulltest.Fake) http.Handler
	}{
		{"slow-drip body", func(f *pulltest.Fake) http.Handler {
			return pulltest.SlowDrip(f.Handler(true), 50*time.Millisecond, f.Done())
		}},
		{"endless cursor", func(f *pulltest.Fake) http.Handler {
			// Each page comes quickly enough, and there is always a next.
			f.Pages = func(cursor string) string {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-f.Done():
				}
				return fmt.Sprintf(`{"resultType":"complete","skills":[],"nextCursor":"c%s"}`, cursor)
			}
			return f.Handler(true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := demo()
			ts := httptest.NewServer(tc.serve(f))
			defer ts.Close()
			defer f.Stop()
			dest := filepath.Join(t.TempDir(), "skills")
			seedPrevious(t, dest)
			before := snapshot(t, dest)

			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			c, err := pull.Dial(ctx, pull.Endpoint{URL: ts.URL}, &pull.Options{RequestTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = func() error {
				entries, err := c.List(ctx)
				if err != nil {
					return err
				}
				_, err = c.Pull(ctx, entries, &pull.PullOptions{Dest: dest, Force: true})
				return err
			}()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the deadline", err)
			}
			t.Logf("error: %v", err)
			sameTree(t, before, snapshot(t, dest))
		})
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// A profile is per version: setting, enabling and preparing it is
// announced as ChangeProfiles to every project bound to the version and to
// no other, by the store that made the change and by another on the same
// database; setting the same profile again announces nothing.
func TestChangeFeedProfiles(t *testing.T) {
	bothBackends(t, func(t *testing.T, backend string, open storetest.Opener) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// A long poll: what arrives comes from the notification, not the check.
		s := openDB(t, open, store.Options{ChangePoll: time.Hour})
		other := openDB(t, open, store.Options{ChangePoll: time.Hour})
		v, _, err := s.Install(ctx, storetest.Version("demo", skill))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a", "b", "c"} {
			if err := s.CreateProject(ctx, p, p); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []string{"a", "b"} {
			if err := s.Bind(ctx, p, v.ID); err != nil {
				t.Fatal(err)
			}
		}
		feeds := map[string]<-chan store.Change{"same store": s.Changes(ctx)}
		if backend == "postgres" {
			feeds["another store"] = other.Changes(ctx) // SQLite: another process's changes come by the check
		}
		expect := func(what string) {
			t.Helper()
			for name, feed := range feeds {
				got := map[string]bool{}
				deadline := time.After(15 * time.Second)
				for len(got) < 2 {
					select {
					case c := <-feed:
						if c.Kind != store.ChangeProfiles || c.ProjectID == "c" {
							t.Fatalf("%s, %s: change %+v; want profiles of a and b only", what, name, c)
						}
						got[c.ProjectID] = true
					case <-deadline:
						t.Fatalf("%s, %s: only %v announced within 15 s", what, name, got)
					}
				}
			}
		}
		spec := store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"scripts/a.sh"}, TimeoutSeconds: 10}
		if _, err := s.SetProfile(ctx, v.ID, spec); err != nil {
			t.Fatal(err)
		}
		expect("set")
		spec.Enabled = true
		p, err := s.SetProfile(ctx, v.ID, spec)
		if err != nil {
			t.Fatal(err)
		}
		expect("enabled")
		if _, err := s.SetPrepared(ctx, v.ID, p.Revision, "none", "ok"); err != nil {
			t.Fatal(err)
		}
		expect("prepared")
		for p, want := range map[string]int{"a": 1, "c": 0} {
			got, err := other.ProjectProfiles(ctx, p)
			if err != nil || len(got) != want || (want == 1 && !got[v.ID].Prepared()) {
				t.Errorf("ProjectProfiles(%s) = %+v, %v; want %d prepared", p, got, err, want)
			}
		}
		if _, err := s.SetProfile(ctx, v.ID, spec); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateProject(ctx, "d", "d"); err != nil { // a marker after the no-op
			t.Fatal(err)
		}
		for name, feed := range feeds {
			select {
			case c := <-feed:
				if c.ProjectID != "d" || c.Kind != store.ChangeCreated {
					t.Fatalf("%s: after an unchanged profile: %+v; want only d's creation", name, c)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("%s: d's creation not announced within 15 s", name)
			}
		}
	})
}

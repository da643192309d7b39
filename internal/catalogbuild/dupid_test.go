package catalogbuild

import (
	"context"
	"testing"
	"time"
)

// TestDuplicateIDKeptByRepository: when two repositories claim one item
// id, the same one keeps it whatever order they were given in (the
// document is a function of the commits read, not of the list's order).
func TestDuplicateIDKeptByRepository(t *testing.T) {
	r := newTestRepo(t, false)
	r.commit(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), map[string]string{"tool/SKILL.md": skillMD("tool", "A tool.")})
	a, err := ParseRepository(r.dir + "=https://example.com/acme/skills")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseRepository(r.dir + "=https://example.com/acme/skills.git")
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]Repository{{a, b}, {b, a}} {
		snap, rep, err := Build(context.Background(), Options{Repositories: order, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Items) != 1 || snap.Items[0].Repository != a.URL {
			t.Fatalf("order %s, %s: items %+v, want the one of %s", order[0].URL, order[1].URL, snap.Items, a.URL)
		}
		for _, rr := range rep.Repositories {
			if rr.Repository == b.URL && (rr.Items != 0 || len(rr.Skipped) != 1) {
				t.Errorf("order %s, %s: the report of %s: %+v, want its item skipped", order[0].URL, order[1].URL, b.URL, rr)
			}
		}
	}
}

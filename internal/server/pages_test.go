package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// pagesSnapshot scans a library of n small skills; body varies their
// SKILL.md so that two snapshots can differ.
func pagesSnapshot(t *testing.T, n int, body string) *catalog.Snapshot {
	t.Helper()
	fsys := fstest.MapFS{}
	for i := range n {
		name := fmt.Sprintf("skill-%02d", i)
		fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: fmt.Appendf(nil,
			"---\nname: %s\ndescription: Skill number %d <of %d> & more.\n---\n%s\n", name, i, n, body)}
		if i%2 == 0 {
			fsys[name+"/references/guide.md"] = &fstest.MapFile{Data: []byte("# Guide\n")}
		}
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: fsys, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// walkPages follows a listing through the cache and returns the entries of
// every page, decoded into separate raw messages.
func walkPages(t *testing.T, c *pageCache, snap *catalog.Snapshot) (pages [][]json.RawMessage) {
	t.Helper()
	key := ""
	for range snap.Len() + 2 {
		p := c.page(snap, key)
		var entries []json.RawMessage
		if err := json.Unmarshal(p.skills, &entries); err != nil {
			t.Fatalf("page %d is not a JSON array: %v\n%s", len(pages)+1, err, p.skills)
		}
		pages = append(pages, entries)
		if p.next == "" {
			return pages
		}
		var err error
		if key, err = skillsext.DecodeCursor(p.next); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the listing does not end")
	return nil
}

func TestPageCacheServesEveryEntryOnce(t *testing.T) {
	snap := pagesSnapshot(t, 7, "Body.")
	for _, size := range []int{1, 3, 7, 100} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := newPageCache(size)
			for round := range 2 { // the second walk is served from the cache
				pages := walkPages(t, c, snap)
				if want := (7 + size - 1) / size; len(pages) != want {
					t.Errorf("round %d: %d pages, want %d", round, len(pages), want)
				}
				var got []string
				for _, p := range pages {
					for _, e := range p {
						got = append(got, string(e))
					}
				}
				var want []string
				for _, sk := range snap.Skills() {
					want = append(want, string(sk.Entry()))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("round %d: entries differ from Skill.Entry:\n got %s\nwant %s", round, got, want)
				}
			}
		})
	}
}

func TestPageCacheFollowsTheSnapshot(t *testing.T) {
	c := newPageCache(2)
	first := pagesSnapshot(t, 3, "Old body.")
	second := pagesSnapshot(t, 4, "New body.")
	for _, snap := range []*catalog.Snapshot{first, second, first} {
		p := c.page(snap, "")
		var want []string
		for _, sk := range snap.Skills()[:2] {
			want = append(want, string(sk.Entry()))
		}
		if got := string(p.skills); got != "["+strings.Join(want, ",")+"]" {
			t.Errorf("first page of a %d-skill snapshot is stale:\n got %s\nwant [%s]", snap.Len(), got, strings.Join(want, ","))
		}
	}
}

func TestPageCacheEmptyAndUnknownKeys(t *testing.T) {
	c := newPageCache(10)
	empty := pagesSnapshot(t, 0, "")
	if p := c.page(empty, ""); string(p.skills) != "[]" || p.next != "" {
		t.Errorf("empty catalog: page %s, next %q; want [] and no cursor", p.skills, p.next)
	}
	snap := pagesSnapshot(t, 3, "Body.")
	// A key between two URIs (a skill removed since the cursor was issued)
	// resumes after it; a key past the end gives an empty last page.
	mid := snap.Skills()[0].URI + "-gone"
	if p := c.page(snap, mid); !strings.Contains(string(p.skills), snap.Skills()[1].URI) || strings.Contains(string(p.skills), snap.Skills()[0].URI) {
		t.Errorf("after %s: got %s", mid, p.skills)
	}
	if p := c.page(snap, "skill://~"); string(p.skills) != "[]" || p.next != "" {
		t.Errorf("past the end: page %s, next %q", p.skills, p.next)
	}
}

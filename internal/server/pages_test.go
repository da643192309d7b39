package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

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

// walkPages follows a listing page by page and returns the entries of
// every page, decoded into separate raw messages.
func walkPages(t *testing.T, snap *catalog.Snapshot, size int) (pages [][]json.RawMessage) {
	t.Helper()
	key := ""
	for range snap.Len() + 2 {
		page, next := appendPage(nil, snap.Skills(), key, size)
		var entries []json.RawMessage
		if err := json.Unmarshal(page, &entries); err != nil {
			t.Fatalf("page %d is not a JSON array: %v\n%s", len(pages)+1, err, page)
		}
		pages = append(pages, entries)
		if next == "" {
			return pages
		}
		var err error
		if key, err = skillsext.DecodeCursor(next); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the listing does not end")
	return nil
}

func TestPagesServeEveryEntryOnce(t *testing.T) {
	snap := pagesSnapshot(t, 7, "Body.")
	for _, size := range []int{1, 3, 7, 100} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			pages := walkPages(t, snap, size)
			if want := (7 + size - 1) / size; len(pages) != want {
				t.Errorf("%d pages, want %d", len(pages), want)
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
				t.Errorf("entries differ from Skill.Entry:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestPageAppendsToItsBuffer(t *testing.T) {
	snap := pagesSnapshot(t, 2, "Body.")
	page, next := appendPage([]byte("prefix:"), snap.Skills(), "", 1)
	want := "prefix:[" + string(snap.Skills()[0].Entry()) + "]"
	if string(page) != want || next != skillsext.EncodeCursor(snap.Skills()[0].URI) {
		t.Errorf("got %s, next %q; want %s, next after the first skill", page, next, want)
	}
}

func TestPageEmptyAndUnknownKeys(t *testing.T) {
	empty := pagesSnapshot(t, 0, "")
	if page, next := appendPage(nil, empty.Skills(), "", 10); string(page) != "[]" || next != "" {
		t.Errorf("empty catalog: page %s, next %q; want [] and no cursor", page, next)
	}
	snap := pagesSnapshot(t, 3, "Body.")
	// A key between two URIs (a skill removed since the cursor was issued)
	// resumes after it; a key past the end gives an empty last page.
	mid := snap.Skills()[0].URI + "-gone"
	if page, _ := appendPage(nil, snap.Skills(), mid, 10); !strings.Contains(string(page), snap.Skills()[1].URI) || strings.Contains(string(page), snap.Skills()[0].URI) {
		t.Errorf("after %s: got %s", mid, page)
	}
	if page, next := appendPage(nil, snap.Skills(), "skill://~", 10); string(page) != "[]" || next != "" {
		t.Errorf("past the end: page %s, next %q", page, next)
	}
}

// Listed closes once the last page of a listing is served, by either path.
func TestListedAfterTheLastPage(t *testing.T) {
	snap := pagesSnapshot(t, 3, "Body.")
	for _, front := range []bool{false, true} {
		srv := NewServer(catalog.NewStore(snap), &Options{PageSize: 2})
		s := srv.s
		closed := func() bool {
			select {
			case <-srv.Listed():
				return true
			default:
				return false
			}
		}
		page := func(cursor string) string {
			if front {
				b, ok := s.appendFastResult(nil, fastRequest{method: skillsext.MethodList, arg: cursor}, "", nil)
				if !ok {
					t.Fatal("the front end refused a plain page")
				}
				var res struct{ NextCursor string }
				if err := json.Unmarshal(b, &res); err != nil {
					t.Fatal(err)
				}
				return res.NextCursor
			}
			res, err := s.listSkills(context.Background(), nil, &skillsext.ListSkillsParams{Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			return res.NextCursor
		}
		next := page("")
		if next == "" || closed() {
			t.Fatalf("front %v: after the first of two pages, next %q, listed %v", front, next, closed())
		}
		if page(next) != "" || !closed() {
			t.Errorf("front %v: after the last page, listed %v", front, closed())
		}
	}
}

// WaitQuiet waits out the quiet period after the last request, never past
// its deadline.
func TestQuietWait(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name           string
		last, deadline time.Time
		want           time.Duration
	}{
		{"a request just now", now, now.Add(time.Hour), 250 * time.Millisecond},
		{"a request 100 ms ago", now.Add(-100 * time.Millisecond), now.Add(time.Hour), 150 * time.Millisecond},
		{"quiet long enough", now.Add(-time.Second), now.Add(time.Hour), -750 * time.Millisecond},
		{"the deadline first", now, now.Add(50 * time.Millisecond), 50 * time.Millisecond},
		{"the deadline passed", now, now.Add(-time.Millisecond), -time.Millisecond},
	} {
		if got := quietWait(tc.last, now, tc.deadline, 250*time.Millisecond); got != tc.want {
			t.Errorf("%s: wait %v, want %v", tc.name, got, tc.want)
		}
	}
}

// WaitQuiet returns at once when no request ever came, when its limit is
// already spent, or when its context ends.
func TestWaitQuietReturns(t *testing.T) {
	srv := NewServer(catalog.NewStore(pagesSnapshot(t, 1, "Body.")), nil)
	done := func(f func()) bool {
		ch := make(chan struct{})
		go func() { f(); close(ch) }()
		select {
		case <-ch:
			return true
		case <-time.After(10 * time.Second):
			return false
		}
	}
	if !done(func() { srv.WaitQuiet(context.Background(), time.Hour, time.Hour) }) {
		t.Error("with no request yet, WaitQuiet waited")
	}
	srv.s.sawRequest()
	if !done(func() { srv.WaitQuiet(context.Background(), time.Hour, 0) }) {
		t.Error("with no time left, WaitQuiet waited")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if !done(func() { srv.WaitQuiet(ctx, time.Hour, time.Hour) }) {
		t.Error("with its context ended, WaitQuiet waited")
	}
}

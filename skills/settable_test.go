package skills_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/skills"
)

// A settable catalog starts empty, takes new libraries while served, and
// tells its own sessions only; setting the same content tells nobody.
func TestSetLibraries(t *testing.T) {
	ctx := context.Background()
	a := open(t, nil, &skills.Options{Settable: true})
	b := open(t, nil, &skills.Options{Settable: true})
	if a.Len() != 0 {
		t.Fatalf("empty settable catalog lists %d skills", a.Len())
	}
	if _, err := skills.Open(ctx, nil, nil); err == nil {
		t.Fatal("Open without libraries and without Settable succeeded")
	}
	notified := func(c *skills.Catalog) chan struct{} {
		ms := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
		if err := skills.Attach(ms, c, nil); err != nil {
			t.Fatal(err)
		}
		ch := make(chan struct{}, 16)
		cs := connect(t, ms, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			ch <- struct{}{}
		}})
		if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
			t.Fatal(err)
		}
		return ch
	}
	na, nb := notified(a), notified(b)

	v1, v2 := mapFS("pdf"), mapFS("xlsx")
	ch, err := a.SetLibraries(ctx, []skills.Library{{Namespace: "one", FS: v1}, {Namespace: "two", FS: v2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"skill://one/pdf/SKILL.md", "skill://two/xlsx/SKILL.md"}
	if !slices.Equal(ch.Added, want) || !slices.Equal(a.Skills(), want) {
		t.Fatalf("added %v, lists %v; want %v", ch.Added, a.Skills(), want)
	}
	select {
	case <-na:
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/list_changed after SetLibraries")
	}
	if hits := a.Search("xlsx", 5); len(hits) != 1 || hits[0].URI != want[1] {
		t.Fatalf("Search(xlsx) = %+v", hits)
	}
	if hits := a.Search("", 0); len(hits) != 2 {
		t.Fatalf("Search(\"\") = %+v, want both skills", hits)
	}

	// The same content again: no change, no notification.
	ch, err = a.SetLibraries(ctx, []skills.Library{{Namespace: "one", FS: v1}, {Namespace: "two", FS: v2}})
	if err != nil || len(ch.Added)+len(ch.Removed)+len(ch.Changed) != 0 {
		t.Fatalf("unchanged SetLibraries: %+v, %v", ch, err)
	}
	ch, err = a.SetLibraries(ctx, []skills.Library{{Namespace: "two", FS: v2}})
	if err != nil || !slices.Equal(ch.Removed, want[:1]) {
		t.Fatalf("removing one: %+v, %v", ch, err)
	}
	select {
	case <-na:
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/list_changed after removing a library")
	}
	// A bad library list changes nothing.
	if _, err := a.SetLibraries(ctx, []skills.Library{{Namespace: "x"}}); err == nil || a.Len() != 1 {
		t.Fatalf("bad library: err %v, %d skills", err, a.Len())
	}
	select {
	case <-na:
		t.Fatal("notified for a change that did not happen")
	case <-nb:
		t.Fatal("another catalog's session was notified")
	case <-time.After(100 * time.Millisecond):
	}
	fixed := open(t, []skills.Library{{FS: v1}}, nil)
	if _, err := fixed.SetLibraries(ctx, nil); err == nil {
		t.Fatal("SetLibraries on a catalog not opened Settable succeeded")
	}
	a.Close()
	if _, err := a.SetLibraries(ctx, nil); err != skills.ErrClosed {
		t.Fatalf("SetLibraries after Close: %v", err)
	}
}

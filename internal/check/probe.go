package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// invalidCursor is a cursor no server issues.
const invalidCursor = "skills-mcp-check-invalid-cursor"

// cursorProbe checks pagination beyond termination (--page-size-probe):
// an invalid cursor is refused, a second listing repeats the first, and a
// listing resumed from each of the first cursors continues it exactly.
func (c *checker) cursorProbe(ctx context.Context, s *session, l *listing) {
	v := s.version
	_, err := call(ctx, s, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: invalidCursor})
	switch {
	case err == nil:
		c.rec.add(Warn, "list-cursor-probe", v, "skills/list", "an invalid cursor was answered with a page; want -32602, after which hosts restart the listing")
	case code(err) != -32602:
		c.rec.add(Warn, "list-cursor-probe", v, "skills/list", "an invalid cursor gave %v; want -32602", err)
	default:
		c.rec.ok("list-cursor-probe", v)
	}
	if !l.complete {
		c.rec.add(Skip, "list-cursor-probe", v, "skills/list", "the listing did not end, so resumed listings are not compared")
		return
	}
	var all []string
	for _, p := range l.pages {
		all = append(all, p...)
	}
	starts := append([]string{""}, l.cursors[:min(len(l.cursors), maxCursorProbes)]...)
	offset := 0
	for i, cursor := range starts {
		if i > 0 {
			offset += len(l.pages[i-1])
		}
		want := all[offset:]
		got, err := c.listFrom(ctx, s, cursor, len(l.pages)-i+1)
		what := "a second listing"
		if cursor != "" {
			what = fmt.Sprintf("the listing resumed from the cursor of page %d", i+1)
		}
		switch {
		case err != nil:
			c.rec.add(Fail, "list-cursor-probe", v, "skills/list", "%s failed: %v", what, err)
		case !slices.Equal(got, want):
			c.rec.add(Fail, "list-cursor-probe", v, "skills/list", "%s holds %d entries (%s…); the first listing continued with %d (%s…)",
				what, len(got), lastURIs(entriesOf(got), 1), len(want), lastURIs(entriesOf(want), 1))
		default:
			c.rec.ok("list-cursor-probe", v)
		}
	}
}

func entriesOf(uris []string) []*entry {
	out := make([]*entry, 0, 1)
	if len(uris) > 0 {
		out = append(out, &entry{uri: uris[0]})
	}
	return out
}

// listFrom lists entry URIs from cursor to the end, within maxPages.
func (c *checker) listFrom(ctx context.Context, s *session, cursor string, maxPages int) ([]string, error) {
	var uris []string
	for page := 0; page < maxPages; page++ {
		raw, err := call(ctx, s, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		var res struct {
			Skills []struct {
				URI string `json:"uri"`
			} `json:"skills"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("page %d does not decode: %v", page+1, truncate(err.Error(), 100))
		}
		for _, sk := range res.Skills {
			uris = append(uris, sk.URI)
		}
		if res.NextCursor == "" {
			return uris, nil
		}
		cursor = res.NextCursor
	}
	return nil, errors.New("it runs longer than the first listing")
}

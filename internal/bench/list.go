package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SEP-2640 methods the client sends. The wire types below are the
// benchmark's own and decode only what it needs, leniently: the client must
// measure any server, including ones whose entries carry more (or odd)
// fields, and decoding cost inside the timed loop is kept to the minimum.
const (
	methodListSkills = "skills/list"
	methodGetSkill   = "skills/get"
	// methodReadResource is the base protocol's read, load-tested by LoadHTTP.
	methodReadResource = "resources/read"
	// searchToolSuffix marks the search tool a server may offer
	// (skills_search_skills, thirdbrain_search_skills, ...).
	searchToolSuffix = "_search_skills"
	// maxListedSkills bounds one listing, so that a server that hands out
	// fresh cursors forever runs into an error instead of exhausting memory
	// before the run's timeout.
	maxListedSkills = 5_000_000
)

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	Skill json.RawMessage `json:"skill"`
}

// ErrCursorLoop is returned when a server hands out a cursor it has already
// handed out in the same listing: following it would never end.
var ErrCursorLoop = errors.New("bench: skills/list repeated a cursor; the listing would never end")

// newClient returns the benchmark's MCP client with the skills methods
// registered.
func newClient() (*mcp.Client, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "skills-bench", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](c, methodListSkills); err != nil {
		return nil, err
	}
	if err := mcp.AddSendingCustomMethod[*getSkillParams, *getSkillResult](c, methodGetSkill); err != nil {
		return nil, err
	}
	return c, nil
}

// listing is one complete skills/list walk, as received.
type listing struct {
	Pages   int
	Entries []json.RawMessage
}

// lister sends one skills/list request.
type lister func(ctx context.Context, cursor string) (*listSkillsResult, error)

// sdkLister sends skills/list through the SDK session cs.
func sdkLister(cs *mcp.ClientSession) lister {
	return func(ctx context.Context, cursor string) (*listSkillsResult, error) {
		return mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, methodListSkills, &listSkillsParams{Cursor: cursor})
	}
}

// listAll follows skills/list cursors to the end. firstPage, if not nil, is
// called as soon as the first page has arrived. A cursor seen before in the
// same walk fails with ErrCursorLoop.
func listAll(ctx context.Context, list lister, firstPage func()) (*listing, error) {
	seen := map[string]int{} // cursor → the page that returned it
	l := &listing{}
	cursor := ""
	for {
		l.Pages++
		res, err := list(ctx, cursor)
		if err != nil {
			return nil, fmt.Errorf("skills/list page %d: %w", l.Pages, err)
		}
		if l.Pages == 1 && firstPage != nil {
			firstPage()
		}
		l.Entries = append(l.Entries, res.Skills...)
		if res.NextCursor == "" {
			return l, nil
		}
		if prev, ok := seen[res.NextCursor]; ok {
			return nil, fmt.Errorf("skills/list page %d returned the cursor %q that page %d returned: %w",
				l.Pages, abbreviate(res.NextCursor, 40), prev, ErrCursorLoop)
		}
		if len(l.Entries) > maxListedSkills {
			return nil, fmt.Errorf("skills/list returned more than %d skills over %d pages; giving up", maxListedSkills, l.Pages)
		}
		seen[res.NextCursor] = l.Pages
		cursor = res.NextCursor
	}
}

// skillView is what the benchmark reads from a listed entry.
type skillView struct {
	URI         string
	Fingerprint string // identifies the entry's manifest: digests and sizes
}

type wireEntry struct {
	URI       string          `json:"uri"`
	Resources json.RawMessage `json:"resources"`
}

type wireResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// parseEntries decodes the URIs and manifest fingerprints of a listing, in
// listing order. It runs after the timed part of a run.
func parseEntries(raw []json.RawMessage) ([]skillView, error) {
	out := make([]skillView, len(raw))
	for i, r := range raw {
		var e wireEntry
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, fmt.Errorf("skills/list entry %d: %w", i+1, err)
		}
		if e.URI == "" {
			return nil, fmt.Errorf("skills/list entry %d has no uri", i+1)
		}
		out[i] = skillView{URI: e.URI, Fingerprint: fingerprint(e.Resources)}
	}
	return out, nil
}

// fingerprint identifies a manifest by its files' URIs, digests and sizes,
// independent of file order and JSON formatting. A "dynamic" or malformed
// manifest is identified by its bytes.
func fingerprint(resources json.RawMessage) string {
	var list []wireResource
	h := sha256.New()
	if err := json.Unmarshal(resources, &list); err != nil {
		h.Write(resources)
	} else {
		slices.SortFunc(list, func(a, b wireResource) int { return strings.Compare(a.URI, b.URI) })
		for _, r := range list {
			fmt.Fprintf(h, "%s\x00%s\x00%d\n", r.URI, r.Digest, r.Size)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// libraryDigest identifies a whole listing, independent of its order.
func libraryDigest(views []skillView) string {
	lines := make([]string, len(views))
	for i, v := range views {
		lines[i] = v.URI + " " + v.Fingerprint
	}
	slices.Sort(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:12])
}

// duplicates returns the URIs listed more than once, in listing order.
func duplicates(views []skillView) []string {
	seen := make(map[string]bool, len(views))
	var dup []string
	for _, v := range views {
		if seen[v.URI] {
			dup = append(dup, v.URI)
		}
		seen[v.URI] = true
	}
	return dup
}

// compareListings describes how two listings of the same server differ, or
// returns "" if they list the same skills with the same manifests.
func compareListings(before, after []skillView) string {
	old := make(map[string]string, len(before))
	for _, v := range before {
		old[v.URI] = v.Fingerprint
	}
	var changed, added []string
	for _, v := range after {
		fp, ok := old[v.URI]
		switch {
		case !ok:
			added = append(added, v.URI)
		case fp != v.Fingerprint:
			changed = append(changed, v.URI)
		}
		delete(old, v.URI)
	}
	removed := len(old)
	if len(changed) == 0 && len(added) == 0 && removed == 0 {
		return ""
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, fmt.Sprintf("%d skills changed (first %s)", len(changed), changed[0]))
	}
	if len(added) > 0 {
		parts = append(parts, fmt.Sprintf("%d skills appeared (first %s)", len(added), added[0]))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d skills disappeared", removed))
	}
	return strings.Join(parts, ", ")
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

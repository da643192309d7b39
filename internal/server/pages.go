package server

import (
	"sort"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// maxCachedPageBytes bounds the skills/list pages kept encoded for one
// snapshot. A complete listing of 5,000 generated skills is 4.7 MB, so a
// catalog of that size is served entirely from the cache; in a larger one
// the pages past the bound are encoded on each request, as all were before.
const maxCachedPageBytes = 8 << 20

// listPage is one skills/list page: its skills array, encoded, and the
// cursor of the next page ("" after the last).
type listPage struct {
	skills []byte
	next   string
}

// pageCache encodes skills/list pages and keeps them for the snapshot they
// were encoded from. Every host that lists the catalog asks for the same
// pages (a page starts after the last skill of the previous one), so each is
// encoded once per snapshot instead of once per request.
type pageCache struct {
	size int
	cur  atomic.Pointer[snapshotPages]
}

// snapshotPages are the cached pages of one snapshot. The snapshot is held
// weakly: the cache must not keep a replaced catalog alive.
type snapshotPages struct {
	snap weak.Pointer[catalog.Snapshot]

	mu    sync.Mutex
	pages map[int]*listPage // by the index of the page's first skill
	bytes int
}

func newPageCache(size int) *pageCache { return &pageCache{size: size} }

// page returns the page of snap's listed skills that follows key, the URI of
// the last skill the client has seen ("" for the first page).
func (c *pageCache) page(snap *catalog.Snapshot, key string) *listPage {
	sp := c.cur.Load()
	if sp == nil || sp.snap.Value() != snap {
		fresh := &snapshotPages{snap: weak.Make(snap), pages: map[int]*listPage{}}
		// Another request may have installed pages for snap meanwhile; either
		// set is complete for what it holds, so losing one costs only work.
		c.cur.Store(fresh)
		sp = fresh
	}
	skills := snap.Skills()
	i := sort.Search(len(skills), func(i int) bool { return skills[i].URI > key })
	sp.mu.Lock()
	p, ok := sp.pages[i]
	sp.mu.Unlock()
	if ok {
		return p
	}
	p = encodePage(skills, i, c.size)
	sp.mu.Lock()
	if sp.bytes+len(p.skills) <= maxCachedPageBytes {
		if _, dup := sp.pages[i]; !dup {
			sp.pages[i] = p
			sp.bytes += len(p.skills)
		}
	}
	sp.mu.Unlock()
	return p
}

// encodePage encodes up to n skills from index i as a JSON array.
func encodePage(skills []*catalog.Skill, i, n int) *listPage {
	end := min(i+n, len(skills))
	b := make([]byte, 0, 1024*(end-i)+2)
	b = append(b, '[')
	for j, sk := range skills[i:end] {
		if j > 0 {
			b = append(b, ',')
		}
		b = sk.AppendEntry(b)
	}
	b = append(b, ']')
	if cap(b)-len(b) > len(b)/8 {
		b = append(make([]byte, 0, len(b)), b...) // the cache keeps no slack
	}
	p := &listPage{skills: b}
	if end < len(skills) {
		p.next = skillsext.EncodeCursor(skills[end-1].URI)
	}
	return p
}

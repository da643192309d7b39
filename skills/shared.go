package skills

import (
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/library"
)

// sharedSet is the skill set of fixed catalogs over the same content: one
// immutable snapshot, the libraries it reads from, and how many catalogs
// hold it.
type sharedSet struct {
	key    any
	snap   *catalog.Snapshot
	opened []*library.Opened
	cache  *library.Cache
	refs   int
}

// setTable holds the shared sets of the process by content key.
type setTable struct {
	mu   sync.Mutex
	sets map[any]*sharedSet
}

var sets = &setTable{sets: map[any]*sharedSet{}}

// acquire returns the set of key with one more reference, or nil.
func (t *setTable) acquire(key any) *sharedSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sets[key]
	if s != nil {
		s.refs++
	}
	return s
}

// publish records snap as the set of key, unless another catalog
// published one meanwhile: then that one is returned, and what this one
// opened is closed.
func (t *setTable) publish(key any, snap *catalog.Snapshot, opened []*library.Opened, cache *library.Cache) *sharedSet {
	t.mu.Lock()
	s := t.sets[key]
	if s == nil {
		s = &sharedSet{key: key, snap: snap, opened: opened, cache: cache}
		t.sets[key] = s
	}
	s.refs++
	t.mu.Unlock()
	if s.snap != snap {
		closeAll(opened, cache)
	}
	return s
}

// release drops one reference; the last closes the set's libraries, once
// its search index (if started) is built.
func (t *setTable) release(s *sharedSet) {
	t.mu.Lock()
	s.refs--
	last := s.refs == 0
	if last {
		delete(t.sets, s.key)
	}
	t.mu.Unlock()
	if last {
		s.snap.StartSearch()
		<-s.snap.SearchReady()
		closeAll(s.opened, s.cache)
	}
}

// releaseAll releases each of sets.
func releaseAll(list []*sharedSet) {
	for _, s := range list {
		sets.release(s)
	}
}

func closeAll(opened []*library.Opened, cache *library.Cache) {
	for _, o := range opened {
		o.Close()
	}
	if cache != nil {
		cache.Close()
	}
}

package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// maxIndexedBody bounds how much of a SKILL.md body the search index reads.
const maxIndexedBody = 64 << 10

// Hit is one search result.
type Hit struct {
	Skill   *Skill
	Score   float64
	Matched []string
}

// StartSearch starts indexing the listed skills in the background, once
// per snapshot: a snapshot serves listings at once, and the first search
// waits for the index if it is not ready yet. Store.Swap starts it when a
// snapshot is installed, so that a rescan that changed nothing and is
// dropped never pays for an index; the first search starts it otherwise.
func (snap *Snapshot) StartSearch() { snap.startSearch(nil) }

// startSearch is StartSearch; base, if set, is the snapshot snap
// replaces, whose index the new one is updated from when only a few
// skills changed (see updateIndex).
func (snap *Snapshot) startSearch(base *Snapshot) {
	snap.searchOnce.Do(func() {
		snap.searchStarted.Store(true)
		go func() {
			key, built := snap.indexSkills(base)
			close(snap.searchReady)
			if built && snap.cache != nil {
				start := time.Now()
				if err := snap.cache.saveIndex(key, snap.search); err != nil {
					snap.log.Warn("search index not saved; the next start builds it again", "err", err)
				} else {
					snap.log.Debug("search index saved", "skills", len(snap.skills), "duration_ms", millis(time.Since(start)))
				}
			}
		}()
	})
}

// indexWorkers is how many goroutines build a search index: one core is
// left to the requests that arrive meanwhile (a host lists the catalog
// while the index of a new snapshot builds), unless there is only one.
func indexWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// SearchReady returns a channel closed once the snapshot's search index
// is built (it is built in the background once the snapshot is installed).
func (snap *Snapshot) SearchReady() <-chan struct{} { return snap.searchReady }

// indexSkills sets snap.search: the index saved in the cache under the
// snapshot's key if there is one, else a new one. It returns the key, and
// whether it built an index worth saving: one that indexed every body.
func (snap *Snapshot) indexSkills(base *Snapshot) (key string, built bool) {
	defer func() {
		if snap.merged {
			return // the parts' skills, which keep their bodies while they serve
		}
		for _, sk := range snap.all {
			sk.body.Store(nil) // read from the file from now on
		}
	}()
	if ix, whole := snap.updateIndex(base); ix != nil {
		// Not saved: saving costs a pass over the whole index, on every
		// edit; the next start builds it once instead.
		snap.search, snap.searchWhole = ix, whole
		return "", false
	}
	if snap.cache != nil {
		start := time.Now()
		key = snap.searchKey()
		ix, err := snap.cache.loadIndex(key, len(snap.skills))
		if err == nil {
			snap.search, snap.searchWhole = ix, true
			snap.log.Debug("search index loaded", "skills", len(snap.skills), "duration_ms", millis(time.Since(start)))
			return key, false
		}
		if !errors.Is(err, fs.ErrNotExist) {
			snap.log.Debug("saved search index not used", "err", err)
		}
	}
	docs := make([]search.Doc, len(snap.skills))
	whole := true
	for i, sk := range snap.skills {
		body, err := sk.Body() // a body that changed since the scan is indexed empty until the next one
		whole = whole && err == nil
		if len(body) > maxIndexedBody {
			body = body[:maxIndexedBody]
		}
		docs[i] = search.Doc{
			ID: i, Name: sk.Name, Library: sk.Library, Category: sk.Category,
			Description: sk.Description, Tags: sk.Tags, Body: body,
		}
	}
	snap.search, snap.searchWhole = search.Build(docs, indexWorkers()), whole
	return key, whole
}

// maxUpdated is the largest share of changed skills for which a new
// snapshot's index is updated from its predecessor's rather than built.
const maxUpdated = 4 // a quarter

// updateIndex returns the index of snap's listed skills updated from
// base's, or nil when there is none to update from (base's index is not
// being built, was decoded from the cache, or indexed a body it could not
// read, empty) or too much changed. It reports whether every body it
// read was read whole. A skill
// is indexed again only when its indexed fields or its SKILL.md changed:
// an edit costs its own analysis and one pass over the postings, not a
// read and analysis of every body (at 5,000 skills, 30 ms instead of
// 250-600).
func (snap *Snapshot) updateIndex(base *Snapshot) (*search.Index, bool) {
	if base == nil || !base.searchStarted.Load() {
		return nil, false
	}
	<-base.searchReady
	if !base.searchWhole || !base.search.Updatable() {
		return nil, false
	}
	docs := make([]search.Doc, len(snap.skills))
	from := make([]int, len(snap.skills))
	fresh := 0
	j := 0
	for i, sk := range snap.skills {
		for j < len(base.skills) && base.skills[j].URI < sk.URI {
			j++
		}
		from[i] = -1
		if j < len(base.skills) && sameDoc(base.skills[j], sk) {
			from[i] = j
		} else {
			fresh++
		}
	}
	if fresh*maxUpdated > len(snap.skills) {
		return nil, false
	}
	whole := true
	for i, sk := range snap.skills {
		docs[i] = search.Doc{ID: i, Name: sk.Name, Library: sk.Library, Category: sk.Category, Description: sk.Description, Tags: sk.Tags}
		if from[i] < 0 {
			body, err := sk.Body() // one that changed since the scan is indexed empty until the next one
			whole = whole && err == nil
			if len(body) > maxIndexedBody {
				body = body[:maxIndexedBody]
			}
			docs[i].Body = body
		}
	}
	return search.Update(base.search, docs, from, indexWorkers()), whole
}

// sameDoc reports whether a and b are indexed alike: the same fields, and
// a SKILL.md of the same digest with the body at the same offset.
func sameDoc(a, b *Skill) bool {
	if a.URI != b.URI || a.Name != b.Name || a.Library != b.Library || a.Category != b.Category ||
		a.Description != b.Description || !slices.Equal(a.Tags, b.Tags) || a.bodyOffset != b.bodyOffset {
		return false
	}
	if a.md == nil || b.md == nil {
		return a.md == b.md
	}
	return a.md.Digest == b.md.Digest
}

// searchKey names the index of the listed skills: a digest of the index
// format and of everything indexSkills puts in each document, a body by
// the digest of the SKILL.md holding it. Equal keys index equal documents.
func (snap *Snapshot) searchKey() string {
	h := sha256.New()
	var buf []byte
	field := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		h.Write(buf)
		io.WriteString(h, s)
	}
	field(search.FormatVersion)
	field(strconv.Itoa(maxIndexedBody))
	for _, sk := range snap.skills {
		field(sk.Name)
		field(sk.Library)
		field(sk.Category)
		field(sk.Description)
		field(strconv.Itoa(len(sk.Tags)))
		for _, t := range sk.Tags {
			field(t)
		}
		if sk.md != nil {
			field(sk.md.Digest.String())
		} else {
			field("")
		}
		field(strconv.Itoa(int(sk.bodyOffset)))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// millis is d in milliseconds, to the microsecond, as logs and stats give it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Search ranks the skills for a query in plain words, optionally within one
// library and category, and returns at most limit hits.
func (snap *Snapshot) Search(query, library, category string, limit int) []Hit {
	snap.StartSearch()
	<-snap.searchReady
	hits := snap.search.Search(search.Query{Text: query, Library: library, Category: category, Limit: limit})
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Skill: snap.skills[h.ID], Score: h.Score, Matched: h.Matched}
	}
	return out
}

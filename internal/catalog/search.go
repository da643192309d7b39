package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"runtime"
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
func (snap *Snapshot) StartSearch() {
	snap.searchOnce.Do(func() {
		go func() {
			key, built := snap.indexSkills()
			close(snap.searchReady)
			if built && snap.cache != nil {
				start := time.Now()
				if err := snap.cache.saveIndex(key, snap.search); err != nil {
					snap.log.Warn("search index not saved; the next start builds it again", "err", err)
				} else {
					snap.log.Debug("search index saved", "skills", len(snap.skills), "ms", millis(time.Since(start)))
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
func (snap *Snapshot) indexSkills() (key string, built bool) {
	defer func() {
		for _, sk := range snap.all {
			sk.body.Store(nil) // read from the file from now on
		}
	}()
	if snap.cache != nil {
		start := time.Now()
		key = snap.searchKey()
		ix, err := snap.cache.loadIndex(key, len(snap.skills))
		if err == nil {
			snap.search = ix
			snap.log.Debug("search index loaded", "skills", len(snap.skills), "ms", millis(time.Since(start)))
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
	snap.search = search.Build(docs, indexWorkers())
	return key, whole
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

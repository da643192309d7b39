package catalog

import (
	"runtime"

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

// startSearch starts indexing the listed skills in the background, once
// per snapshot: a snapshot serves listings at once, and the first search
// waits for the index if it is not ready yet. Stores start it when a
// snapshot is installed, so that a rescan that changed nothing and is
// dropped never pays for an index.
func (snap *Snapshot) startSearch() {
	snap.searchOnce.Do(func() {
		go func() {
			defer close(snap.searchReady)
			snap.indexSkills()
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

func (snap *Snapshot) indexSkills() {
	docs := make([]search.Doc, len(snap.skills))
	for i, sk := range snap.skills {
		body, _ := sk.Body() // a body that changed since the scan is indexed empty until the next one
		if len(body) > maxIndexedBody {
			body = body[:maxIndexedBody]
		}
		docs[i] = search.Doc{
			ID: i, Name: sk.Name, Library: sk.Library, Category: sk.Category,
			Description: sk.Description, Tags: sk.Tags, Body: body,
		}
	}
	snap.search = search.Build(docs, indexWorkers())
	for _, sk := range snap.all {
		sk.body.Store(nil) // read from the file from now on
	}
}

// Search ranks the skills for a query in plain words, optionally within one
// library and category, and returns at most limit hits.
func (snap *Snapshot) Search(query, library, category string, limit int) []Hit {
	snap.startSearch()
	<-snap.searchReady
	hits := snap.search.Search(search.Query{Text: query, Library: library, Category: category, Limit: limit})
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Skill: snap.skills[h.ID], Score: h.Score, Matched: h.Matched}
	}
	return out
}

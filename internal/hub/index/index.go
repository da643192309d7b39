package index

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// Index is one catalog snapshot ready to browse and search. It is
// immutable and safe for concurrent use; the items it hands out point into
// it and must not be changed.
type Index struct {
	snap    *Snapshot
	source  string
	loaded  time.Time
	search  *search.Index
	byID    map[string]int
	cats    []Category
	authors []Author
}

// Category is one category of a snapshot and how many items it holds.
// Items without a category are counted under "".
type Category struct {
	Name  string `json:"name"`
	Items int    `json:"items"`
}

// Author is one author of a snapshot, as first written, and how many items
// it has. Items without an author are not counted.
type Author struct {
	Name  string `json:"name"`
	Items int    `json:"items"`
}

// Query is a catalog search.
type Query struct {
	// Text is matched against the items' names, authors and descriptions.
	Text string
	// Category, when non-empty, keeps only the items of that category
	// (case-insensitive exact match).
	Category string
	// Author, when non-empty, keeps only the items of that author
	// (case-insensitive exact match).
	Author string
	// Limit is the maximum number of hits, clamped to [1, search.MaxLimit];
	// zero means search.DefaultLimit.
	Limit int
}

// Hit is one search result.
type Hit struct {
	Item  *Item
	Score float64
	// Matched names the fields a query word matched, in the order "name",
	// "author", "description", "category".
	Matched []string
}

// NewIndex indexes snap, which must have come from Parse (or be as valid)
// and which the index keeps and must not change afterwards. source says
// where the snapshot came from ("bundled", a URL, "import:<file name>").
func NewIndex(snap *Snapshot, source string) *Index {
	ix := &Index{snap: snap, source: source, loaded: time.Now(), byID: make(map[string]int, len(snap.Items))}
	docs := make([]search.Doc, len(snap.Items))
	counts := map[string]int{}
	authors := map[string]*Author{} // by the folded name the filter compares
	for i := range snap.Items {
		it := &snap.Items[i]
		ix.byID[it.ID] = i
		counts[foldCategory(it.Category)]++
		if a := strings.TrimSpace(it.Author); a != "" {
			key := strings.ToLower(a)
			if authors[key] == nil {
				authors[key] = &Author{Name: a}
			}
			authors[key].Items++
		}
		docs[i] = search.Doc{
			ID:          i,
			Name:        it.Name,
			Library:     strings.ToLower(strings.TrimSpace(it.Author)), // the author filter
			Category:    it.Category,
			Description: it.Description,
			Tags:        authorTags(it.Author),
		}
	}
	for name, n := range counts {
		ix.cats = append(ix.cats, Category{Name: name, Items: n})
	}
	slices.SortFunc(ix.cats, func(a, b Category) int { return cmp.Compare(a.Name, b.Name) })
	for _, a := range authors {
		ix.authors = append(ix.authors, *a)
	}
	slices.SortFunc(ix.authors, func(a, b Author) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	// One core is left to the requests served while an index builds.
	ix.search = search.Build(docs, max(1, runtime.GOMAXPROCS(0)-1))
	return ix
}

// authorTags indexes the author in the search's tags field: like a tag, an
// author is a short name chosen to be recognised, and it weighs as much.
func authorTags(author string) []string {
	if strings.TrimSpace(author) == "" {
		return nil
	}
	return []string{author}
}

// foldCategory is the form categories are counted and compared in.
func foldCategory(c string) string { return strings.ToLower(strings.TrimSpace(c)) }

// Snapshot returns the indexed document. It must not be changed.
func (ix *Index) Snapshot() *Snapshot { return ix.snap }

// Source says where the snapshot came from: "bundled", the URL it was
// refreshed from, or "import:" and the imported file's name.
func (ix *Index) Source() string { return ix.source }

// Loaded is when this process indexed the snapshot.
func (ix *Index) Loaded() time.Time { return ix.loaded }

// Len is the number of items.
func (ix *Index) Len() int { return len(ix.snap.Items) }

// Item returns the item with the given id.
func (ix *Index) Item(id string) (*Item, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return &ix.snap.Items[i], true
}

// Categories lists the categories, in lowercase and sorted, with their item
// counts.
func (ix *Index) Categories() []Category { return slices.Clone(ix.cats) }

// Authors lists the authors, sorted without regard to case, with their
// item counts.
func (ix *Index) Authors() []Author { return slices.Clone(ix.authors) }

// Items lists the items of a category and author (either empty for all),
// in the document's order, for browsing without a query.
func (ix *Index) Items(category, author string) []*Item {
	category, author = foldCategory(category), strings.ToLower(strings.TrimSpace(author))
	var out []*Item
	for i := range ix.snap.Items {
		it := &ix.snap.Items[i]
		if category != "" && foldCategory(it.Category) != category {
			continue
		}
		if author != "" && strings.ToLower(strings.TrimSpace(it.Author)) != author {
			continue
		}
		out = append(out, it)
	}
	return out
}

// Search ranks the items for q.Text with the project's BM25F search (an
// item whose name is the whole query first), within q's category and
// author. It returns nil when nothing matches, and for an empty query; use
// Items to browse.
func (ix *Index) Search(q Query) []Hit {
	hits := ix.search.Search(search.Query{
		Text:     q.Text,
		Library:  strings.ToLower(strings.TrimSpace(q.Author)),
		Category: q.Category,
		Limit:    q.Limit,
	})
	if len(hits) == 0 {
		return nil
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		matched := make([]string, 0, len(h.Matched))
		for _, f := range h.Matched {
			switch f {
			case "tags":
				matched = append(matched, "author")
			case "name", "description", "category":
				matched = append(matched, f)
			}
		}
		out[i] = Hit{Item: &ix.snap.Items[h.ID], Score: h.Score, Matched: matched}
	}
	return out
}

package hub

import (
	"context"

	"github.com/skills-mcp/skills-mcp/internal/hub/index"
)

// CatalogHit is one catalog search result.
type CatalogHit struct {
	index.Item
	Score   float64  `json:"score,omitempty"`
	Matched []string `json:"matched,omitempty"`
	// Installed lists the installed versions that came from the item (or
	// from its repository folder), oldest first; absent when none did.
	// SearchCatalog leaves it empty: MarkInstalled fills it.
	Installed []string `json:"installed,omitempty"`
}

// SearchCatalog ranks the current catalog's items for q. An empty q.Text
// browses instead: the items of q's category and author in the catalog's
// order, at most q.Limit of them (all when q.Limit is 0). It also returns
// the snapshot searched.
func (h *Hub) SearchCatalog(ctx context.Context, q index.Query) ([]CatalogHit, *index.Index, error) {
	cat, err := h.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	ix := cat.Current()
	if q.Text == "" {
		items := ix.Items(q.Category, q.Author)
		if q.Limit > 0 && len(items) > q.Limit {
			items = items[:q.Limit]
		}
		out := make([]CatalogHit, len(items))
		for i, it := range items {
			out[i] = CatalogHit{Item: *it}
		}
		return out, ix, nil
	}
	hits := ix.Search(q)
	out := make([]CatalogHit, len(hits))
	for i, hit := range hits {
		out[i] = CatalogHit{Item: *hit.Item, Score: hit.Score, Matched: hit.Matched}
	}
	return out, ix, nil
}

// RefreshCatalog replaces the catalog with the document at rawURL (https,
// or http to a loopback address) if it is valid; on any failure the last
// good snapshot stays, stored and served, and is returned with the error.
// Installed versions and bindings are never touched.
func (h *Hub) RefreshCatalog(ctx context.Context, rawURL string) (*index.Index, error) {
	cat, err := h.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := cat.Refresh(ctx, rawURL)
	if err != nil {
		return cat.Current(), err
	}
	return ix, nil
}

// ImportCatalog replaces the catalog with the document in the file name if
// it is valid; see RefreshCatalog.
func (h *Hub) ImportCatalog(ctx context.Context, name string) (*index.Index, error) {
	cat, err := h.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := cat.Import(ctx, name)
	if err != nil {
		return cat.Current(), err
	}
	return ix, nil
}

// FollowCatalog serves every catalog document stored through any process
// on the hub's database (an import from the command line, a sync through
// another replica) as it is stored, announced by the store's change feed,
// until ctx is done. A document that cannot be read now is read at the
// next announcement or the feed's periodic look. It returns when ctx is
// done or the store closes.
func (h *Hub) FollowCatalog(ctx context.Context) {
	for range h.st.CatalogChanges(ctx) {
		cat, err := h.Catalog(ctx)
		if err != nil {
			continue
		}
		cat.Reload(ctx)
	}
}

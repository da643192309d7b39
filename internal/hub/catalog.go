package hub

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
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

// ApplyCatalog replaces the catalog with the document raw (an upload) if it
// is valid, under the name source; see RefreshCatalog.
func (h *Hub) ApplyCatalog(ctx context.Context, raw []byte, source string) (*CatalogInfo, error) {
	cat, err := h.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := cat.Apply(ctx, raw, source)
	if err != nil {
		return nil, err
	}
	return &CatalogInfo{Source: ix.Source(), Items: ix.Len(), Loaded: ix.Loaded()}, nil
}

// CatalogInfo summarises the catalog being served.
type CatalogInfo struct {
	Source string    `json:"source"`
	Items  int       `json:"items"`
	Loaded time.Time `json:"loaded"`
}

// installedByItem maps catalog items to the ids of the installed versions
// that came from them: installed from the item itself, or from the same
// repository and folder by hand. Keys are item ids ("id:" prefix) and
// repository locations ("repo:" prefix, see repoKey).
func (h *Hub) installedByItem(ctx context.Context) (map[string][]string, error) {
	origins, err := h.st.VersionOrigins(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, vo := range origins {
		var o pkgtree.Origin
		if json.Unmarshal(vo.Origin, &o) != nil {
			continue
		}
		id := VersionID(vo.Package, vo.TreeDigest)
		if o.CatalogItem != "" {
			out["id:"+o.CatalogItem] = append(out["id:"+o.CatalogItem], id)
		} else if o.Repository != "" {
			k := repoKey(o.Repository, o.Path)
			out[k] = append(out[k], id)
		}
	}
	return out, nil
}

// repoKey is a repository folder's key in installedByItem: the URL without
// case, a trailing slash or ".git", and the folder without its slashes at
// either end.
func repoKey(repo, dir string) string {
	repo = strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(repo)), "/"), ".git")
	return "repo:" + repo + "\x00" + strings.Trim(dir, "/")
}

// MarkInstalled sets each hit's Installed: the versions installed from the
// catalog item, or by hand from its repository folder.
func (h *Hub) MarkInstalled(ctx context.Context, hits []CatalogHit) error {
	if len(hits) == 0 {
		return nil
	}
	installed, err := h.installedByItem(ctx)
	if err != nil {
		return err
	}
	for i := range hits {
		it := &hits[i]
		vs := append(installed["id:"+it.ID], installed[repoKey(it.Repository, it.Path)]...)
		if len(vs) > 0 {
			it.Installed = vs
		}
	}
	return nil
}

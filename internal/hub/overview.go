package hub

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Overview reads what the administration's dashboard shows of the store.
func (h *Hub) Overview(ctx context.Context) (store.Overview, error) { return h.st.Overview(ctx) }

// Leases lists the replicas' leases in the database, with the database's
// time they were judged at (see store.Lease).
func (h *Hub) Leases(ctx context.Context) ([]store.Lease, time.Time, error) {
	return h.st.Leases(ctx)
}

// QueryJobs lists jobs across projects, newest first; see store.JobQuery.
func (h *Hub) QueryJobs(ctx context.Context, q store.JobQuery) ([]store.ListedJob, error) {
	return h.st.QueryJobs(ctx, q)
}

// VersionByStoreID returns the version with the store's id row (a job's
// VersionID), or an error wrapping store.ErrNotFound.
func (h *Hub) VersionByStoreID(ctx context.Context, row int64) (Version, error) {
	sv, err := h.st.GetVersion(ctx, row)
	if err != nil {
		return Version{}, err
	}
	return newVersion(sv), nil
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

package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/skills"
)

// A project's well-known index is served at
//
//	/p/{project}/i/{capability}/.well-known/agent-skills/index.json
//
// (and the rest of the Agent Skills well-known index below it), where the
// capability is one of the project's index tokens: the URL to give `npx
// skills add` is /p/{project}/i/{capability}, because that client sends
// no headers. The index is the project's catalog as its endpoint serves
// it, so it follows binding changes and never lists a withheld file; it
// is answered while the project's index is on (an administrator's choice)
// and the project is not paused. The capability is never logged: the
// logs and the audit log name an index token by its id.

// indexSegment separates a project's id from its capability.
const indexSegment = "/i/"

// IndexCacheBytes bounds the archives a project's index keeps in memory
// between requests; past it, an archive is built again for each request.
const IndexCacheBytes = 8 << 20

// indexOf splits a path /p/{id}/i/{capability}{rest} of a project's index;
// rest is empty or starts with "/".
func indexOf(path string) (id, capability, rest string, ok bool) {
	after, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return "", "", "", false
	}
	id, after, ok = strings.Cut(after, indexSegment)
	if !ok || !validID(id) {
		return "", "", "", false
	}
	capability, rest = after, ""
	if i := strings.IndexByte(after, '/'); i >= 0 {
		capability, rest = after[:i], after[i:]
	}
	return id, capability, rest, capability != ""
}

// serveIndex answers a request of project id's well-known index, opened by
// capability; rest is the path below it.
func (e *Endpoint) serveIndex(w http.ResponseWriter, r *http.Request, id, capability, rest string) {
	// One answer for every capability that does not open this index
	// (malformed, unknown, revoked, expired, of another project or kind):
	// a guess learns nothing.
	const notFound = "no well-known index at this URL: its capability is unknown, revoked or expired; ask an administrator of the hub for the project's index URL"
	if !store.HasIndexTokenPrefix(capability) {
		writeIndexError(w, http.StatusNotFound, "index_not_found", notFound)
		return
	}
	t, err := e.lookupToken(r.Context(), capability)
	switch {
	case errors.Is(err, store.ErrTokenInvalid):
		writeIndexError(w, http.StatusNotFound, "index_not_found", notFound)
		return
	case err != nil:
		writeIndexError(w, http.StatusServiceUnavailable, "store_unavailable", "the capability cannot be checked now; retry later")
		return
	case !t.ForIndex(id):
		writeIndexError(w, http.StatusNotFound, "index_not_found", notFound)
		return
	}
	pp, done, err := e.projects.Use(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeIndexError(w, http.StatusNotFound, "project_not_found", fmt.Sprintf("no project %q", id))
		return
	case errors.Is(err, projects.ErrClosed):
		writeIndexError(w, http.StatusServiceUnavailable, "shutting_down", "the hub is shutting down; retry on another replica or later")
		return
	case err != nil:
		if r.Context().Err() == nil {
			e.log.Error("loading a project's catalog", "project", id, "err", err)
			e.storeErrors.Add(1)
		}
		writeIndexError(w, http.StatusServiceUnavailable, "store_unavailable", "the project's catalog cannot be loaded now; retry later")
		return
	}
	defer done()
	if pp.Paused() {
		writeIndexError(w, http.StatusForbidden, "project_paused", fmt.Sprintf("project %q is paused: its endpoint serves nothing until an administrator resumes it", id))
		return
	}
	if !pp.WellKnown() {
		writeIndexError(w, http.StatusNotFound, "index_off", fmt.Sprintf("project %q's well-known index is turned off; an administrator turns it on (skills-hub well-known on %s)", id, id))
		return
	}
	p := frontOf(pp)
	p.indexRequests.Add(1)
	// The index reads the decoded path below the capability.
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	r2.URL = &u
	p.index(e).ServeHTTP(w, r2)
}

// index returns the project's well-known index, made on first use.
func (p *project) index(e *Endpoint) http.Handler {
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.wellKnown == nil {
		p.wellKnown = p.Catalog().WellKnown(&skills.WellKnownOptions{CacheBytes: IndexCacheBytes, MaxConns: e.opts.MaxConns, Private: true, Logger: e.log})
	}
	return p.wellKnown
}

// writeIndexError answers {"error":{"code":...,"message":...}}, the shape
// of the well-known index's own errors (the installers read no JSON-RPC).
func writeIndexError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": msg}})
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

package hub

import (
	"context"
	"fmt"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// What a new token may be: the rules of issuing one, shared by the
// command line and the admin API, and where an index token opens its
// index. Listing and revoking are the store's.

// TokenRequest asks CreateToken for a token: a project's (Project set), a
// capability of a project's well-known index (Project and Index set) or an
// admin token of Scope.
type TokenRequest struct {
	Project string
	// Index, with Project, asks for an index token: it opens the project's
	// well-known index (while it is on) and nothing else.
	Index bool
	Scope store.Scope
	Name  string
	// Expires, if not zero, is how long the token stays valid.
	Expires time.Duration
}

// CreateToken makes a token and returns it with its secret, which the hub
// keeps only as a hash: show it once. A project or index token needs an
// existing project; an admin token a scope.
func (h *Hub) CreateToken(ctx context.Context, r TokenRequest) (store.Token, string, error) {
	nt := store.NewToken{Kind: store.AdminToken, Scope: r.Scope, Name: r.Name}
	if r.Index && r.Project == "" {
		return store.Token{}, "", fmt.Errorf("an index token is of one project: %w: name the project", store.ErrInvalid)
	}
	if r.Project != "" {
		if r.Scope != "" {
			return store.Token{}, "", fmt.Errorf("a project token has no scope: %w (scopes are for admin tokens)", store.ErrInvalid)
		}
		if _, err := h.st.GetProject(ctx, r.Project); err != nil {
			return store.Token{}, "", err
		}
		nt = store.NewToken{Kind: store.ProjectToken, ProjectID: r.Project, Name: r.Name}
		if r.Index {
			nt.Kind = store.IndexToken
		}
	} else if !r.Scope.Valid() {
		return store.Token{}, "", fmt.Errorf("admin token scope %q: %w: it must be read, write or admin", r.Scope, store.ErrInvalid)
	}
	if r.Expires < 0 {
		return store.Token{}, "", fmt.Errorf("token expiry %s: %w: it must be positive", r.Expires, store.ErrInvalid)
	}
	if r.Expires > 0 {
		nt.ExpiresAt = time.Now().Add(r.Expires)
	}
	return h.st.CreateToken(ctx, nt)
}

// IndexPath is the path, below the hub's URL, of project id's well-known
// index opened by the index token secret: the URL to give `npx skills add`
// is the hub's URL followed by it. The installer reads the index below it,
// at .well-known/agent-skills/index.json.
func IndexPath(id, secret string) string { return "/p/" + id + "/i/" + secret }

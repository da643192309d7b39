package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A project's well-known index (what `npx skills add URL` installs from) is
// off until an administrator turns it on; it is opened by capabilities,
// index tokens that travel in its URL. Turning it off keeps the
// capabilities (on again, their URLs work again); revoking one ends it.

// NewCapability is a capability of a project's well-known index just
// issued: its secret, shown this once, and the path it opens.
type NewCapability struct {
	Token  Token  `json:"token"`
	Secret string `json:"secret" doc:"The capability itself, shown this once: the hub keeps only its hash"`
	Path   string `json:"path" doc:"The index's URL below the hub's: give the hub's URL followed by it to npx skills add" example:"/p/support-bot/i/smcp_i_0123456789abcdef_…"`
}

type newCapabilityOutput struct {
	Body NewCapability
}

type projectCapabilityPath struct {
	ProjectPath
	TokenPath
}

func (a *API) registerWellKnown() {
	register(a, huma.Operation{
		OperationID: "well-known-on", Method: http.MethodPut, Path: "/api/projects/{id}/well-known", Tags: []string{"projects"},
		Summary: "Turn a project's well-known index on",
		Description: "The holders of one of the project's capabilities can then install its bound skills with `npx skills add` " +
			"from the capability's URL, while the project is not paused. Turning it on when it is on changes nothing.",
	}, rule{scope: store.ScopeAdmin, action: "well_known.on", kind: "project", param: "id"}, func(ctx context.Context, in *ProjectPath) (*projectBody, error) {
		p, err := a.st.SetWellKnown(ctx, in.ID, true)
		if err != nil {
			return nil, err
		}
		return &projectBody{Body: wireProject(p)}, nil
	})

	register(a, huma.Operation{
		OperationID: "well-known-off", Method: http.MethodDelete, Path: "/api/projects/{id}/well-known", Tags: []string{"projects"},
		Summary:     "Turn a project's well-known index off",
		Description: "Its URLs answer 404 until it is on again; its capabilities stay (revoke them to end them).",
	}, rule{scope: store.ScopeAdmin, action: "well_known.off", kind: "project", param: "id"}, func(ctx context.Context, in *ProjectPath) (*projectBody, error) {
		p, err := a.st.SetWellKnown(ctx, in.ID, false)
		if err != nil {
			return nil, err
		}
		return &projectBody{Body: wireProject(p)}, nil
	})

	register(a, huma.Operation{
		OperationID: "list-well-known-capabilities", Method: http.MethodGet, Path: "/api/projects/{id}/well-known/capabilities", Tags: []string{"projects"},
		Summary: "List the capabilities of a project's well-known index (never their secrets)",
	}, rule{scope: store.ScopeRead}, func(ctx context.Context, in *projectTokensInput) (*tokensOutput, error) {
		if _, err := a.st.GetProject(ctx, in.ID); err != nil {
			return nil, err
		}
		toks, err := a.st.ListTokens(ctx, store.TokenFilter{Kind: store.IndexToken, ProjectID: in.ID, IncludeRevoked: in.IncludeRevoked})
		if err != nil {
			return nil, err
		}
		out := &tokensOutput{}
		out.Body.Tokens, out.Body.NextCursor, err = tokenPage(toks, "itokens", in.PageQuery)
		return out, err
	})

	register(a, huma.Operation{
		OperationID: "issue-well-known-capability", Method: http.MethodPost, Path: "/api/projects/{id}/well-known/capabilities", Tags: []string{"projects"},
		Summary: "Issue a capability of a project's well-known index",
		Description: "A capability is an index token that travels in the index's URL (the installers send no headers): " +
			"it opens that index and nothing else. The answer holds the secret and the path, shown this once.",
		DefaultStatus: http.StatusCreated,
	}, rule{scope: store.ScopeAdmin, action: "well_known.issue", kind: "token"}, func(ctx context.Context, in *createProjectTokenInput) (*newCapabilityOutput, error) {
		setObject(ctx, "project:"+in.ID)
		d, err := expiry(in.Body.ExpiresIn)
		if err != nil {
			return nil, err
		}
		tok, secret, err := a.hub.CreateToken(ctx, hub.TokenRequest{Project: in.ID, Index: true, Name: in.Body.Name, Expires: d})
		if err != nil {
			return nil, err
		}
		setObject(ctx, tok.ID)
		return &newCapabilityOutput{Body: NewCapability{Token: wireToken(tok), Secret: secret, Path: hub.IndexPath(in.ID, secret)}}, nil
	})

	register(a, huma.Operation{
		OperationID: "revoke-well-known-capability", Method: http.MethodDelete, Path: "/api/projects/{id}/well-known/capabilities/{token_id}", Tags: []string{"projects"},
		Summary: "Revoke a capability of a project's well-known index at once",
	}, rule{scope: store.ScopeAdmin, action: "well_known.revoke", kind: "token", param: "token_id"}, func(ctx context.Context, in *projectCapabilityPath) (*tokenBody, error) {
		tok, err := a.st.GetToken(ctx, in.TokenID)
		if err != nil {
			return nil, err
		}
		if !tok.ForIndex(in.ID) {
			return nil, newError(http.StatusNotFound, CodeNotFound, "project "+in.ID+" has no index capability "+in.TokenID)
		}
		tok, err = a.st.RevokeToken(ctx, in.TokenID)
		if err != nil {
			return nil, err
		}
		if a.opts.OnTokenRevoked != nil {
			a.opts.OnTokenRevoked(tok.ID)
		}
		return &tokenBody{Body: wireToken(tok)}, nil
	})
}

package api

import (
	"context"
	"net/http"

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

func (a *API) wellKnownOn(ctx context.Context, in *ProjectPath) (*projectBody, error) {
	p, err := a.st.SetWellKnown(ctx, in.ID, true)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) wellKnownOff(ctx context.Context, in *ProjectPath) (*projectBody, error) {
	p, err := a.st.SetWellKnown(ctx, in.ID, false)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) listWellKnownCapabilities(ctx context.Context, in *projectTokensInput) (*tokensOutput, error) {
	return a.projectTokens(ctx, in, store.IndexToken, "itokens")
}

func (a *API) issueWellKnownCapability(ctx context.Context, in *createProjectTokenInput) (*newCapabilityOutput, error) {
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
}

func (a *API) revokeWellKnownCapability(ctx context.Context, in *projectCapabilityPath) (*tokenBody, error) {
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
}

package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// ProjectPath is a project id as a path parameter: anything but an id's
// form is refused with 422 before the store is asked.
type ProjectPath struct {
	ID string `path:"id" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" doc:"The project's id" example:"support-bot"`
}

type projectBody struct {
	Body Project
}

type projectsOutput struct {
	Body struct {
		Projects   []Project `json:"projects"`
		NextCursor string    `json:"next_cursor,omitempty"`
	}
}

type createProjectInput struct {
	Body struct {
		ID   string `json:"id" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" doc:"A stable id: it names the endpoint /p/{id}/mcp"`
		Name string `json:"name" minLength:"1" maxLength:"200" doc:"A unique name for people; it may change"`
	}
}

type renameInput struct {
	ProjectPath
	Body struct {
		Name string `json:"name" minLength:"1" maxLength:"200"`
	}
}

type duplicateInput struct {
	ProjectPath
	Body struct {
		ID   string `json:"id" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" doc:"The new project's id"`
		Name string `json:"name" minLength:"1" maxLength:"200" doc:"The new project's name"`
	}
}

type projectSkillsInput struct {
	ProjectPath
	PageQuery
}

type projectSkillsOutput struct {
	Body struct {
		ProjectID  string      `json:"project_id"`
		Generation int64       `json:"generation" doc:"Counts the real changes of the project's bindings"`
		Skills     []hub.Bound `json:"skills"`
		NextCursor string      `json:"next_cursor,omitempty"`
	}
}

type bindingInput struct {
	ProjectPath
	SkillID string `path:"skill_id" maxLength:"300" doc:"A version id, as for /api/skills/{id}"`
}

type bindingOutput struct {
	Body hub.BindResult
}

func (a *API) listProjects(ctx context.Context, in *PageQuery) (*projectsOutput, error) {
	after, err := decodeCursor("projects", in.Cursor)
	if err != nil {
		return nil, err
	}
	pl, err := a.st.ListProjects(ctx, store.ProjectPage{After: after, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	out := &projectsOutput{}
	out.Body.Projects, out.Body.NextCursor = wireList(pl.Projects, wireProject), encodeCursor("projects", pl.Next)
	return out, nil
}

func (a *API) createProject(ctx context.Context, in *createProjectInput) (*projectBody, error) {
	setObject(ctx, in.Body.ID)
	if err := a.st.CreateProject(ctx, in.Body.ID, in.Body.Name); err != nil {
		return nil, err
	}
	p, err := a.st.GetProject(ctx, in.Body.ID)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) getProject(ctx context.Context, in *ProjectPath) (*projectBody, error) {
	p, err := a.st.GetProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) renameProject(ctx context.Context, in *renameInput) (*projectBody, error) {
	p, err := a.st.RenameProject(ctx, in.ID, in.Body.Name)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) pauseProject(ctx context.Context, in *ProjectPath) (*projectBody, error) {
	p, err := a.st.PauseProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) resumeProject(ctx context.Context, in *ProjectPath) (*projectBody, error) {
	p, err := a.st.ResumeProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) duplicateProject(ctx context.Context, in *duplicateInput) (*projectBody, error) {
	setObject(ctx, in.Body.ID)
	p, err := a.st.DuplicateProject(ctx, in.ID, in.Body.ID, in.Body.Name)
	if err != nil {
		return nil, err
	}
	return &projectBody{Body: wireProject(p)}, nil
}

func (a *API) deleteProject(ctx context.Context, in *ProjectPath) (*struct{}, error) {
	if err := a.st.DeleteProject(ctx, in.ID); err != nil {
		var je *store.JobsError
		if errors.As(err, &je) {
			return nil, fmt.Errorf("deleting project %s: %w; wait for them to end, then delete the project again", in.ID, err)
		}
		return nil, err
	}
	return &struct{}{}, nil
}

func (a *API) listProjectSkills(ctx context.Context, in *projectSkillsInput) (*projectSkillsOutput, error) {
	ps, err := a.hub.ProjectSkills(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ps.Skills, func(x, y hub.Bound) int { return strings.Compare(x.Version.ID, y.Version.ID) })
	page, next, err := pageOf(ps.Skills, func(b hub.Bound) string { return b.Version.ID }, "bindings", in.PageQuery)
	if err != nil {
		return nil, err
	}
	out := &projectSkillsOutput{}
	out.Body.ProjectID, out.Body.Generation, out.Body.Skills, out.Body.NextCursor = ps.ProjectID, ps.Generation, page, next
	return out, nil
}

func (a *API) bindSkill(ctx context.Context, in *bindingInput) (*bindingOutput, error) {
	setObject(ctx, in.ID+"/"+in.SkillID)
	r, err := a.hub.Bind(ctx, in.ID, in.SkillID)
	if err != nil {
		return nil, err
	}
	setObject(ctx, in.ID+"/"+r.Version.ID)
	return &bindingOutput{Body: r}, nil
}

func (a *API) unbindSkill(ctx context.Context, in *bindingInput) (*bindingOutput, error) {
	setObject(ctx, in.ID+"/"+in.SkillID)
	r, err := a.hub.Unbind(ctx, in.ID, in.SkillID)
	if err != nil {
		return nil, err
	}
	setObject(ctx, in.ID+"/"+r.Version.ID)
	return &bindingOutput{Body: r}, nil
}

// TokenPath is a token's id as a path parameter.
type TokenPath struct {
	TokenID string `path:"token_id" pattern:"^[0-9a-f]{16}$" doc:"The token's id (not secret)"`
}

type projectTokenPath struct {
	ProjectPath
	TokenPath
}

// TokensQuery pages a token list.
type TokensQuery struct {
	PageQuery
	IncludeRevoked bool `query:"include_revoked" doc:"List revoked tokens too"`
}

type projectTokensInput struct {
	ProjectPath
	TokensQuery
}

type tokensOutput struct {
	Body struct {
		Tokens     []Token `json:"tokens"`
		NextCursor string  `json:"next_cursor,omitempty"`
	}
}

// NewToken is a token just created, with its secret: shown this once.
type NewToken struct {
	Token  Token  `json:"token"`
	Secret string `json:"secret" doc:"The token itself, shown this once: the hub keeps only its hash"`
}

type newTokenOutput struct {
	Body NewToken
}

type tokenBody struct {
	Body Token
}

// TokenOptions are what a new token may be given.
type TokenOptions struct {
	Name      string `json:"name,omitempty" maxLength:"128" doc:"A label for people"`
	ExpiresIn string `json:"expires_in,omitempty" maxLength:"32" doc:"How long the token stays valid, as a Go duration (720h); absent: until revoked" example:"720h"`
}

type createProjectTokenInput struct {
	ProjectPath
	Body TokenOptions
}

type createAdminTokenInput struct {
	Body struct {
		Scope store.Scope `json:"scope" enum:"read,write,admin" doc:"read < write < admin"`
		TokenOptions
	}
}

func expiry(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, newError(http.StatusUnprocessableEntity, CodeInvalid, "expires_in: a positive duration such as 720h or 90m")
	}
	return d, nil
}

// tokenPage pages a token list, newest first, by (created, id).
func tokenPage(toks []store.Token, list string, q PageQuery) ([]Token, string, error) {
	key := func(t store.Token) string {
		// Newest first: invert the time so that keys sort ascending.
		return strconv.FormatInt(1<<62-t.CreatedAt.UnixMicro(), 10) + "." + t.ID
	}
	slices.SortFunc(toks, func(x, y store.Token) int { return cmp.Compare(key(x), key(y)) })
	page, next, err := pageOf(toks, key, list, q)
	return wireList(page, wireToken), next, err
}

func (a *API) listProjectTokens(ctx context.Context, in *projectTokensInput) (*tokensOutput, error) {
	return a.projectTokens(ctx, in, store.ProjectToken, "ptokens")
}

// projectTokens lists a project's tokens of one kind (project tokens, or
// its well-known index's capabilities), paged under the cursor's list name.
func (a *API) projectTokens(ctx context.Context, in *projectTokensInput, kind store.TokenKind, list string) (*tokensOutput, error) {
	if _, err := a.st.GetProject(ctx, in.ID); err != nil {
		return nil, err
	}
	toks, err := a.st.ListTokens(ctx, store.TokenFilter{Kind: kind, ProjectID: in.ID, IncludeRevoked: in.IncludeRevoked})
	if err != nil {
		return nil, err
	}
	out := &tokensOutput{}
	out.Body.Tokens, out.Body.NextCursor, err = tokenPage(toks, list, in.PageQuery)
	return out, err
}

func (a *API) createProjectToken(ctx context.Context, in *createProjectTokenInput) (*newTokenOutput, error) {
	setObject(ctx, "project:"+in.ID)
	d, err := expiry(in.Body.ExpiresIn)
	if err != nil {
		return nil, err
	}
	tok, secret, err := a.hub.CreateToken(ctx, hub.TokenRequest{Project: in.ID, Name: in.Body.Name, Expires: d})
	if err != nil {
		return nil, err
	}
	setObject(ctx, tok.ID)
	return &newTokenOutput{Body: NewToken{Token: wireToken(tok), Secret: secret}}, nil
}

func (a *API) revokeProjectToken(ctx context.Context, in *projectTokenPath) (*tokenBody, error) {
	tok, err := a.st.GetToken(ctx, in.TokenID)
	if err != nil {
		return nil, err
	}
	if !tok.ForProject(in.ID) {
		return nil, newError(http.StatusNotFound, CodeNotFound, "project "+in.ID+" has no token "+in.TokenID)
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

func (a *API) listAdminTokens(ctx context.Context, in *TokensQuery) (*tokensOutput, error) {
	toks, err := a.st.ListTokens(ctx, store.TokenFilter{Kind: store.AdminToken, IncludeRevoked: in.IncludeRevoked})
	if err != nil {
		return nil, err
	}
	out := &tokensOutput{}
	out.Body.Tokens, out.Body.NextCursor, err = tokenPage(toks, "atokens", in.PageQuery)
	return out, err
}

func (a *API) createAdminToken(ctx context.Context, in *createAdminTokenInput) (*newTokenOutput, error) {
	d, err := expiry(in.Body.ExpiresIn)
	if err != nil {
		return nil, err
	}
	tok, secret, err := a.hub.CreateToken(ctx, hub.TokenRequest{Scope: in.Body.Scope, Name: in.Body.Name, Expires: d})
	if err != nil {
		return nil, err
	}
	setObject(ctx, tok.ID)
	return &newTokenOutput{Body: NewToken{Token: wireToken(tok), Secret: secret}}, nil
}

func (a *API) revokeAdminToken(ctx context.Context, in *TokenPath) (*tokenBody, error) {
	tok, err := a.st.GetToken(ctx, in.TokenID)
	if err != nil {
		return nil, err
	}
	if tok.Kind != store.AdminToken {
		return nil, newError(http.StatusNotFound, CodeNotFound, "no admin token "+in.TokenID+" (a project's tokens are under /api/projects/{id}/tokens)")
	}
	tok, err = a.st.RevokeToken(ctx, in.TokenID)
	if err != nil {
		return nil, err
	}
	return &tokenBody{Body: wireToken(tok)}, nil
}

func (a *API) listAudit(ctx context.Context, in *auditQuery) (*auditOutput, error) {
	f := store.AuditFilter{Actor: in.Actor, Action: in.Action, ObjectKind: in.ObjectKind, ObjectID: in.ObjectID, Limit: in.Limit}
	if !in.Since.IsZero() {
		f.Since = in.Since
	}
	if !in.Until.IsZero() {
		f.Until = in.Until
	}
	key, err := decodeCursor("audit", in.Cursor)
	if err != nil {
		return nil, err
	}
	if key != "" {
		if f.Before, err = strconv.ParseInt(key, 10, 64); err != nil || f.Before <= 0 {
			return nil, newError(http.StatusBadRequest, CodeBadRequest, "the cursor is not one this list gave; start again without it")
		}
	}
	pg, err := a.st.AuditList(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &auditOutput{}
	out.Body.Entries = wireList(pg.Entries, wireAuditEntry)
	if pg.Next > 0 {
		out.Body.NextCursor = encodeCursor("audit", strconv.FormatInt(pg.Next, 10))
	}
	return out, nil
}

type auditQuery struct {
	Actor      string    `query:"actor" maxLength:"128" doc:"A token's id"`
	Action     string    `query:"action" maxLength:"64" doc:"e.g. project.bind"`
	ObjectKind string    `query:"object_kind" maxLength:"64" doc:"e.g. project, version, token, catalog"`
	ObjectID   string    `query:"object_id" maxLength:"256"`
	Since      time.Time `query:"since" doc:"RFC 3339; entries at or after it"`
	Until      time.Time `query:"until" doc:"RFC 3339; entries before it"`
	PageQuery
}

type auditOutput struct {
	Body struct {
		Entries    []AuditEntry `json:"entries"`
		NextCursor string       `json:"next_cursor,omitempty"`
	}
}

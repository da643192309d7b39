package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Projects, their bindings, tokens and the audit log. Each operation is the
// store's, with version references resolved as Resolve does and errors that
// say what to do; the command line and the admin API share them.

// CreateProject adds a project with a stable id (1 to 63 of a-z, 0-9 and
// "-": it names the endpoint /p/{id}/mcp) and a unique name.
func (h *Hub) CreateProject(ctx context.Context, id, name string) (store.Project, error) {
	if err := h.st.CreateProject(ctx, id, name); err != nil {
		return store.Project{}, err
	}
	return h.st.GetProject(ctx, id)
}

// Project returns a project, or an error wrapping store.ErrNotFound.
func (h *Hub) Project(ctx context.Context, id string) (store.Project, error) {
	return h.st.GetProject(ctx, id)
}

// Projects lists projects in id order, a page at a time.
func (h *Hub) Projects(ctx context.Context, page store.ProjectPage) (store.ProjectList, error) {
	return h.st.ListProjects(ctx, page)
}

// RenameProject changes a project's name; its id, and so its endpoint, stay.
func (h *Hub) RenameProject(ctx context.Context, id, name string) (store.Project, error) {
	return h.st.RenameProject(ctx, id, name)
}

// PauseProject pauses a project: its endpoint refuses requests until it is
// resumed. Pausing a paused project changes nothing.
func (h *Hub) PauseProject(ctx context.Context, id string) (store.Project, error) {
	return h.st.PauseProject(ctx, id)
}

// ResumeProject resumes a paused project.
func (h *Hub) ResumeProject(ctx context.Context, id string) (store.Project, error) {
	return h.st.ResumeProject(ctx, id)
}

// SetWellKnown turns project id's well-known index on or off: on, the
// holders of one of its index tokens can install its bound skills with
// `npx skills add` from IndexPath's URL; off (the default), that URL
// answers nothing, and the tokens stay until revoked. Setting it as it is
// changes nothing.
func (h *Hub) SetWellKnown(ctx context.Context, id string, on bool) (store.Project, error) {
	return h.st.SetWellKnown(ctx, id, on)
}

// IndexPath is the path, below the hub's URL, of project id's well-known
// index opened by the index token secret: the URL to give `npx skills add`
// is the hub's URL followed by it. The installer reads the index below it,
// at .well-known/agent-skills/index.json.
func IndexPath(id, secret string) string { return "/p/" + id + "/i/" + secret }

// DuplicateProject makes project id, named name, bound to the versions src
// is bound to. Jobs, job files and tokens are never copied, and the new
// project's well-known index is off.
func (h *Hub) DuplicateProject(ctx context.Context, src, id, name string) (store.Project, error) {
	return h.st.DuplicateProject(ctx, src, id, name)
}

// DeleteProject removes a project with its bindings, tokens and job
// records; refused with a *store.JobsError while one of its jobs runs. Job
// files stay for the operator's recovery.
func (h *Hub) DeleteProject(ctx context.Context, id string) error {
	if err := h.st.DeleteProject(ctx, id); err != nil {
		var je *store.JobsError
		if errors.As(err, &je) {
			return fmt.Errorf("deleting project %s: %w; wait for them to end, then delete the project again", id, err)
		}
		return err
	}
	return nil
}

// Bound is one version bound to a project.
type Bound struct {
	Version Version   `json:"version"`
	BoundAt time.Time `json:"bound_at"`
}

// ProjectSkills is what a project is bound to, and the binding generation
// that list is.
type ProjectSkills struct {
	ProjectID  string  `json:"project_id"`
	Generation int64   `json:"generation"`
	Skills     []Bound `json:"skills"`
}

// ProjectSkills lists the versions bound to project id, by package name.
func (h *Hub) ProjectSkills(ctx context.Context, id string) (ProjectSkills, error) {
	bl, err := h.st.ProjectBindings(ctx, id)
	if err != nil {
		return ProjectSkills{}, err
	}
	out := ProjectSkills{ProjectID: bl.ProjectID, Generation: bl.Generation, Skills: make([]Bound, len(bl.Bindings))}
	for i, b := range bl.Bindings {
		out.Skills[i] = Bound{Version: newVersion(b.Version), BoundAt: b.BoundAt}
	}
	return out, nil
}

// BindResult says what a binding change did: Changed is false when the
// binding was already as asked (nothing was written or announced).
type BindResult struct {
	ProjectID  string  `json:"project_id"`
	Version    Version `json:"version"`
	Changed    bool    `json:"changed"`
	Generation int64   `json:"generation"`
}

// Bind binds the version ref names to project id. Binding a bound version
// again changes nothing. An unapproved version is refused with
// store.ErrNotApproved when the hub requires approval.
func (h *Hub) Bind(ctx context.Context, id, ref string) (BindResult, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return BindResult{}, err
	}
	v := newVersion(sv)
	r, err := h.st.BindVersion(ctx, id, sv.ID)
	if err != nil {
		if errors.Is(err, store.ErrNotApproved) {
			return BindResult{}, fmt.Errorf("binding %s to %s: %w", v.ID, id, err)
		}
		return BindResult{}, err
	}
	return BindResult{ProjectID: id, Version: v, Changed: r.Changed, Generation: r.Generation}, nil
}

// Unbind removes the binding of the version ref names from project id;
// unbinding a version that is not bound changes nothing. Refused with a
// *store.JobsError, which lists them, while the project keeps jobs for it.
func (h *Hub) Unbind(ctx context.Context, id, ref string) (BindResult, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return BindResult{}, err
	}
	v := newVersion(sv)
	r, err := h.st.UnbindVersion(ctx, id, sv.ID)
	if err != nil {
		var je *store.JobsError
		if errors.As(err, &je) {
			return BindResult{}, fmt.Errorf("unbinding %s from %s: %w (%s); download what you need and delete them first", v.ID, id, err, strings.Join(je.Jobs, ", "))
		}
		return BindResult{}, err
	}
	return BindResult{ProjectID: id, Version: v, Changed: r.Changed, Generation: r.Generation}, nil
}

// ReadFile returns one file of the version ref names, verified against its
// digest, with its listing.
func (h *Hub) ReadFile(ctx context.Context, ref, path string) ([]byte, File, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return nil, File{}, err
	}
	files, err := h.st.VersionFiles(ctx, sv.ID)
	if err != nil {
		return nil, File{}, err
	}
	for _, f := range files {
		if f.Path != path {
			continue
		}
		data, err := h.st.ReadFile(ctx, sv.ID, path)
		if err != nil {
			return nil, File{}, err
		}
		return data, File{Path: f.Path, Mode: fmt.Sprintf("%o", f.Mode), Size: f.Size, Digest: fmt.Sprintf("sha256:%x", f.Digest)}, nil
	}
	return nil, File{}, fmt.Errorf("version %s has no file %q: %w (see its file list: `hub inspect %s`)", VersionID(sv.Package, sv.TreeDigest), path, store.ErrNotFound, VersionID(sv.Package, sv.TreeDigest))
}

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

// Tokens lists tokens f matches, newest first.
func (h *Hub) Tokens(ctx context.Context, f store.TokenFilter) ([]store.Token, error) {
	return h.st.ListTokens(ctx, f)
}

// Token returns a token by id, or an error wrapping store.ErrNotFound.
func (h *Hub) Token(ctx context.Context, id string) (store.Token, error) {
	return h.st.GetToken(ctx, id)
}

// RevokeToken revokes a token at once; revoking it again changes nothing.
func (h *Hub) RevokeToken(ctx context.Context, id string) (store.Token, error) {
	return h.st.RevokeToken(ctx, id)
}

// VerifyToken returns the token secret belongs to, or an error matching
// store.ErrTokenInvalid that never repeats the secret.
func (h *Hub) VerifyToken(ctx context.Context, secret string) (store.Token, error) {
	return h.st.VerifyToken(ctx, secret)
}

// Audit appends an entry to the audit log.
func (h *Hub) Audit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	return h.st.AppendAudit(ctx, e)
}

// AuditLog lists audit entries f selects, newest first.
func (h *Hub) AuditLog(ctx context.Context, f store.AuditFilter) (store.AuditPage, error) {
	return h.st.AuditList(ctx, f)
}

// Ping reports whether the hub's database answers.
func (h *Hub) Ping(ctx context.Context) error {
	_, err := h.st.ListProjects(ctx, store.ProjectPage{Limit: 1})
	return err
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

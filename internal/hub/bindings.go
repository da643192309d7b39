package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Bindings by version reference. A version is named as Resolve names it,
// and the errors say what to do; the binding policy itself (approval
// before binding, jobs kept for a binding) is the store's, checked in the
// transaction that changes the binding.

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

// Package hub holds the skill hub's rules about skill packages, which the
// command line (`skills-hub …`), the admin API and the ClawHub-compatible
// registry share: how a version is named and resolved, how a package is
// installed (from a ZIP upload, a git repository, a catalog item or a
// publication: the repository rule, the limits, the inspection, the tree
// digest a catalog promises), who approved a version, binding and
// unbinding by version reference, what a new token may be, and the
// installable catalog (search, refresh, which items are installed).
//
// It works on a store it is given ([Store], the few methods it calls of
// *store.DB) and owns nothing of it: whoever opened the store closes it.
// What is a plain read or write of the store (projects, token lists, the
// audit log, jobs, remnants) is not here: each caller reaches the store
// through the narrow interface it declares.
//
// # Version ids
//
// A version is named by its package name, "@", and the first 12 hex digits
// of its tree digest: "pdf@3f2a9c0b1d4e". The id depends only on the tree,
// so it is the same in every hub that holds the version, before and after a
// backup, on either backend. [Hub.Resolve] also accepts a longer or shorter
// prefix (at least [MinPrefix] digits), the full tree digest with or without
// the name ("sha256:…", "pdf@sha256:…"), and a bare package name when the
// package has exactly one version.
//
// Inspection is not proof of safety ([pkgtree.NotProofOfSafety]); every
// output of this package that shows an inspection carries that note.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// ShortDigest is how many hex digits of the tree digest a version id shows.
const ShortDigest = 12

// MinPrefix is the shortest digest prefix Resolve accepts.
const MinPrefix = 4

var (
	// ErrDigestMismatch is returned when a catalog item publishes a tree
	// digest and the tree read from its repository has another one.
	ErrDigestMismatch = errors.New("the package tree does not match the catalog's tree digest")
	// ErrAmbiguous is returned by Resolve for a reference that matches more
	// than one version.
	ErrAmbiguous = errors.New("ambiguous version")
	// ErrBadID is returned by Resolve for a reference that is not a version
	// id in any accepted form.
	ErrBadID = errors.New("not a version id")
)

// Store is what the hub's operations read and write of the hub's store;
// *store.DB is one.
type Store interface {
	// The installable catalog's stored documents, and their feed.
	index.SnapshotStore
	CatalogChanges(ctx context.Context) <-chan struct{}

	// Versions: installed once, then only labelled, bound or removed.
	Install(ctx context.Context, nv store.NewVersion) (store.Version, bool, error)
	FindVersion(ctx context.Context, treeDigest string) (store.Version, error)
	ListPackages(ctx context.Context) ([]store.Package, error)
	ListVersions(ctx context.Context, pkg string) ([]store.Version, error)
	VersionOrigins(ctx context.Context) ([]store.VersionOrigin, error)
	VersionFiles(ctx context.Context, id int64) ([]store.File, error)
	ReadFile(ctx context.Context, id int64, path string) ([]byte, error)
	DeleteVersion(ctx context.Context, id int64) error
	Approve(ctx context.Context, id int64, by string) (store.Version, error)
	Unapprove(ctx context.Context, id int64) (store.Version, error)
	SetNotes(ctx context.Context, id int64, notes string) (store.Version, error)

	// Bindings, and the project a new token is for.
	BindVersion(ctx context.Context, projectID string, versionID int64) (store.BindResult, error)
	UnbindVersion(ctx context.Context, projectID string, versionID int64) (store.BindResult, error)
	Bindings(ctx context.Context, versionID int64) ([]string, error)
	ProjectBindings(ctx context.Context, projectID string) (store.BindingList, error)
	GetProject(ctx context.Context, id string) (store.Project, error)
	CreateToken(ctx context.Context, nt store.NewToken) (store.Token, string, error)
}

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// LocalRepositories lets installs read repositories on this machine's
	// disk (a path or a file:// URL): the command line's. Off (the
	// server's admin API), only https repositories are read, by direct
	// installs and catalog items alike: one rule for every location.
	LocalRepositories bool
	// Limits bound every package installed; zero fields mean pkgtree's
	// defaults (32 MiB per file, 128 MiB per package, 2,000 files).
	Limits pkgtree.Limits
	// GitHub, if not nil, reads https://github.com repositories through
	// GitHub's API and archive endpoint (see pkgtree.GitHubOptions), for
	// repository and catalog installs alike. If nil, git's protocol.
	GitHub *pkgtree.GitHubOptions
	// Catalog configures the installable catalog (refresh client, limits).
	// If nil, index's defaults.
	Catalog *index.Options
	// Logger receives the catalog's logs. If nil, nothing is logged.
	Logger *slog.Logger
}

// Hub is the hub's operations over a store. Its methods are safe for
// concurrent use.
type Hub struct {
	st         Store
	localRepos bool
	limits     pkgtree.Limits
	github     *pkgtree.GitHubOptions
	catOpts    *index.Options

	catMu   sync.Mutex
	catalog *index.Catalog // nil until first used
}

// New returns the hub's operations over st, which stays the caller's to
// close. The catalog is opened when first used (see Hub.Catalog), so that
// commands that do not need it do not pay for indexing it.
func New(st Store, opts *Options) *Hub {
	if opts == nil {
		opts = &Options{}
	}
	copts := opts.Catalog
	if copts == nil {
		copts = &index.Options{}
	}
	if copts.Logger == nil && opts.Logger != nil {
		c := *copts
		c.Logger = opts.Logger
		copts = &c
	}
	return &Hub{st: st, catOpts: copts, limits: opts.Limits, github: opts.GitHub, localRepos: opts.LocalRepositories}
}

// Catalog returns the installable catalog: the last snapshot stored, or the
// bundled one. It is opened on the first call; a failure to read the store
// is returned, and the next call tries again.
func (h *Hub) Catalog(ctx context.Context) (*index.Catalog, error) {
	h.catMu.Lock()
	defer h.catMu.Unlock()
	if h.catalog == nil {
		cat, err := index.Open(ctx, h.st, h.catOpts)
		if err != nil {
			return nil, fmt.Errorf("opening the hub's catalog: %w", err)
		}
		h.catalog = cat
	}
	return h.catalog, nil
}

// ErrLocalRepository is matched by the refusal of a repository on the
// server's disk by a hub that reads only https ones.
var ErrLocalRepository = errors.New("the hub reads only https repositories here")

// CheckRepository applies the hub's one rule for repository locations,
// for direct installs and catalog items alike: an https URL, or, when
// the hub was opened with LocalRepositories (the command line), a path
// or file:// URL on this machine's disk. Anything else is refused, saying
// why (ErrLocalRepository, or pkgtree.ErrSource).
func (h *Hub) CheckRepository(raw string) error {
	local, err := pkgtree.IsLocal(raw)
	switch {
	case err != nil:
		return err
	case local && !h.localRepos:
		return fmt.Errorf("%w: %s is a location on the server's disk, which the server does not read for installs (an https repository is); install it from the server's shell with `skills-mcp hub install --repo PATH` instead", ErrLocalRepository, redactLocation(raw))
	}
	return nil
}

// redactLocation shortens a location for a message.
func redactLocation(raw string) string {
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return fmt.Sprintf("%q", raw)
}

// Version is an installed version as the hub shows it.
type Version struct {
	// ID is the version's id, name@<12 hex digits of the tree digest>.
	ID          string          `json:"id"`
	Package     string          `json:"package"`
	TreeDigest  string          `json:"tree_digest"`
	Description string          `json:"description,omitempty"`
	Origin      pkgtree.Origin  `json:"origin"`
	FileCount   int             `json:"file_count"`
	Size        int64           `json:"size"`
	CreatedAt   time.Time       `json:"created_at"`
	Approved    bool            `json:"approved"`
	Labels      store.Labels    `json:"labels"`
	Frontmatter json.RawMessage `json:"frontmatter"`

	row int64 // the store's id
}

// StoreID returns the store's id of the version, for store calls.
func (v *Version) StoreID() int64 { return v.row }

// VersionID returns the id of the version of package pkg with the given
// tree digest.
func VersionID(pkg, treeDigest string) string {
	hex := strings.TrimPrefix(treeDigest, "sha256:")
	if len(hex) > ShortDigest {
		hex = hex[:ShortDigest]
	}
	return pkg + "@" + hex
}

func newVersion(sv store.Version) Version {
	v := Version{
		ID:          VersionID(sv.Package, sv.TreeDigest),
		Package:     sv.Package,
		TreeDigest:  sv.TreeDigest,
		FileCount:   sv.FileCount,
		Size:        sv.Size,
		CreatedAt:   sv.CreatedAt,
		Approved:    sv.Approved(),
		Labels:      sv.Labels,
		Frontmatter: sv.Frontmatter,
		row:         sv.ID,
	}
	// Both were written by Install from values of these types; a version
	// whose JSON no longer decodes still lists, without the details.
	_ = json.Unmarshal(sv.Origin, &v.Origin)
	var fm struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(sv.Frontmatter, &fm) == nil {
		v.Description = fm.Description
	}
	return v
}

// Resolve finds the version ref names, in any form the package
// documentation lists. It returns an error wrapping store.ErrNotFound,
// ErrAmbiguous or ErrBadID, which says what would name the version.
func (h *Hub) Resolve(ctx context.Context, ref string) (Version, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	return newVersion(sv), nil
}

func (h *Hub) resolve(ctx context.Context, ref string) (store.Version, error) {
	name, digest, hasAt := strings.Cut(ref, "@")
	if !hasAt && strings.HasPrefix(ref, "sha256:") {
		name, digest = "", ref
	}
	if full, ok := strings.CutPrefix(digest, "sha256:"); ok {
		if !isHex(full) || len(full) != 64 {
			return store.Version{}, fmt.Errorf("version %q: %w: a full tree digest is sha256: and 64 hex digits", ref, ErrBadID)
		}
		sv, err := h.st.FindVersion(ctx, digest)
		if err != nil {
			return store.Version{}, notFound(ref, err)
		}
		if name != "" && sv.Package != name {
			return store.Version{}, fmt.Errorf("version %q: %w: that tree digest is a version of %s", ref, store.ErrNotFound, sv.Package)
		}
		return sv, nil
	}
	if name == "" {
		return store.Version{}, fmt.Errorf("version %q: %w: give NAME@DIGEST, as `skills-hub list` or `skills-hub versions NAME` prints it", ref, ErrBadID)
	}
	// No package name has these, and a database may refuse them outright
	// (PostgreSQL's text has no NUL).
	if len(name) > 256 || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return store.Version{}, fmt.Errorf("version %q: %w: that is not a package name", ref, ErrBadID)
	}
	if hasAt && (len(digest) < MinPrefix || !isHex(digest)) {
		return store.Version{}, fmt.Errorf("version %q: %w: after the @ come at least %d hex digits of the tree digest", ref, ErrBadID, MinPrefix)
	}
	all, err := h.st.ListVersions(ctx, name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.Version{}, fmt.Errorf("version %q: %w: no package %s is installed (see `skills-hub list`)", ref, store.ErrNotFound, name)
		}
		return store.Version{}, err
	}
	var match []store.Version
	digest = strings.ToLower(digest)
	for _, sv := range all {
		if strings.HasPrefix(strings.TrimPrefix(sv.TreeDigest, "sha256:"), digest) {
			match = append(match, sv)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0:
		return store.Version{}, fmt.Errorf("version %q: %w: package %s has no such version (see `skills-hub versions %s`)", ref, store.ErrNotFound, name, name)
	case !hasAt:
		return store.Version{}, fmt.Errorf("version %q: %w: package %s has %d versions; name one as NAME@DIGEST (see `skills-hub versions %s`)", ref, ErrAmbiguous, name, len(match), name)
	default:
		return store.Version{}, fmt.Errorf("version %q: %w: %d versions start with %s; give more digits", ref, ErrAmbiguous, len(match), digest)
	}
}

func notFound(ref string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("version %q: %w: no version has that tree digest (see `skills-hub list`)", ref, store.ErrNotFound)
	}
	return err
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Package is one installed package and its versions.
type Package struct {
	Name     string  `json:"name"`
	Versions int     `json:"versions"`
	Latest   Version `json:"latest"`
}

// List lists every installed package by name, each with its version count
// and its latest version.
func (h *Hub) List(ctx context.Context) ([]Package, error) {
	ps, err := h.st.ListPackages(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Package, len(ps))
	for i, p := range ps {
		out[i] = Package{Name: p.Name, Versions: p.Versions, Latest: newVersion(p.Latest)}
	}
	return out, nil
}

// Versions lists a package's versions, oldest first. A package with no
// version is an error wrapping store.ErrNotFound.
func (h *Hub) Versions(ctx context.Context, pkg string) ([]Version, error) {
	svs, err := h.st.ListVersions(ctx, pkg)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("package %s: %w: it has no installed version (see `skills-hub list`)", pkg, store.ErrNotFound)
		}
		return nil, err
	}
	out := make([]Version, len(svs))
	for i, sv := range svs {
		out[i] = newVersion(sv)
	}
	return out, nil
}

// File is one file of a version.
type File struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"` // "644" or "755"
	Size   int64  `json:"size"`
	Digest string `json:"digest"` // "sha256:<hex>"
}

// Inspected is a version with what was learnt about it at install.
type Inspected struct {
	Version    Version            `json:"version"`
	Inspection pkgtree.Inspection `json:"inspection"`
	Files      []File             `json:"files"`
	// Bindings are the projects the version is bound to.
	Bindings []string `json:"bindings"`
}

// Inspect returns the version ref names with its stored inspection, files
// and bindings.
func (h *Hub) Inspect(ctx context.Context, ref string) (*Inspected, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := &Inspected{Version: newVersion(sv)}
	if err := json.Unmarshal(sv.Inspection, &out.Inspection); err != nil {
		return nil, fmt.Errorf("version %s: its stored inspection does not decode: %w", out.Version.ID, err)
	}
	// The note is the package's, whatever was stored.
	out.Inspection.Note = pkgtree.NotProofOfSafety
	files, err := h.st.VersionFiles(ctx, sv.ID)
	if err != nil {
		return nil, err
	}
	out.Files = make([]File, len(files))
	for i, f := range files {
		out.Files[i] = File{Path: f.Path, Mode: fmt.Sprintf("%o", f.Mode), Size: f.Size, Digest: fmt.Sprintf("sha256:%x", f.Digest)}
	}
	if out.Bindings, err = h.st.Bindings(ctx, sv.ID); err != nil {
		return nil, err
	}
	if out.Bindings == nil {
		out.Bindings = []string{}
	}
	return out, nil
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

// Uninstall removes the version ref names. A version bound to a project is
// refused with the store's *store.BoundError (errors.Is store.ErrVersionBound).
func (h *Hub) Uninstall(ctx context.Context, ref string) (Version, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	v := newVersion(sv)
	if err := h.st.DeleteVersion(ctx, sv.ID); err != nil {
		var be *store.BoundError
		if errors.As(err, &be) {
			return v, fmt.Errorf("uninstalling %s: %w; unbind it from %s first", v.ID, err, strings.Join(be.Projects, ", "))
		}
		return v, fmt.Errorf("uninstalling %s: %w", v.ID, err)
	}
	return v, nil
}

// Approve records that by approved the version ref names, now.
func (h *Hub) Approve(ctx context.Context, ref, by string) (Version, error) {
	if strings.TrimSpace(by) == "" {
		return Version{}, errors.New("an approval must say who approved")
	}
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	sv, err = h.st.Approve(ctx, sv.ID, by)
	if err != nil {
		return Version{}, err
	}
	return newVersion(sv), nil
}

// Unapprove withdraws the approval of the version ref names. Existing
// bindings stay.
func (h *Hub) Unapprove(ctx context.Context, ref string) (Version, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	sv, err = h.st.Unapprove(ctx, sv.ID)
	if err != nil {
		return Version{}, err
	}
	return newVersion(sv), nil
}

// SetNotes replaces the notes of the version ref names.
func (h *Hub) SetNotes(ctx context.Context, ref, notes string) (Version, error) {
	sv, err := h.resolve(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	sv, err = h.st.SetNotes(ctx, sv.ID, notes)
	if err != nil {
		return Version{}, err
	}
	return newVersion(sv), nil
}

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// register adds one operation with its rule: the scope it needs, and for
// a change, what the audit log calls it.
func register[I, O any](a *API, op huma.Operation, ru rule, h func(context.Context, *I) (*O, error)) {
	op.Metadata = map[string]any{ruleKey: ru}
	op.Security = []map[string][]string{{securityScheme: {}}}
	if op.MaxBodyBytes == 0 {
		op.MaxBodyBytes = MaxJSONBody
	}
	errs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusServiceUnavailable}
	errs = append(errs, http.StatusNotFound)
	if op.Method != http.MethodGet {
		errs = append(errs, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	for _, s := range op.Errors {
		if !slices.Contains(errs, s) {
			errs = append(errs, s)
		}
	}
	slices.Sort(errs)
	op.Errors = errs
	need := "Needs an admin token of scope " + string(ru.scope) + "."
	if op.Description == "" {
		op.Description = need
	} else {
		op.Description += "\n\n" + need
	}
	huma.Register(a.huma, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			e := a.errorOf(ctx, err)
			if c := callOf(ctx); c != nil {
				c.code = e.Body.Code
			}
			return nil, e
		}
		return out, nil
	})
}

// SkillPath is a version id as a path parameter. Inputs embed these
// shared parts, which huma reads only when exported.
type SkillPath struct {
	ID string `path:"id" maxLength:"300" doc:"A version id, NAME@ and 12 hex digits of its tree digest (a shorter prefix of at least 4, the full digest, or a bare name with one version also do)" example:"pdf@3f2a9c0b1d4e"`
}

// PageQuery pages a list.
type PageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"The page's size"`
	Cursor string `query:"cursor" maxLength:"1024" doc:"The next_cursor of the previous page"`
}

type versionBody struct {
	Body hub.Version
}

// pageOf returns the items of a list sorted by key that come after the
// cursor's key, at most limit of them, and the cursor of the next page.
func pageOf[T any](items []T, key func(T) string, list string, q PageQuery) ([]T, string, error) {
	after, err := decodeCursor(list, q.Cursor)
	if err != nil {
		return nil, "", err
	}
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(items, after, func(it T, k string) int { return strings.Compare(key(it), k) })
		if start < len(items) && key(items[start]) == after {
			start++
		}
	}
	items = items[start:]
	next := ""
	if len(items) > q.Limit {
		items = items[:q.Limit]
		next = encodeCursor(list, key(items[len(items)-1]))
	}
	return items, next, nil
}

// Package is one installed package with its versions, oldest first.
type Package struct {
	Name     string        `json:"name"`
	Versions []hub.Version `json:"versions"`
}

type skillsOutput struct {
	Body struct {
		Packages   []Package `json:"packages"`
		NextCursor string    `json:"next_cursor,omitempty" doc:"The cursor of the next page; absent on the last"`
	}
}

type catalogQuery struct {
	Q        string `query:"q" maxLength:"4096" doc:"Words to search names, authors and descriptions for; empty browses the catalog in its order"`
	Category string `query:"category" maxLength:"256"`
	Author   string `query:"author" maxLength:"256"`
	Limit    int    `query:"limit" minimum:"1" maximum:"1000" default:"50" doc:"The page's size; a search returns at most 50 hits in all"`
	Cursor   string `query:"cursor" maxLength:"1024"`
}

type catalogOutput struct {
	Body struct {
		Items      []hub.CatalogHit `json:"items" doc:"The page's items; installed lists the versions installed from each"`
		Source     string           `json:"source" doc:"Where the catalog came from: bundled, a URL or an upload"`
		Total      int              `json:"total" doc:"How many items the catalog holds"`
		NextCursor string           `json:"next_cursor,omitempty"`
		Categories []index.Category `json:"categories" doc:"Every category of the catalog (in lower case, \"\" for none) with its item count, for filters"`
		Authors    []index.Author   `json:"authors" doc:"Every author of the catalog with its item count, for filters"`
	}
}

type runtimeOutput struct {
	Body struct {
		Backends []Backend `json:"backends" doc:"The sandbox backends this hub tried; empty until jobs are configured"`
		Chosen   string    `json:"chosen,omitempty" doc:"The backend jobs run in; absent when none works (jobs are then refused)"`
	}
}

type syncInput struct {
	Body struct {
		URL     string          `json:"url,omitempty" maxLength:"2048" doc:"An https URL of a catalog document (http only to loopback)"`
		Content json.RawMessage `json:"content,omitempty" doc:"A catalog document itself ({\"schema_version\":1,\"items\":[…]})"`
	}
}

type syncOutput struct {
	Body hub.CatalogInfo
}

// Source is a package in a git repository, for POST /api/skills/install.
type Source struct {
	Repository string `json:"repository" minLength:"1" maxLength:"2048" doc:"The repository's https URL"`
	Path       string `json:"path,omitempty" maxLength:"1024" doc:"The package's folder in the repository; empty for its root"`
	Ref        string `json:"ref,omitempty" maxLength:"256" doc:"A branch or tag; empty for the default branch"`
	Commit     string `json:"commit,omitempty" pattern:"^[0-9a-f]{40}([0-9a-f]{24})?$" doc:"The full commit id to read"`
}

type installInput struct {
	Body struct {
		CatalogID string  `json:"catalog_id,omitempty" maxLength:"512" doc:"A catalog item's id"`
		Source    *Source `json:"source,omitempty"`
	}
}

type installOutput struct {
	Body *hub.Installed
}

type inspectOutput struct {
	Body *hub.Inspected
}

type fileInput struct {
	SkillPath
	Path string `query:"path" required:"true" minLength:"1" maxLength:"1024" doc:"The file's path in the package" example:"SKILL.md"`
}

type fileOutput struct {
	ContentType string `header:"Content-Type"`
	Digest      string `header:"X-Content-Digest" doc:"sha256: and the hex of the file's bytes"`
	NoSniff     string `header:"X-Content-Type-Options"`
	CSP         string `header:"Content-Security-Policy"`
	Body        []byte
}

type notesInput struct {
	SkillPath
	Body struct {
		Notes string `json:"notes" maxLength:"65536" doc:"The version's notes; empty clears them"`
	}
}

func (a *API) listSkills(ctx context.Context, in *PageQuery) (*skillsOutput, error) {
	pkgs, err := a.hub.List(ctx)
	if err != nil {
		return nil, err
	}
	page, next, err := pageOf(pkgs, func(p hub.Package) string { return p.Name }, "skills", *in)
	if err != nil {
		return nil, err
	}
	out := &skillsOutput{}
	out.Body.Packages = make([]Package, 0, len(page))
	out.Body.NextCursor = next
	for _, p := range page {
		vs, err := a.hub.Versions(ctx, p.Name)
		if errors.Is(err, store.ErrNotFound) {
			continue // uninstalled meanwhile
		}
		if err != nil {
			return nil, err
		}
		out.Body.Packages = append(out.Body.Packages, Package{Name: p.Name, Versions: vs})
	}
	return out, nil
}

func (a *API) skillsRuntime(ctx context.Context, _ *struct{}) (*runtimeOutput, error) {
	out := &runtimeOutput{}
	out.Body.Backends = []Backend{}
	if a.opts.Runtime != nil {
		if bs := a.opts.Runtime(ctx); bs != nil {
			out.Body.Backends = bs
		}
	}
	for _, b := range out.Body.Backends {
		if b.Chosen {
			out.Body.Chosen = b.Name
		}
	}
	return out, nil
}

func (a *API) inspectSkill(ctx context.Context, in *SkillPath) (*inspectOutput, error) {
	ins, err := a.hub.Inspect(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &inspectOutput{Body: ins}, nil
}

func (a *API) readSkillFile(ctx context.Context, in *fileInput) (*fileOutput, error) {
	data, f, err := a.hub.ReadFile(ctx, in.ID, in.Path)
	if err != nil {
		return nil, err
	}
	ct := "application/octet-stream"
	if utf8.Valid(data) {
		ct = "text/plain; charset=utf-8"
	}
	return &fileOutput{ContentType: ct, Digest: f.Digest, NoSniff: "nosniff", CSP: "default-src 'none'; sandbox", Body: data}, nil
}

func (a *API) uninstallSkill(ctx context.Context, in *SkillPath) (*versionBody, error) {
	v, err := a.hub.Uninstall(ctx, in.ID)
	if v.ID != "" {
		setObject(ctx, v.ID)
	}
	if err != nil {
		return nil, err
	}
	return &versionBody{Body: v}, nil
}

func (a *API) approveSkill(ctx context.Context, in *SkillPath) (*versionBody, error) {
	tok := tokenOf(ctx)
	by := "token " + tok.ID
	if tok.Name != "" {
		by += " (" + tok.Name + ")"
	}
	v, err := a.hub.Approve(ctx, in.ID, by)
	if err != nil {
		return nil, err
	}
	setObject(ctx, v.ID)
	return &versionBody{Body: v}, nil
}

func (a *API) unapproveSkill(ctx context.Context, in *SkillPath) (*versionBody, error) {
	v, err := a.hub.Unapprove(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	setObject(ctx, v.ID)
	return &versionBody{Body: v}, nil
}

func (a *API) setSkillNotes(ctx context.Context, in *notesInput) (*versionBody, error) {
	v, err := a.hub.SetNotes(ctx, in.ID, in.Body.Notes)
	if err != nil {
		return nil, err
	}
	setObject(ctx, v.ID)
	return &versionBody{Body: v}, nil
}

func (a *API) searchCatalog(ctx context.Context, in *catalogQuery) (*catalogOutput, error) {
	key, err := decodeCursor("catalog", in.Cursor)
	if err != nil {
		return nil, err
	}
	offset := 0
	if key != "" {
		if offset, err = strconv.Atoi(key); err != nil || offset < 0 {
			return nil, newError(http.StatusBadRequest, CodeBadRequest, "the cursor is not one this list gave; start again without it")
		}
	}
	q := index.Query{Text: in.Q, Category: in.Category, Author: in.Author}
	if q.Text != "" {
		// The search ranks at most 50 hits; pages are cut from those.
		q.Limit = min(offset+in.Limit+1, 50)
	}
	hits, ix, err := a.hub.SearchCatalog(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &catalogOutput{}
	out.Body.Source, out.Body.Total = ix.Source(), ix.Len()
	out.Body.Categories, out.Body.Authors = ix.Categories(), ix.Authors()
	if out.Body.Categories == nil {
		out.Body.Categories = []index.Category{}
	}
	if out.Body.Authors == nil {
		out.Body.Authors = []index.Author{}
	}
	hits = hits[min(offset, len(hits)):]
	if len(hits) > in.Limit {
		hits = hits[:in.Limit]
		out.Body.NextCursor = encodeCursor("catalog", strconv.Itoa(offset+in.Limit))
	}
	if err := a.hub.MarkInstalled(ctx, hits); err != nil {
		return nil, err
	}
	out.Body.Items = hits
	if out.Body.Items == nil {
		out.Body.Items = []hub.CatalogHit{}
	}
	return out, nil
}

// catalogError says why a catalog sync failed: the database's errors as
// they are, anything else (a URL refused, a download or a document that
// failed) as catalog_refused.
func catalogError(err error) error {
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrStorageFull) || errors.Is(err, context.Canceled) {
		return err
	}
	return newError(http.StatusUnprocessableEntity, CodeCatalogRefused, err.Error()+"; the catalog served is unchanged")
}

func (a *API) syncCatalog(ctx context.Context, in *syncInput) (out *syncOutput, err error) {
	b := in.Body
	if bytes.Equal(bytes.TrimSpace(b.Content), []byte("null")) {
		b.Content = nil // a JSON null is no content
	}
	if a.opts.OnCatalogSync != nil && (b.URL == "") != (b.Content == nil) {
		defer func() { a.opts.OnCatalogSync(err) }()
	}
	switch {
	case (b.URL == "") == (b.Content == nil):
		return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "give exactly one of url (a catalog document's https URL) and content (the document itself)")
	case b.URL != "":
		setObject(ctx, urlText(b.URL))
		ix, err := a.hub.RefreshCatalog(ctx, b.URL)
		if err != nil {
			return nil, catalogError(err)
		}
		return &syncOutput{Body: hub.CatalogInfo{Source: ix.Source(), Items: ix.Len(), Loaded: ix.Loaded()}}, nil
	}
	setObject(ctx, "upload")
	info, err := a.hub.ApplyCatalog(ctx, b.Content, "upload")
	if err != nil {
		return nil, catalogError(err)
	}
	return &syncOutput{Body: *info}, nil
}

// urlText is a URL for the audit log: scheme, host and path, without
// credentials or query, which may carry secrets.
func urlText(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// installError says why an install failed: the database's and the hub's
// classified errors as they are, anything else (a repository that could
// not be read) as install_failed.
func (a *API) installError(ctx context.Context, err error) error {
	if e := a.errorOf(ctx, err); e.status != http.StatusInternalServerError {
		return e
	}
	return newError(http.StatusUnprocessableEntity, CodeInstallFailed, err.Error())
}

func (a *API) install(ctx context.Context, in *installInput) (*installOutput, error) {
	b := in.Body
	var (
		inst *hub.Installed
		err  error
	)
	switch {
	case (b.CatalogID == "") == (b.Source == nil):
		return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "give exactly one of catalog_id (a catalog item) and source (a repository, a path in it, and a ref or commit)")
	case b.CatalogID != "":
		setObject(ctx, "catalog:"+b.CatalogID)
		inst, err = a.hub.InstallCatalogItem(ctx, b.CatalogID, nil)
	default:
		s := b.Source
		setObject(ctx, urlText(s.Repository))
		inst, err = a.hub.InstallGit(ctx, hub.GitInstall{URL: s.Repository, Path: s.Path, Ref: s.Ref, Commit: s.Commit})
	}
	if err != nil {
		return nil, a.installError(ctx, err)
	}
	setObject(ctx, inst.Version.ID)
	return &installOutput{Body: inst}, nil
}

func (a *API) importZip(ctx context.Context, _ *struct{}) (*installOutput, error) {
	c := callOf(ctx)
	if c == nil || c.req == nil {
		return nil, errors.New("import: no request")
	}
	mt, params, err := mime.ParseMediaType(c.req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedFormat, "send the ZIP as multipart/form-data: a file field, and an optional path field")
	}
	mr := multipart.NewReader(c.req.Body, params["boundary"])
	var (
		zip  *os.File
		size int64
		name string
		dir  string
	)
	defer func() {
		if zip != nil {
			zip.Close()
			os.Remove(zip.Name())
		}
	}()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, a.zipFormError(c, err)
		}
		switch part.FormName() {
		case "path":
			b, err := io.ReadAll(io.LimitReader(part, 1025))
			if err != nil {
				return nil, a.zipFormError(c, err)
			}
			if len(b) > 1024 {
				return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "the path field is over 1024 bytes")
			}
			dir = string(b)
		case "file":
			if zip != nil {
				return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "the form has more than one file: send one ZIP")
			}
			name = part.FileName()
			// Spooled where the hub keeps its temporary files, which a
			// start sweeps: a crash mid-upload leaves nothing behind.
			if zip, err = os.CreateTemp(a.tempDir(), "upload-*.zip"); err != nil {
				return nil, err
			}
			size, err = io.Copy(zip, io.LimitReader(part, MaxUpload+1))
			if err != nil {
				return nil, a.zipFormError(c, err)
			}
			if size > MaxUpload {
				return nil, newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the ZIP is over 32 MiB")
			}
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return nil, a.zipFormError(c, err)
			}
		}
		part.Close()
	}
	if zip == nil {
		return nil, newError(http.StatusUnprocessableEntity, CodeInvalid, "the form has no file: send the ZIP as the form's file field")
	}
	if name == "" {
		name = "upload.zip"
	}
	name = auditText(filepath.Base(name))
	setObject(ctx, "upload:"+name)
	inst, err := a.hub.InstallZip(ctx, hub.ZipInstall{R: zip, Size: size, FileName: name, Path: dir})
	if err != nil {
		return nil, a.installError(ctx, err)
	}
	setObject(ctx, inst.Version.ID)
	return &installOutput{Body: inst}, nil
}

// zipFormError says why an import's form could not be read.
func (a *API) zipFormError(c *call, err error) error {
	if c.tooLarge.Load() || errors.Is(err, errTooLarge) {
		return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the ZIP is over 32 MiB")
	}
	return newError(http.StatusBadRequest, CodeBadRequest, "the multipart form could not be read: "+err.Error())
}

// tempDir is where uploads are spooled: Options.TempDir, made when
// missing, else the system's.
func (a *API) tempDir() string {
	if a.opts.TempDir == "" {
		return os.TempDir()
	}
	os.MkdirAll(a.opts.TempDir, 0o700)
	return a.opts.TempDir
}

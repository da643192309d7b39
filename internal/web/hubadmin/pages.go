package hubadmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web"
)

// maxViewBytes bounds the escaped text the file viewer shows (96 KiB).
const maxViewBytes = 96 << 10

// maxFormBytes bounds a urlencoded form.
const maxFormBytes = 64 << 10

var funcs = map[string]any{
	"vpath": func(id string) string { return "/packages/" + url.PathEscape(id) },
	"ppath": func(id string) string { return "/projects/" + url.PathEscape(id) },
	"fpath": func(id, p string) string {
		return "/packages/" + url.PathEscape(id) + "/file?" + url.Values{"path": {p}}.Encode()
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"jpath": func(project, job string) string {
		return "/projects/" + url.PathEscape(project) + "/jobs/" + url.PathEscape(job)
	},
	"lower":         strings.ToLower,
	"problemStates": func() string { return problemStates },
	"shorten":       web.Shorten,
	"severity":      func(s fmt.Stringer) string { return s.String() },
	"short":         func(s string) string { return web.Shorten(s, 19) },
}

// notes are the fixed messages a redirect after a change may show (?ok=KEY);
// the text is never taken from the URL.
var notes = map[string]string{
	"created":        "Created.",
	"approved":       "Approved: recorded with your token.",
	"unapproved":     "Approval withdrawn.",
	"notes":          "Notes saved.",
	"uninstalled":    "Uninstalled.",
	"bound":          "Connected: the project's endpoint serves the version now.",
	"unbound":        "Disconnected.",
	"paused":         "Paused: the endpoint refuses requests until resumed.",
	"resumed":        "Resumed.",
	"well_known_on":  "Well-known index on: the holders of its capabilities can install the project's skills with npx skills add.",
	"well_known_off": "Well-known index off: its URLs answer 404; its capabilities stay until revoked.",
	"duplicated":     "Duplicated.",
	"deleted":        "Deleted.",
	"revoked":        "Revoked: the token opens nothing any more.",
	"cap_revoked":    "Revoked: the capability's URL answers 404 from now on.",
	"imported":       "Imported.",
	"same":           "Already there: the same tree was installed before; nothing was written.",
	"profile":        "Profile saved. A change to anything but Enabled needs a new preparation.",
	"preparing":      "Preparation started: its state and log below follow it.",
	"uploaded":       "Uploaded.",
	"catalog":        "The catalog was replaced by the uploaded document.",
	"purged":         "Purged: the files are deleted for good.",
	"settled":        "Settled: the job is stopped, its reason naming your token; the audit log has the settlement.",
}

func note(r *http.Request) string { return notes[r.URL.Query().Get("ok")] }

func (a *Admin) routes() {
	s := a.site
	s.Handle("GET /{$}", a.dashboard)
	s.Handle("GET /jobs", a.jobs)
	s.Handle("GET /catalog", a.catalog)
	s.Handle("POST /catalog/refresh", a.refresh)
	s.Handle("POST /catalog/upload", a.uploadCatalog)
	s.Handle("POST /catalog/install", a.installCatalog)
	s.Handle("GET /packages", a.packages)
	s.Handle("POST /packages/import", a.importZip)
	s.Handle("POST /packages/install", a.installGit)
	s.Handle("GET /packages/{id}", a.version)
	s.Handle("GET /packages/{id}/file", a.file)
	s.Handle("GET /packages/{id}/profile", a.profile)
	s.Handle("GET /packages/{id}/prepare/status", a.prepareStatus)
	s.Handle("POST /packages/{id}/{action}", a.versionAction)
	s.Handle("GET /projects", a.projects)
	s.Handle("POST /projects", a.createProject)
	s.Handle("GET /projects/{id}", a.project)
	s.Handle("GET /projects/{id}/connect", a.connect)
	s.Handle("POST /projects/{id}/tokens", a.createProjectToken)
	s.Handle("POST /projects/{id}/tokens/{tid}/revoke", a.revokeProjectToken)
	s.Handle("POST /projects/{id}/capabilities", a.createCapability)
	s.Handle("POST /projects/{id}/capabilities/{tid}/revoke", a.revokeCapability)
	s.Handle("POST /projects/{id}/{action}", a.projectAction)
	s.Handle("POST /projects/{id}/jobs", a.createJob)
	s.Handle("GET /projects/{id}/jobs/{jid}", a.job)
	s.Handle("GET /projects/{id}/jobs/{jid}/file", a.jobFile)
	s.Handle("POST /projects/{id}/jobs/{jid}/{action}", a.jobAction)
	s.Handle("GET /tokens", a.tokens)
	s.Handle("POST /tokens", a.createToken)
	s.Handle("POST /tokens/{tid}/revoke", a.revokeToken)
	s.Handle("GET /audit", a.audit)
	s.Handle("GET /remnants", a.remnants)
	s.Handle("GET /remnants/{jid}", a.remnant)
	s.Handle("GET /remnants/{jid}/file", a.remnantFile)
	s.Handle("POST /remnants/{jid}/purge", a.purgeRemnant)
	s.Handle("GET /tasks/{id}", a.task)
	s.Handle("GET /tasks/{id}/status", a.taskStatus)
	s.Handle("/", func(w http.ResponseWriter, r *http.Request) {
		a.site.NotFound(w, r, "There is no page at this address. The navigation lists the hub's pages.")
	})
}

// fail shows an error of an API call as a page saying what happened and,
// for a change, that nothing was changed.
func (a *Admin) fail(w http.ResponseWriter, r *http.Request, err error) {
	change := r.Method != http.MethodGet && r.Method != http.MethodHead
	var ae *apiError
	if !errors.As(err, &ae) {
		if errors.Is(err, context.Canceled) {
			return
		}
		a.log.Error("an API call failed", "path", r.URL.Path, "err", err)
		a.site.Error(w, r, http.StatusInternalServerError, "Something went wrong", "The page could not be made; the server's log says why.")
		return
	}
	msg := ae.Message
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	if change {
		msg += " Nothing was changed."
	}
	switch ae.Status {
	case http.StatusUnauthorized:
		a.site.Error(w, r, http.StatusUnauthorized, "Your token is no longer accepted", msg+" Sign out and sign in with a valid admin token.")
	case http.StatusForbidden:
		a.site.Error(w, r, http.StatusForbidden, "Not allowed with this token", msg)
	case http.StatusNotFound:
		a.site.Error(w, r, http.StatusNotFound, "Not found", msg)
	default:
		heading := "Refused"
		if ae.Status >= 500 {
			heading = "The hub could not do that"
		}
		a.site.Error(w, r, ae.Status, heading, msg)
	}
}

// confirmed reports whether a destructive form carries its confirmation
// (the second button of its in-place question); if not, it answers a page
// saying nothing was done.
func confirmed(w http.ResponseWriter, r *http.Request, a *Admin, what string) bool {
	if r.PostFormValue("confirm") == "yes" {
		return true
	}
	a.site.Error(w, r, http.StatusUnprocessableEntity, "Not confirmed",
		"To "+what+", open its question on the page and press the button that confirms it. Nothing was changed.")
	return false
}

// form parses a urlencoded form (the CSRF check may have already).
func form(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	r.ParseForm()
}

func (a *Admin) render(w http.ResponseWriter, r *http.Request, tmpl, title, nav string, data any) {
	a.site.Render(w, r, http.StatusOK, web.Page{Template: tmpl, Title: title, Nav: nav, Data: data})
}

func redirect(w http.ResponseWriter, r *http.Request, path, ok string) {
	if ok != "" {
		path += "?ok=" + ok
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// ---- catalog

// facet is one value of a catalog filter and how many items have it.
type facet struct {
	Name  string `json:"name"`
	Items int    `json:"items"`
}

type catalogData struct {
	Note                string
	Q, Category, Author string
	Items               []hub.CatalogHit
	Source              string
	Total               int
	// Matching says how many items a filter kept, when one is set.
	Matching   string
	Next       string
	Categories []facet
	Authors    []facet
}

func (a *Admin) catalog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := catalogData{Q: q.Get("q"), Category: q.Get("category"), Author: q.Get("author"), Note: note(r)}
	var out struct {
		Items      []hub.CatalogHit `json:"items"`
		Source     string           `json:"source"`
		Total      int              `json:"total"`
		NextCursor string           `json:"next_cursor"`
		Categories []facet          `json:"categories"`
		Authors    []facet          `json:"authors"`
	}
	aq := url.Values{"limit": {"50"}}
	for _, k := range []string{"q", "category", "author", "cursor"} {
		if v := q.Get(k); v != "" {
			aq.Set(k, v)
		}
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/skills/catalog", aq, nil, "", &out); err != nil {
		a.fail(w, r, err)
		return
	}
	d.Items, d.Source, d.Total, d.Categories, d.Authors = out.Items, out.Source, out.Total, out.Categories, out.Authors
	if out.NextCursor != "" {
		nq := url.Values{"cursor": {out.NextCursor}}
		for _, k := range []string{"q", "category", "author"} {
			if v := q.Get(k); v != "" {
				nq.Set(k, v)
			}
		}
		d.Next = "/catalog?" + nq.Encode()
	}
	// A filter's value the facets do not list (from an old link) stays
	// shown as chosen.
	if d.Category != "" && !slices.ContainsFunc(d.Categories, func(f facet) bool { return f.Name == strings.ToLower(strings.TrimSpace(d.Category)) }) {
		d.Categories = append(d.Categories, facet{Name: d.Category})
	}
	if d.Author != "" && !slices.ContainsFunc(d.Authors, func(f facet) bool { return strings.EqualFold(f.Name, d.Author) }) {
		d.Authors = append(d.Authors, facet{Name: d.Author})
	}
	// Browsing one filter, its facet says how many items it keeps.
	if d.Q == "" && (d.Category == "") != (d.Author == "") {
		for _, f := range d.Categories {
			if d.Category != "" && f.Name == strings.ToLower(strings.TrimSpace(d.Category)) {
				d.Matching = fmt.Sprintf("%d in this category.", f.Items)
			}
		}
		for _, f := range d.Authors {
			if d.Author != "" && strings.EqualFold(f.Name, strings.TrimSpace(d.Author)) {
				d.Matching = fmt.Sprintf("%d by this author.", f.Items)
			}
		}
	}
	a.render(w, r, "catalog.html", "Catalog", "catalog", d)
}

// maxCatalogUpload bounds an uploaded catalog document: the API takes a
// body of 16 MiB (api.MaxCatalogBody), the document inside a small JSON
// object.
const maxCatalogUpload = 16<<20 - 1<<10

// uploadCatalog replaces the catalog with an uploaded document: the file
// is read (bounded), checked to be JSON, and sent to the API's sync as its
// content.
func (a *Admin) uploadCatalog(w http.ResponseWriter, r *http.Request) {
	// The whole form is bounded, not only the document's part: the reader
	// must be set before the multipart reader takes the body.
	r.Body = http.MaxBytesReader(w, r.Body, maxCatalogUpload+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		a.site.Error(w, r, http.StatusUnsupportedMediaType, "Not an upload", "Send the document with the upload form. Nothing was changed.")
		return
	}
	var doc []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			a.uploadRefused(w, r, err)
			return
		}
		if part.FormName() != "document" {
			io.Copy(io.Discard, part)
			continue
		}
		if doc, err = io.ReadAll(io.LimitReader(part, maxCatalogUpload+1)); err != nil {
			a.uploadRefused(w, r, err)
			return
		}
		if len(doc) > maxCatalogUpload {
			a.site.Error(w, r, http.StatusRequestEntityTooLarge, "Too large", "A catalog document may have at most 16 MiB. Nothing was changed.")
			return
		}
	}
	switch {
	case len(doc) == 0:
		a.site.Error(w, r, http.StatusUnprocessableEntity, "No document", "Choose a catalog document (a JSON file) to upload. Nothing was changed.")
		return
	case !json.Valid(doc):
		a.site.Error(w, r, http.StatusUnprocessableEntity, "Not a catalog document",
			`The file is not JSON. A catalog document is JSON, {"schema_version": 1, "items": […]}, as skills-hub catalog build writes it. Nothing was changed.`)
		return
	}
	var info hub.CatalogInfo
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/skills/catalog/sync", nil, map[string]json.RawMessage{"content": doc}, "", &info); err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, "/catalog", "catalog")
}

// uploadRefused shows why an upload's form could not be read.
func (a *Admin) uploadRefused(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		a.site.Error(w, r, http.StatusRequestEntityTooLarge, "Too large", "A catalog document may have at most 16 MiB. Nothing was changed.")
		return
	}
	a.site.Error(w, r, http.StatusBadRequest, "Upload not read", "The upload could not be read ("+err.Error()+"). Nothing was changed; send it again.")
}

// refresh reads the catalog again from a URL, as a task.
func (a *Admin) refresh(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	u := strings.TrimSpace(r.PostFormValue("url"))
	if u == "" {
		a.site.Error(w, r, http.StatusUnprocessableEntity, "No catalog URL", "Give the https URL of a catalog document to read. Nothing was changed.")
		return
	}
	c := a.client(r)
	t := a.tasks.start(owner(r), "Refresh the catalog", func(ctx context.Context, t *task) (string, error) {
		t.say("Reading the catalog document…")
		var info hub.CatalogInfo
		if err := c.do(ctx, http.MethodPost, "/api/skills/catalog/sync", nil, map[string]string{"url": u}, "", &info); err != nil {
			return "", err
		}
		t.say(fmt.Sprintf("The catalog holds %d items now (source %s).", info.Items, info.Source))
		return "/catalog", nil
	})
	http.Redirect(w, r, "/tasks/"+t.id, http.StatusSeeOther)
}

func (a *Admin) installCatalog(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	id := r.PostFormValue("catalog_id")
	a.install(w, r, "Install "+web.Shorten(id, 80), map[string]any{"catalog_id": id})
}

func (a *Admin) installGit(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	src := map[string]string{"repository": strings.TrimSpace(r.PostFormValue("repository"))}
	for _, k := range []string{"path", "ref", "commit"} {
		if v := strings.TrimSpace(r.PostFormValue(k)); v != "" {
			src[k] = v
		}
	}
	a.install(w, r, "Install from "+web.Shorten(src["repository"], 80), map[string]any{"source": src})
}

// install runs an install as a task whose page goes on to the version.
func (a *Admin) install(w http.ResponseWriter, r *http.Request, title string, body map[string]any) {
	c := a.client(r)
	t := a.tasks.start(owner(r), title, func(ctx context.Context, t *task) (string, error) {
		t.say("Fetching the package and checking its files…")
		var inst hub.Installed
		if err := c.do(ctx, http.MethodPost, "/api/skills/install", nil, body, "", &inst); err != nil {
			return "", err
		}
		if inst.Created {
			t.say(fmt.Sprintf("Installed %s: %d files, %s.", inst.Version.ID, inst.Version.FileCount, web.FormatBytes(inst.Version.Size)))
		} else {
			t.say("Already installed as " + inst.Version.ID + ": nothing was written.")
		}
		t.say(fmt.Sprintf("Inspection: %d findings, %d scripts.", len(inst.Inspection.Findings), len(inst.Inspection.Scripts)))
		return "/packages/" + url.PathEscape(inst.Version.ID), nil
	})
	http.Redirect(w, r, "/tasks/"+t.id, http.StatusSeeOther)
}

// ---- packages

type packagesData struct {
	Note     string
	Packages []struct {
		Name     string        `json:"name"`
		Versions []hub.Version `json:"versions"`
	} `json:"packages"`
	NextCursor string `json:"next_cursor"`
	Next       string `json:"-"`
}

func (a *Admin) packages(w http.ResponseWriter, r *http.Request) {
	var d packagesData
	q := url.Values{"limit": {"200"}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/skills", q, nil, "", &d); err != nil {
		a.fail(w, r, err)
		return
	}
	if d.NextCursor != "" {
		d.Next = "/packages?" + url.Values{"cursor": {d.NextCursor}}.Encode()
	}
	d.Note = note(r)
	a.render(w, r, "packages.html", "Skills", "packages", d)
}

// importZip passes the uploaded form on to the API as it came: the file is
// streamed, never held whole by the page.
func (a *Admin) importZip(w http.ResponseWriter, r *http.Request) {
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "multipart/form-data") {
		a.site.Error(w, r, http.StatusUnsupportedMediaType, "Not an upload", "Send the ZIP with the import form. Nothing was changed.")
		return
	}
	var inst hub.Installed
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/skills/import", nil, uploadOf(r), ct, &inst); err != nil {
		a.fail(w, r, err)
		return
	}
	ok := "imported"
	if !inst.Created {
		ok = "same"
	}
	redirect(w, r, "/packages/"+url.PathEscape(inst.Version.ID), ok)
}

type versionData struct {
	Note string
	hub.Inspected
	Frontmatter []kv
	Mode        approvalMode
}

type kv struct{ Key, Value string }

func (a *Admin) version(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var d versionData
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/skills/"+url.PathEscape(id), nil, nil, "", &d.Inspected); err != nil {
		a.fail(w, r, err)
		return
	}
	var fm map[string]any
	if json.Unmarshal(d.Version.Frontmatter, &fm) == nil {
		for k, v := range fm {
			s, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				s = string(b)
			}
			d.Frontmatter = append(d.Frontmatter, kv{k, web.Shorten(s, 2000)})
		}
		sort.Slice(d.Frontmatter, func(i, j int) bool { return d.Frontmatter[i].Key < d.Frontmatter[j].Key })
	}
	d.Note, d.Mode = note(r), a.approvalMode(r)
	a.render(w, r, "version.html", d.Version.ID, "packages", d)
}

type fileData struct {
	ID, Path, Digest, ContentType string
	Size                          int64
	Text                          string
	Binary, Cut                   bool
}

func (a *Admin) file(w http.ResponseWriter, r *http.Request) {
	id, p := r.PathValue("id"), r.URL.Query().Get("path")
	body, h, err := a.client(r).raw(r.Context(), http.MethodGet, "/api/skills/"+url.PathEscape(id)+"/file", url.Values{"path": {p}}, nil, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d := fileData{ID: id, Path: p, Digest: h.Get("X-Content-Digest"), ContentType: h.Get("Content-Type"), Size: int64(len(body))}
	head := body[:min(len(body), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		d.Binary = true
	} else {
		d.Text, d.Cut = web.CutEscaped(visible(body), maxViewBytes)
	}
	a.render(w, r, "file.html", p, "packages", d)
}

// visible is b as text, each invalid byte shown as U+FFFD.
func visible(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func (a *Admin) versionAction(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	id := r.PathValue("id")
	base := "/api/skills/" + url.PathEscape(id)
	c := a.client(r)
	var err error
	ok, to := "", "/packages/"+url.PathEscape(id)
	switch r.PathValue("action") {
	case "approve":
		err, ok = c.do(r.Context(), http.MethodPost, base+"/approval", nil, nil, "", nil), "approved"
	case "unapprove":
		err, ok = c.do(r.Context(), http.MethodDelete, base+"/approval", nil, nil, "", nil), "unapproved"
	case "notes":
		err, ok = c.do(r.Context(), http.MethodPut, base+"/notes", nil, map[string]string{"notes": r.PostFormValue("notes")}, "", nil), "notes"
	case "profile":
		err, ok, to = a.setProfile(w, r, id), "profile", to+"/profile"
	case "prepare":
		a.prepare(w, r, id)
		return
	case "uninstall":
		if !confirmed(w, r, a, "uninstall the version") {
			return
		}
		err, ok, to = c.do(r.Context(), http.MethodDelete, base, nil, nil, "", nil), "uninstalled", "/packages"
	default:
		a.site.NotFound(w, r, "A version has no such action.")
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, to, ok)
}

// ---- projects

type projectsData struct {
	Note     string
	Projects []store.Project `json:"projects"`
	Next     string          `json:"next_cursor"`
}

func (a *Admin) projects(w http.ResponseWriter, r *http.Request) {
	var d projectsData
	q := url.Values{"limit": {"200"}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/projects", q, nil, "", &d); err != nil {
		a.fail(w, r, err)
		return
	}
	if d.Next != "" {
		d.Next = "/projects?" + url.Values{"cursor": {d.Next}}.Encode()
	}
	d.Note = note(r)
	a.render(w, r, "projects.html", "Projects", "projects", d)
}

func (a *Admin) createProject(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	id := strings.TrimSpace(r.PostFormValue("id"))
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		name = id
	}
	var p store.Project
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/projects", nil, map[string]string{"id": id, "name": name}, "", &p); err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, "/projects/"+url.PathEscape(p.ID), "created")
}

type projectData struct {
	Note       string
	Project    store.Project
	Skills     []hub.Bound
	Unapproved bool // a version served is not approved
	Mode       approvalMode
	Tokens     []store.Token
	// Capabilities are the active capabilities of the project's
	// well-known index, listed whether the index is on or off (off, they
	// stay until revoked).
	Capabilities  []store.Token
	Endpoint      string
	Snippet       string
	NewToken      *newToken
	NewCapability *newCapability
	Jobs          jobsList
}

// approvalMode is whether the hub binds only approved versions, for the
// pages' texts; Known is false when the API could not say.
type approvalMode struct{ Known, Require bool }

func (a *Admin) approvalMode(r *http.Request) approvalMode {
	var o struct {
		Store struct {
			RequireApproval bool `json:"require_approval"`
		} `json:"store"`
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/overview", nil, nil, "", &o); err != nil {
		return approvalMode{}
	}
	return approvalMode{Known: true, Require: o.Store.RequireApproval}
}

type newToken struct {
	Token  store.Token `json:"token"`
	Secret string      `json:"secret"`
}

// newCapability is a capability of a project's well-known index just
// issued, as the API answers it (the secret and its path below the hub),
// with the URL to give npx skills add: shown on the page that issued it,
// never again.
type newCapability struct {
	Token  store.Token `json:"token"`
	Secret string      `json:"secret"`
	Path   string      `json:"path"`
	URL    string      `json:"-"`
}

func (a *Admin) loadProject(r *http.Request, id string) (*projectData, error) {
	c := a.client(r)
	base := "/api/projects/" + url.PathEscape(id)
	d := &projectData{}
	if err := c.do(r.Context(), http.MethodGet, base, nil, nil, "", &d.Project); err != nil {
		return nil, err
	}
	var sk struct {
		Skills []hub.Bound `json:"skills"`
	}
	if err := c.do(r.Context(), http.MethodGet, base+"/skills", url.Values{"limit": {"1000"}}, nil, "", &sk); err != nil {
		return nil, err
	}
	var tk struct {
		Tokens []store.Token `json:"tokens"`
	}
	if err := c.do(r.Context(), http.MethodGet, base+"/tokens", url.Values{"limit": {"1000"}}, nil, "", &tk); err != nil {
		return nil, err
	}
	var ct struct {
		Tokens []store.Token `json:"tokens"`
	}
	if err := c.do(r.Context(), http.MethodGet, base+"/well-known/capabilities", url.Values{"limit": {"1000"}}, nil, "", &ct); err != nil {
		return nil, err
	}
	d.Skills, d.Tokens, d.Capabilities = sk.Skills, tk.Tokens, ct.Tokens
	for _, b := range d.Skills {
		d.Unapproved = d.Unapproved || !b.Version.Approved
	}
	d.Mode = a.approvalMode(r)
	var err error
	if d.Jobs, err = a.projectJobs(r, id); err != nil {
		return nil, err
	}
	d.Endpoint = a.origin(r) + "/p/" + url.PathEscape(d.Project.ID) + "/mcp"
	d.Snippet = snippet(d.Project.ID, d.Endpoint)
	return d, nil
}

// snippet is an MCP client's configuration for a project's endpoint, with
// a placeholder where the project token goes.
func snippet(id, endpoint string) string {
	type server struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	cfg := map[string]any{"mcpServers": map[string]server{
		"skills-" + id: {Type: "http", URL: endpoint, Headers: map[string]string{"Authorization": "Bearer <project token>"}},
	}}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the page escapes it; the text must read as written
	enc.SetIndent("", "  ")
	enc.Encode(cfg)
	return strings.TrimSpace(b.String())
}

// origin is the hub's external URL: the configured base, else the one
// the browser used.
func (a *Admin) origin(r *http.Request) string {
	if a.baseURL != "" {
		return strings.TrimSuffix(a.baseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (a *Admin) project(w http.ResponseWriter, r *http.Request) {
	d, err := a.loadProject(r, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d.Note = note(r)
	a.render(w, r, "project.html", d.Project.Name, "projects", d)
}

type connectData struct {
	Project  store.Project
	Mode     approvalMode
	Bound    map[string]bool
	Versions []hub.Version
}

// connect is the "+" flow: the installed versions, each with a button that
// binds it to the project.
func (a *Admin) connect(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d, err := a.loadProject(r, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var pk struct {
		Packages []struct {
			Versions []hub.Version `json:"versions"`
		} `json:"packages"`
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/skills", url.Values{"limit": {"1000"}}, nil, "", &pk); err != nil {
		a.fail(w, r, err)
		return
	}
	cd := connectData{Project: d.Project, Mode: d.Mode, Bound: map[string]bool{}}
	for _, b := range d.Skills {
		cd.Bound[b.Version.ID] = true
	}
	for _, p := range pk.Packages {
		cd.Versions = append(cd.Versions, p.Versions...)
	}
	a.render(w, r, "connect.html", "Connect a skill to "+d.Project.Name, "projects", cd)
}

func (a *Admin) projectAction(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	id := r.PathValue("id")
	base := "/api/projects/" + url.PathEscape(id)
	c, ctx := a.client(r), r.Context()
	to := base[len("/api"):]
	var err error
	var ok string
	switch r.PathValue("action") {
	case "bind":
		err, ok = c.do(ctx, http.MethodPut, base+"/skills/"+url.PathEscape(r.PostFormValue("skill_id")), nil, nil, "", nil), "bound"
	case "unbind":
		if !confirmed(w, r, a, "disconnect the version") {
			return
		}
		err, ok = c.do(ctx, http.MethodDelete, base+"/skills/"+url.PathEscape(r.PostFormValue("skill_id")), nil, nil, "", nil), "unbound"
	case "pause":
		err, ok = c.do(ctx, http.MethodPost, base+"/pause", nil, nil, "", nil), "paused"
	case "resume":
		err, ok = c.do(ctx, http.MethodPost, base+"/resume", nil, nil, "", nil), "resumed"
	case "well-known-on":
		err, ok = c.do(ctx, http.MethodPut, base+"/well-known", nil, nil, "", nil), "well_known_on"
	case "well-known-off":
		err, ok = c.do(ctx, http.MethodDelete, base+"/well-known", nil, nil, "", nil), "well_known_off"
	case "duplicate":
		nid := strings.TrimSpace(r.PostFormValue("new_id"))
		name := strings.TrimSpace(r.PostFormValue("new_name"))
		if name == "" {
			name = nid
		}
		err, ok, to = c.do(ctx, http.MethodPost, base+"/duplicate", nil, map[string]string{"id": nid, "name": name}, "", nil), "duplicated", "/projects/"+url.PathEscape(nid)
	case "delete":
		if !confirmed(w, r, a, "delete the project") {
			return
		}
		err, ok, to = c.do(ctx, http.MethodDelete, base, nil, nil, "", nil), "deleted", "/projects"
	default:
		a.site.NotFound(w, r, "A project has no such action.")
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, to, ok)
}

func tokenOptions(r *http.Request) map[string]string {
	o := map[string]string{}
	if v := strings.TrimSpace(r.PostFormValue("name")); v != "" {
		o["name"] = v
	}
	if v := strings.TrimSpace(r.PostFormValue("expires_in")); v != "" {
		o["expires_in"] = v
	}
	return o
}

func (a *Admin) createProjectToken(w http.ResponseWriter, r *http.Request) {
	var nt newToken
	a.issueOnProject(w, r, "/tokens", &nt, func(d *projectData) { d.NewToken = &nt })
}

func (a *Admin) revokeProjectToken(w http.ResponseWriter, r *http.Request) {
	a.revokeOnProject(w, r, "revoke the token", "/tokens/", "revoked")
}

// createCapability issues a capability of the project's well-known index
// and shows it, with its URL, on the project's page this once.
func (a *Admin) createCapability(w http.ResponseWriter, r *http.Request) {
	var nc newCapability
	a.issueOnProject(w, r, "/well-known/capabilities", &nc, func(d *projectData) {
		nc.URL = a.origin(r) + nc.Path
		d.NewCapability = &nc
	})
}

// revokeCapability revokes a capability of the project's well-known index:
// its URL answers 404 at once, whether the index is on or off.
func (a *Admin) revokeCapability(w http.ResponseWriter, r *http.Request) {
	a.revokeOnProject(w, r, "revoke the capability", "/well-known/capabilities/", "cap_revoked")
}

// issueOnProject posts the token form (name, expiry) to the project's API
// below sub and decodes the answer into out, then renders the project's
// page with show applied to it: a secret issued is shown this once.
func (a *Admin) issueOnProject(w http.ResponseWriter, r *http.Request, sub string, out any, show func(*projectData)) {
	form(w, r)
	id := r.PathValue("id")
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/projects/"+url.PathEscape(id)+sub, nil, tokenOptions(r), "", out); err != nil {
		a.fail(w, r, err)
		return
	}
	d, err := a.loadProject(r, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	show(d)
	a.render(w, r, "project.html", d.Project.Name, "projects", d)
}

// revokeOnProject revokes the token {tid} below the project's API path sub
// once the user confirmed what, and goes back to the project's page with
// the note.
func (a *Admin) revokeOnProject(w http.ResponseWriter, r *http.Request, what, sub, note string) {
	form(w, r)
	if !confirmed(w, r, a, what) {
		return
	}
	id := r.PathValue("id")
	if err := a.client(r).do(r.Context(), http.MethodDelete, "/api/projects/"+url.PathEscape(id)+sub+url.PathEscape(r.PathValue("tid")), nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, "/projects/"+url.PathEscape(id), note)
}

// ---- admin tokens

type tokensData struct {
	Note     string
	Tokens   []store.Token `json:"tokens"`
	NewToken *newToken     `json:"-"`
}

func (a *Admin) loadTokens(r *http.Request) (*tokensData, error) {
	d := &tokensData{}
	err := a.client(r).do(r.Context(), http.MethodGet, "/api/tokens", url.Values{"limit": {"1000"}}, nil, "", d)
	return d, err
}

func (a *Admin) tokens(w http.ResponseWriter, r *http.Request) {
	d, err := a.loadTokens(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d.Note = note(r)
	a.render(w, r, "tokens.html", "Tokens", "tokens", d)
}

func (a *Admin) createToken(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	body := map[string]any{"scope": r.PostFormValue("scope")}
	for k, v := range tokenOptions(r) {
		body[k] = v
	}
	var nt newToken
	if err := a.client(r).do(r.Context(), http.MethodPost, "/api/tokens", nil, body, "", &nt); err != nil {
		a.fail(w, r, err)
		return
	}
	d, err := a.loadTokens(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d.NewToken = &nt
	a.render(w, r, "tokens.html", "Tokens", "tokens", d)
}

func (a *Admin) revokeToken(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	if !confirmed(w, r, a, "revoke the token") {
		return
	}
	if err := a.client(r).do(r.Context(), http.MethodDelete, "/api/tokens/"+url.PathEscape(r.PathValue("tid")), nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	redirect(w, r, "/tokens", "revoked")
}

// ---- audit

type auditData struct {
	Filter  map[string]string
	Entries []store.AuditEntry `json:"entries"`
	Cursor  string             `json:"next_cursor"`
	Next    string             `json:"-"`
}

var auditFilters = []string{"actor", "action", "object_kind", "object_id", "since", "until"}

func (a *Admin) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := auditData{Filter: map[string]string{}}
	aq := url.Values{"limit": {"100"}}
	for _, k := range append(auditFilters, "cursor") {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			if k == "since" || k == "until" {
				v = rfc3339(v)
			}
			aq.Set(k, v)
			d.Filter[k] = q.Get(k)
		}
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/audit", aq, nil, "", &d); err != nil {
		a.fail(w, r, err)
		return
	}
	if d.Cursor != "" {
		nq := url.Values{}
		for _, k := range auditFilters {
			if v := d.Filter[k]; v != "" {
				nq.Set(k, v)
			}
		}
		nq.Set("cursor", d.Cursor)
		d.Next = "/audit?" + nq.Encode()
	}
	a.render(w, r, "audit.html", "Audit log", "audit", d)
}

// rfc3339 turns the value of a datetime-local field (2026-01-02T15:04) into
// RFC 3339 in UTC; anything else is passed on for the API to judge.
func rfc3339(v string) string {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// ---- tasks

func (a *Admin) task(w http.ResponseWriter, r *http.Request) {
	t := a.tasks.get(owner(r), r.PathValue("id"))
	if t == nil {
		a.site.NotFound(w, r, "No such task: tasks are kept while the server runs, for the session that started them.")
		return
	}
	a.render(w, r, "task.html", t.title, "", t.view(time.Now()))
}

func (a *Admin) taskStatus(w http.ResponseWriter, r *http.Request) {
	t := a.tasks.get(owner(r), r.PathValue("id"))
	w.Header().Set("Content-Type", "application/json")
	if t == nil {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "not_found", "message": "no such task"}})
		return
	}
	json.NewEncoder(w).Encode(t.view(time.Now()))
}

package hubadmin

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The remnants of deleted projects' jobs (GET /api/job-remnants…): their
// files are kept for an operator's recovery until purged.

// remnant is a remnant as the pages show it: the store's record and the
// id of the version it ran.
type remnant struct {
	store.JobRemnant
	SkillID string
}

func remnantOf(r store.JobRemnant) remnant {
	return remnant{JobRemnant: r, SkillID: hub.VersionID(r.Package, r.TreeDigest)}
}

type remnantsData struct {
	Note     string
	Remnants []remnant
	// Project filters the list to one deleted project's remnants;
	// Projects are the deleted projects that left some, for the filter.
	Project  string
	Projects []string
	Total    int
}

// remnants lists what deleted projects' jobs left, the latest deletion
// first.
func (a *Admin) remnants(w http.ResponseWriter, r *http.Request) {
	var out struct {
		Remnants []store.JobRemnant `json:"remnants"`
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/job-remnants", nil, nil, "", &out); err != nil {
		a.fail(w, r, err)
		return
	}
	d := remnantsData{Note: note(r), Project: r.URL.Query().Get("project"), Total: len(out.Remnants)}
	// The API lists the oldest deletion first; people look for the latest.
	slices.Reverse(out.Remnants)
	for _, rm := range out.Remnants {
		if !slices.Contains(d.Projects, rm.ProjectID) {
			d.Projects = append(d.Projects, rm.ProjectID)
		}
		if d.Project == "" || rm.ProjectID == d.Project {
			d.Remnants = append(d.Remnants, remnantOf(rm))
		}
	}
	slices.Sort(d.Projects)
	if d.Project != "" && !slices.Contains(d.Projects, d.Project) {
		d.Projects = append(d.Projects, d.Project)
	}
	a.render(w, r, "remnants.html", "Job remnants", "remnants", d)
}

type remnantData struct {
	Note    string
	Remnant remnant
	Files   []store.JobFile
	// Bytes is the files' total size.
	Bytes int64
}

// remnant shows one remnant: what its job was, and its files to download.
func (a *Admin) remnant(w http.ResponseWriter, r *http.Request) {
	// The API's answer: the remnant's record and its files.
	var rm struct {
		store.JobRemnant
		Files []store.JobFile `json:"files"`
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/job-remnants/"+url.PathEscape(r.PathValue("jid")), nil, nil, "", &rm); err != nil {
		a.fail(w, r, err)
		return
	}
	d := remnantData{Note: note(r), Remnant: remnantOf(rm.JobRemnant), Files: rm.Files}
	for _, f := range rm.Files {
		d.Bytes += f.Size
	}
	a.render(w, r, "remnant.html", "Job remnant "+rm.JobID, "remnants", d)
}

// remnantFile downloads a remnant's file as the API serves it (the API
// writes the download to the audit log).
func (a *Admin) remnantFile(w http.ResponseWriter, r *http.Request) {
	body, h, err := a.client(r).raw(r.Context(), http.MethodGet, "/api/job-remnants/"+url.PathEscape(r.PathValue("jid"))+"/file",
		url.Values{"path": {r.URL.Query().Get("path")}}, nil, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	for _, k := range []string{"Content-Disposition", "X-Content-Digest", "X-Job-File-Kind"} {
		if v := h.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// purgeRemnant deletes a remnant and its files for good, once confirmed
// in place (the API writes the purge to the audit log).
func (a *Admin) purgeRemnant(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	if !confirmed(w, r, a, "purge the remnant") {
		return
	}
	if err := a.client(r).do(r.Context(), http.MethodDelete, "/api/job-remnants/"+url.PathEscape(r.PathValue("jid")), nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	// Back to the list, filtered as it was when the purge was asked.
	q := url.Values{"ok": {"purged"}}
	if p := r.PostFormValue("project"); p != "" {
		q.Set("project", p)
	}
	http.Redirect(w, r, "/remnants?"+q.Encode(), http.StatusSeeOther)
}

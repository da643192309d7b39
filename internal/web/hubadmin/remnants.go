package hubadmin

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

type remnantsData struct {
	Note     string
	Remnants []store.JobRemnant
	// Remnant is the one shown with its files, if any.
	Remnant *hub.Remnant
}

func (a *Admin) loadRemnants(r *http.Request) (remnantsData, error) {
	var d remnantsData
	var out struct {
		Remnants []store.JobRemnant `json:"remnants"`
	}
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/job-remnants", nil, nil, "", &out); err != nil {
		return d, err
	}
	d.Remnants = out.Remnants
	return d, nil
}

// remnants lists what deleted projects' jobs left.
func (a *Admin) remnants(w http.ResponseWriter, r *http.Request) {
	d, err := a.loadRemnants(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d.Note = note(r)
	a.render(w, r, "remnants.html", "Job remnants", "remnants", d)
}

// remnant shows one remnant's files under the list.
func (a *Admin) remnant(w http.ResponseWriter, r *http.Request) {
	d, err := a.loadRemnants(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var rem hub.Remnant
	if err := a.client(r).do(r.Context(), http.MethodGet, "/api/job-remnants/"+url.PathEscape(r.PathValue("jid")), nil, nil, "", &rem); err != nil {
		a.fail(w, r, err)
		return
	}
	d.Remnant = &rem
	a.render(w, r, "remnants.html", "Job remnant "+rem.JobID, "remnants", d)
}

// remnantFile downloads a remnant's file as the API serves it.
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

// purgeRemnant deletes a remnant and its files for good.
func (a *Admin) purgeRemnant(w http.ResponseWriter, r *http.Request) {
	form(w, r)
	if err := a.client(r).do(r.Context(), http.MethodDelete, "/api/job-remnants/"+url.PathEscape(r.PathValue("jid")), nil, nil, "", nil); err != nil {
		a.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/remnants?ok=purged", http.StatusSeeOther)
}

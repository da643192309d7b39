package hubadmin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A deleted project's job files are listed, downloaded and purged from the
// Remnants pages, linked from the dashboard and the project pages; the
// purge asks first, in place; downloads and purges are in the audit log.
func TestRemnantsPage(t *testing.T) {
	e := newEnv(t)
	u := e.signIn(e.admin)
	id := importReport(t, u)
	ctx := context.Background()
	st := e.db
	v, err := e.h.Resolve(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"gone", "kept"} {
		if err := st.CreateProject(ctx, p, p); err != nil {
			t.Fatal(err)
		}
		if err := st.Bind(ctx, p, v.StoreID()); err != nil {
			t.Fatal(err)
		}
	}
	p, err := st.SetProfile(ctx, v.StoreID(), store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/report.py"}, TimeoutSeconds: 5, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetPrepared(ctx, v.StoreID(), p.Revision, "none", ""); err != nil {
		t.Fatal(err)
	}
	j, err := st.CreateJob(ctx, "gone", v.StoreID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutJobInput(ctx, j.ID, "data/in.csv", []byte("a,b\n"), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if _, body := u.get("/projects/kept"); !strings.Contains(body, `id="remnants-link"`) || !strings.Contains(body, `href="/remnants"`) {
		t.Error("the project page does not link the remnants")
	}
	if _, body := u.get("/remnants"); !strings.Contains(body, "No remnants") {
		t.Errorf("remnants page before any deletion:\n%s", body)
	}
	if err := st.DeleteProject(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, body := u.get("/"); !strings.Contains(body, `<a href="/remnants">job remnants</a></dt><dd>1</dd>`) {
		t.Error("the dashboard does not count and link the remnant")
	}
	code, body := u.get("/remnants")
	for _, want := range []string{j.ID, "gone", id, `action="/remnants/` + j.ID + `/purge"`, `name="confirm" value="yes"`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("remnants page (%d) lacks %q", code, want)
		}
	}
	code, body = u.get("/remnants/" + j.ID)
	if code != http.StatusOK || !strings.Contains(body, "data/in.csv") || !strings.Contains(body, "Purge the remnant") {
		t.Fatalf("a remnant's page answered %d:\n%s", code, body)
	}
	if code, body := u.get("/remnants/" + j.ID + "/file?path=data%2Fin.csv"); code != http.StatusOK || body != "a,b\n" {
		t.Fatalf("download answered %d: %q", code, body)
	}
	// Without its confirmation a purge changes nothing.
	if code, body := u.post("/remnants/"+j.ID+"/purge", url.Values{}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Fatalf("purge without confirmation answered %d:\n%s", code, body)
	}
	if code, _ := u.get("/remnants/" + j.ID); code != http.StatusOK {
		t.Fatalf("the remnant is gone after an unconfirmed purge (%d)", code)
	}
	if code, body := u.post("/remnants/"+j.ID+"/purge", url.Values{"confirm": {"yes"}}); code != http.StatusOK || strings.Contains(body, j.ID) || !strings.Contains(body, "Purged") {
		t.Fatalf("purge answered %d:\n%s", code, body)
	}
	if code, _ := u.get("/remnants/" + j.ID); code != http.StatusNotFound {
		t.Errorf("a purged remnant's page answered %d", code)
	}
	for _, action := range []string{"remnant.download", "remnant.purge"} {
		var audit struct {
			Entries []store.AuditEntry `json:"entries"`
		}
		e.apiGet("/api/audit?action="+action, &audit)
		if len(audit.Entries) != 1 || audit.Entries[0].Result != "ok" || !strings.HasPrefix(audit.Entries[0].ObjectID, j.ID) {
			t.Errorf("%s audit entries: %+v", action, audit.Entries)
		}
	}
}

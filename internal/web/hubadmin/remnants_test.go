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
// Remnants page.
func TestRemnantsPage(t *testing.T) {
	e := newEnv(t)
	u := e.signIn(e.admin)
	id := importReport(t, u)
	ctx := context.Background()
	st := e.h.Store()
	v, err := e.h.Resolve(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, "gone", "Gone"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(ctx, "gone", v.StoreID()); err != nil {
		t.Fatal(err)
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
	if err := st.DeleteProject(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if code, body := u.get("/remnants"); code != http.StatusOK || !strings.Contains(body, j.ID) || !strings.Contains(body, "gone") {
		t.Fatalf("remnants page answered %d:\n%s", code, body)
	}
	code, body := u.get("/remnants/" + j.ID)
	if code != http.StatusOK || !strings.Contains(body, "data/in.csv") {
		t.Fatalf("a remnant's page answered %d:\n%s", code, body)
	}
	if code, body := u.get("/remnants/" + j.ID + "/file?path=data%2Fin.csv"); code != http.StatusOK || body != "a,b\n" {
		t.Fatalf("download answered %d: %q", code, body)
	}
	if code, body := u.post("/remnants/"+j.ID+"/purge", url.Values{}); code != http.StatusOK || strings.Contains(body, j.ID) || !strings.Contains(body, "Purged") {
		t.Fatalf("purge answered %d:\n%s", code, body)
	}
}

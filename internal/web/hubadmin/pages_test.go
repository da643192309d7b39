package hubadmin_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web"
)

var versionRE = regexp.MustCompile(`report@[0-9a-f]{12}`)

// importReport imports the report skill through the pages and returns its
// version id.
func importReport(t *testing.T, u *user) string {
	t.Helper()
	u.get("/packages")
	st, body := u.upload("/packages/import", "file", "report.zip", zipOf(t, reportSkill()), nil)
	if st != http.StatusOK || !strings.Contains(body, "Imported.") {
		t.Fatalf("import answered %d:\n%s", st, body)
	}
	id := versionRE.FindString(body)
	if id == "" {
		t.Fatalf("no version id on the version page:\n%s", body)
	}
	return id
}

// TestAdminFlow goes through every area as an admin without script, and
// checks each change through the API.
func TestAdminFlow(t *testing.T) {
	e := newEnv(t)
	u := e.signIn(e.admin)

	id := importReport(t, u)
	st, body := u.get("/packages/" + id)
	for _, want := range []string{pkgtreeNote, "zip", "report.zip", "scripts/report.py", "not approved", "sha256:"} {
		if !strings.Contains(body, want) {
			t.Errorf("version page lacks %q", want)
		}
	}
	// The hostile file name is text, never markup.
	if strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;img src=x onerror=window.__pwned=1&gt;.md") {
		t.Errorf("the hostile file name is not escaped on the version page")
	}
	st, body = u.get("/packages/" + id + "/file?path=notes%2Fhostile.txt")
	if st != http.StatusOK || !strings.Contains(body, "&lt;script&gt;window.__pwned") || strings.Contains(body, "<script>window") || !strings.Contains(body, "bad \uFFFD byte") {
		t.Errorf("file viewer answered %d:\n%s", st, body)
	}

	if st, body = u.post("/packages/"+id+"/approve", url.Values{}); st != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("approve answered %d:\n%s", st, body)
	}
	if st, body = u.post("/projects", url.Values{"id": {"support"}, "name": {"Support bot"}}); st != http.StatusOK || !strings.Contains(body, "Support bot") {
		t.Fatalf("create project answered %d:\n%s", st, body)
	}
	// A hostile name is text wherever it is shown.
	hostile := `<script>window.__pwned=1</script><img src=x onerror=alert(1)>`
	u.post("/projects", url.Values{"id": {"hostile"}, "name": {hostile}})
	for _, p := range []string{"/projects", "/projects/hostile"} {
		if _, b := u.get(p); strings.Contains(b, "<script>window") || strings.Contains(b, "<img src=x") || !strings.Contains(b, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") {
			t.Errorf("%s does not show the hostile name as text", p)
		}
	}
	u.post("/projects/hostile/delete", url.Values{"confirm": {"yes"}})
	if st, body = u.get("/projects/support/connect"); st != http.StatusOK || !strings.Contains(body, id) {
		t.Fatalf("connect page answered %d:\n%s", st, body)
	}
	if st, body = u.post("/projects/support/bind", url.Values{"skill_id": {id}}); st != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("bind answered %d:\n%s", st, body)
	}
	if want := e.srv.URL + "/p/support/mcp"; !strings.Contains(html.UnescapeString(body), `"url": "`+want+`"`) {
		t.Errorf("project page's snippet lacks the endpoint %s:\n%s", want, body)
	}
	var bound struct {
		Skills []hub.Bound `json:"skills"`
	}
	e.apiGet("/api/projects/support/skills", &bound)
	if len(bound.Skills) != 1 || bound.Skills[0].Version.ID != id {
		t.Errorf("bindings through the API: %+v", bound.Skills)
	}

	// A project token is shown once.
	st, body = u.post("/projects/support/tokens", url.Values{"name": {"agent"}})
	secret := regexp.MustCompile(`<pre id="secret">([^<]+)</pre>`).FindStringSubmatch(body)
	if st != http.StatusOK || secret == nil || !strings.HasPrefix(secret[1], "smcp_") {
		t.Fatalf("project token answered %d:\n%s", st, body)
	}
	if _, again := u.get("/projects/support"); strings.Contains(again, secret[1]) {
		t.Error("the project token's secret is shown again")
	}

	for _, step := range []struct{ path, want string }{
		{"/projects/support/pause", "Paused"},
		{"/projects/support/resume", "Resumed"},
		{"/projects/support/well-known-on", `id="well-known-off"`}, // the page shows the state
		{"/projects/support/well-known-off", `id="well-known-on"`},
	} {
		if st, body := u.post(step.path, url.Values{}); st != http.StatusOK || !strings.Contains(body, step.want) {
			t.Errorf("%s answered %d:\n%s", step.path, st, body)
		}
	}
	if st, body := u.post("/projects/support/duplicate", url.Values{"new_id": {"support-2"}}); st != http.StatusOK || !strings.Contains(body, "Duplicated") {
		t.Errorf("duplicate answered %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/support-2/delete", url.Values{}); st != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("unconfirmed delete answered %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/support-2/delete", url.Values{"confirm": {"yes"}}); st != http.StatusOK || !strings.Contains(body, "Deleted") {
		t.Errorf("delete answered %d:\n%s", st, body)
	}
	if got := e.projectIDs(); len(got) != 1 || got[0] != "support" {
		t.Errorf("projects through the API: %v", got)
	}

	// Admin tokens: create with a scope (shown once), revoke.
	st, body = u.post("/tokens", url.Values{"scope": {"read"}, "name": {"auditor"}})
	if st != http.StatusOK || !strings.Contains(body, `<pre id="secret">smcp_`) {
		t.Fatalf("token create answered %d:\n%s", st, body)
	}
	tid := regexp.MustCompile(`The admin token <code>([0-9a-f]{16})</code> of scope read`).FindStringSubmatch(body)
	if tid == nil {
		t.Fatalf("no token id:\n%s", body)
	}
	// A destructive action needs its confirmation, the second button of
	// its question on the page.
	if st, body := u.post("/tokens/"+tid[1]+"/revoke", url.Values{}); st != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("unconfirmed revoke answered %d:\n%s", st, body)
	}
	if st, body := u.post("/tokens/"+tid[1]+"/revoke", url.Values{"confirm": {"yes"}}); st != http.StatusOK || !strings.Contains(body, "Revoked") {
		t.Errorf("revoke answered %d:\n%s", st, body)
	}
	var toks struct {
		Tokens []store.Token `json:"tokens"`
	}
	e.apiGet("/api/tokens?include_revoked=true", &toks)
	for _, tk := range toks.Tokens {
		if tk.ID == tid[1] && tk.RevokedAt.IsZero() {
			t.Error("the revoked token is not revoked through the API")
		}
	}

	// The audit log shows the changes, filtered and paged.
	st, body = u.get("/audit?action=project.bind")
	if st != http.StatusOK || !strings.Contains(body, "project.bind") || strings.Contains(body, "project.create") {
		t.Errorf("filtered audit answered %d:\n%s", st, body)
	}
	if st, body = u.get("/audit"); !strings.Contains(body, "skill.import") || !strings.Contains(body, "token.revoke") {
		t.Errorf("audit page lacks entries:\n%s", body)
	}

	// Uninstall needs the version unbound first: the API's refusal is shown.
	st, body = u.post("/packages/"+id+"/uninstall", url.Values{"confirm": {"yes"}})
	if st < 400 || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("uninstall of a bound version answered %d:\n%s", st, body)
	}
}

const pkgtreeNote = "Inspection is not proof of safety"

// TestRefusals: a read-scope token, a form without its token, a
// cross-origin form and an expired session each get a clear page, and
// nothing changes (checked through the API).
func TestRefusals(t *testing.T) {
	e := newEnv(t)
	reader := e.signIn(e.read)
	if st, body := reader.get("/packages"); st != http.StatusOK || !strings.Contains(body, "Import a ZIP") {
		t.Fatalf("reader's packages page %d", st)
	}
	st, body := reader.post("/projects", url.Values{"id": {"nope"}, "name": {"Nope"}})
	if st != http.StatusForbidden || !strings.Contains(body, "scope admin") || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a read token creating a project got %d:\n%s", st, body)
	}
	st, body = reader.upload("/packages/import", "file", "report.zip", zipOf(t, reportSkill()), nil)
	if st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a read token importing got %d:\n%s", st, body)
	}
	var pk struct {
		Packages []any `json:"packages"`
	}
	e.apiGet("/api/skills", &pk)
	if len(pk.Packages) != 0 || len(e.projectIDs()) != 0 {
		t.Errorf("a refused change changed something: %d packages, projects %v", len(pk.Packages), e.projectIDs())
	}

	admin := e.signIn(e.admin)
	admin.get("/packages")
	st, body = admin.upload("/packages/import", "file", "big.zip", make([]byte, 32<<20+1), nil)
	if st != http.StatusRequestEntityTooLarge || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("an upload over 32 MiB got %d:\n%s", st, body)
	}
	st, body = admin.post("/projects", url.Values{"id": {"forged"}, "csrf": {"not-the-token"}})
	if st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a forged form got %d:\n%s", st, body)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/projects", strings.NewReader(url.Values{"id": {"cross"}, "csrf": {admin.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := admin.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if st, body = admin.keep(resp); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a cross-origin form got %d:\n%s", st, body)
	}
	e.clk.add(2 * time.Hour)
	if st, body = admin.post("/projects", url.Values{"id": {"late"}}); st != http.StatusUnauthorized || !strings.Contains(body, "nothing was changed") {
		t.Errorf("an expired session got %d:\n%s", st, body)
	}
	if got := e.projectIDs(); len(got) != 0 {
		t.Errorf("refused forms created projects %v", got)
	}
	// A project token does not sign in.
	if err := e.db.CreateProject(t.Context(), "p1", "P1"); err != nil {
		t.Fatal(err)
	}
	_, psecret, err := e.h.CreateToken(t.Context(), hub.TokenRequest{Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	anon := &user{e: e, c: &http.Client{}}
	if st, _ := anon.post("/signin", url.Values{"token": {psecret}}); st != http.StatusUnauthorized {
		t.Errorf("a project token signed in: %d", st)
	}
}

// TestFirstLoadBudget: every page's HTML with the CSS and script it loads
// stays within 150 KB, the version page of a package with many files and
// the file viewer of a huge file included.
func TestFirstLoadBudget(t *testing.T) {
	e := newEnv(t)
	u := e.signIn(e.admin)
	files := reportSkill()
	files["notes/huge.txt"] = strings.Repeat("<&>\"' a long line ", 60_000)
	for i := range 300 {
		files["data/f"+strings.Repeat("x", i%40)+string(rune('a'+i%26))+".txt"] = "x"
	}
	u.get("/packages")
	st, body := u.upload("/packages/import", "file", "big.zip", zipOf(t, files), nil)
	if st != http.StatusOK {
		t.Fatalf("import %d:\n%s", st, body)
	}
	id := versionRE.FindString(body)
	u.post("/projects", url.Values{"id": {"p"}, "name": {"P"}})
	assets := 0
	for _, p := range []string{"app.css", "app.js", "hub.js"} {
		st, b := u.get(assetPath(t, e, p))
		if st != http.StatusOK {
			t.Fatalf("asset %s: %d", p, st)
		}
		assets += len(b)
	}
	for _, p := range []string{"/", "/jobs", "/catalog", "/packages", "/packages/" + id, "/packages/" + id + "/file?path=notes%2Fhuge.txt", "/packages/" + id + "/profile",
		"/projects", "/projects/p", "/projects/p/connect", "/tokens", "/audit"} {
		st, body := u.get(p)
		if st != http.StatusOK {
			t.Errorf("%s: %d", p, st)
			continue
		}
		if n := len(body) + assets; n > 150_000 {
			t.Errorf("%s: first load %d bytes, over 150 KB", p, n)
		} else {
			t.Logf("%s: first load %d bytes (HTML %d)", p, n, len(body))
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, " onclick") {
			t.Errorf("%s has inline script or style", p)
		}
	}
}

var assetRE = regexp.MustCompile(`/assets/[a-z]+\.[0-9a-f]{12}\.(css|js)`)

// assetPath returns the hashed path of an asset, as a page links it.
func assetPath(t *testing.T, e *env, logical string) string {
	t.Helper()
	u := e.signIn(e.admin)
	_, body := u.get("/tasks/none") // any page links app.*; hub.js is linked by task pages
	base, ext, _ := strings.Cut(logical, ".")
	for _, m := range assetRE.FindAllString(body, -1) {
		if strings.HasPrefix(m, web.AssetPrefix+base+".") && strings.HasSuffix(m, "."+ext) {
			return m
		}
	}
	if logical == "hub.js" {
		return hubJS(t, e, u)
	}
	t.Fatalf("no link to %s", logical)
	return ""
}

// hubJS starts a task (a refresh that fails at once) to find hub.js's path.
func hubJS(t *testing.T, e *env, u *user) string {
	t.Helper()
	u.get("/catalog")
	_, body := u.post("/catalog/refresh", url.Values{"url": {"https://127.0.0.1:1/none.json"}})
	for _, m := range assetRE.FindAllString(body, -1) {
		if strings.HasPrefix(m, "/assets/hub.") {
			return m
		}
	}
	t.Fatalf("the task page links no hub.js:\n%s", body)
	return ""
}

// TestJobScopes: the execution profile needs an admin token, as the API
// says; a read or write token's attempt is refused on a clear page and
// the profile stays unset (checked through the API).
func TestJobScopes(t *testing.T) {
	e := newJobEnv(t)
	admin := e.signIn(e.admin)
	id := importReport(t, admin)
	for _, secret := range []string{e.read, e.write} {
		u := e.signIn(secret)
		u.get("/packages/" + id + "/profile")
		st, body := u.post("/packages/"+id+"/profile", url.Values{"runtime": {"python"}, "scripts": {"scripts/report.py"}, "timeout_seconds": {"60"}, "enabled": {"on"}})
		if st != http.StatusForbidden || !strings.Contains(body, "scope admin") || !strings.Contains(body, "Nothing was changed") {
			t.Errorf("a non-admin token setting a profile got %d:\n%s", st, body)
		}
		if st, body := u.post("/packages/"+id+"/prepare", url.Values{}); st != http.StatusForbidden {
			t.Errorf("a non-admin token preparing got %d:\n%s", st, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/skills/"+id+"/profile", nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the profile after refused changes: %d, want 404 (none)", resp.StatusCode)
	}
	// The admin's profile page offers the inspection's script, ticked.
	if _, body := admin.get("/packages/" + id + "/profile"); !strings.Contains(body, `name="scripts" type="checkbox" value="scripts/report.py" checked`) {
		t.Errorf("the profile form does not offer the package's script:\n%s", body)
	}
}

// TestCatalogUpload: a catalog document uploaded through the page replaces
// the catalog; a file that is not JSON, a document the API refuses, an
// upload over the bound and a read token's upload are refused on a page
// saying nothing changed, and the catalog stays (checked through the
// API).
func TestCatalogUpload(t *testing.T) {
	e := newEnv(t)
	admin := e.signIn(e.admin)
	admin.get("/catalog")
	doc, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: []index.Item{
		{ID: "acme/pdf", Name: "pdf", Description: "PDF forms.", Author: "Acme", Category: "documents", Repository: "https://github.com/acme/skills", Path: "pdf"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	source := func() (string, int) {
		var out struct {
			Source string `json:"source"`
			Total  int    `json:"total"`
		}
		e.apiGet("/api/skills/catalog", &out)
		return out.Source, out.Total
	}
	before, _ := source()
	for _, tc := range []struct {
		name   string
		data   []byte
		status int
		want   string
	}{
		{"not JSON", []byte("name,description\npdf,forms\n"), http.StatusUnprocessableEntity, "not JSON"},
		{"refused document", []byte(`{"schema_version": 9, "items": []}`), http.StatusUnprocessableEntity, "Nothing was changed"},
		{"empty", nil, http.StatusUnprocessableEntity, "Choose a catalog document"},
		{"too large", append([]byte(`{"schema_version": 1, "items": [], "x": "`), make([]byte, 16<<20)...), http.StatusRequestEntityTooLarge, "16 MiB"},
	} {
		st, body := admin.upload("/catalog/upload", "document", "catalog.json", tc.data, nil)
		if st != tc.status || !strings.Contains(body, tc.want) || !strings.Contains(body, "Nothing was changed") {
			t.Errorf("%s: %d, want %d with %q:\n%.2000s", tc.name, st, tc.status, tc.want, body)
		}
	}
	// The whole form is bounded, other fields included.
	if st, body := admin.upload("/catalog/upload", "document", "catalog.json", doc, map[string]string{"other": strings.Repeat("x", 17<<20)}); st != http.StatusRequestEntityTooLarge || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a form with a huge other field: %d\n%.2000s", st, body)
	}
	reader := e.signIn(e.read)
	reader.get("/catalog")
	if st, body := reader.upload("/catalog/upload", "document", "catalog.json", doc, nil); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a read token's upload: %d\n%.2000s", st, body)
	}
	if got, _ := source(); got != before {
		t.Fatalf("refused uploads changed the catalog's source to %q", got)
	}
	st, body := admin.upload("/catalog/upload", "document", "catalog.json", doc, nil)
	if st != http.StatusOK || !strings.Contains(body, "replaced by the uploaded document") || !strings.Contains(body, "1 installable skills") {
		t.Fatalf("upload: %d\n%.2000s", st, body)
	}
	if got, n := source(); got != "upload" || n != 1 {
		t.Errorf("after the upload the API serves %d items from %q", n, got)
	}
	// Disconnecting is destructive: it needs its confirmation too.
	if err := e.db.CreateProject(t.Context(), "p", "P"); err != nil {
		t.Fatal(err)
	}
	admin.get("/projects/p")
	if st, body := admin.post("/projects/p/unbind", url.Values{"skill_id": {"x@abcd"}}); st != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("an unconfirmed disconnect: %d\n%.2000s", st, body)
	}
}

var (
	capSecretRE = regexp.MustCompile(`<pre id="secret">([^<]+)</pre>`)
	capURLRE    = regexp.MustCompile(`<pre id="capability-url">([^<]+)</pre>`)
	capIDRE     = regexp.MustCompile(`The capability <code>([0-9a-f]{16})</code>`)
)

// capabilities lists a project's active index capabilities through the API.
func (e *env) capabilities(project string) []store.Token {
	e.t.Helper()
	var out struct {
		Tokens []store.Token `json:"tokens"`
	}
	e.apiGet("/api/projects/"+project+"/well-known/capabilities", &out)
	return out.Tokens
}

// TestWellKnownCapabilities: the project page issues a capability of the
// project's well-known index (its secret and URL shown on that page only),
// lists the capabilities with when each was last used, and revokes them,
// the index on or off; a forged form, a write token and an unconfirmed
// revoke change nothing (checked through the API and the store).
func TestWellKnownCapabilities(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, p := range []string{"docs", "other"} {
		if err := e.db.CreateProject(ctx, p, "Project "+p); err != nil {
			t.Fatal(err)
		}
	}
	u := e.signIn(e.admin)

	// Off: no form to issue; the help no longer sends to the CLI.
	_, body := u.get("/projects/docs")
	if strings.Contains(body, `id="create-capability"`) || !strings.Contains(body, `id="well-known-on"`) {
		t.Errorf("the page of a project whose index is off offers to issue a capability:\n%s", body)
	}
	if strings.Contains(body, "skills-hub token create") {
		t.Errorf("the project page still sends to the CLI:\n%s", body)
	}
	st, body := u.post("/projects/docs/well-known-on", url.Values{})
	if st != http.StatusOK || !strings.Contains(body, `id="create-capability"`) || !strings.Contains(body, "No capability opens this index yet.") {
		t.Fatalf("index on answered %d:\n%s", st, body)
	}

	// Issued: the secret, the URL and the command, this once.
	st, body = u.post("/projects/docs/capabilities", url.Values{"name": {"onboarding"}, "expires_in": {"720h"}})
	sec, curl, cid := capSecretRE.FindStringSubmatch(body), capURLRE.FindStringSubmatch(body), capIDRE.FindStringSubmatch(body)
	if st != http.StatusOK || sec == nil || curl == nil || cid == nil {
		t.Fatalf("issuing a capability answered %d:\n%s", st, body)
	}
	secret, id := sec[1], cid[1]
	if !strings.HasPrefix(secret, "smcp_i_"+id+"_") {
		t.Errorf("the secret shown %q is not the index token %s's", secret, id)
	}
	if want := e.srv.URL + hub.IndexPath("docs", secret); html.UnescapeString(curl[1]) != want {
		t.Errorf("the URL shown is %q, want %q", curl[1], want)
	}
	if want := "npx skills add " + e.srv.URL + hub.IndexPath("docs", secret); !strings.Contains(html.UnescapeString(body), want) {
		t.Errorf("the page lacks the command %q", want)
	}
	tok, err := e.db.VerifyToken(ctx, secret) // also marks it used
	if err != nil || tok.ID != id || !tok.ForIndex("docs") || tok.Name != "onboarding" || tok.ExpiresAt.IsZero() {
		t.Fatalf("the capability shown verifies as %+v, %v", tok, err)
	}
	if caps := e.capabilities("docs"); len(caps) != 1 || caps[0].ID != id {
		t.Errorf("capabilities through the API: %+v", caps)
	}

	// Later renders list it, last used included, never its secret; the
	// project tokens' list does not hold it.
	_, body = u.get("/projects/docs")
	if strings.Contains(body, secret) || strings.Contains(body, `id="new-capability"`) {
		t.Errorf("the capability's secret is shown again:\n%s", body)
	}
	row := regexp.MustCompile(`(?s)<tr><td data-label="Id"><code>` + id + `</code>.*?</tr>`).FindString(body)
	if !strings.Contains(row, "onboarding") || !regexp.MustCompile(`data-label="Last used">\d{4}-\d\d-\d\d `).MatchString(row) ||
		!strings.Contains(row, "/projects/docs/capabilities/"+id+"/revoke") {
		t.Errorf("the capability's row %q lacks its name, last use or revoke form", row)
	}
	if !strings.Contains(body, "No token opens this project's endpoint yet.") {
		t.Errorf("the capability is listed among the project tokens:\n%s", body)
	}
	// A read token sees the list, never a secret.
	reader := e.signIn(e.read)
	if _, rb := reader.get("/projects/docs"); !strings.Contains(rb, "<code>"+id+"</code>") || strings.Contains(rb, secret) {
		t.Errorf("a read token's project page:\n%s", rb)
	}

	// Refused: a forged form, a cross-site one, a write token, an
	// unconfirmed revoke, a bad expiry, another project's capability.
	if st, body := u.post("/projects/docs/capabilities", url.Values{"csrf": {"not-the-token"}}); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a forged issue form got %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/docs/capabilities/"+id+"/revoke", url.Values{"csrf": {"not-the-token"}, "confirm": {"yes"}}); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a forged revoke form got %d:\n%s", st, body)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/projects/docs/capabilities", strings.NewReader(url.Values{"csrf": {u.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := u.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if st, body := u.keep(resp); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a cross-origin issue form got %d:\n%s", st, body)
	}
	writer := e.signIn(e.write)
	writer.get("/projects/docs")
	if st, body := writer.post("/projects/docs/capabilities", url.Values{}); st != http.StatusForbidden || !strings.Contains(body, "scope admin") || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a write token issuing got %d:\n%s", st, body)
	}
	if st, body := writer.post("/projects/docs/capabilities/"+id+"/revoke", url.Values{"confirm": {"yes"}}); st != http.StatusForbidden || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a write token revoking got %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/docs/capabilities/"+id+"/revoke", url.Values{}); st != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("an unconfirmed revoke got %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/docs/capabilities", url.Values{"expires_in": {"soon"}}); st < 400 || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("a bad expiry got %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/other/capabilities/"+id+"/revoke", url.Values{"confirm": {"yes"}}); st != http.StatusNotFound || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("revoking docs's capability as other's got %d:\n%s", st, body)
	}
	if caps := e.capabilities("docs"); len(caps) != 1 || caps[0].ID != id {
		t.Fatalf("refused forms changed the capabilities: %+v", caps)
	}
	if _, err := e.db.VerifyToken(ctx, secret); err != nil {
		t.Fatalf("a refused revoke ended the capability: %v", err)
	}

	// Revoked: its URL opens nothing from then on.
	st, body = u.post("/projects/docs/capabilities/"+id+"/revoke", url.Values{"confirm": {"yes"}})
	if st != http.StatusOK || !strings.Contains(body, "Revoked: the capability&#39;s URL answers 404") || strings.Contains(body, "<code>"+id+"</code>") {
		t.Errorf("revoke answered %d:\n%s", st, body)
	}
	if caps := e.capabilities("docs"); len(caps) != 0 {
		t.Errorf("capabilities through the API after the revoke: %+v", caps)
	}
	if _, err := e.db.VerifyToken(ctx, secret); err == nil {
		t.Error("the revoked capability still verifies")
	}

	// Off, the capabilities stay listed and can be revoked; none is issued
	// from the page.
	_, body = u.post("/projects/docs/capabilities", url.Values{"name": {"ci"}})
	cid = capIDRE.FindStringSubmatch(body)
	if cid == nil {
		t.Fatalf("no second capability:\n%s", body)
	}
	st, body = u.post("/projects/docs/well-known-off", url.Values{})
	if st != http.StatusOK || !strings.Contains(body, "<code>"+cid[1]+"</code>") || !strings.Contains(body, "open nothing") || strings.Contains(body, `id="create-capability"`) {
		t.Errorf("index off answered %d:\n%s", st, body)
	}
	if st, body := u.post("/projects/docs/capabilities/"+cid[1]+"/revoke", url.Values{"confirm": {"yes"}}); st != http.StatusOK || !strings.Contains(body, "Revoked") {
		t.Errorf("revoke while off answered %d:\n%s", st, body)
	}
	if caps := e.capabilities("docs"); len(caps) != 0 {
		t.Errorf("capabilities after the revoke while off: %+v", caps)
	}
	// The audit log names the capabilities by id, never their secrets.
	if _, body := u.get("/audit?action=well_known.issue"); !strings.Contains(body, id) || strings.Contains(body, secret) {
		t.Errorf("the audit page's issues:\n%s", body)
	}
}

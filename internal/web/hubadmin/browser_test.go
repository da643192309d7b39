package hubadmin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree/githubtest"
	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// catalogDoc is a catalog document of three items in the fake GitHub's
// acme/skills, the report skill among them.
func catalogDoc(t *testing.T, repo string) []byte {
	items := []index.Item{
		{ID: "acme/report", Name: "report", Description: "Counts the lines of an input file and writes a report.", Author: "Acme", Category: "documents", Repository: repo, Path: "report"},
		{ID: "acme/xlsx", Name: "xlsx", Description: "Spreadsheets.", Author: "Acme", Category: "documents", Repository: repo, Path: "xlsx"},
		{ID: "acme/web", Name: "web", Description: "Browse the web.", Author: "Zed", Category: "web", Repository: repo, Path: "web"},
	}
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// catalogServer serves a catalog document on loopback, for the refresh.
func catalogServer(t *testing.T, doc []byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/catalog.json"
}

// acmeRepo publishes the report skill (and a spreadsheet one) in the fake
// GitHub's acme/skills and returns its URL.
func acmeRepo(gh *githubtest.Server) string {
	files := map[string]string{"xlsx/SKILL.md": "---\nname: xlsx\ndescription: Spreadsheets.\n---\n# xlsx\n"}
	for name, content := range reportSkill() {
		files["report/"+name] = content
	}
	_, repo := gh.Add("acme", "skills", files)
	return repo
}

// grantClipboard lets the page write and read the clipboard, as a user
// who allowed it would.
func grantClipboard(origin string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
				Setting:    browser.PermissionSettingGranted,
				Origin:     origin,
			})
			if err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	}
}

// TestBrowserAdmin drives Chromium through the seed's whole workflow, in
// the pages alone: sign in, refresh the catalog from a URL (its progress
// updates in place) and upload a catalog document, search it, install
// the report skill from it (read from GitHub, faked on loopback), inspect
// it (a hostile file runs nothing), approve it, see it marked installed,
// import a ZIP, create a project, connect the version with "+", create a
// project token, copy the client configuration (its URL checked from the
// clipboard), set the execution profile from the detected scripts and
// prepare it (followed in place), create a job, upload an input, run it
// in a real bubblewrap sandbox, find it in the job list, and download its
// output, checking its sha256 in the page; delete the project and find
// the job's files among the remnants, download and purge them; then a
// forged form from another origin and an expired session, which change
// nothing.
func TestBrowserAdmin(t *testing.T) {
	gh := githubtest.New(t)
	repo := acmeRepo(gh)
	e := newEnvWith(t, envOptions{jobs: true, github: gh})
	doc := catalogDoc(t, repo)
	catURL := catalogServer(t, doc)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/projects"><input name="id" value="evil"><input name="csrf" value="guess"><button id="go">win a prize</button></form>`, e.srv.URL)
	}))
	t.Cleanup(evil.Close)
	dir := t.TempDir()
	docPath := filepath.Join(dir, "catalog.json")
	zipPath := filepath.Join(dir, "notes.zip")
	inputPath := filepath.Join(dir, "data.txt")
	input := []byte("one\ntwo\nthree\n")
	for p, data := range map[string][]byte{
		docPath:   doc,
		zipPath:   zipOf(t, map[string]string{"SKILL.md": "---\nname: notes\ndescription: Keeps meeting notes.\n---\n# Notes\n"}),
		inputPath: input,
	} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inSum := sha256.Sum256(input)
	outSum := sha256.Sum256([]byte("lines=3 sha256=" + hex.EncodeToString(inSum[:]) + "\n"))
	b := browsertest.New(t)
	var shots []string
	start := time.Now()

	b.Do("open the hub signed out", chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	b.Do("sign in", chromedp.SendKeys(chromedp.CSS("#token"), e.admin), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#summary")))
	shots = append(shots, b.Screenshots("01-dashboard")...)

	// The catalog: a refresh from a URL is a task whose page follows it in
	// place; an uploaded document replaces it too.
	b.Do("open the catalog", chromedp.Click(chromedp.CSS(`nav a[href="/catalog"]`)), chromedp.WaitVisible(chromedp.CSS("#catalog-url")))
	if n := browsertest.Eval[int](b, "count unlabelled controls",
		`[...document.querySelectorAll("input:not([type=hidden]),select,textarea")].filter(e => e.labels.length === 0).length`); n != 0 {
		t.Errorf("%d controls without a label on the catalog page", n)
	}
	b.Do("refresh the catalog", chromedp.SendKeys(chromedp.CSS("#catalog-url"), catURL), chromedp.Submit(chromedp.CSS("#catalog-url")),
		chromedp.WaitVisible(chromedp.CSS("#task")))
	taskURL := browsertest.Eval[string](b, "read the task's address", "location.href")
	b.WaitFor("the refresh to end", `document.getElementById("task").dataset.state === "done"`)
	if got := browsertest.Eval[string](b, "read the address", "location.href"); got != taskURL {
		t.Errorf("the task page was reloaded (%s), not updated in place", got)
	}
	if got := b.Text("#task-log"); !strings.Contains(got, "3 items") {
		t.Errorf("task log %q", got)
	}
	shots = append(shots, b.Screenshots("02-refresh")...)
	b.Do("go on to the catalog", chromedp.Click(chromedp.CSS("#task-result")), chromedp.WaitVisible(chromedp.CSS("#catalog-file")))
	b.Do("upload a catalog document", chromedp.SetUploadFiles(chromedp.CSS("#catalog-file"), []string{docPath}), chromedp.Click(chromedp.CSS("#upload-catalog")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	if got := b.Text(`p[role="status"]`); !strings.Contains(got, "uploaded document") {
		t.Errorf("after the upload the catalog says %q", got)
	}
	if got := b.Text("#summary"); !strings.Contains(got, "3 installable skills") || !strings.Contains(got, "upload") {
		t.Errorf("catalog summary %q", got)
	}
	b.Do("filter by author", chromedp.Evaluate[chromedp.Void](
		`(s => { s.value = "Zed"; s.dispatchEvent(new Event("change")); })(document.getElementById("author"))`))
	b.WaitFor("the filtered catalog", `location.search.includes("author=Zed") && document.readyState === "complete"`)
	if n := browsertest.Eval[int](b, "count results", `document.querySelectorAll("#catalog-results li").length`); n != 1 {
		t.Errorf("%d results by Zed, want 1", n)
	}
	b.Do("search", chromedp.Navigate(e.srv.URL+"/catalog"), chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "lines report"), chromedp.Submit(chromedp.CSS("#q")))
	b.WaitFor("the results", `location.search.includes("q=lines") && document.readyState === "complete"`)
	if got := b.Text("#catalog-results li .name"); got != "report" {
		t.Errorf("best match %q, want report", got)
	}
	shots = append(shots, b.Screenshots("03-catalog")...)

	// Install it from the catalog, inspect it, approve it.
	b.Do("install from the catalog", chromedp.Click(chromedp.CSS(`button[aria-label="Install report"]`)), chromedp.WaitVisible(chromedp.CSS("#task")))
	b.WaitFor("the install to end", `["done", "failed"].includes(document.getElementById("task").dataset.state)`)
	if got := b.Text("#task-log"); !strings.Contains(got, "Installed report@") {
		t.Fatalf("install log %q", got)
	}
	b.Do("go on to the version", chromedp.Click(chromedp.CSS("#task-result")), chromedp.WaitVisible(chromedp.CSS("#not-proof")))
	if got := b.Text("#not-proof"); !strings.Contains(got, pkgtreeNote) {
		t.Errorf("inspection note %q", got)
	}
	if got := b.Text("#origin-list"); !strings.Contains(got, "acme/report") || !strings.Contains(got, repo) {
		t.Errorf("origin %q", got)
	}
	if got := b.Text("#scripts"); !strings.Contains(got, "scripts/report.py") {
		t.Errorf("scripts %q", got)
	}
	version := strings.TrimSpace(b.Text("h1"))
	versionURL := e.srv.URL + "/packages/" + version
	shots = append(shots, b.Screenshots("04-inspect")...)
	b.Do("view a hostile file", chromedp.Click(chromedp.CSS(`a[href*="hostile.txt"]`)), chromedp.WaitVisible(chromedp.CSS("#source")))
	if got := browsertest.Eval[string](b, "check for script", "typeof window.__pwned"); got != "undefined" {
		t.Errorf("a script of the package ran")
	}
	if got := b.Text("#source"); !strings.Contains(got, "<script>window.__pwned = 'text'</script>") {
		t.Errorf("file text %q", got)
	}
	b.Do("back to the version", chromedp.Navigate(versionURL), chromedp.WaitVisible(chromedp.CSS("#approve")))
	b.Do("approve", chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	b.Do("see it installed in the catalog", chromedp.Navigate(e.srv.URL+"/catalog?q=report"), chromedp.WaitVisible(chromedp.CSS("#catalog-results")))
	if got := b.Text("#catalog-results li .installed"); !strings.Contains(got, version) {
		t.Errorf("the catalog's item says %q, want installed as %s", got, version)
	}

	// A ZIP import.
	b.Do("open the skills", chromedp.Click(chromedp.CSS(`nav a[href="/packages"]`)), chromedp.WaitVisible(chromedp.CSS("#zip")))
	b.Do("import a ZIP", chromedp.SetUploadFiles(chromedp.CSS("#zip"), []string{zipPath}), chromedp.Submit(chromedp.CSS("#zip")),
		chromedp.WaitVisible(chromedp.CSS("#not-proof")))
	if got := b.Text("#origin-list"); !strings.Contains(got, "notes.zip") {
		t.Errorf("origin %q", got)
	}

	// A project, the "+" flow, a project token.
	b.Do("open the projects", chromedp.Click(chromedp.CSS(`nav a[href="/projects"]`)), chromedp.WaitVisible(chromedp.CSS("#project-id")))
	b.Do("create a project", chromedp.SendKeys(chromedp.CSS("#project-id"), "support"), chromedp.SendKeys(chromedp.CSS("#project-name"), "Support bot"),
		chromedp.Submit(chromedp.CSS("#project-id")), chromedp.WaitVisible(chromedp.CSS("#plus")))
	b.Do("press +", chromedp.Click(chromedp.CSS("#plus")), chromedp.WaitVisible(chromedp.CSS("#versions")))
	shots = append(shots, b.Screenshots("05-connect")...)
	b.Do("connect the version", chromedp.Click(chromedp.CSS(`button[aria-label="Connect `+version+`"]`)), chromedp.WaitVisible(chromedp.CSS("#bindings")))
	if got := b.Text("#bindings"); !strings.Contains(got, version) || !strings.Contains(got, "approved") {
		t.Errorf("bindings %q, want %s approved", got, version)
	}
	b.Do("create a project token", chromedp.SendKeys(chromedp.CSS("#ptoken-name"), "agent"), chromedp.Click(chromedp.CSS("#create-token")),
		chromedp.WaitVisible(chromedp.CSS("#new-token")))
	if got := b.Text("#secret"); !strings.HasPrefix(got, "smcp_p_") {
		t.Errorf("the new project token shows %q", got)
	}

	// Copy the client configuration; the clipboard holds the endpoint.
	want := e.srv.URL + "/p/support/mcp"
	b.Do("allow the clipboard", grantClipboard(e.srv.URL))
	b.Do("copy the configuration", chromedp.Click(chromedp.CSS("#copy-snippet")))
	b.WaitFor("the copy", `document.getElementById("copy-snippet").textContent === "Copied"`)
	var copied string
	b.Do("read the clipboard", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var err error
		copied, err = chromedp.Evaluate[string]("navigator.clipboard.readText()", chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	})
	var cfg struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(copied), &cfg); err != nil {
		t.Fatalf("the copied configuration is not JSON: %v\n%s", err, copied)
	}
	if s := cfg.MCPServers["skills-support"]; s.URL != want || !strings.HasPrefix(s.Headers["Authorization"], "Bearer ") {
		t.Errorf("copied configuration %+v, want url %s and an Authorization header", cfg, want)
	}
	shots = append(shots, b.Screenshots("06-project")...)

	// The execution profile: the detected script is offered, ticked;
	// enable and save it, then prepare the environment (nothing to
	// install: the interpreter is checked), followed in place.
	b.Do("open the profile", chromedp.Navigate(versionURL), chromedp.Click(chromedp.CSS("#profile-link")),
		chromedp.WaitVisible(chromedp.CSS("#profile-form")))
	if got := browsertest.Eval[[]string](b, "read the ticked scripts",
		`[...document.querySelectorAll("input[name=scripts]:checked")].map(e => e.value)`); len(got) != 1 || got[0] != "scripts/report.py" {
		t.Errorf("scripts ticked %q, want the detected scripts/report.py", got)
	}
	if got := b.Text(`label[for="runtime-python"]`); !strings.Contains(got, "python:3.12-slim") {
		t.Errorf("the Python runtime's caption %q does not name the seed's image", got)
	}
	b.Do("enable and save the profile", chromedp.Click(chromedp.CSS("#enabled")), chromedp.Click(chromedp.CSS("#save-profile")),
		chromedp.WaitVisible(chromedp.CSS("#prepare-button")))
	if got := b.Text("#profile-note"); !strings.Contains(got, "not prepared") || !strings.Contains(got, "support") || strings.Contains(got, "/api/") {
		t.Errorf("profile note %q: want enabled for support, not prepared, and no API hint", got)
	}
	profileURL := browsertest.Eval[string](b, "read the address", "location.pathname")
	b.Do("prepare", chromedp.Click(chromedp.CSS("#prepare-button")), chromedp.WaitVisible(chromedp.CSS("#prep")))
	if got := browsertest.Eval[string](b, "read the address", "location.pathname"); got != profileURL {
		t.Errorf("the preparation went to %s, not the profile page", got)
	}
	b.WaitFor("the preparation to end in place", `["prepared", "failed"].includes(document.getElementById("prep").dataset.state)`)
	if got := b.Text("#prep-log"); !strings.Contains(got, "Prepared: ") {
		t.Fatalf("preparation log %q", got)
	}
	shots = append(shots, b.Screenshots("07-prepare")...)

	// A job: upload the input, run the script with arguments, find it in
	// the job list, download the output and check its digest in the page.
	b.Do("open the project", chromedp.Navigate(e.srv.URL+"/projects/support"), chromedp.Click(chromedp.CSS("#create-job")),
		chromedp.WaitVisible(chromedp.CSS("#input-file")))
	if got := b.Text("#job-skill"); !strings.Contains(got, version) {
		t.Errorf("the job page says %q, want the version %s", got, version)
	}
	b.Do("upload the input", chromedp.SendKeys(chromedp.CSS("#input-path"), "in/data.txt"),
		chromedp.SetUploadFiles(chromedp.CSS("#input-file"), []string{inputPath}), chromedp.Click(chromedp.CSS("#upload")),
		chromedp.WaitVisible(chromedp.CSS("#input-files")))
	if got := b.Text("#input-files"); !strings.Contains(got, "in/data.txt") || !strings.Contains(got, hex.EncodeToString(inSum[:])) {
		t.Errorf("inputs %q", got)
	}
	b.Do("give the arguments", chromedp.Evaluate[chromedp.Void](`document.getElementById("args").value = '["in/data.txt"]'`))
	b.Do("run", chromedp.Click(chromedp.CSS("#run-button")), chromedp.WaitVisible(chromedp.CSS("#task")))
	b.WaitFor("the run to end", `["done", "failed"].includes(document.getElementById("task").dataset.state)`)
	if got := b.Text("#task-log"); !strings.Contains(got, "Exit code 0") {
		t.Fatalf("run log %q", got)
	}
	shots = append(shots, b.Screenshots("08-run")...)
	b.Do("open the job list", chromedp.Click(chromedp.CSS(`nav a[href="/jobs"]`)), chromedp.WaitVisible(chromedp.CSS("#job-list")))
	if got := b.Text("#job-list tbody"); !strings.Contains(got, "succeeded") || !strings.Contains(got, version) || !strings.Contains(got, "support") {
		t.Errorf("the job list says %q", got)
	}
	b.Do("open the job", chromedp.Click(chromedp.CSS("#job-list tbody a")), chromedp.WaitVisible(chromedp.CSS("#output-files")))
	var got string
	b.Do("download the output", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var err error
		got, err = chromedp.Evaluate[string](`(async () => {
			const a = document.querySelector('#output-files a');
			const r = await fetch(a.href, {credentials: "same-origin"});
			if (!r.ok) return "status " + r.status;
			const sum = await crypto.subtle.digest("SHA-256", await r.arrayBuffer());
			return [...new Uint8Array(sum)].map(b => b.toString(16).padStart(2, "0")).join("");
		})()`, chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	})
	if want := hex.EncodeToString(outSum[:]); got != want {
		t.Errorf("downloaded output's sha256 %s, want %s", got, want)
	}
	shots = append(shots, b.Screenshots("09-job")...)

	// Delete the project: its job's files are kept as remnants, which the
	// Remnants page lists, serves and, once asked in place, purges.
	b.Do("open the project to delete it", chromedp.Navigate(e.srv.URL+"/projects/support"), chromedp.WaitVisible(chromedp.CSS("#remnants-link")),
		chromedp.Click(chromedp.CSS("#confirm-delete summary")), chromedp.WaitVisible(chromedp.CSS("#delete-project")))
	b.Do("delete the project", chromedp.Click(chromedp.CSS("#delete-project")), chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	b.Do("open the remnants", chromedp.Click(chromedp.CSS(`nav a[href="/remnants"]`)), chromedp.WaitVisible(chromedp.CSS("#remnants")))
	if got := b.Text("#remnants tbody"); !strings.Contains(got, "support") || !strings.Contains(got, version) {
		t.Errorf("the remnants list says %q", got)
	}
	b.Do("open the remnant", chromedp.Click(chromedp.CSS("#remnants tbody a")), chromedp.WaitVisible(chromedp.CSS("#remnant-files")))
	b.Do("download the remnant's output", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var err error
		got, err = chromedp.Evaluate[string](`(async () => {
			const a = [...document.querySelectorAll('#remnant-files a')].find(a => a.textContent === "report.txt");
			const r = await fetch(a.href, {credentials: "same-origin"});
			if (!r.ok) return "status " + r.status;
			const sum = await crypto.subtle.digest("SHA-256", await r.arrayBuffer());
			return [...new Uint8Array(sum)].map(b => b.toString(16).padStart(2, "0")).join("");
		})()`, chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	})
	if want := hex.EncodeToString(outSum[:]); got != want {
		t.Errorf("the remnant's output's sha256 %s, want %s", got, want)
	}
	shots = append(shots, b.Screenshots("10-remnant")...)
	b.Do("purge the remnant", chromedp.Click(chromedp.CSS("#confirm-purge summary")), chromedp.WaitVisible(chromedp.CSS("#purge")),
		chromedp.Click(chromedp.CSS("#purge")), chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	if got := b.Text(`p[role="status"]`); !strings.Contains(got, "Purged") {
		t.Errorf("after the purge the page says %q", got)
	}
	if got := b.Text("main"); !strings.Contains(got, "No remnants") {
		t.Errorf("the remnants page after the purge says %q", got)
	}

	// A forged form from another origin changes nothing.
	b.Do("submit a forged form from another origin", chromedp.Navigate(evil.URL), chromedp.Click(chromedp.CSS("#go")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="alert"]`)))
	if got := b.Text(`p[role="alert"]`); !strings.Contains(got, "Nothing was changed") {
		t.Errorf("forged form answered %q", got)
	}
	// An expired session goes back to the sign-in page.
	e.clk.add(2 * time.Hour)
	b.Do("open a page after the session expired", chromedp.Navigate(e.srv.URL+"/projects"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if got := b.Text(`p[role="status"]`); !strings.Contains(got, "expired") {
		t.Errorf("expired session page says %q", got)
	}
	if got := e.projectIDs(); len(got) != 0 {
		t.Errorf("projects through the API: %v, want none (support was deleted)", got)
	}
	t.Logf("browser flow took %s; screenshots:\n%s", time.Since(start).Round(time.Millisecond), strings.Join(shots, "\n"))
}

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
	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// catalogServer serves a catalog document of three items on loopback, for
// the refresh.
func catalogServer(t *testing.T) string {
	items := []index.Item{
		{ID: "acme/pdf", Name: "pdf", Description: "PDF forms.", Category: "documents", Repository: "https://github.com/acme/skills", Path: "pdf"},
		{ID: "acme/xlsx", Name: "xlsx", Description: "Spreadsheets.", Category: "documents", Repository: "https://github.com/acme/skills", Path: "xlsx"},
		{ID: "acme/web", Name: "web", Description: "Browse the web.", Category: "web", Repository: "https://github.com/acme/skills", Path: "web"},
	}
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(raw)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/catalog.json"
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

// TestBrowserAdmin drives Chromium through the seed's workflow: sign in,
// refresh the catalog (its progress updates in place), import a ZIP,
// inspect it, approve it, create a project, connect the version with the
// "+" flow, copy the client configuration (its URL checked from the
// clipboard), configure and prepare the execution profile, run a job with
// an uploaded input in a real bubblewrap sandbox and download its output,
// checking its sha256 in the page; then a forged form from another origin
// and an expired session, which change nothing.
func TestBrowserAdmin(t *testing.T) {
	e := newJobEnv(t)
	catURL := catalogServer(t)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/projects"><input name="id" value="evil"><input name="csrf" value="guess"><button id="go">win a prize</button></form>`, e.srv.URL)
	}))
	t.Cleanup(evil.Close)
	zipPath := filepath.Join(t.TempDir(), "report.zip")
	if err := os.WriteFile(zipPath, zipOf(t, reportSkill()), 0o644); err != nil {
		t.Fatal(err)
	}
	input := []byte("one\ntwo\nthree\n")
	inputPath := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(inputPath, input, 0o644); err != nil {
		t.Fatal(err)
	}
	inSum := sha256.Sum256(input)
	outSum := sha256.Sum256([]byte("lines=3 sha256=" + hex.EncodeToString(inSum[:]) + "\n"))
	b := browsertest.New(t)
	var shots []string
	start := time.Now()

	b.Do("open the hub signed out", chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	shots = append(shots, b.Screenshots("01-signin")...)
	b.Do("sign in", chromedp.SendKeys(chromedp.CSS("#token"), e.admin), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#q")))
	if n := browsertest.Eval[int](b, "count unlabelled controls",
		`[...document.querySelectorAll("input:not([type=hidden]),select,textarea")].filter(e => e.labels.length === 0).length`); n != 0 {
		t.Errorf("%d controls without a label on the catalog page", n)
	}

	// The catalog refresh is a task whose page follows it in place.
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
	b.Do("go on to the catalog", chromedp.Click(chromedp.CSS("#task-result")), chromedp.WaitVisible(chromedp.CSS("#catalog-results")))
	if got := b.Text("#summary"); !strings.Contains(got, "3 installable skills") {
		t.Errorf("catalog summary %q", got)
	}
	b.Do("filter by category", chromedp.Evaluate[chromedp.Void](
		`(s => { s.value = "web"; s.dispatchEvent(new Event("change")); })(document.getElementById("category"))`))
	b.WaitFor("the filtered catalog", `location.search.includes("category=web") && document.readyState === "complete"`)
	if n := browsertest.Eval[int](b, "count results", `document.querySelectorAll("#catalog-results li").length`); n != 1 {
		t.Errorf("%d results in category web, want 1", n)
	}
	shots = append(shots, b.Screenshots("03-catalog")...)

	// Import the ZIP and inspect it.
	b.Do("open the skills", chromedp.Click(chromedp.CSS(`nav a[href="/packages"]`)), chromedp.WaitVisible(chromedp.CSS("#zip")))
	b.Do("import the ZIP", chromedp.SetUploadFiles(chromedp.CSS("#zip"), []string{zipPath}), chromedp.Submit(chromedp.CSS("#zip")),
		chromedp.WaitVisible(chromedp.CSS("#not-proof")))
	if got := b.Text("#not-proof"); !strings.Contains(got, pkgtreeNote) {
		t.Errorf("inspection note %q", got)
	}
	if got := b.Text("#origin-list"); !strings.Contains(got, "report.zip") {
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

	// A project, and the "+" flow.
	b.Do("open the projects", chromedp.Click(chromedp.CSS(`nav a[href="/projects"]`)), chromedp.WaitVisible(chromedp.CSS("#project-id")))
	b.Do("create a project", chromedp.SendKeys(chromedp.CSS("#project-id"), "support"), chromedp.SendKeys(chromedp.CSS("#project-name"), "Support bot"),
		chromedp.Submit(chromedp.CSS("#project-id")), chromedp.WaitVisible(chromedp.CSS("#plus")))
	b.Do("press +", chromedp.Click(chromedp.CSS("#plus")), chromedp.WaitVisible(chromedp.CSS("#versions")))
	shots = append(shots, b.Screenshots("05-connect")...)
	b.Do("connect the version", chromedp.Click(chromedp.CSS(`button[aria-label="Connect `+version+`"]`)), chromedp.WaitVisible(chromedp.CSS("#bindings")))
	if got := b.Text("#bindings"); !strings.Contains(got, version) {
		t.Errorf("bindings %q, want %s", got, version)
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

	// The execution profile: the inspection's script is offered; enable it
	// and prepare the environment (nothing to install: the interpreter is
	// checked), following the preparation in place.
	b.Do("open the profile", chromedp.Navigate(versionURL), chromedp.Click(chromedp.CSS("#profile-link")),
		chromedp.WaitVisible(chromedp.CSS("#profile-form")))
	if got := browsertest.Eval[string](b, "read the scripts", `document.getElementById("scripts-field").value`); got != "scripts/report.py" {
		t.Errorf("suggested scripts %q", got)
	}
	b.Do("enable and save the profile", chromedp.Click(chromedp.CSS("#enabled")), chromedp.Click(chromedp.CSS("#save-profile")),
		chromedp.WaitVisible(chromedp.CSS("#prepare-button")))
	if got := b.Text("#profile-note"); !strings.Contains(got, "enabled") || !strings.Contains(got, "support") {
		t.Errorf("profile note %q: want it enabled for support", got)
	}
	b.Do("prepare", chromedp.Click(chromedp.CSS("#prepare-button")), chromedp.WaitVisible(chromedp.CSS("#task")))
	b.WaitFor("the preparation to end", `["done", "failed"].includes(document.getElementById("task").dataset.state)`)
	if got := b.Text("#task-log"); !strings.Contains(got, "Prepared: ") {
		t.Fatalf("preparation log %q", got)
	}
	shots = append(shots, b.Screenshots("08-prepare")...)

	// A job: upload the input, run the script with arguments, download
	// the output and check its digest in the page.
	b.Do("open the project", chromedp.Navigate(e.srv.URL+"/projects/support"), chromedp.Click(chromedp.CSS("#create-job")),
		chromedp.WaitVisible(chromedp.CSS("#input-file")))
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
	shots = append(shots, b.Screenshots("09-run")...)
	b.Do("open the job", chromedp.Click(chromedp.CSS("#task-result")), chromedp.WaitVisible(chromedp.CSS("#output-files")))
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
	shots = append(shots, b.Screenshots("10-job")...)

	// A forged form from another origin changes nothing.
	b.Do("submit a forged form from another origin", chromedp.Navigate(evil.URL), chromedp.Click(chromedp.CSS("#go")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="alert"]`)))
	if got := b.Text(`p[role="alert"]`); !strings.Contains(got, "Nothing was changed") {
		t.Errorf("forged form answered %q", got)
	}
	shots = append(shots, b.Screenshots("07-forged")...)
	// An expired session goes back to the sign-in page.
	e.clk.add(2 * time.Hour)
	b.Do("open a page after the session expired", chromedp.Navigate(e.srv.URL+"/projects"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if got := b.Text(`p[role="status"]`); !strings.Contains(got, "expired") {
		t.Errorf("expired session page says %q", got)
	}
	if got := e.projectIDs(); len(got) != 1 || got[0] != "support" {
		t.Errorf("projects through the API: %v, want [support]", got)
	}
	t.Logf("browser flow took %s; screenshots:\n%s", time.Since(start).Round(time.Millisecond), strings.Join(shots, "\n"))
}

package hubadmin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree/githubtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// realistic fills a hub the way a platform team's looks after some months:
// dozens of versions with long names from two repositories, a catalog of
// a hundred items by several authors, a dozen projects with long ids and
// names, tokens and index capabilities, approvals and not, a prepared
// profile and a failed preparation, and many jobs (some run for real in
// bubblewrap: one succeeded, one failed). It returns the ids the page
// visits need.
type realistic struct {
	report     string // the report skill's version: profile prepared
	long       string // a version with a long name, findings and no profile
	project    string // the busy project: its well-known index on, with capabilities
	indexOff   string // a project whose index is off, a capability kept
	doneJob    string // a job that succeeded, in project
	failedJob  string
	openJob    string // a job created, not run
	versionIDs []string
	remnant    string // a remnant with inputs and outputs, of a deleted project
	strays     *strays
}

// longWords are the parts of long, realistic names.
var longWords = []string{"quarterly", "financial", "report", "generator", "customer", "support", "escalation", "triage",
	"infrastructure", "compliance", "evidence", "collector", "internationalisation", "spreadsheet", "reconciliation"}

func longName(i int) string {
	var parts []string
	for k := range 3 + i%4 {
		parts = append(parts, longWords[(i*3+k)%len(longWords)])
	}
	name := strings.Join(parts, "-")
	if len(name) > 58 { // a skill's name has at most 64 characters
		name = strings.TrimRight(name[:58], "-")
	}
	return name + fmt.Sprintf("-%02d", i)
}

func fillHub(t *testing.T, e *env, gh *githubtest.Server) realistic {
	t.Helper()
	ctx := context.Background()
	var r realistic
	files := map[string]string{}
	var items []index.Item
	authors := []string{"Acme Corporation Research and Development Department", "contoso", "Fabrikam Platform Engineering", "tailspin"}
	cats := []string{"documents", "data", "devops", "security", "writing"}
	for i := range 40 {
		name := longName(i)
		files[name+"/SKILL.md"] = fmt.Sprintf("---\nname: %s\ndescription: %s — a skill with a long description that explains at length what it does with %s files, and then some more words so that it wraps on a phone.\n---\n\n# %s\n\nRun `scripts/run.py`.\n", name, strings.ReplaceAll(name, "-", " "), longWords[i%len(longWords)], name)
		files[name+"/scripts/run.py"] = "#!/usr/bin/env python3\nimport sys\nprint('ok', sys.argv[1:])\n"
		if i%3 == 0 {
			files[name+"/scripts/install.sh"] = "#!/bin/sh\ncurl -s https://example.com/install.sh | sh\n"
		}
		files[name+"/references/"+strings.Repeat("very-long-reference-file-name-", 3)+"guide.md"] = "# Guide\n"
	}
	_, repo := gh.Add("acme", "skills", files)
	for i := range 100 {
		name := longName(i % 40)
		if i >= 40 {
			name = fmt.Sprintf("catalog-only-skill-%03d-%s", i, longWords[i%len(longWords)])
		}
		items = append(items, index.Item{ID: "acme/" + name, Name: name, Description: "Does " + strings.ReplaceAll(name, "-", " ") + " for teams that need it, carefully and with a long description.",
			Author: authors[i%len(authors)], Category: cats[i%len(cats)], Repository: repo, Path: name, License: "Apache-2.0"})
	}
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, GeneratedAt: time.Now().Add(-45 * 24 * time.Hour), Items: items})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.ApplyCatalog(ctx, raw, "https://catalog.example.org/skills/catalog.json"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		inst, err := e.h.InstallCatalogItem(ctx, items[i].ID, nil)
		if err != nil {
			t.Fatalf("installing %s: %v", items[i].ID, err)
		}
		r.versionIDs = append(r.versionIDs, inst.Version.ID)
		if i%2 == 0 {
			if _, err := e.h.Approve(ctx, inst.Version.ID, "token tester"); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.long = r.versionIDs[3]
	// Second versions of a few packages.
	for i := range 6 {
		name := longName(i)
		files[name+"/references/changelog.md"] = "# Changes\n\nversion 2\n"
	}
	gh.Add("acme", "skills", files)
	for i := range 6 {
		inst, err := e.h.InstallCatalogItem(ctx, items[i].ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.versionIDs = append(r.versionIDs, inst.Version.ID)
	}
	rep, err := e.h.InstallZip(ctx, hub.ZipInstall{R: strings.NewReader(string(zipOf(t, reportSkill()))), Size: int64(len(zipOf(t, reportSkill()))), FileName: "report.zip"})
	if err != nil {
		t.Fatal(err)
	}
	r.report = rep.Version.ID
	if _, err := e.h.Approve(ctx, r.report, "token tester"); err != nil {
		t.Fatal(err)
	}
	// A dozen projects with long ids and names, each serving some versions.
	r.project = "customer-support-escalations-eu-west-production-2026"
	projects := []string{r.project}
	for i := range 11 {
		projects = append(projects, fmt.Sprintf("team-%02d-%s", i, strings.Join(longWords[i%5:i%5+3], "-")))
	}
	for i, p := range projects {
		name := "Project " + strings.ReplaceAll(p, "-", " ")
		if i == 0 {
			name = "Customer support escalations (EU west, production) — the team's main assistant"
		}
		if err := e.db.CreateProject(ctx, p, name); err != nil {
			t.Fatal(err)
		}
		for k := range 4 {
			if _, err := e.h.Bind(ctx, p, r.versionIDs[(i*5+k)%30]); err != nil {
				t.Fatal(err)
			}
		}
		if i < 3 {
			for _, n := range []string{"agent-production", "agent-staging"} {
				if _, _, err := e.h.CreateToken(ctx, hub.TokenRequest{Project: p, Name: n}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, err := e.h.Bind(ctx, r.project, r.report); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PauseProject(ctx, projects[5]); err != nil {
		t.Fatal(err)
	}
	// The busy project publishes its well-known index to two holders of
	// capabilities, one of which has installed from it; another project's
	// index is off with a capability kept.
	r.indexOff = projects[1]
	if _, err := e.db.SetWellKnown(ctx, r.project, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ project, name string }{{r.project, "onboarding-documentation-site"}, {r.project, "partner-integration-ci"}, {projects[1], "paused-publication"}} {
		_, secret, err := e.h.CreateToken(ctx, hub.TokenRequest{Project: c.project, Index: true, Name: c.name, Expires: 90 * 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "onboarding-documentation-site" {
			if _, err := e.db.VerifyToken(ctx, secret); err != nil { // its last use
				t.Fatal(err)
			}
		}
	}
	for _, n := range []string{"ci-pipeline", "security-auditor", "on-call"} {
		if _, _, err := e.h.CreateToken(ctx, hub.TokenRequest{Scope: store.ScopeRead, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	// The report skill runs; another version's preparation fails.
	u := e.apiUser()
	u.call(http.MethodPut, "/api/skills/"+r.report+"/profile", map[string]any{"runtime": "python", "scripts": []string{"scripts/report.py"}, "timeout_seconds": 60, "enabled": true}, nil)
	u.prepare(r.report)
	bad := r.versionIDs[0]
	if _, err := e.h.Bind(ctx, r.project, bad); err != nil && !strings.Contains(err.Error(), "already") {
		t.Log(err)
	}
	u.call(http.MethodPut, "/api/skills/"+bad+"/profile", map[string]any{"runtime": "python", "scripts": []string{"scripts/run.py"}, "timeout_seconds": 30, "interpreter": "/usr/bin/no-such-python"}, nil)
	u.call(http.MethodPost, "/api/skills/"+bad+"/prepare", nil, nil)
	u.waitPrepared(bad, "failed")
	// Many jobs; two run for real.
	var ids []string
	for range 24 {
		var j struct {
			ID string `json:"id"`
		}
		u.call(http.MethodPost, "/api/projects/"+r.project+"/skill-jobs", map[string]string{"skill_id": r.report}, &j)
		ids = append(ids, j.ID)
	}
	r.openJob = ids[len(ids)-1]
	r.doneJob, r.failedJob = ids[0], ids[1]
	u.upload("/api/projects/"+r.project+"/skill-jobs/"+r.doneJob+"/files", "in/data.txt", []byte("one\ntwo\n"))
	var st struct {
		Job store.Job `json:"job"`
	}
	u.call(http.MethodPost, "/api/projects/"+r.project+"/skill-jobs/"+r.doneJob+"/run", map[string]any{"script": "scripts/report.py", "args": []string{"in/data.txt"}}, &st)
	if st.Job.State != store.JobSucceeded {
		t.Fatalf("the realistic job did not succeed: %+v", st.Job)
	}
	u.call(http.MethodPost, "/api/projects/"+r.project+"/skill-jobs/"+r.failedJob+"/run", map[string]any{"script": "scripts/report.py", "args": []string{"in/missing.txt"}}, &st)
	if st.Job.State != store.JobFailed {
		t.Fatalf("the failing job did not fail: %+v", st.Job)
	}
	// A retired project's jobs, one run, are left as remnants when it is
	// deleted.
	retired := "marketing-campaign-analytics-2025-retired-after-reorg"
	if err := e.db.CreateProject(ctx, retired, "Marketing campaign analytics 2025 (retired)"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.Bind(ctx, retired, r.report); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		var j struct {
			ID string `json:"id"`
		}
		u.call(http.MethodPost, "/api/projects/"+retired+"/skill-jobs", map[string]string{"skill_id": r.report}, &j)
		in := fmt.Sprintf("in/campaign-%02d-%s.csv", i, strings.Repeat("regional-breakdown-", 3))
		u.upload("/api/projects/"+retired+"/skill-jobs/"+j.ID+"/files", in, []byte(strings.Repeat("region,clicks\neu,12\n", 40+i)))
		if i == 0 {
			r.remnant = j.ID
			u.call(http.MethodPost, "/api/projects/"+retired+"/skill-jobs/"+j.ID+"/run", map[string]any{"script": "scripts/report.py", "args": []string{in}}, &st)
			if st.Job.State != store.JobSucceeded {
				t.Fatalf("the retired project's job did not succeed: %+v", st.Job)
			}
		}
	}
	if err := e.db.DeleteProject(ctx, retired); err != nil {
		t.Fatal(err)
	}
	// Another deleted project's: the remnants can be filtered by project.
	pilot := "pilot-2025-q3"
	if err := e.db.CreateProject(ctx, pilot, "Pilot"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.Bind(ctx, pilot, r.report); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var j struct {
			ID string `json:"id"`
		}
		u.call(http.MethodPost, "/api/projects/"+pilot+"/skill-jobs", map[string]string{"skill_id": r.report}, &j)
		u.upload("/api/projects/"+pilot+"/skill-jobs/"+j.ID+"/files", "in/pilot.csv", []byte("a,b\n"))
	}
	if err := e.db.DeleteProject(ctx, pilot); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBrowserEveryPage visits every page of the console over a realistic
// hub, at 375 and 1280 px: none scrolls sideways, axe-core finds no
// serious or critical violation (light and dark), the keyboard reaches
// every control with a visible focus ring, and the screenshots are kept.
func TestBrowserEveryPage(t *testing.T) {
	gh := githubtest.New(t)
	strays := newStrays()
	e := newEnvWith(t, envOptions{jobs: true, github: gh, lease: time.Hour, seed: strays.seed(t)})
	r := fillHub(t, e, gh)
	r.strays = strays
	b := browsertest.New(t)
	b.Do("open the sign-in page", chromedp.Navigate(e.srv.URL+"/signin?next=/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	reports := []browsertest.Report{b.Check("01-signin")}
	b.Keyboard("01-signin")
	b.Do("sign in", chromedp.SendKeys(chromedp.CSS("#token"), e.admin), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#summary")))
	// A task page: a refresh from a URL that fails at once.
	b.Do("open the catalog", chromedp.Navigate(e.srv.URL+"/catalog"), chromedp.WaitVisible(chromedp.CSS("#catalog-url")))
	b.Do("start a refresh that fails", chromedp.SendKeys(chromedp.CSS("#catalog-url"), "https://127.0.0.1:1/catalog.json"),
		chromedp.Submit(chromedp.CSS("#catalog-url")), chromedp.WaitVisible(chromedp.CSS("#task")))
	b.WaitFor("the task to end", `document.getElementById("task").dataset.state === "failed"`)
	taskURL := browsertest.Eval[string](b, "read the task's address", "location.pathname")

	q := url.QueryEscape
	// open, if set, is a <summary> to open once the page is there: its
	// in-place question is checked too.
	pages := []struct{ name, path, wait, open string }{
		{"02-dashboard", "/", "#attention", ""},
		{"03-catalog", "/catalog", "#catalog-results", ""},
		{"04-catalog-author", "/catalog?author=" + q("Acme Corporation Research and Development Department") + "&category=documents", "#catalog-results", ""},
		{"05-catalog-search", "/catalog?q=" + q("financial report"), "#catalog-results", ""},
		{"06-skills", "/packages", "#packages", ""},
		{"07-version", "/packages/" + r.report, "#not-proof", ""},
		{"08-version-long", "/packages/" + r.long, "#findings", ""},
		{"09-file", "/packages/" + r.report + "/file?path=" + q("scripts/report.py"), "#source", ""},
		{"10-profile", "/packages/" + r.report + "/profile", "#profile-form", ""},
		{"11-profile-new", "/packages/" + r.long + "/profile", "#profile-form", ""},
		{"12-profile-failed", "/packages/" + r.versionIDs[0] + "/profile", "#prep", ""},
		{"13-projects", "/projects", "#projects", ""},
		{"14-project", "/projects/" + r.project, "#bindings", ""},
		{"15-connect", "/projects/" + r.project + "/connect", "#versions", ""},
		{"16-jobs", "/jobs", "#job-list", ""},
		{"17-jobs-failed", "/jobs?state=failed,timed_out,locked", "#job-list", ""},
		{"18-job-done", "/projects/" + r.project + "/jobs/" + r.doneJob, "#output-files", ""},
		{"19-job-failed", "/projects/" + r.project + "/jobs/" + r.failedJob, "#stderr", ""},
		{"20-job-open", "/projects/" + r.project + "/jobs/" + r.openJob, "#input-file", ""},
		{"21-tokens", "/tokens", "#admin-tokens", ""},
		{"22-audit", "/audit", "#audit", ""},
		{"23-task", taskURL, "#task-log", ""},
		{"24-not-found", "/nowhere", "p[role=alert]", ""},
		{"25-remnants", "/remnants", "#remnants", "#remnants summary"},
		{"25-remnants-of-a-project", "/remnants?project=pilot-2025-q3", "#remnants", ""},
		{"26-remnant", "/remnants/" + r.remnant, "#remnant-files", "#confirm-purge summary"},
		{"27-job-lapsed-replica", jpath(strays.project, strays.lapsed), "#replica-lease", "#settle summary"},
		{"28-job-live-replica", jpath(strays.project, strays.live), "#replica-lease", "#settle summary"},
		{"29-job-locked", jpath(strays.project, strays.locked), "#replica-lease", ""},
		{"30-project-index-on", "/projects/" + r.project + "#well-known", "#capabilities", "#capabilities summary"},
		{"31-project-index-off", "/projects/" + r.indexOff, "#capabilities", ""},
	}
	for _, p := range pages {
		b.Do("open "+p.name, chromedp.Navigate(e.srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
		if p.open != "" {
			b.Do("open the question of "+p.name, chromedp.Click(chromedp.CSS(p.open)), chromedp.WaitVisible(chromedp.CSS(p.open+" + *")))
		}
		reports = append(reports, b.Check(p.name))
		b.Keyboard(p.name)
	}
	// A capability just issued: its secret and URL, shown this once.
	b.Do("open the busy project", chromedp.Navigate(e.srv.URL+"/projects/"+r.project), chromedp.WaitVisible(chromedp.CSS("#cap-name")))
	b.Do("issue a capability", chromedp.SendKeys(chromedp.CSS("#cap-name"), "release-notes-bot"), chromedp.Click(chromedp.CSS("#create-capability")),
		chromedp.WaitVisible(chromedp.CSS("#new-capability")))
	if got := b.Text("#capability-url"); !strings.HasPrefix(got, e.srv.URL+"/p/"+r.project+"/i/smcp_i_") {
		t.Errorf("the new capability's URL shows %q", got)
	}
	reports = append(reports, b.Check("32-capability-issued"))
	b.Keyboard("32-capability-issued")
	// Its command copies as shown.
	b.Do("allow the clipboard", grantClipboard(e.srv.URL))
	b.Do("copy the command", chromedp.Click(chromedp.CSS(`button[data-copy="capability-command"]`)))
	b.WaitFor("the copy", `document.querySelector('button[data-copy="capability-command"]').textContent === "Copied"`)
	var copied string
	b.Do("read the clipboard", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var err error
		copied, err = chromedp.Evaluate[string]("navigator.clipboard.readText()", chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	})
	if want := "npx skills add " + b.Text("#capability-url"); copied != want {
		t.Errorf("the copied command is %q, want %q", copied, want)
	}
	summarise(t, b, reports)
	// The dashboard says what needs attention, each linked to its page.
	b.Do("open the dashboard", chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#attention")))
	for sel, want := range map[string]string{
		"#failed-jobs + ul":            r.failedJob,
		"#failed-preparations + ul":    r.versionIDs[0],
		"#unapproved + ul":             "not approved",
		"#sandbox":                     "bwrap",
		"#store":                       "ui-test",
		"#catalog-age":                 "Refresh it",
		"#counts":                      "38",
		`a[href="/jobs?state=failed"]`: "failed",
		"#replicas":                    strays.liveReplica,
		"#lapsed + ul":                 strays.lapsedReplica,
		"#remnant-count":               "10",
	} {
		if got := b.Text(sel); !strings.Contains(got, want) {
			t.Errorf("dashboard %s says %q, want %q in it", sel, got, want)
		}
	}
}

// summarise logs each page's violations by impact and writes them, with
// the screenshots' names, to axe-summary.txt under the test's output.
func summarise(t *testing.T, b *browsertest.Browser, reports []browsertest.Report) {
	t.Helper()
	var lines []string
	total := map[string]int{}
	for _, r := range reports {
		by := map[string][]string{}
		for _, v := range r.Violations {
			by[v.Impact] = append(by[v.Impact], v.ID)
			total[v.Impact]++
		}
		var parts []string
		for _, imp := range []string{"critical", "serious", "moderate", "minor"} {
			parts = append(parts, fmt.Sprintf("%s %d%s", imp, len(by[imp]), list(by[imp])))
		}
		lines = append(lines, fmt.Sprintf("%-22s %s; screenshots %s", r.Name, strings.Join(parts, ", "), strings.Join(baseNames(r.Screenshots), " ")))
	}
	lines = append(lines, fmt.Sprintf("%d pages; violations by impact: critical %d, serious %d, moderate %d, minor %d",
		len(reports), total["critical"], total["serious"], total["moderate"], total["minor"]))
	out := strings.Join(lines, "\n") + "\n"
	t.Log("axe-core by page:\n" + out)
	if err := os.WriteFile(filepath.Join(b.Dir(), "axe-summary.txt"), []byte(out), 0o644); err != nil {
		t.Error(err)
	}
}

func list(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	slices.Sort(ids)
	return " (" + strings.Join(ids, " ") + ")"
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

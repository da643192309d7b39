package browse

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/chromedp/chromedp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// longCategories are category folders as a big team names them: long
// enough to widen a select past a phone's width if nothing holds it.
var longCategories = []string{
	"customer-support-and-escalation-management-playbooks",
	"infrastructure-compliance-evidence-collection",
	"internationalisation-and-localisation-workflows",
	"finance",
}

// wideLibrary is a library of n skills in long-named categories, with long
// names and long descriptions.
func wideLibrary(n int) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := range n {
		cat := longCategories[i%len(longCategories)]
		name := fmt.Sprintf("%s-%s-%03d", words[i%len(words)], strings.TrimSuffix(strings.Repeat("extraordinarily-long-name-", 1+i%2), "-"), i)
		fsys[cat+"/"+name+"/SKILL.md"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: %s\ndescription: %s\n---\n\n# %s\n\nA body with a long line: %s\n",
			name, strings.Repeat("Handles "+words[i%len(words)]+" work for the whole organisation. ", 4), name, strings.Repeat("word", 80)))}
		fsys[cat+"/"+name+"/references/"+strings.Repeat("a-very-long-reference-file-name-", 3)+".md"] = &fstest.MapFile{Data: []byte("notes\n")}
	}
	return fsys
}

// TestBrowserEveryPage visits every page of the skill browser over two
// libraries (the hostile fixture and 120 skills with long names and
// categories) at 375 and 1280 px: none scrolls sideways, axe-core finds
// no serious or critical violation (light and dark), the keyboard reaches
// every control with a visible focus ring, and the screenshots are kept.
func TestBrowserEveryPage(t *testing.T) {
	lib, err := catalog.OpenDirectory("team", fixtureLibrary(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	wide := &catalog.Library{Namespace: "organisation-wide-shared-library", FS: wideLibrary(120), Kind: "embedded", Origin: "generated"}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib, wide}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := testServer(t, catalog.NewStore(snap), nil)
	b := browsertest.New(t)
	var skill string
	for _, sk := range snap.Skills() {
		if sk.Library == wide.Namespace {
			skill = "/skills/" + sk.Path
			break
		}
	}
	q := url.QueryEscape
	pages := []struct{ name, path, wait string }{
		{"01-search", "/", "#q"},
		{"02-search-query", "/?q=" + q("release notes"), "#summary"},
		{"03-search-filtered", "/?library=" + q(wide.Namespace) + "&category=" + q(longCategories[0]), "#summary"},
		{"04-skill", "/skills/team/writing/release-notes", "#rendered"},
		{"05-skill-long", skill, "#rendered"},
		{"06-skill-hostile", "/skills/team/security/hostile", "#rendered"},
		{"07-file", "/files/team/writing/release-notes/scripts/collect.sh", "#source"},
		{"08-file-huge", "/files/team/security/huge/notes.txt", "#source"},
		{"09-status", "/status", "#withheld-table"},
		{"10-not-found", "/nowhere", "p[role=alert]"},
	}
	var reports []browsertest.Report
	for _, p := range pages {
		b.Do("open "+p.name, chromedp.Navigate(ts.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
		reports = append(reports, b.Check(p.name))
		b.Keyboard(p.name)
	}
	// The loading page, while the first scan runs: it shows the catalog by
	// itself once the scan is in. Then the sign-in page.
	pending := catalog.NewPendingStore()
	loading, _ := testServer(t, pending, nil)
	b.Do("open the loading page", chromedp.Navigate(loading.URL+"/"), chromedp.WaitVisible(chromedp.CSS("p[role=status]")))
	reports = append(reports, b.Check("11-loading"))
	scanned, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pending.Swap(scanned)
	b.WaitFor("the catalog once scanned", `document.getElementById("q") !== null`)
	signin, _ := testServer(t, catalog.NewStore(snap), &Options{Tokens: []string{"browser-token"}})
	b.Do("open the sign-in page", chromedp.Navigate(signin.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	reports = append(reports, b.Check("12-signin"))
	b.Keyboard("12-signin")

	var lines []string
	serious := 0
	for _, r := range reports {
		var ids []string
		for _, v := range r.Violations {
			ids = append(ids, v.ID+" ("+v.Impact+")")
		}
		serious += len(r.Serious())
		lines = append(lines, fmt.Sprintf("%-20s %d violations %s", r.Name, len(r.Violations), strings.Join(ids, " ")))
	}
	lines = append(lines, fmt.Sprintf("%d pages; %d serious or critical violations", len(reports), serious))
	out := strings.Join(lines, "\n") + "\n"
	t.Log("axe-core by page:\n" + out)
	if err := os.WriteFile(filepath.Join(b.Dir(), "axe-summary.txt"), []byte(out), 0o644); err != nil {
		t.Error(err)
	}
}

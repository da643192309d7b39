package browse

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// TestBrowserFlow drives Chromium through the browser as an operator uses
// it: search, open a skill, view a file, open the status page and find why
// a skill is withheld; then the hostile skill, whose page must run nothing
// and show everything. Screenshots of each page at 375 and 1280 px go to
// browsertest.OutDir.
func TestBrowserFlow(t *testing.T) {
	ts, _ := testServer(t, scanStore(t, "team", fixtureLibrary(t)), nil)
	b := browsertest.New(t)
	var shots []string

	b.Do("open the start page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	if got := b.Text("#summary"); !strings.Contains(got, "5 skills") {
		t.Errorf("start page summary %q, want 5 skills", got)
	}
	// Every control has a label, and the keyboard reaches the search
	// first: Tab gives the skip link, "/" the search field.
	if n := browsertest.Eval[int](b, "count unlabelled controls",
		`[...document.querySelectorAll("input:not([type=hidden]),select,textarea")].filter(e => e.labels.length === 0).length`); n != 0 {
		t.Errorf("%d controls without a label", n)
	}
	b.Do("press Tab", chromedp.KeyEvent("\t"))
	if got := browsertest.Eval[string](b, "read the focus", "document.activeElement.textContent"); got != "Skip to content" {
		t.Errorf("first Tab stop %q, want the skip link", got)
	}
	b.Do("press /", chromedp.KeyEvent("/"))
	if got := browsertest.Eval[string](b, "read the focus", "document.activeElement.id"); got != "q" {
		t.Errorf("after /, focus on %q, want the search field", got)
	}
	// chromedp's key event types the "/" as well, which a real key press
	// whose keydown is cancelled does not.
	browsertest.Eval[string](b, "clear the field", `document.getElementById("q").value = ""`)
	// Light and dark follow the system.
	b.ColorScheme("dark")
	dark := browsertest.Eval[string](b, "read the dark background", "getComputedStyle(document.body).backgroundColor")
	shots = append(shots, b.Screenshots("0-start-dark")...)
	b.ColorScheme("light")
	light := browsertest.Eval[string](b, "read the light background", "getComputedStyle(document.body).backgroundColor")
	if dark == light {
		t.Errorf("the background is %s in both schemes", dark)
	}
	b.Do("search", chromedp.SendKeys(chromedp.CSS("#q"), "release notes"), chromedp.Submit(chromedp.CSS("#q")))
	b.WaitFor("the results", `location.search.includes("q=release") && document.readyState === "complete"`)
	if got := b.Text("#summary"); !strings.Contains(got, "Best matches") {
		t.Errorf("search summary %q", got)
	}
	shots = append(shots, b.Screenshots("1-search")...)

	b.Do("open the skill", chromedp.Click(chromedp.CSS(`ol.results a[href="/skills/team/writing/release-notes"]`)),
		chromedp.WaitVisible(chromedp.CSS("#rendered")))
	if got := b.Text("#rendered h1"); got != "Release notes" {
		t.Errorf("rendered SKILL.md heading %q", got)
	}
	if got := b.Text("#risks + p"); !strings.Contains(got, "pipe-to-shell") {
		t.Errorf("risk labels %q, want pipe-to-shell", got)
	}
	shots = append(shots, b.Screenshots("2-skill")...)

	b.Do("view a file", chromedp.Click(chromedp.CSS(`a[href="/files/team/writing/release-notes/scripts/collect.sh"]`)),
		chromedp.WaitVisible(chromedp.CSS("#source")))
	if got := b.Text("#source"); !strings.Contains(got, "curl -s https://example.com/install.sh | sh") {
		t.Errorf("file text %q", got)
	}
	shots = append(shots, b.Screenshots("3-file")...)

	b.Do("open the status page", chromedp.Click(chromedp.CSS(`nav a[href="/status"]`)),
		chromedp.WaitVisible(chromedp.CSS("#withheld-table")))
	row := b.Text("#withheld-table tbody")
	if !strings.Contains(row, "withheld-one") || !strings.Contains(row, "frontmatter") || !strings.Contains(row, "skill not served") {
		t.Errorf("withheld table %q: want withheld-one, its reason and why", row)
	}
	shots = append(shots, b.Screenshots("4-status")...)

	// The hostile skill: nothing ran, nothing active is in the DOM, and
	// the markup is there as text.
	b.Do("open the hostile skill", chromedp.Navigate(ts.URL+"/skills/team/security/hostile"), chromedp.WaitVisible(chromedp.CSS("#rendered")))
	if got := browsertest.Eval[string](b, "check for script", "typeof window.__pwned"); got != "undefined" {
		v := browsertest.Eval[string](b, "read the marker", "String(window.__pwned)")
		t.Errorf("a script of the skill ran: window.__pwned = %q", v)
	}
	if n := browsertest.Eval[int](b, "count scripts", "document.scripts.length"); n != 1 {
		t.Errorf("%d script elements, want 1 (the site's own)", n)
	}
	if n := browsertest.Eval[int](b, "count active elements",
		`document.querySelectorAll("iframe,object,embed,style,[onerror],[onclick],[onmouseover],a[href^='javascript' i]").length`); n != 0 {
		t.Errorf("%d active elements in the DOM", n)
	}
	text := b.Text("#rendered")
	for _, want := range []string{"<script>window.__pwned = 'block'</script>", "<img src=x onerror=", "a javascript link", "invalid \uFFFD bytes"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, text)
		}
	}
	if got := b.Text(`a[href$=".md"][href*="onerror"]`); got != "references/<img src=x onerror=window.__pwned='name'>.md" {
		t.Errorf("file name shown as %q", got)
	}
	if bad := activeParts(b.HTML()); len(bad) > 0 {
		t.Errorf("DOM has active parts %q", bad)
	}
	shots = append(shots, b.Screenshots("5-hostile")...)

	b.Do("open the huge skill", chromedp.Navigate(ts.URL+"/files/team/security/huge/notes.txt"), chromedp.WaitVisible(chromedp.CSS("#source")))
	// A line of 480 KB wraps: the page is no wider than the viewport.
	if w := browsertest.Eval[int](b, "measure the page", "document.documentElement.scrollWidth"); w > 1280 {
		t.Errorf("page is %d px wide at 1280: a huge line does not wrap", w)
	}
	shots = append(shots, b.Screenshots("6-huge")...)
	t.Logf("screenshots:\n%s", strings.Join(shots, "\n"))
}

// TestBrowserSignIn: with tokens, the browser signs in, a forged
// cross-origin form changes nothing, and an expired session goes back to
// the sign-in page.
func TestBrowserSignIn(t *testing.T) {
	clk := &clock{t: time.Now()}
	ts, _ := testServer(t, scanStore(t, "team", fixtureLibrary(t)), &Options{Tokens: []string{"browser-token"}, Now: clk.now, SessionTTL: time.Hour})
	// Another origin (same host, another port): a page with a form that
	// posts to the browser's sign-out.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/signout"><input name="csrf" value="guess"><button id="go">win a prize</button></form>`, ts.URL)
	}))
	t.Cleanup(evil.Close)
	b := browsertest.New(t)
	var shots []string

	b.Do("open a page signed out", chromedp.Navigate(ts.URL+"/status"), chromedp.WaitVisible(chromedp.CSS("#token")))
	shots = append(shots, b.Screenshots("1-signin")...)
	b.Do("sign in with a wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "not-it"), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="alert"]`)))
	b.Do("sign in", chromedp.SendKeys(chromedp.CSS("#token"), "browser-token"), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#withheld-table")))
	if n := browsertest.Eval[int](b, "look for the cookie in script", `document.cookie.length`); n != 0 {
		t.Errorf("the session cookie is readable by script (document.cookie has %d bytes)", n)
	}

	b.Do("submit a forged form from another origin", chromedp.Navigate(evil.URL), chromedp.Click(chromedp.CSS("#go")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="alert"]`)))
	if got := b.Text(`p[role="alert"]`); !strings.Contains(got, "Nothing was changed") {
		t.Errorf("forged form answered %q", got)
	}
	shots = append(shots, b.Screenshots("2-forged")...)
	b.Do("still signed in", chromedp.Navigate(ts.URL+"/status"), chromedp.WaitVisible(chromedp.CSS("#withheld-table")))

	clk.t = clk.t.Add(2 * time.Hour)
	b.Do("reload after the session expired", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#token")))
	if got := b.Text(`p[role="status"]`); !strings.Contains(got, "expired") {
		t.Errorf("expired session page says %q", got)
	}
	shots = append(shots, b.Screenshots("3-expired")...)
	t.Logf("screenshots:\n%s", strings.Join(shots, "\n"))
}

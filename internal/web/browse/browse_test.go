package browse

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestPages(t *testing.T) {
	dir := fixtureLibrary(t)
	ts, _ := testServer(t, scanStore(t, "team", dir), nil)
	for _, tc := range []struct {
		path   string
		status int
		want   []string
	}{
		{"/", 200, []string{"release-notes", "code-review", "commit-messages", `<option value="writing"`, `<option value="team"`}},
		{"/?q=release+notes", 200, []string{"Best matches", `href="/skills/team/writing/release-notes"`}},
		{"/?category=review", 200, []string{"code-review", "1 skill with these filters"}},
		{"/?q=zzzzunknown", 200, []string{"No skill matches"}},
		{"/skills/team/writing/release-notes", 200, []string{
			"<h1>Release notes</h1>", "<table>", "pipe-to-shell", "scripts/collect.sh", "sha256:",
			`href="/skills/team/writing/commit-messages"`, `href="/files/team/writing/release-notes/references/style.md"`,
		}},
		{"/files/team/writing/release-notes/references/style.md", 200, []string{"# Style", "Short sentences."}},
		{"/files/team/review/code-review/assets/x.bin", 200, []string{"binary file"}},
		{"/status", 200, []string{"withheld-one", "frontmatter", "skill not served", ">team<"}},
		{"/skills/team/nope", 404, []string{"No skill is served"}},
		{"/files/team/nope/x", 404, []string{"No file is served"}},
		{"/elsewhere", 404, []string{"no page at this address"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := get(t, nil, ts.URL+tc.path)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d\n%s", resp.StatusCode, tc.status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q:\n%s", w, body)
				}
			}
			if strings.Contains(body, dir) {
				t.Errorf("page shows the library's path %s", dir)
			}
			h := resp.Header
			if got := h.Get("Content-Security-Policy"); got != "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
				t.Errorf("CSP = %q", got)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
				t.Errorf("headers: %v", h)
			}
			for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
				if !regexp.MustCompile(`^<script src="/assets/app\.[0-9a-f]{12}\.js" defer>$`).MatchString(m) {
					t.Errorf("page has a script element other than its asset: %s", m)
				}
			}
			if regexp.MustCompile(`(?i)\sstyle=|<style`).MatchString(body) {
				t.Error("page has inline style")
			}
		})
	}
}

func TestAssetsCachedForAYear(t *testing.T) {
	ts, _ := testServer(t, scanStore(t, "team", fixtureLibrary(t)), nil)
	_, page := get(t, nil, ts.URL+"/")
	for _, name := range regexp.MustCompile(`/assets/app\.[0-9a-f]{12}\.(css|js)`).FindAllString(page, -1) {
		resp, body := get(t, nil, ts.URL+name)
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("%s: %d", name, resp.StatusCode)
		}
		if got := resp.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", name, got)
		}
	}
	if resp, _ := get(t, nil, ts.URL+"/assets/app.000000000000.css"); resp.StatusCode != 404 {
		t.Errorf("an unknown asset got %d", resp.StatusCode)
	}
}

// TestHostileContentInert checks the served HTML: nothing of the hostile
// SKILL.md is active, and all of it is shown (escaped). The browser test
// checks the same in the DOM.
func TestHostileContentInert(t *testing.T) {
	ts, _ := testServer(t, scanStore(t, "team", fixtureLibrary(t)), nil)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/skills/team/security/hostile", []string{
			"&lt;script&gt;window.__pwned = &#39;block&#39;&lt;/script&gt;",
			"&lt;img src=x onerror=",
			"a javascript link", // the text stays, the target goes
			`&lt;img src=x onerror=window.__pwned=&#39;name&#39;&gt;.md`,
			"script &lt;b&gt;in&lt;/b&gt; the page",
			"invalid \uFFFD bytes in the body",
		}},
		{"/files/team/security/hostile/SKILL.md", []string{"&lt;script&gt;window.__pwned = &#39;block&#39;&lt;/script&gt;"}},
		{"/files/team/security/hostile/references/%3Cimg%20src=x%20onerror=window.__pwned='name'%3E.md", []string{"a file whose name is markup", "&lt;img src=x onerror"}},
		{"/skills/team/security/huge", []string{"Truncated", "start "}},
		{"/files/team/security/huge/notes.txt", []string{"Truncated", "begin"}},
		{"/files/team/security/huge/bad.txt", []string{"binary file"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := get(t, nil, ts.URL+tc.path)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d\n%.2000s", resp.StatusCode, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q:\n%.4000s", w, body)
				}
			}
			if bad := activeParts(body); len(bad) > 0 {
				t.Errorf("page has active parts: %q", bad)
			}
			if len(body) > 150<<10 {
				t.Errorf("page is %d bytes, over the 150 KB budget", len(body))
			}
		})
	}
}

// TestFirstLoadBudget holds each page's first load (its HTML, the CSS and
// the JavaScript) to 150 KB, uncompressed.
func TestFirstLoadBudget(t *testing.T) {
	store := scanFS(t, "gen", generatedLibrary(t, 5000))
	ts, b := testServer(t, store, nil)
	for _, p := range []string{"/", "/?q=report+data", "/status", "/skills/gen/cat-2/skill-00042"} {
		resp, body := get(t, nil, ts.URL+p)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", p, resp.StatusCode)
		}
		total := len(body) + b.AssetBytes()
		t.Logf("%s: HTML %d B + assets %d B = %d B", p, len(body), b.AssetBytes(), total)
		if total > 150_000 {
			t.Errorf("%s: first load %d bytes, over 150 KB", p, total)
		}
	}
}

func TestSignInSessionsAndCSRF(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ts, _ := testServer(t, scanStore(t, "team", fixtureLibrary(t)), &Options{Tokens: []string{"s3cret-token"}, Now: clk.now, SessionTTL: time.Hour})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}

	// Not signed in: sent to the sign-in page.
	resp, body := get(t, c, ts.URL+"/status")
	if resp.Request.URL.Path != "/signin" || !strings.Contains(body, `name="token"`) {
		t.Fatalf("unsigned /status ended at %s:\n%s", resp.Request.URL, body)
	}
	// A wrong token: 401 and the sign-in page again.
	resp, err := c.PostForm(ts.URL+"/signin", url.Values{"token": {"wrong"}, "next": {"/status"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "not valid") || strings.Contains(string(b), "wrong") {
		t.Fatalf("wrong token: %d\n%s", resp.StatusCode, b)
	}
	// The right token: a session cookie, and on to the page asked for.
	resp, err = c.PostForm(ts.URL+"/signin", url.Values{"token": {"s3cret-token"}, "next": {"/status"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Request.URL.Path != "/status" || !strings.Contains(string(b), "withheld-one") {
		t.Fatalf("after sign-in at %s:\n%s", resp.Request.URL, b)
	}
	u, _ := url.Parse(ts.URL)
	cookies := jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	// The Set-Cookie attributes (the jar does not keep them).
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.PostForm(ts.URL+"/signin", url.Values{"token": {"s3cret-token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(b))
	if csrf == nil {
		t.Fatal("signed-in page has no CSRF field")
	}

	// A forged sign-out without the token: refused, session kept.
	resp, err = c.PostForm(ts.URL+"/signout", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("sign-out without the CSRF token: %d, want 403", resp.StatusCode)
	}
	// Cross-origin: refused whatever the token.
	req, _ := http.NewRequest("POST", ts.URL+"/signout", strings.NewReader(url.Values{"csrf": {csrf[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "Nothing was changed") {
		t.Errorf("cross-origin sign-out: %d\n%s", resp.StatusCode, b)
	}
	if resp, _ := get(t, c, ts.URL+"/status"); resp.Request.URL.Path != "/status" {
		t.Fatalf("the forged posts ended the session")
	}
	// A cookie this server never issued: the sign-in page.
	other, _ := cookiejar.New(nil)
	other.SetCookies(u, []*http.Cookie{{Name: "skills-session", Value: "forged-or-from-another-server"}})
	if resp, _ := get(t, &http.Client{Jar: other}, ts.URL+"/status"); resp.Request.URL.Path != "/signin" {
		t.Errorf("an unknown session cookie reached %s", resp.Request.URL)
	}
	// Expired: the sign-in page, saying so.
	clk.t = clk.t.Add(time.Hour + time.Second)
	resp, body = get(t, c, ts.URL+"/status")
	if resp.Request.URL.Path != "/signin" || !strings.Contains(body, "expired") {
		t.Errorf("expired session ended at %s:\n%s", resp.Request.URL, body)
	}
	// Bearer tokens work without a session (scripts, curl).
	req, _ = http.NewRequest("GET", ts.URL+"/status", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("bearer request: %d", resp.StatusCode)
	}
}

func TestRemotePeerWithoutTokensRefused(t *testing.T) {
	b, err := New(scanStore(t, "team", fixtureLibrary(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "192.0.2.7:4444"
	w := httptest.NewRecorder()
	b.ServeHTTP(w, req)
	if w.Code != 403 || !strings.Contains(w.Body.String(), "--token-file") {
		t.Errorf("remote peer: %d\n%s", w.Code, w.Body)
	}
}

// TestLoadingPageRefreshes: while the first scan runs, every page says so
// and asks again (by script, or a refresh without script), rather than
// showing an empty catalog.
func TestLoadingPageRefreshes(t *testing.T) {
	ts, _ := testServer(t, catalog.NewPendingStore(), nil)
	for _, p := range []string{"/", "/status", "/skills/x/y"} {
		resp, body := get(t, nil, ts.URL+p)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `<noscript><meta http-equiv="refresh" content="1"></noscript>`) ||
			!strings.Contains(body, `data-reload-when-ready="1"`) ||
			!strings.Contains(body, "scanning its libraries") {
			t.Errorf("%s while scanning: %d\n%s", p, resp.StatusCode, body)
		}
	}
}

// TestListingPagesPastTheRankedBound: the listing without a query pages
// through every skill (the ranked search's bound of maxPages does not
// apply to it), and the last page's Next link is absent, not a loop back
// to the same page.
func TestListingPagesPastTheRankedBound(t *testing.T) {
	n := maxPages*PageSize + 30
	ts, _ := testServer(t, scanFS(t, "gen", generatedLibrary(t, n)), nil)
	resp, body := get(t, nil, ts.URL+"/?page="+strconv.Itoa(maxPages-1))
	if resp.StatusCode != 200 || !strings.Contains(body, `href="/?page=`+strconv.Itoa(maxPages)+`"`) {
		t.Fatalf("page %d: status %d, no link to page %d:\n%s", maxPages-1, resp.StatusCode, maxPages, body)
	}
	_, last := get(t, nil, ts.URL+"/?page="+strconv.Itoa(maxPages))
	if want := `start="` + strconv.Itoa(maxPages*PageSize+1) + `"`; !strings.Contains(last, want) {
		t.Errorf("page %d does not start at result %d", maxPages, maxPages*PageSize+1)
	}
	if got := strings.Count(last, `<a class="name"`); got != 30 {
		t.Errorf("page %d lists %d skills, want the last 30", maxPages, got)
	}
	if strings.Contains(last, `rel="next"`) {
		t.Errorf("the last page links to a next one")
	}
	_, huge := get(t, nil, ts.URL+"/?page=99999999999999999")
	if !strings.Contains(huge, `start="`+strconv.Itoa(maxPages*PageSize+1)+`"`) {
		t.Errorf("a page number past the end is not the last page")
	}
}

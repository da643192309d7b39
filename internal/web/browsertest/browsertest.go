// Package browsertest drives a real headless Chromium for the web
// interface's tests, through chromedp.
//
// [New] finds Debian's chromium (or $SKILLS_CHROMIUM), starts it with a
// fresh profile and the flags that keep it off the network
// (--disable-background-networking, --disable-component-update,
// --disable-sync, --disable-quic: without them it keeps trying to reach
// Google's services), and stops it when the test ends. Without a Chromium
// the test is skipped loudly, and fails under CI=true, where .ci/run
// installs one.
//
// Screenshots and, when a test fails, each page's HTML and console log are
// written under [OutDir]: $SKILLS_TEST_OUT/<test name> when that variable
// is set, else the test's temporary folder (gone after the run).
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"
)

// Browser is one headless Chromium with one tab.
type Browser struct {
	t   testing.TB
	ctx context.Context // the tab's; ends when the test does
	out string

	mu      sync.Mutex
	console []string
}

// candidates are where Chromium is looked for, after $SKILLS_CHROMIUM.
var candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}

// findChromium returns the browser's path, or "".
func findChromium() string {
	if p := os.Getenv("SKILLS_CHROMIUM"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// New starts Chromium for t. The browser, its profile and the goroutine
// reading its console end with the test.
func New(t testing.TB) *Browser {
	t.Helper()
	path := findChromium()
	if path == "" {
		msg := "browsertest: no Chromium found (install Debian's chromium, or set SKILLS_CHROMIUM); browser tests SKIPPED"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " — CI must run them (.ci/run installs chromium)")
		}
		fmt.Fprintln(os.Stderr, "WARNING:", msg)
		t.Skip(msg)
	}
	b := &Browser{t: t, out: OutDir(t)}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium keeps its singleton socket folder in TMPDIR: inside the
		// test's own folder, so nothing is left in the system's.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("password-store", "basic"),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	// Start the browser now, so that a failure to start is this call's.
	// The first run must be on the tab's own context, whose end closes
	// the browser (a deadline on it would close it): a watchdog bounds it.
	watchdog := time.AfterFunc(60*time.Second, cancelTab)
	err := chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	watchdog.Stop()
	if err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("browsertest: starting %s: %v", path, err)
	}
	b.ctx = ctx
	var wg sync.WaitGroup
	messages := chromedp.Console(ctx)
	wg.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, fmt.Sprintf("%s %s:%d %s", m.Time.Format(time.RFC3339Nano), m.URL, m.Line+1, m))
			b.mu.Unlock()
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			b.saveFailure("cleanup")
		}
		cancelTab()
		cancelAlloc()
		wg.Wait()
	})
	return b
}

// OutDir returns the folder where t's screenshots and failure reports go:
// $SKILLS_TEST_OUT/<test name> if set, else a temporary folder of t's.
func OutDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("SKILLS_TEST_OUT")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: making the output folder: %v", err)
	}
	return dir
}

// Dir is the folder where the browser's screenshots and reports go
// (OutDir of its test).
func (b *Browser) Dir() string { return b.out }

// Do runs steps in the tab, each run bounded by 30 seconds; on an error it
// saves the page's HTML and the console log under OutDir, and fails the
// test naming what it was doing.
func (b *Browser) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.saveFailure(what)
		b.t.Fatalf("browser: %s: %v (page and console saved in %s)", what, err, b.out)
	}
}

// WaitFor waits until the JavaScript expression cond is true in the
// current page (after a navigation, in the page it led to), at most 30
// seconds. A navigation that replaces the page while cond is evaluated is
// waited out.
func (b *Browser) WaitFor(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithDeadline(b.ctx, deadline)
		err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](cond))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.saveFailure(what)
			b.t.Fatalf("browser: waiting for %s (%s): %v (page and console saved in %s)", what, cond, err, b.out)
		}
		time.Sleep(50 * time.Millisecond) // the poll failed at once (the page was being replaced): try again
	}
}

// Eval evaluates a JavaScript expression in the page and returns its value.
func Eval[T any](b *Browser, what, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.saveFailure(what)
		b.t.Fatalf("browser: %s: evaluating %s: %v", what, expr, err)
	}
	return v
}

// Text returns the text content of the first element matching the CSS
// selector sel, waiting for it to be there.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.saveFailure("reading " + sel)
		b.t.Fatalf("browser: reading %s: %v", sel, err)
	}
	return s
}

// HTML returns the page's current DOM, serialised.
func (b *Browser) HTML() string {
	b.t.Helper()
	return Eval[string](b, "reading the DOM", "document.documentElement.outerHTML")
}

// Screenshots saves full-page screenshots of the current page at 375 and
// 1280 px wide, as NAME-375.png and NAME-1280.png under OutDir, and
// returns their paths. The viewport is 1280 px wide again afterwards.
func (b *Browser) Screenshots(name string) []string {
	b.t.Helper()
	var paths []string
	for _, w := range []int64{375, 1280} {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			cancel()
			b.t.Fatalf("browser: viewport %d: %v", w, err)
		}
		png, err := chromedp.Run(ctx, fullPNG)
		cancel()
		if err != nil {
			b.t.Fatalf("browser: screenshot %s at %d px: %v", name, w, err)
		}
		p := filepath.Join(b.out, fmt.Sprintf("%s-%d.png", name, w))
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// fullPNG captures the whole page, beyond the viewport, as a PNG that
// Chromium compresses for speed rather than size: about half the time of
// its default compression for files about a quarter larger (a
// screenshot is for a person to look at, kept beside the test's report).
func fullPNG(ctx context.Context, t *chromedp.Target) ([]byte, error) {
	yes := true
	r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes, OptimizeForSpeed: &yes,
	})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// ColorScheme makes the page see prefers-color-scheme as scheme ("light"
// or "dark"), as a system set so would.
func (b *Browser) ColorScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		b.t.Fatalf("browser: emulating prefers-color-scheme: %s: %v", scheme, err)
	}
}

// Console returns the console messages so far.
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// saveFailure writes the page's HTML and the console log under OutDir.
func (b *Browser) saveFailure(what string) {
	// The tab's own context may be the one that timed out: read with a
	// fresh deadline on the tab, which lives until cleanup.
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement ? document.documentElement.outerHTML : ''"))
	if err != nil {
		page = fmt.Sprintf("<!-- the page could not be read: %v -->", err)
	}
	slug := regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(what, "-")
	errs := errors.Join(
		os.WriteFile(filepath.Join(b.out, "failure-"+slug+".html"), []byte(page), 0o644),
		os.WriteFile(filepath.Join(b.out, "failure-"+slug+"-console.log"), []byte(strings.Join(b.Console(), "\n")+"\n"), 0o644),
	)
	if errs != nil {
		b.t.Logf("browsertest: saving the failure report: %v", errs)
	}
	b.t.Logf("browsertest: page HTML and console log saved in %s", b.out)
}

// ActiveParts returns what in an HTML document could run or load
// something beyond the site's own assets: script, style, iframe, object,
// embed, base, meta and link elements, event-handler and style attributes,
// and link or source targets that are not http(s), mailto or relative. Text
// that merely spells them (escaped markup) is not among them. own, if
// given, is a pattern of a tag the page may hold (its own asset tags).
func ActiveParts(doc string, own ...*regexp.Regexp) []string {
	var bad []string
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return bad
		case html.StartTagToken, html.SelfClosingTagToken:
			raw := string(z.Raw())
			tok := z.Token()
			allowed := false
			for _, re := range own {
				allowed = allowed || re.MatchString(raw)
			}
			if allowed {
				continue
			}
			switch tok.Data {
			case "script", "style", "iframe", "object", "embed", "base", "link", "frame", "svg", "math":
				bad = append(bad, "<"+tok.Data+">")
			case "meta":
				for _, a := range tok.Attr {
					if a.Key == "http-equiv" && !strings.EqualFold(a.Val, "refresh") {
						bad = append(bad, "<meta http-equiv>")
					}
				}
			}
			for _, a := range tok.Attr {
				k := strings.ToLower(a.Key)
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(k, "on") || k == "style" || k == "srcdoc" {
					bad = append(bad, k+"=")
				}
				if (k == "href" || k == "src" || k == "action" || k == "formaction" || k == "xlink:href") && !safeTarget(v) {
					bad = append(bad, k+"="+v)
				}
			}
		}
	}
}

// safeTarget reports whether a link or source target is relative (no
// scheme before its first '/', '?' or '#') or http(s) or mailto.
func safeTarget(v string) bool {
	scheme, _, found := strings.Cut(v, ":")
	if !found || strings.ContainsAny(scheme, "/?#") {
		return true
	}
	switch scheme {
	case "http", "https", "mailto":
		return true
	}
	return false
}

package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Widths are the viewport widths every page is checked at: a phone and a
// desktop.
var Widths = []int64{375, 1280}

// Violation is one axe-core rule a page breaks.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"` // minor, moderate, serious or critical
	Help   string `json:"help"`
	// Targets are CSS selectors of the elements that break it (the first
	// few).
	Targets []string `json:"targets"`
}

// Report is what [Browser.Check] found on one page.
type Report struct {
	Name string
	// Overflow maps a width to the page's scrollWidth when it is wider
	// than the viewport (a page that scrolls sideways).
	Overflow map[int64]int
	// Violations are axe-core's, in the light scheme at every width and in
	// the dark one at the widest, each rule once.
	Violations  []Violation
	Screenshots []string
}

// Serious returns the violations of impact serious or critical.
func (r Report) Serious() []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			out = append(out, v)
		}
	}
	return out
}

// axe is axe-core's script, read once from node_modules (pinned in
// package-lock.json).
var axe struct {
	once sync.Once
	src  string
	err  error
}

// axeSource returns axe-core's script, or skips the test loudly (fails it
// under CI=true) when node_modules lacks it.
func (b *Browser) axeSource() string {
	b.t.Helper()
	axe.once.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			axe.err = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				axe.err = fmt.Errorf("no go.mod above %s", dir)
				return
			}
			dir = parent
		}
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axe.src, axe.err = string(data), err
	})
	if axe.err != nil {
		msg := "browsertest: axe-core is not installed (run `npm ci` at the repository's root; package-lock.json pins it): " + axe.err.Error() + "; accessibility checks SKIPPED"
		if os.Getenv("CI") == "true" {
			b.t.Fatal(msg + " — CI must run them (.ci/run runs npm ci)")
		}
		fmt.Fprintln(os.Stderr, "WARNING:", msg)
		b.t.Skip(msg)
	}
	return axe.src
}

// colourRules are the axe-core rules whose outcome depends on the page's
// colours alone: all that the dark scheme changes (app.css's dark block
// sets colour properties only), so the only rules run in it.
var colourRules = []string{"color-contrast", "link-in-text-block"}

// runAxe runs axe-core on the current page and returns its violations:
// of the rules given, else of all its default ones. The script is
// injected through the DevTools protocol, which the page's CSP does not
// govern: the page itself stays as served.
func (b *Browser) runAxe(rules ...string) []Violation {
	b.t.Helper()
	src := b.axeSource()
	if !Eval[bool](b, "look for axe-core", "typeof window.axe === 'object'") {
		Eval[any](b, "inject axe-core", src+"\n;true")
	}
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	only, err := json.Marshal(rules)
	if err != nil {
		b.t.Fatal(err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const only = `+string(only)+`;
		const opts = {resultTypes: ["violations"]};
		if (only && only.length) opts.runOnly = {type: "rule", values: only};
		const r = await axe.run(document, opts);
		return JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help,
			targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))})));
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.saveFailure("axe-core")
		b.t.Fatalf("browser: running axe-core: %v", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		b.t.Fatalf("browser: axe-core's answer: %v", err)
	}
	return vs
}

// viewport sets the viewport's width (and a phone's or desktop's height)
// and waits for the layout to follow.
func (b *Browser) viewport(w int64) {
	b.t.Helper()
	b.Do(fmt.Sprintf("set the viewport to %d px", w), chromedp.EmulateViewport(w, 900))
	b.WaitFor(fmt.Sprintf("the layout at %d px", w), fmt.Sprintf("window.innerWidth === %d", w))
}

// Check checks the current page at every width of Widths: it must not be
// wider than the viewport (a page that scrolls sideways) and axe-core
// must find no serious or critical violation, in the light scheme and, at
// the widest, in the dark one (its colour rules: the scheme changes
// nothing else). It saves full-page screenshots
// NAME-WIDTH.png under OutDir, fails the test for what it found, and
// returns the report. The viewport is 1280 px wide and the scheme light
// again afterwards.
func (b *Browser) Check(name string) Report {
	b.t.Helper()
	r := Report{Name: name, Overflow: map[int64]int{}}
	seen := map[string]bool{}
	add := func(vs []Violation) {
		for _, v := range vs {
			if !seen[v.ID] {
				seen[v.ID] = true
				r.Violations = append(r.Violations, v)
			}
		}
	}
	for _, w := range Widths {
		b.viewport(w)
		if sw := Eval[int](b, "measure the page", "document.documentElement.scrollWidth"); sw > int(w) {
			r.Overflow[w] = sw
			b.t.Errorf("%s: the page is %d px wide in a %d px viewport: it scrolls sideways (%s)", name, sw, w,
				Eval[string](b, "find what overflows", widest))
		}
		add(b.runAxe())
		r.Screenshots = append(r.Screenshots, b.screenshot(name, w, ""))
	}
	b.ColorScheme("dark")
	add(b.runAxe(colourRules...))
	r.Screenshots = append(r.Screenshots, b.screenshot(name, Widths[len(Widths)-1], "-dark"))
	b.ColorScheme("light")
	slices.SortFunc(r.Violations, func(x, y Violation) int { return strings.Compare(x.ID, y.ID) })
	for _, v := range r.Serious() {
		b.t.Errorf("%s: axe-core: %s (%s): %s, at %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Targets, " | "))
	}
	return r
}

// widest is a script naming the elements wider than the viewport, the
// deepest first, for a report of what makes a page scroll sideways.
const widest = `(() => {
	const w = window.innerWidth, out = [];
	for (const el of document.body.querySelectorAll("*")) {
		const r = el.getBoundingClientRect();
		if (r.right > w + 1 && !el.closest("[data-scroll-region]")) {
			out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + String(el.className).split(" ").join(".") : "") + " " + Math.round(r.right) + "px");
		}
	}
	return out.reverse().slice(0, 5).join(", ");
})()`

// screenshot saves a full-page screenshot at the current viewport as
// NAME-WIDTH[SUFFIX].png under OutDir and returns its path.
func (b *Browser) screenshot(name string, w int64, suffix string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, fullPNG)
	if err != nil {
		b.t.Fatalf("browser: screenshot %s at %d px: %v", name, w, err)
	}
	p := filepath.Join(b.out, fmt.Sprintf("%s-%d%s.png", name, w, suffix))
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// Keyboard tabs through the current page at a phone's width and checks
// that the keyboard reaches every control (links, buttons, fields, and
// regions that scroll), each visible in the viewport and drawn with a
// focus ring when it has the focus. It fails the test for each one that
// is not, and returns how many stops the page has.
func (b *Browser) Keyboard(name string) int {
	b.t.Helper()
	b.viewport(Widths[0])
	defer b.viewport(Widths[len(Widths)-1])
	want := Eval[[]string](b, "list the controls", `(() => {
		window.__stopPath = el => { const p = []; for (; el && el !== document.body; el = el.parentElement) { p.unshift(el.tagName + ":" + [...el.parentElement.children].indexOf(el)); } return p.join("/"); };
		// Of a group of radio buttons, Tab reaches one (the checked one, else
		// the first); the arrow keys move within the group.
		const radio = el => {
			if (el.type !== "radio" || !el.name) return true;
			const group = [...document.querySelectorAll("input[type=radio]")].filter(r => r.name === el.name && r.form === el.form);
			const checked = group.find(r => r.checked);
			return el === (checked || group[0]);
		};
		// What a closed <details> holds, but its summary, is not shown.
		const shown = el => {
			const d = el.closest("details:not([open])");
			if (d && el !== d.querySelector(":scope > summary")) return false;
			return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
		};
		return [...document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]")]
			.filter(el => el.tabIndex >= 0 && !el.disabled && shown(el) && radio(el))
			.map(window.__stopPath);
	})()`)
	// Start before the page's first element, whatever has the focus (an
	// autofocus field): a stop focused and removed again moves the
	// browser's sequential focus starting point to the top.
	Eval[bool](b, "start from the top", `(() => {
		window.scrollTo(0, 0);
		const s = document.createElement("span");
		s.tabIndex = -1;
		document.body.prepend(s);
		s.focus();
		window.__kbStart = s;
		return true;
	})()`)
	reached := map[string]bool{}
	first, last := "", ""
	stops := 0
	for range 2*len(want) + 50 {
		b.Do("press Tab", chromedp.KeyEvent("\t"))
		var st struct {
			Path    string `json:"path"`
			Desc    string `json:"desc"`
			Ring    bool   `json:"ring"`
			Visible bool   `json:"visible"`
		}
		raw := Eval[string](b, "read the focus", `(() => {
			if (window.__kbStart) { window.__kbStart.remove(); window.__kbStart = null; }
			const el = document.activeElement;
			if (!el || el === document.body) return JSON.stringify({path: ""});
			const s = getComputedStyle(el), r = el.getBoundingClientRect();
			const ring = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2) || (s.boxShadow && s.boxShadow !== "none");
			const visible = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < window.innerHeight && r.left < window.innerWidth;
			return JSON.stringify({path: window.__stopPath(el), desc: el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " " + (el.textContent || el.name || "").trim().slice(0, 40), ring, visible});
		})()`)
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			b.t.Fatal(err)
		}
		if st.Path == "" || st.Path == first {
			break // out of the page (the browser's own UI), or around again
		}
		if st.Path == last {
			continue // a field with parts of its own (a date's day, month, year)
		}
		if first == "" {
			first = st.Path
		}
		last = st.Path
		reached[st.Path] = true
		stops++
		if !st.Ring {
			b.t.Errorf("%s: %s has the keyboard's focus without a visible focus ring", name, st.Desc)
		}
		if !st.Visible {
			b.t.Errorf("%s: %s has the keyboard's focus outside the viewport", name, st.Desc)
		}
	}
	for _, p := range want {
		if !reached[p] {
			b.t.Errorf("%s: the keyboard never reaches the control at %s", name, p)
		}
	}
	return stops
}

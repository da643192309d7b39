// Package markdown renders the Markdown of skills (hostile content) as
// HTML that is safe to put in a page: goldmark (CommonMark with GitHub's
// tables, strikethrough, task lists and autolinks) renders it without
// passing raw HTML through, and bluemonday's UGC policy sanitises what it
// produced, a second, independent line.
//
// Raw HTML in the source is neither dropped nor passed on: it is shown as
// escaped text, so an author sees what they wrote and a reader sees that
// it is there. Links keep only http, https, mailto and relative targets
// (javascript: and data: links lose their target), invalid UTF-8 becomes
// U+FFFD, and a source larger than the cap is cut at a line with a
// "truncated" note.
package markdown

import (
	"bytes"
	"html/template"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// DefaultMaxHTML bounds the HTML [Render] returns (96 KiB), so that a page
// showing a skill stays within the first-load budget.
const DefaultMaxHTML = 96 << 10

// Result is rendered Markdown.
type Result struct {
	// HTML is safe to insert in a page.
	HTML template.HTML
	// Truncated reports that only the first SourceBytes of the source were
	// rendered, to keep HTML within its bound.
	Truncated   bool
	SourceBytes int
}

var (
	once   sync.Once
	md     goldmark.Markdown
	policy *bluemonday.Policy
)

func setup() {
	md = goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		// Not html.WithUnsafe: goldmark omits raw HTML and empties
		// dangerous link targets; rawHTML below shows the HTML as text.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTML{}, 100))),
	)
	policy = bluemonday.UGCPolicy()
	// GFM task lists render disabled checkboxes; keep them, nothing else
	// of <input>.
	policy.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	policy.AllowAttrs("checked", "disabled").OnElements("input")
	policy.AllowElements("input")
	// The class that marks raw HTML shown as text, and nothing else.
	policy.AllowAttrs("class").Matching(regexp.MustCompile(`^raw-html$`)).OnElements("pre", "code")
}

// Render renders src, at most maxHTML bytes of HTML (DefaultMaxHTML if
// zero or negative). It never fails: whatever the bytes, the result is
// well-formed, inert HTML.
func Render(src []byte, maxHTML int) Result {
	once.Do(setup)
	if maxHTML <= 0 {
		maxHTML = DefaultMaxHTML
	}
	if !utf8.Valid(src) {
		src = bytes.ToValidUTF8(src, []byte("\uFFFD"))
	}
	// A source as large as the bound renders to at least as much; start
	// there and halve until the HTML fits.
	n := len(src)
	if n > maxHTML {
		n = maxHTML
	}
	for {
		part, cut := cutAtLine(src, n)
		out := renderOne(part)
		if len(out) <= maxHTML || len(part) == 0 {
			return Result{HTML: template.HTML(out), Truncated: cut, SourceBytes: len(part)}
		}
		n = len(part) / 2
	}
}

func renderOne(src []byte) []byte {
	var buf bytes.Buffer
	if err := md.Convert(src, &buf); err != nil {
		// goldmark fails only when its writer does; a bytes.Buffer does not.
		return []byte(template.HTMLEscapeString(string(src)))
	}
	return policy.SanitizeBytes(buf.Bytes())
}

// cutAtLine returns the first n bytes of src, ended at its last newline
// when there is one in the second half, else at a rune boundary, and
// whether it cut anything.
func cutAtLine(src []byte, n int) ([]byte, bool) {
	if n >= len(src) {
		return src, false
	}
	if i := bytes.LastIndexByte(src[:n], '\n'); i >= n/2 {
		return src[:i+1], true
	}
	for n > 0 && !utf8.RuneStart(src[n]) {
		n--
	}
	return src[:n], true
}

// rawHTML renders raw HTML, block and inline, as escaped text.
type rawHTML struct{}

func (rawHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindRawHTML, renderRawHTML)
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		w.WriteString(`<pre class="raw-html"><code>`)
		for i := range n.Lines().Len() {
			line := n.Lines().At(i)
			template.HTMLEscape(w, line.Value(source))
		}
		return ast.WalkContinue, nil
	}
	if n.HasClosure() {
		template.HTMLEscape(w, n.ClosureLine.Value(source))
	}
	w.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	w.WriteString(`<code class="raw-html">`)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		template.HTMLEscape(w, seg.Value(source))
	}
	w.WriteString("</code>")
	return ast.WalkSkipChildren, nil
}

// Package markdown renders the Markdown of skills (hostile content) as
// HTML that is safe to put in a page: goldmark (CommonMark with GitHub's
// tables, strikethrough, task lists and autolinks) renders it in its safe
// mode, which never passes raw HTML through and escapes every text, and a
// link policy on the parsed document keeps only http, https, mailto and
// relative targets. The page's Content-Security-Policy (package web) is
// the second, independent line: no script runs and nothing loads from
// elsewhere, whatever the HTML says. (An HTML sanitiser after goldmark,
// bluemonday, cost 1.7 ms and 1 MB of initialisers at every start of the
// serving binary, stdio included; see docs/decisions.)
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
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
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
	once sync.Once
	md   goldmark.Markdown
)

func setup() {
	md = goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkPolicy{}, 100))),
		// Not html.WithUnsafe: goldmark omits raw HTML and empties
		// dangerous link targets; rawHTML below shows the HTML as text.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTML{}, 100))),
	)
}

// linkPolicy keeps the target of a link or an image only when it is
// http, https, mailto or relative (goldmark's own check drops javascript:,
// vbscript:, file: and most data: targets; this one is stricter), marks
// links nofollow, and turns an autolink of any other scheme (ftp://…) into
// its text.
type linkPolicy struct{}

func (linkPolicy) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var plain []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if !allowedTarget(l.Destination) {
				l.Destination = nil
			}
			l.SetAttributeString("rel", []byte("nofollow noopener"))
		case *ast.Image:
			if !allowedTarget(l.Destination) {
				l.Destination = nil
			}
		case *ast.AutoLink:
			if l.AutoLinkType == ast.AutoLinkURL && !allowedTarget(l.URL(source)) {
				plain = append(plain, l)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, l := range plain {
		l.Parent().ReplaceChild(l.Parent(), l, ast.NewString(l.Label(source)))
	}
}

// allowedTarget reports whether a link target is relative or has the
// scheme http, https or mailto.
func allowedTarget(dest []byte) bool {
	i := bytes.IndexAny(dest, ":/?#")
	if i < 0 || dest[i] != ':' {
		return true // no scheme: relative
	}
	switch strings.ToLower(string(dest[:i])) {
	case "http", "https", "mailto":
		return true
	}
	return false
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
	return buf.Bytes()
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

// Package browse is the skill browser of `serve --http`: the catalog a
// server serves, seen in a browser. It is a [web.Site] with four pages:
//
//	GET /              search (the catalog's own ranked search), filters by
//	                   library and category, 50 skills a page
//	GET /skills/PATH   a skill: frontmatter, SKILL.md rendered, files with
//	                   sizes and digests, risk labels, runtime dependencies
//	GET /files/PATH    a file of a skill: text shown escaped, binary described
//	GET /status        libraries, counts, and every withheld skill with the
//	                   reason
//
// Pages read the store's current snapshot and show nothing a client of the
// MCP endpoint could not learn: never a library's location on disk. Hostile
// content (a SKILL.md with script, huge lines, invalid UTF-8, a file name
// with markup) renders inert: escaped by html/template, Markdown through
// package markdown, and every page under the site's CSP.
package browse

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
	"github.com/skills-mcp/skills-mcp/internal/web"
	"github.com/skills-mcp/skills-mcp/internal/web/markdown"
)

//go:embed templates
var templateFiles embed.FS

// PageSize is how many skills the search page lists at once.
const PageSize = 50

// maxPages bounds how deep a ranked search pages (PageSize × maxPages hits).
const maxPages = 20

// maxViewBytes bounds the escaped text a file page shows (96 KiB), so that
// the page stays within its first-load budget whatever the file holds.
const maxViewBytes = 96 << 10

// maxWarnings bounds the warnings the status page lists.
const maxWarnings = 2000

// Options configures [New]. A nil *Options means defaults.
type Options struct {
	// Name is the server's name, shown in the header. If empty, "skills-mcp".
	Name string
	// Tokens are the server's bearer tokens: with any, the browser asks for
	// one on a sign-in page and keeps a session; without, it serves
	// loopback peers only.
	Tokens []string
	// SessionTTL is how long a sign-in lasts. If zero, the web default (12 h).
	SessionTTL time.Duration
	// Now is the sessions' clock. If nil, time.Now.
	Now func() time.Time
	// Logger receives the site's records. If nil, do not log.
	Logger *slog.Logger
}

// Browser is the skill browser; an http.Handler.
type Browser struct {
	site  *web.Site
	store *catalog.Store
	log   *slog.Logger

	mu     sync.Mutex
	facets *facets // of the snapshot last asked for
}

// New returns the browser of the catalog in store. The error is a
// programmer's error (a template that does not parse).
func New(store *catalog.Store, opts *Options) (*Browser, error) {
	if opts == nil {
		opts = &Options{}
	}
	b := &Browser{store: store, log: opts.Logger}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	pages, err := fs.Sub(templateFiles, "templates")
	if err != nil {
		return nil, err
	}
	wo := &web.Options{
		Name: opts.Name,
		Nav: []web.Link{
			{ID: "search", Label: "Skills", Path: "/"},
			{ID: "status", Label: "Status", Path: "/status"},
		},
		Pages:      pages,
		Funcs:      funcs,
		SessionTTL: opts.SessionTTL,
		Now:        opts.Now,
		Logger:     opts.Logger,
	}
	if tokens := httpserve.NewTokens(opts.Tokens); tokens.Len() > 0 {
		wo.Verify = func(_ context.Context, tok string) (web.Identity, bool) {
			return web.Identity{Name: "token holder"}, tokens.Match(tok)
		}
	}
	if b.site, err = web.NewSite(wo); err != nil {
		return nil, err
	}
	b.site.Handle("GET /{$}", b.search)
	b.site.Handle("GET /skills/{path...}", b.skill)
	b.site.Handle("GET /files/{path...}", b.file)
	b.site.Handle("GET /status", b.status)
	b.site.Handle("/", func(w http.ResponseWriter, r *http.Request) {
		b.site.NotFound(w, r, "There is no page at this address. The skill browser has the search page, skill pages, file pages and the status page.")
	})
	return b, nil
}

// ServeHTTP serves the browser.
func (b *Browser) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.site.ServeHTTP(w, r) }

// AssetBytes returns the bytes of the CSS and JavaScript every page loads.
func (b *Browser) AssetBytes() int { return b.site.AssetBytes() }

var funcs = map[string]any{
	"skillPath": func(sk *catalog.Skill) string { return "/skills/" + skillsext.EscapePath(sk.Path) },
	"filePath":  func(uri string) string { return "/files/" + strings.TrimPrefix(uri, skillsext.Scheme+"://") },
	"shorten":   web.Shorten,
	"severity":  func(s fmt.Stringer) string { return s.String() },
	"add":       func(a, b int) int { return a + b },
}

// snapshot returns the current snapshot, or renders the loading page and
// returns nil while the first scan runs.
func (b *Browser) snapshot(w http.ResponseWriter, r *http.Request) *catalog.Snapshot {
	snap := b.store.Snapshot()
	if snap.Pending() {
		b.site.Render(w, r, http.StatusServiceUnavailable, web.Page{Template: "loading.html", Title: "Loading", Refresh: 1})
		return nil
	}
	return snap
}

// facets are the filter choices of one snapshot.
type facets struct {
	snap       *catalog.Snapshot
	libraries  []string
	categories []string
}

// facetsOf returns snap's libraries and categories, computed once per
// snapshot.
func (b *Browser) facetsOf(snap *catalog.Snapshot) *facets {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.facets != nil && b.facets.snap == snap {
		return b.facets
	}
	f := &facets{snap: snap}
	libs, cats := map[string]bool{}, map[string]bool{}
	for _, sk := range snap.Skills() {
		libs[sk.Library] = true
		cats[sk.Category] = true
	}
	for l := range libs {
		f.libraries = append(f.libraries, l)
	}
	for c := range cats {
		f.categories = append(f.categories, c)
	}
	slices.Sort(f.libraries)
	slices.Sort(f.categories)
	b.facets = f
	return f
}

// searchData is the search page's data.
type searchData struct {
	Query, Library, Category string
	Libraries, Categories    []string
	Results                  []result
	Total                    int // listed skills matching the filters, without a query
	Ranked                   bool
	Page                     int
	Prev, Next               string // links, "" when none
	First                    int    // 1-based number of the first result
}

type result struct {
	Skill   *catalog.Skill
	Flags   []string
	Matched []string
}

func (b *Browser) search(w http.ResponseWriter, r *http.Request) {
	snap := b.snapshot(w, r)
	if snap == nil {
		return
	}
	q := r.URL.Query()
	d := searchData{
		Query:    strings.TrimSpace(q.Get("q")),
		Library:  q.Get("library"),
		Category: q.Get("category"),
	}
	f := b.facetsOf(snap)
	d.Libraries, d.Categories = f.libraries, f.categories
	d.Page, _ = strconv.Atoi(q.Get("page"))
	last := maxPages - 1 // a ranked search pages this deep at most
	if d.Query == "" {
		last = len(snap.Skills()) / PageSize // the listing pages through every skill
	}
	d.Page = max(0, min(d.Page, last))
	from := d.Page * PageSize
	more := false
	if d.Query != "" {
		d.Ranked = true
		hits := snap.Search(d.Query, d.Library, d.Category, from+PageSize+1)
		more = len(hits) > from+PageSize && d.Page < maxPages-1
		for _, h := range hits[min(from, len(hits)):min(from+PageSize, len(hits))] {
			d.Results = append(d.Results, result{Skill: h.Skill, Flags: h.Skill.RiskFlags(), Matched: h.Matched})
		}
	} else {
		for _, sk := range snap.Skills() {
			if (d.Library != "" && sk.Library != d.Library) || (d.Category != "" && sk.Category != d.Category) {
				continue
			}
			if d.Total >= from && d.Total < from+PageSize {
				d.Results = append(d.Results, result{Skill: sk, Flags: sk.RiskFlags()})
			}
			d.Total++
		}
		more = d.Total > from+PageSize
	}
	d.First = from + 1
	link := func(page int) string {
		v := q
		v.Del("page")
		if page > 0 {
			v.Set("page", strconv.Itoa(page))
		}
		if s := v.Encode(); s != "" {
			return "/?" + s
		}
		return "/"
	}
	if d.Page > 0 {
		d.Prev = link(d.Page - 1)
	}
	if more {
		d.Next = link(d.Page + 1)
	}
	title := "Skills"
	if d.Query != "" {
		title = "Search: " + web.Shorten(d.Query, 60)
	}
	b.site.Render(w, r, http.StatusOK, web.Page{Template: "search.html", Title: title, Nav: "search", Data: d})
}

// skillData is a skill page's data.
type skillData struct {
	Skill       *catalog.Skill
	Frontmatter []field
	Body        markdown.Result
	BodyErr     string
	Files       []fileRow
	Flags       []string
	Required    []dep
	Optional    []dep
	Closure     []dep
	SourceURI   string
}

type field struct{ Key, Value string }

type fileRow struct {
	Rel  string
	File *catalog.File
}

// dep is a dependency named by a skill, and the skill it resolves to.
type dep struct {
	Name  string
	Skill *catalog.Skill
}

func (b *Browser) skill(w http.ResponseWriter, r *http.Request) {
	snap := b.snapshot(w, r)
	if snap == nil {
		return
	}
	path := r.PathValue("path")
	sk, ok := snap.Skill(skillsext.SkillURI(path))
	if !ok {
		b.site.NotFound(w, r, "No skill is served at this path. It may have been removed or withheld since the page linking here was loaded; the status page lists withheld skills.")
		return
	}
	d := skillData{Skill: sk, Frontmatter: frontmatter(sk.Frontmatter), Flags: sk.RiskFlags(), SourceURI: sk.URI}
	if body, err := sk.Body(); err != nil {
		b.log.Warn("SKILL.md not read", "skill", sk.Path, "err", err)
		d.BodyErr = "SKILL.md could not be read: it changed on disk since the catalog was built. The next rescan picks up the change."
		if !errors.Is(err, catalog.ErrChanged) {
			d.BodyErr = "SKILL.md could not be read; the server's log says why."
		}
	} else {
		d.Body = markdown.Render([]byte(body), 0)
	}
	root := skillsext.RootURI(sk.Path)
	for _, f := range sk.Files {
		rel, _ := skillsext.RelPath(f.URI, root)
		d.Files = append(d.Files, fileRow{Rel: rel, File: f})
	}
	resolve := func(names []string) []dep {
		var out []dep
		for _, n := range names {
			s, _ := snap.Resolve(n)
			out = append(out, dep{Name: n, Skill: s})
		}
		return out
	}
	d.Required = resolve(sk.Dependencies.Required)
	d.Optional = resolve(sk.Dependencies.Optional)
	d.Closure = resolve(sk.Closure)
	b.site.Render(w, r, http.StatusOK, web.Page{Template: "skill.html", Title: sk.Name, Nav: "search", Data: d})
}

// maxFieldBytes bounds one frontmatter value on the page.
const maxFieldBytes = 2048

// frontmatter lists the frontmatter's top-level keys in source order, each
// value as text (strings as they are, the rest as compact JSON).
func frontmatter(raw json.RawMessage) []field {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		val := string(v)
		var s string
		if json.Unmarshal(v, &s) == nil {
			val = s
		}
		if cut, ok := web.CutEscaped(val, maxFieldBytes); ok {
			val = cut + "… (cut)"
		}
		out = append(out, field{Key: key, Value: val})
	}
	return out
}

// fileData is a file page's data.
type fileData struct {
	File      *catalog.File
	Skill     *catalog.Skill
	Rel       string
	Text      string
	Truncated bool
	Shown     int
	// Invalid reports text that is not valid UTF-8, shown with each
	// invalid byte as U+FFFD.
	Invalid bool
	// Binary reports content not shown: neither UTF-8 nor meant as text.
	Binary bool
	Err    string
}

func (b *Browser) file(w http.ResponseWriter, r *http.Request) {
	snap := b.snapshot(w, r)
	if snap == nil {
		return
	}
	uri := skillsext.Scheme + "://" + skillsext.EscapePath(r.PathValue("path"))
	f, ok := snap.File(uri)
	if !ok {
		b.site.NotFound(w, r, "No file is served at this path. It may have been removed since the page linking here was loaded.")
		return
	}
	d := fileData{File: f, Skill: f.Skill}
	rel, _ := skillsext.RelPath(f.URI, skillsext.RootURI(f.Skill.Path))
	d.Rel = rel
	d.Binary = !f.Text && !textLike(f)
	if !d.Binary {
		data, err := f.ReadFile()
		switch {
		case errors.Is(err, catalog.ErrChanged):
			d.Err = "The file changed on disk since the catalog was built; the next rescan picks up the change."
		case err != nil:
			b.log.Warn("file not read", "uri", f.URI, "err", err)
			d.Err = "The file could not be read; the server's log says why."
		case !f.Text && bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0:
			d.Binary = true // after all
		default:
			d.Text, d.Truncated = web.CutEscaped(string(data), maxViewBytes)
			d.Shown = len(d.Text)
			if !f.Text {
				d.Invalid = true
				d.Text = validUTF8(d.Text)
			}
		}
	}
	b.site.Render(w, r, http.StatusOK, web.Page{Template: "file.html", Title: rel + " · " + f.Skill.Name, Nav: "search", Data: d})
}

// statusData is the status page's data.
type statusData struct {
	Stats     catalog.Stats
	Libraries []library
	Withheld  []catalog.Warning
	Other     []catalog.Warning
	Cut       int // warnings not listed
	ScannedAt string
}

// library is what the status page shows of a library: never its Origin.
type library struct {
	Namespace                       string
	Kind                            string
	Info                            catalog.Info
	Skills, Hidden, Withheld, Files int
	Bytes                           int64
}

func (b *Browser) status(w http.ResponseWriter, r *http.Request) {
	snap := b.snapshot(w, r)
	if snap == nil {
		return
	}
	st := snap.Stats()
	d := statusData{Stats: st, ScannedAt: snap.ScannedAt.UTC().Format(time.RFC3339)}
	for _, l := range st.Libraries {
		d.Libraries = append(d.Libraries, library{Namespace: l.Namespace, Kind: l.Kind, Info: l.Info,
			Skills: l.Skills, Hidden: l.Hidden, Withheld: l.Withheld, Files: l.Files, Bytes: l.Bytes})
	}
	ws := slices.Clone(snap.Warnings())
	slices.SortStableFunc(ws, func(a, b catalog.Warning) int {
		return cmp.Or(cmp.Compare(a.Library, b.Library), cmp.Compare(a.Path, b.Path))
	})
	for i, wa := range ws {
		if i >= maxWarnings {
			d.Cut = len(ws) - maxWarnings
			break
		}
		if withholds(wa) {
			d.Withheld = append(d.Withheld, wa)
		} else {
			d.Other = append(d.Other, wa)
		}
	}
	b.site.Render(w, r, http.StatusOK, web.Page{Template: "status.html", Title: "Status", Nav: "status", Data: d})
}

// withholds reports whether a warning is about a skill the scan withheld
// (the scan's messages say "not served" for each), rather than about a file
// or folder it skipped within a served skill.
func withholds(w catalog.Warning) bool {
	switch w.Reason {
	case "symlink", "skipped-files", "unreadable", "special-file":
		return strings.Contains(w.Message, "skill not served") || strings.Contains(w.Message, "not served as a skill")
	}
	return strings.Contains(w.Message, "not served")
}

// textLike reports whether a file the catalog serves as binary (it is not
// valid UTF-8) is meant as text, so that the viewer shows it: a SKILL.md or
// a file of a text type. Its content decides in the end (no NUL byte).
func textLike(f *catalog.File) bool {
	return strings.HasSuffix(f.URI, "/"+skillsext.SkillFile) || strings.HasPrefix(f.MIMEType, "text/")
}

// validUTF8 replaces each invalid byte of s with U+FFFD, one for one, so
// that a reader sees where every bad byte was.
func validUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

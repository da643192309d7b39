// Package web is the foundation of skills-mcp's web interface: the pages
// of `serve --http` (package browse) and, later, the hub's administration
// are built on it.
//
// A [Site] renders server-side html/template pages inside one layout,
// serves its assets (CSS and the little JavaScript there is, embedded, under
// content-hashed names cached for a year), and puts every request through
// the same defences:
//
//   - a strict Content-Security-Policy ([CSP]): no inline script or style,
//     nothing loaded from elsewhere, no framing;
//   - CSRF: Go's [http.CrossOriginProtection] refuses unsafe requests a
//     browser marks cross-origin (Sec-Fetch-Site, else Origin against
//     Host), and every form of a signed-in session carries a per-session
//     token ([CSRFField]) that a POST must echo, for the requests that
//     protection lets through because they carry neither header;
//   - authentication: with [Options.Verify] set, a sign-in page takes a
//     token and keeps a session cookie (HttpOnly, SameSite=Strict, Secure
//     on TLS); without it, only loopback peers are served.
//
// Pages are plain: every one works without JavaScript, is usable by
// keyboard, labels its controls, reads at 375 and 1280 px wide and follows
// the system's light or dark scheme.
package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// CSP is the Content-Security-Policy of every page: resources from the
// site itself only (images also as data: URLs; script may fetch only from
// the site, as the hub's progress pages poll it), no inline script or
// style, forms posting only to the site, no framing, no <base>.
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

//go:embed templates
var siteTemplates embed.FS

// Link is one entry of the site's navigation.
type Link struct {
	// ID names the entry for [Page.Nav], which marks it current.
	ID    string
	Label string
	Path  string
}

// Identity is who a verified token names.
type Identity struct {
	// Name is shown in the header ("signed in as …"); never the token.
	Name string
	// Scopes are what the token may do; the site keeps them for the
	// handlers (the hub checks them per action).
	Scopes []string
	// Credential is the token the session acts with, for pages that call
	// an API on the user's behalf (the hub's administration calls its admin
	// API with it). It lives in the session's memory only: no page, log or
	// cookie carries it.
	Credential string
}

// Options configures [NewSite]. A nil *Options means defaults.
type Options struct {
	// Name is the site's name in the header and titles. If empty, "skills-mcp".
	Name string
	// Nav is the navigation, in order.
	Nav []Link
	// Pages holds the caller's page templates (*.html at its root), each
	// defining "content" (and optionally "head"), executed inside the
	// layout with a [View]; *.tmpl files at its root are partials, parsed
	// into every page, that define the components pages share. May be nil.
	Pages fs.FS
	// Funcs are extra template functions for Pages.
	Funcs template.FuncMap

	// Verify checks a token given on the sign-in page (or as a bearer
	// token) and says who it names; ok is false for a token it does not
	// accept. It must run in time independent of the token's validity
	// where that matters (httpserve.Tokens.Match does). If nil, there is no
	// sign-in: only requests from loopback peers are served, as the MCP
	// endpoint without tokens serves only loopback host names.
	Verify func(ctx context.Context, token string) (id Identity, ok bool)
	// SessionTTL is how long a session lasts from sign-in. If zero, 12 hours.
	SessionTTL time.Duration
	// MaxSessions bounds the sessions kept; past it the oldest is ended.
	// If zero, 10,000.
	MaxSessions int
	// Now is the clock of session expiry. If nil, time.Now.
	Now func() time.Time
	// Logger receives a record per sign-in, sign-out and refused request
	// (never a token or a session id). If nil, do not log.
	Logger *slog.Logger
}

// Site is a web interface: its routes, layout, assets and defences. Build
// it with [NewSite], add pages with [Site.Handle], and serve it as an
// http.Handler (httpserve.Options.UI). It is safe for concurrent use once
// serving; Handle must not be called after that.
type Site struct {
	name     string
	nav      []Link
	verify   func(ctx context.Context, token string) (Identity, bool)
	log      *slog.Logger
	assets   *assets
	pages    map[string]*template.Template
	mux      *http.ServeMux
	cop      *http.CrossOriginProtection
	sessions *sessions
	handler  http.Handler
	bufs     sync.Pool
}

// NewSite returns a site with its own routes (assets, sign-in, sign-out)
// and the caller's page templates parsed. An error is a programmer's
// error: a template that does not parse.
func NewSite(opts *Options) (*Site, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Site{
		name:   opts.Name,
		nav:    opts.Nav,
		verify: opts.Verify,
		log:    opts.Logger,
		mux:    http.NewServeMux(),
		cop:    http.NewCrossOriginProtection(),
		pages:  map[string]*template.Template{},
	}
	if s.name == "" {
		s.name = "skills-mcp"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.bufs.New = func() any { return new(bytes.Buffer) }
	ttl := opts.SessionTTL
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	maxSessions := opts.MaxSessions
	if maxSessions <= 0 {
		maxSessions = 10_000
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s.sessions = newSessions(ttl, maxSessions, now)
	var err error
	if s.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"asset": s.assets.path,
		"bytes": FormatBytes,
		"query": queryString,
	}
	for k, v := range opts.Funcs {
		funcs[k] = v
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(siteTemplates, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("web: parsing the layout: %w", err)
	}
	if opts.Pages != nil {
		// The caller's partials (*.tmpl) define components its pages share.
		partials, err := fs.Glob(opts.Pages, "*.tmpl")
		if err != nil {
			return nil, err
		}
		if len(partials) > 0 {
			if base, err = base.ParseFS(opts.Pages, partials...); err != nil {
				return nil, fmt.Errorf("web: parsing partials: %w", err)
			}
		}
	}
	add := func(fsys fs.FS, pattern string) error {
		names, err := fs.Glob(fsys, pattern)
		if err != nil {
			return err
		}
		for _, n := range names {
			t, err := template.Must(base.Clone()).ParseFS(fsys, n)
			if err != nil {
				return fmt.Errorf("web: parsing page %s: %w", n, err)
			}
			s.pages[path.Base(n)] = t
		}
		return nil
	}
	if err := add(siteTemplates, "templates/page-*.html"); err != nil {
		return nil, err
	}
	if opts.Pages != nil {
		if err := add(opts.Pages, "*.html"); err != nil {
			return nil, err
		}
	}
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Info("cross-origin request refused", "method", r.Method, "path", r.URL.Path,
			"origin", r.Header.Get("Origin"), "fetchSite", r.Header.Get("Sec-Fetch-Site"))
		s.Error(w, r, http.StatusForbidden, "Cross-origin request refused",
			"This form was sent from another site. Nothing was changed. Open this site's own page and submit the form there.")
	}))
	s.mux.HandleFunc("GET "+AssetPrefix, s.assets.serve)
	s.mux.HandleFunc("GET /signin", s.serveSignIn)
	s.mux.HandleFunc("POST /signin", s.signIn)
	s.mux.HandleFunc("POST /signout", s.signOut)
	s.handler = s.headers(s.cop.Handler(s.authenticate(s.checkCSRF(s.mux))))
	return s, nil
}

// Handle registers a page handler for pattern (a ServeMux pattern with a
// method, such as "GET /status"). Every request reaches it signed in (or
// from a loopback peer when there is no sign-in) and, for unsafe methods,
// with its CSRF token checked.
func (s *Site) Handle(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

// ServeHTTP serves the site.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Page is what a handler asks [Site.Render] to show.
type Page struct {
	// Template is the page template's file name ("search.html").
	Template string
	// Title is the page's title, before the site's name.
	Title string
	// Nav is the ID of the current navigation entry, if any.
	Nav string
	// Refresh, if positive, marks a page shown while the site is not ready
	// (a first scan, answered 503): its script asks again every that many
	// seconds and reloads once the answer is another, and without script
	// the page reloads itself that often. A timed reload alone would
	// interrupt someone reading the page with a screen reader.
	Refresh int
	// Data is the page's own data, .Data in its template.
	Data any
}

// View is what the layout and a page template are executed with.
type View struct {
	Page
	SiteName string
	NavLinks []Link
	// Session is the signed-in session, nil without sign-in.
	Session *Session
	// SignIn reports whether the site has a sign-in.
	SignIn bool
	// CSRF is the session's form token ("" without a session); forms put
	// it in a hidden field named [CSRFField].
	CSRF string
	// Path is the request's path, for links back to the page.
	Path string
}

// CSRFField is the form field every unsafe request of a session carries
// (or, for a multipart form, the query parameter of its action URL; or the
// X-CSRF-Token header).
const CSRFField = "csrf"

// Render writes page with status. The page is executed into a buffer
// first, so that a template error is a clean 500 page, never half a page.
func (s *Site) Render(w http.ResponseWriter, r *http.Request, status int, page Page) {
	t, ok := s.pages[page.Template]
	if !ok {
		s.log.Error("no page template", "template", page.Template)
		s.Error(w, r, http.StatusInternalServerError, "Page missing", "This page has no template; the server's log says which.")
		return
	}
	v := View{Page: page, SiteName: s.name, NavLinks: s.nav, SignIn: s.verify != nil, Path: r.URL.Path}
	if sess := SessionFrom(r.Context()); sess != nil {
		v.Session = sess
		v.CSRF = sess.csrf
	}
	buf := s.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer s.bufs.Put(buf)
	if err := t.ExecuteTemplate(buf, "layout.html", v); err != nil {
		s.log.Error("rendering page", "template", page.Template, "err", err)
		if page.Template != "page-error.html" {
			s.Error(w, r, http.StatusInternalServerError, "Page not rendered", "The page could not be rendered; the server's log says why.")
			return
		}
		http.Error(w, "page not rendered; see the server log", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// errorData is the data of the error page.
type errorData struct {
	Status  int
	Heading string
	Message string
	SignIn  string // a sign-in link to offer, if any
}

// Error renders the error page: heading and message say what happened and
// what to do.
func (s *Site) Error(w http.ResponseWriter, r *http.Request, status int, heading, message string) {
	s.Render(w, r, status, Page{Template: "page-error.html", Title: heading, Data: errorData{Status: status, Heading: heading, Message: message}})
}

// NotFound renders the 404 page.
func (s *Site) NotFound(w http.ResponseWriter, r *http.Request, what string) {
	s.Error(w, r, http.StatusNotFound, "Not found", what)
}

// headers sets what every answer carries: the CSP, no sniffing, no
// referrer, no framing, and no caching of pages (assets set their own).
func (s *Site) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, AssetPrefix) {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate lets a request through when it is signed in (a session
// cookie, or a bearer token Verify accepts), or when the site has no sign-in
// and the peer is loopback. Assets and the sign-in page are open: they
// reveal nothing.
func (s *Site) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := strings.HasPrefix(r.URL.Path, AssetPrefix) || r.URL.Path == "/signin"
		if s.verify == nil {
			if !httpserve.IsLoopback(r.RemoteAddr) {
				s.log.Info("request from a remote peer refused; no sign-in is configured", "addr", r.RemoteAddr, "path", r.URL.Path)
				s.Error(w, r, http.StatusForbidden, "Only this machine may use this page",
					"The server was started without tokens, so its web interface answers only requests from this machine. Start it with --token-file to sign in from elsewhere.")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		sess, state := s.sessions.fromRequest(r)
		if sess == nil {
			if tok, ok := bearer(r); ok {
				if id, ok := s.verify(r.Context(), tok); ok {
					sess = &Session{Identity: id}
				}
			}
		}
		if sess != nil {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
			return
		}
		if open {
			next.ServeHTTP(w, r)
			return
		}
		if state == sessionExpired {
			clearCookie(w, r)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.Error(w, r, http.StatusUnauthorized, "Signed out",
				"Your session has ended, so nothing was changed. Sign in again, then repeat what you did.")
			return
		}
		q := url.Values{"next": {r.URL.RequestURI()}}
		if state == sessionExpired {
			q.Set("expired", "1")
		}
		http.Redirect(w, r, "/signin?"+q.Encode(), http.StatusSeeOther)
	})
}

// checkCSRF refuses an unsafe request of a signed-in session whose form
// does not carry the session's token. CrossOriginProtection has refused
// what browsers mark cross-origin; this catches the requests that carry
// neither Sec-Fetch-Site nor Origin (older browsers, some proxies and
// extensions), which it lets through.
func (s *Site) checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		sess := SessionFrom(r.Context())
		if sess == nil || sess.csrf == "" {
			// No session (the sign-in form, or a loopback site without
			// sign-in, or a bearer token, which no other site can send):
			// CrossOriginProtection is the defence.
			next.ServeHTTP(w, r)
			return
		}
		if !sess.checkCSRF(csrfToken(w, r)) {
			s.log.Info("form without its session's CSRF token refused", "method", r.Method, "path", r.URL.Path)
			s.Error(w, r, http.StatusForbidden, "Form refused",
				"This form did not carry this session's token (it was forged, or comes from an older page). Nothing was changed. Reload the page and submit it again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// csrfToken returns the form token a request carries: in the X-CSRF-Token
// header (script), in the query (the action URL of a multipart form, whose
// body is an upload the check must not read), or in a urlencoded body of
// at most maxFormBytes.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if tok := r.Header.Get("X-CSRF-Token"); tok != "" {
		return tok
	}
	if tok := r.URL.Query().Get(CSRFField); tok != "" {
		return tok
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return ""
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	return r.PostFormValue(CSRFField)
}

// maxFormBytes bounds a urlencoded form body (the token check parses it).
const maxFormBytes = 64 << 10

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// signInData is the sign-in page's data.
type signInData struct {
	Next    string
	Expired bool
	Failed  bool
}

func (s *Site) serveSignIn(w http.ResponseWriter, r *http.Request) {
	if s.verify == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	d := signInData{Next: localPath(r.URL.Query().Get("next")), Expired: r.URL.Query().Get("expired") != ""}
	s.Render(w, r, http.StatusOK, Page{Template: "page-signin.html", Title: "Sign in", Data: d})
}

func (s *Site) signIn(w http.ResponseWriter, r *http.Request) {
	if s.verify == nil {
		s.NotFound(w, r, "This server has no sign-in: it serves this machine only.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	next := localPath(r.PostFormValue("next"))
	id, ok := s.verify(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.log.Info("sign-in refused: token not valid", "addr", r.RemoteAddr)
		s.Render(w, r, http.StatusUnauthorized, Page{Template: "page-signin.html", Title: "Sign in",
			Data: signInData{Next: next, Failed: true}})
		return
	}
	_, key := s.sessions.create(id)
	setCookie(w, r, key)
	s.log.Info("signed in", "who", id.Name, "addr", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Site) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName(r)); err == nil {
		s.sessions.end(c.Value)
	}
	clearCookie(w, r)
	s.log.Info("signed out", "addr", r.RemoteAddr)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// localPath returns p when it is a path on this site, else "/": the
// sign-in's "next" must never send the browser elsewhere.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n\t") {
		return "/"
	}
	if u, err := url.Parse(p); err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return p
}

// queryString encodes key/value pairs (skipping empty values) as a query
// string with its "?", or "" for none: templates build filter links with it.
func queryString(kv ...string) (string, error) {
	if len(kv)%2 != 0 {
		return "", errors.New("web: query takes key/value pairs")
	}
	q := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return "", nil
	}
	return "?" + q.Encode(), nil
}

// Package hubadmin is the skill hub's administration in the browser, the
// pages `skills-hub serve` answers at /: the catalog (search, filter,
// refresh, install), packages and their versions (files, origin,
// requirements, inspection findings, approval, uninstall), projects
// (create, duplicate, pause, delete, bindings with the "+" flow, the
// endpoint and a client configuration to copy, project tokens, the
// well-known index on or off and its capabilities issued and revoked),
// admin tokens and the audit log.
//
// Every action is a call of the admin API (package api), made in process
// through its own handler with the signed-in token as the bearer: the API
// checks the token and its scope, validates the input, bounds the body and
// writes the audit entry, exactly as for any other client. So nothing the
// pages do is impossible through the API, the scopes are the API's, and a
// token too small for an action gets the API's refusal on a clear page,
// with nothing changed.
//
// Long work (an install, a catalog refresh) runs as a task owned by the
// Admin: its page shows the progress, polled by a few lines of script, or
// refreshed every two seconds without script.
package hubadmin

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/web"
)

//go:embed templates
var templateFiles embed.FS

// Options configures [New].
type Options struct {
	// API is the admin API's handler (api.API), which every action calls.
	// Required.
	API http.Handler
	// Verify checks a token given at sign-in, as the API will: the hub's
	// VerifyToken. Only admin tokens sign in. Required.
	Verify func(ctx context.Context, secret string) (store.Token, error)
	// BaseURL is the hub's external URL (scheme://host[:port]), the start
	// of the endpoint URLs the project pages show. If empty, the URL the
	// browser used.
	BaseURL string
	// Name is the site's name in the header. If empty, "skills-hub".
	Name string
	// SessionTTL is how long a sign-in lasts. If zero, the web default.
	SessionTTL time.Duration
	// Now is the sessions' clock. If nil, time.Now.
	Now func() time.Time
	// Logger receives the site's records. If nil, do not log.
	Logger *slog.Logger
}

// Admin is the hub's administration site, an http.Handler. Close ends the
// tasks it runs.
type Admin struct {
	site    *web.Site
	api     http.Handler
	baseURL string
	log     *slog.Logger
	tasks   *tasks
}

// New builds the administration site. The error is a programmer's error
// (a missing option, a template that does not parse).
func New(opts Options) (*Admin, error) {
	if opts.API == nil || opts.Verify == nil {
		return nil, errors.New("hub admin pages: API and Verify are required")
	}
	a := &Admin{api: opts.API, baseURL: opts.BaseURL, log: opts.Logger, tasks: newTasks()}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	name := opts.Name
	if name == "" {
		name = "skills-hub"
	}
	pages, err := fs.Sub(templateFiles, "templates")
	if err != nil {
		return nil, err
	}
	verify := opts.Verify
	a.site, err = web.NewSite(&web.Options{
		Name: name,
		Nav: []web.Link{
			{ID: "dashboard", Label: "Dashboard", Path: "/"},
			{ID: "catalog", Label: "Catalog", Path: "/catalog"},
			{ID: "packages", Label: "Skills", Path: "/packages"},
			{ID: "projects", Label: "Projects", Path: "/projects"},
			{ID: "jobs", Label: "Jobs", Path: "/jobs"},
			{ID: "tokens", Label: "Tokens", Path: "/tokens"},
			{ID: "remnants", Label: "Remnants", Path: "/remnants"},
			{ID: "audit", Label: "Audit log", Path: "/audit"},
		},
		Pages: pages,
		Funcs: funcs,
		Verify: func(ctx context.Context, secret string) (web.Identity, bool) {
			tok, err := verify(ctx, secret)
			if err != nil || tok.Kind != store.AdminToken {
				return web.Identity{}, false
			}
			who := tok.Name
			if who == "" {
				who = "token " + tok.ID
			}
			return web.Identity{Name: who + " (" + string(tok.Scope) + ")", Scopes: []string{string(tok.Scope)}, Credential: secret}, true
		},
		SessionTTL: opts.SessionTTL,
		Now:        opts.Now,
		Logger:     opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	a.routes()
	return a, nil
}

// ServeHTTP serves the pages.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.site.ServeHTTP(w, r) }

// AssetBytes returns the bytes of the CSS and JavaScript every page loads.
func (a *Admin) AssetBytes() int { return a.site.AssetBytes() }

// Close cancels the tasks still running and waits for them to end.
func (a *Admin) Close() error {
	a.tasks.close()
	return nil
}

// client returns the API client of the request's session.
func (a *Admin) client(r *http.Request) client {
	c := client{api: a.api}
	if s := web.SessionFrom(r.Context()); s != nil {
		c.token = s.Identity.Credential
	}
	return c
}

// owner names the request's credential for the tasks it starts, without
// keeping the credential itself.
func owner(r *http.Request) string {
	s := web.SessionFrom(r.Context())
	if s == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(s.Identity.Credential))
	return hex.EncodeToString(sum[:16])
}

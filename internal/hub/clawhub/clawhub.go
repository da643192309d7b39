// Package clawhub is a ClawHub-compatible registry over the hub's
// installed packages, so that the clawhub command-line client (login
// --token, search, inspect, install, update, skill publish) works against a
// hub unmodified: `clawhub --registry http://HUB …`.
//
// # Routes
//
//	GET  /.well-known/clawhub.json            discovery: {"apiBase": the hub's origin}
//	GET  /api/v1/whoami                       the token's user
//	GET  /api/v1/search?q=&limit=             packages by name and description
//	GET  /api/v1/skills?prefix=&limit=        packages by name prefix
//	GET  /api/v1/skills/{slug}                a package and its latest version
//	GET  /api/v1/skills/{slug}/versions       its versions, newest first
//	GET  /api/v1/skills/{slug}/versions/{v}   one version and its files
//	GET  /api/v1/skills/{slug}/file?path=&version=   one file's bytes
//	GET  /api/v1/resolve?slug=&hash=          the version whose files have that fingerprint
//	GET  /api/v1/download?slug=&version=      a version as a ZIP
//	POST /api/v1/skills/-/upload-url          a ticket to upload one file
//	POST /api/v1/skills/-/upload/{ticket}     the file's bytes
//	POST /api/v1/skills                       publish the uploaded files as a version
//
// Every other /api/v1/ route answers 404 (an unknown one) or 501 (one
// ClawHub has and this registry does not: stars, transfers, reports,
// moderation, packages, …), each with a sentence saying so, in ClawHub's
// error shape: a plain-text body the client shows as it is.
//
// # Mapping
//
// A ClawHub slug is a hub package name, and every package has one owner,
// the handle "hub". Tokens are the hub's admin tokens: read for every GET,
// write for the upload and publish routes; a project token is refused.
// A version's semantic version is the one its publisher gave
// (Origin.Version); a version installed another way (git, ZIP, catalog)
// is numbered after the one before it, a patch higher (the first is
// 0.0.1). The hub's own id and tree digest travel with every version
// (fields "id" and "treeDigest").
//
// Publishing goes through the hub's install path (hub.InstallPublished):
// the hub's package limits and archive checks, the inspection, and the
// approval rule: under --require-approval a new version answers
// publicationStatus "pending" until an administrator approves it.
package clawhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Hub is what the registry needs of the hub's operations.
type Hub interface {
	List(ctx context.Context) ([]hub.Package, error)
	Versions(ctx context.Context, pkg string) ([]hub.Version, error)
	Inspect(ctx context.Context, ref string) (*hub.Inspected, error)
	ReadFile(ctx context.Context, ref, path string) ([]byte, hub.File, error)
	InstallPublished(ctx context.Context, p hub.Publication) (*hub.Installed, error)
	Limits() pkgtree.Limits
}

// Tokens checks the tokens clients send; *store.DB is one.
type Tokens interface {
	VerifyToken(ctx context.Context, secret string) (store.Token, error)
}

// Options configures a [Registry].
type Options struct {
	// RequireApproval says that the hub binds only approved versions; a
	// new version is then "pending" until approved.
	RequireApproval bool
	// Logger receives a record for each publication and for each fault of
	// the hub's. If nil, do not log.
	Logger *slog.Logger
	// Now is the clock of the upload tickets; nil means time.Now.
	Now func() time.Time
}

// Owner is the handle of every package's owner: the hub is one namespace.
const Owner = "hub"

// Bounds of what one client may hold or send.
const (
	// maxJSONBody bounds a JSON request body (a publication lists at most
	// the package's file count of short records).
	maxJSONBody = 1 << 20
	// ticketTTL is how long an upload ticket and its upload are kept
	// waiting for the publication that uses them.
	ticketTTL = 15 * time.Minute
	// maxPending bounds the uploads held per token, in files; the bytes
	// are bounded by the package limit.
	maxPendingFiles = 4096
	// maxSearch bounds a search's or a listing's results.
	maxSearch = 100
)

// Registry is the ClawHub-compatible registry. It is an http.Handler for
// /.well-known/clawhub.json, /.well-known/clawdhub.json and /api/v1/.
// It is safe for concurrent use.
type Registry struct {
	hub    Hub
	tokens Tokens
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	mux    *http.ServeMux

	mu      sync.Mutex
	uploads map[string]*upload // by ticket
}

// upload is one file a publisher announced and, once sent, its bytes.
type upload struct {
	token   string // the id of the token that asked for it
	path    string
	size    int64
	sha256  string
	expires time.Time
	data    []byte // nil until uploaded
}

// New returns a registry over h, whose clients' tokens tokens checks.
func New(h Hub, tokens Tokens, opts *Options) *Registry {
	r := &Registry{hub: h, tokens: tokens, uploads: map[string]*upload{}}
	if opts != nil {
		r.opts = *opts
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.now = r.opts.Now
	if r.now == nil {
		r.now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/clawhub.json", r.discovery)
	mux.HandleFunc("GET /.well-known/clawdhub.json", r.discovery)
	read := func(h func(http.ResponseWriter, *http.Request, store.Token)) http.HandlerFunc {
		return r.authed(store.ScopeRead, h)
	}
	write := func(h func(http.ResponseWriter, *http.Request, store.Token)) http.HandlerFunc {
		return r.authed(store.ScopeWrite, h)
	}
	mux.HandleFunc("GET /api/v1/whoami", read(r.whoami))
	mux.HandleFunc("GET /api/v1/search", read(r.search))
	mux.HandleFunc("GET /api/v1/skills", read(r.list))
	mux.HandleFunc("GET /api/v1/skills/{slug}", read(r.skill))
	mux.HandleFunc("GET /api/v1/skills/{slug}/versions", read(r.versions))
	mux.HandleFunc("GET /api/v1/skills/{slug}/versions/{version}", read(r.version))
	mux.HandleFunc("GET /api/v1/skills/{slug}/file", read(r.file))
	mux.HandleFunc("GET /api/v1/resolve", read(r.resolve))
	mux.HandleFunc("GET /api/v1/download", read(r.download))
	mux.HandleFunc("POST /api/v1/skills/-/upload-url", write(r.uploadURL))
	mux.HandleFunc("POST /api/v1/skills/-/upload/{ticket}", write(r.upload))
	mux.HandleFunc("POST /api/v1/skills", write(r.publish))
	for _, p := range unsupported {
		mux.HandleFunc(p, r.unsupported)
	}
	mux.HandleFunc("/api/v1/", r.notFound)
	r.mux = mux
	return r
}

// unsupported are the ClawHub routes this registry knows and does not
// serve.
var unsupported = []string{
	"/api/v1/skills/{slug}/moderation", "/api/v1/skills/{slug}/install", "/api/v1/skills/{slug}/verify",
	"/api/v1/skills/{slug}/report", "/api/v1/skills/{slug}/rename", "/api/v1/skills/{slug}/merge",
	"/api/v1/skills/{slug}/tags/", "DELETE /api/v1/skills/{slug}",
	"/api/v1/trending", "/api/v1/skills-sh/", "/api/v1/packages", "/api/v1/packages/",
	"/api/v1/code-plugins", "/api/v1/bundle-plugins", "/api/v1/promotions", "/api/v1/stars/",
	"/api/v1/transfers", "/api/v1/transfers/", "/api/v1/publishers", "/api/v1/publishers/", "/api/v1/users",
	"/api/v1/users/", "/api/v1/content-rights", "/api/v1/publish/", "/api/v1/stars",
	"/api/v1/cli/", "/api/v1/auth/", "/api/v1/device/",
}

// ServeHTTP answers the registry's routes.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	r.mux.ServeHTTP(w, req)
}

// fail answers an error in ClawHub's shape: the status and a plain-text
// sentence, which the client shows as it is.
func fail(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skills-hub"`)
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, format, args...)
}

func (r *Registry) notFound(w http.ResponseWriter, req *http.Request) {
	fail(w, http.StatusNotFound, "no such route in this registry: %s %s (a skills-hub serves the ClawHub routes of search, inspect, install, update and skill publish)", req.Method, clip(req.URL.Path))
}

func (r *Registry) unsupported(w http.ResponseWriter, req *http.Request) {
	fail(w, http.StatusNotImplemented, "%s is not supported by this registry (a skills-hub serves search, inspect, install, update and skill publish)", clip(req.URL.Path))
}

// authed checks the bearer token for scope need before h runs.
func (r *Registry) authed(need store.Scope, h func(http.ResponseWriter, *http.Request, store.Token)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		scheme, secret, ok := strings.Cut(req.Header.Get("Authorization"), " ")
		secret = strings.TrimSpace(secret)
		if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
			fail(w, http.StatusUnauthorized, "Unauthorized: this registry needs a token; run `clawhub login --token TOKEN` with a hub admin token (`skills-hub token create --scope read`, or --scope write to publish)")
			return
		}
		tok, err := r.tokens.VerifyToken(req.Context(), secret)
		switch {
		case errors.Is(err, store.ErrTokenInvalid):
			fail(w, http.StatusUnauthorized, "Unauthorized: the token is unknown, revoked or expired; create one with `skills-hub token create` and run `clawhub login --token` again")
			return
		case err != nil:
			r.log.Warn("clawhub registry: a token cannot be checked", "err", err)
			fail(w, http.StatusServiceUnavailable, "the hub cannot check the token now; try again")
			return
		case tok.Kind != store.AdminToken:
			fail(w, http.StatusForbidden, "Forbidden: a project token opens only its project's endpoint; the registry needs an admin token")
			return
		case !tok.Allows(need):
			fail(w, http.StatusForbidden, "Forbidden: this needs a token of scope %s; this token's scope is %s", need, tok.Scope)
			return
		}
		h(w, req, tok)
	}
}

// hubError answers an error of the hub's.
func (r *Registry) hubError(w http.ResponseWriter, what string, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, pkgtree.ErrNotFound):
		fail(w, http.StatusNotFound, "Skill not found")
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrStorageFull):
		fail(w, http.StatusServiceUnavailable, "the hub's database is unavailable; try again later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		fail(w, http.StatusServiceUnavailable, "the request ended before %s", what)
	default:
		r.log.Error("clawhub registry: "+what, "err", err)
		fail(w, http.StatusInternalServerError, "the hub failed %s; its log says why", what)
	}
}

// clip bounds a client's text quoted in an answer.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

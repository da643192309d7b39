// Package endpoint serves the hub's per-project MCP endpoints,
// /p/{project}/mcp: HTTP, authentication (project tokens and OAuth access
// tokens) and the MCP servers of each project's catalog, served through
// the public engine (package skills) with the SEP-2640 methods, the
// skill:// resources and the hub's tools (list_skills, get_skill,
// read_skill_file, and the job tools), over Streamable HTTP: stateless for
// 2026-07-28, with sessions and SSE for 2025-11-25 and 2025-06-18.
//
// The catalogs themselves are package projects' (loaded on first use,
// refreshed from the store's change feed, dropped when idle), built on
// versions that package versions materialises and opens once per process.
// A version is served under the namespace of the first 12 hex digits of
// its tree digest, so its skill URI is skill://<12 hex>/<name>/SKILL.md:
// the same in every project and every hub, whatever else is bound, and two
// versions of one package bound to one project are two skills.
package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/versions"
	"github.com/skills-mcp/skills-mcp/skills"
)

// MaxBodyBytes bounds a request body the endpoint reads to route it.
const MaxBodyBytes = 4 << 20

// SessionTimeout is how long a session of 2025-11-25 or 2025-06-18 lives
// without a request.
const SessionTimeout = 30 * time.Minute

// Store is what the endpoints read of the hub's store; *store.DB is one.
type Store interface {
	// VerifyToken returns the token a secret belongs to, or an error
	// matching store.ErrTokenInvalid.
	VerifyToken(ctx context.Context, secret string) (store.Token, error)
	projects.Store
	versions.Store
}

// Options configure New.
type Options struct {
	// Store is the hub's database. Required.
	Store Store
	// CacheDir holds the materialised versions (a folder per tree
	// digest). Required. It is a cache: deleting it loses nothing.
	CacheDir string
	// Logger receives errors and the change feed's progress; nil discards
	// them. Paths and tokens never reach MCP output; tokens never reach
	// the log.
	Logger *slog.Logger
	// BaseURL is the hub's external URL (scheme and host, no path), which
	// an endpoint's URL starts with: the audience of its OAuth access
	// tokens and the resource of its protected-resource metadata.
	// Required with OAuth.
	BaseURL string
	// OAuth, if set, also accepts JWT access tokens from an OAuth 2.1
	// authorization server on the endpoints, besides project tokens.
	OAuth *OAuthOptions
	// Name is what the endpoints' servers call themselves (default
	// "skills-mcp-hub").
	Name, Version string
	// TokenCacheTTL is how long a verified project token is trusted
	// without asking the store again (0: DefaultTokenCacheTTL; negative:
	// every request asks). A revocation takes effect within it (at once
	// in this process with TokenRevoked); a token is never trusted past
	// its expiry.
	TokenCacheTTL time.Duration
	// IdleTimeout is how long a project's catalog stays loaded with no
	// session and no request (0: DefaultIdleTimeout; negative: until
	// Close); its next request loads it again from the store.
	IdleTimeout time.Duration
	// Jobs, if set, runs the job tools (create_skill_job and the rest),
	// listed on a project's endpoint while a version bound to it has an
	// enabled execution profile. If nil, no job tools.
	Jobs Jobs
	// MaxConns is how many connections the server accepts at once, if
	// bounded: a project's well-known index listing more skills than that
	// logs a warning, since the skills installer fetches them all at once
	// and skips those refused. If zero, no warning.
	MaxConns int
}

// DefaultIdleTimeout is how long, unless Options.IdleTimeout says
// otherwise, an unused project's catalog stays loaded.
const DefaultIdleTimeout = projects.DefaultIdleTimeout

// Endpoint serves every project's MCP endpoint. It is an http.Handler for
// the paths /p/{project}/mcp, /p/{project}/i/{capability}/… (the
// project's well-known index, see serveIndex) and, with OAuth,
// /.well-known/oauth-protected-resource/p/{project}/mcp.
type Endpoint struct {
	st   Store
	opts Options
	log  *slog.Logger
	impl *mcp.Implementation
	oa   *oauth // nil without OAuth

	versions *versions.Cache
	projects *projects.Registry

	stateless *skills.Handler
	// schemas holds the hub's tool schemas, made and resolved once for
	// every server of every project (without it each server's AddTool
	// reflects and resolves them again: 60 KB a project).
	schemas *mcp.SchemaCache
	tokens  *tokenCache

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the background token verifications

	mu     sync.Mutex
	closed bool
	byCat  map[*skills.Catalog]*project // the loaded projects, for the servers the handlers make

	storeErrors atomic.Int64
}

// New starts the endpoints' change feed and returns them. The catalogs of
// projects are built on their first request. Close stops everything New
// started.
func New(ctx context.Context, opts Options) (*Endpoint, error) {
	if opts.Store == nil {
		return nil, errors.New("endpoint: Options.Store is required")
	}
	if opts.CacheDir == "" {
		return nil, errors.New("endpoint: Options.CacheDir is required (materialised versions are kept there)")
	}
	if opts.Name == "" {
		opts.Name = "skills-mcp-hub"
	}
	if opts.Version == "" {
		opts.Version = "v0"
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.TokenCacheTTL == 0 {
		opts.TokenCacheTTL = DefaultTokenCacheTTL
	}
	e := &Endpoint{st: opts.Store, opts: opts, log: opts.Logger,
		impl: &mcp.Implementation{Name: opts.Name, Version: opts.Version}, schemas: mcp.NewSchemaCache(), tokens: newTokenCache(opts.TokenCacheTTL),
		byCat: map[*skills.Catalog]*project{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if opts.OAuth != nil {
		oa, err := newOAuth(ctx, opts.OAuth, opts.BaseURL)
		if err != nil {
			return nil, err
		}
		e.oa = oa
	}
	h, err := skills.NewHandler(e.handlerOptions(nil))
	if err != nil {
		return nil, err
	}
	e.stateless = h
	vc, err := versions.New(opts.Store, opts.CacheDir)
	if err != nil {
		return nil, err
	}
	e.versions = vc
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.projects, err = projects.New(ctx, projects.Options{Store: opts.Store, Versions: vc, Front: e.front, Logger: e.log, IdleTimeout: opts.IdleTimeout,
		// Its tokens went with it.
		Deleted: func(id string) { e.tokens.forget(func(t store.Token) bool { return t.ProjectID == id }) }})
	if err != nil {
		e.cancel()
		return nil, err
	}
	return e, nil
}

// handlerOptions are the options of the stateless handler (http nil) and of
// a project's handler of sessions.
func (e *Endpoint) handlerOptions(ho *mcp.StreamableHTTPOptions) skills.HandlerOptions {
	return skills.HandlerOptions{
		Select: func(r *http.Request) (*skills.Catalog, error) {
			p, _ := r.Context().Value(projectKey{}).(*project)
			if p == nil {
				return nil, errors.New("no project")
			}
			return p.Catalog(), nil
		},
		NewServer:      e.newServer,
		Implementation: e.impl,
		HTTP:           ho,
		Attach:         &skills.AttachOptions{Name: e.opts.Name, TTL: 5 * time.Minute, Instructions: true},
	}
}

type projectKey struct{}

// Close stops the change feed, closes every session and catalog, and
// returns once all of it has stopped. Requests after Close get 503.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.projects.Close()
	e.cancel()
	e.wg.Wait()
	return e.versions.Close()
}

// Stats is what the endpoints serve, for /metrics.
type Stats struct {
	// Projects are the projects whose catalogs are loaded, by id.
	Projects []ProjectStats
	// Versions is how many versions are materialised and open.
	Versions int
	// Refreshes counts catalog refreshes after binding changes, and
	// RefreshErrors those that failed (the catalog kept what it served).
	Refreshes, RefreshErrors int64
	// Unloaded counts the catalogs dropped after Options.IdleTimeout
	// without a session or a request.
	Unloaded int64
	// StoreErrors counts the requests answered 503 store_unavailable: the
	// database did not answer a token check or a catalog's load.
	StoreErrors int64
}

// ProjectStats is one loaded project.
type ProjectStats struct {
	ID string
	// Sessions is how many MCP sessions are open on the project's servers
	// (sessions of 2025-11-25 and 2025-06-18, listen streams, requests in
	// flight).
	Sessions int
	// Bindings is how many versions the project serves.
	Bindings int
	// Requests counts the requests served; refused ones (paused, wrong
	// token) are not counted.
	Requests int64
	// IndexRequests counts the requests its well-known index served,
	// refused ones not counted.
	IndexRequests int64
}

// Stats returns what the endpoints serve now.
func (e *Endpoint) Stats() Stats {
	rs := e.projects.Stats()
	st := Stats{Versions: e.versions.Len(), Refreshes: rs.Refreshes, RefreshErrors: rs.RefreshErrors, Unloaded: rs.Unloaded, StoreErrors: e.storeErrors.Load()}
	for _, pp := range e.projects.Loaded() {
		p := frontOf(pp)
		st.Projects = append(st.Projects, ProjectStats{ID: pp.ID(), Bindings: len(pp.View().Bound), Requests: p.requests.Load(),
			IndexRequests: p.indexRequests.Load(), Sessions: p.sessionCount()})
	}
	return st
}

// ServeHTTP serves /p/{project}/mcp, the projects' well-known indexes
// below /p/{project}/i/{capability}/ and, with OAuth, the endpoints'
// protected-resource metadata. Anything else is 404.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id, capability, rest, ok := indexOf(r.URL.Path); ok {
		// Below the capability are the index's file names, which may
		// escape; the id and the capability are checked as decoded.
		e.serveIndex(w, r, id, capability, rest)
		return
	}
	if r.URL.RawPath != "" {
		// An escape in the path: a project id has none, so this is no
		// endpoint (and "%2F" or "%2e" never reach a project).
		writeError(w, http.StatusNotFound, "not_found", "no MCP endpoint at this path")
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, wellKnownPrefix); ok {
		e.serveMetadata(w, r, id)
		return
	}
	id, ok := projectOf(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no MCP endpoint at this path: project endpoints are /p/{project}/mcp")
		return
	}
	e.authenticate(w, r, id, func(w http.ResponseWriter, r *http.Request, tok tokenInfo) {
		e.serveProject(w, r, id, tok)
	})
}

// projectOf returns the project id of an endpoint path /p/{id}/mcp.
func projectOf(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/mcp")
	if !ok || !validID(id) {
		return "", false
	}
	return id, true
}

// validID is the store's project id rule: 1–63 of a-z, 0-9 and '-'.
func validID(id string) bool {
	if id == "" || len(id) > 63 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// serveProject serves an authenticated request of project id.
func (e *Endpoint) serveProject(w http.ResponseWriter, r *http.Request, id string, tok tokenInfo) {
	switch {
	case tok.kind == store.AdminToken:
		writeError(w, http.StatusForbidden, "wrong_token_kind", "admin tokens do not open project endpoints: use a project token of this project")
		return
	case tok.kind == store.IndexToken:
		writeError(w, http.StatusForbidden, "wrong_token_kind", "an index token opens only its project's well-known index (npx skills add), never an endpoint: use a project token of this project")
		return
	case tok.kind != store.ProjectToken || tok.project != id:
		// The same answer as for a project that does not exist: a token
		// of one project learns nothing about another's.
		writeError(w, http.StatusNotFound, "project_not_found", fmt.Sprintf("no project %q", id))
		return
	}
	pp, done, err := e.projects.Use(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "project_not_found", fmt.Sprintf("no project %q", id))
		return
	case errors.Is(err, projects.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "shutting_down", "the hub is shutting down; retry on another replica or later")
		return
	case err != nil:
		if r.Context().Err() == nil { // else the client went away: no fault of the store
			e.log.Error("loading a project's catalog", "project", id, "err", err)
			e.storeErrors.Add(1)
		}
		writeError(w, http.StatusServiceUnavailable, "store_unavailable", "the project's catalog cannot be loaded now; retry later")
		return
	}
	defer done()
	if pp.Paused() {
		writeError(w, http.StatusForbidden, "project_paused", fmt.Sprintf("project %q is paused: its endpoint serves nothing until an administrator resumes it", id))
		return
	}
	p := frontOf(pp)
	h, err := e.route(w, r, p)
	if err != nil {
		return // answered
	}
	p.requests.Add(1)
	h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), projectKey{}, p)))
}

// route picks the handler of a request: the project's sessions for a
// request of a session (its header, a GET stream, a DELETE) and for an
// initialize (the revisions with sessions begin there), else the shared
// stateless one (2026-07-28, and requests without a session). The body is
// read to find an initialize, and put back.
func (e *Endpoint) route(w http.ResponseWriter, r *http.Request, p *project) (http.Handler, error) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return p.sessionHandler(), nil
	}
	if statelessRevision(r.Header.Get("MCP-Protocol-Version")) {
		// 2026-07-28 and later have no sessions: the stateless handler
		// answers every method, initialize included (removed there: a
		// 404 "method not found").
		return e.stateless, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is over %d bytes", MaxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, "body_unreadable", "the request body could not be read")
		}
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"initialize"`)) {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
			return p.sessionHandler(), nil
		}
	}
	return e.stateless, nil
}

// statelessRevision reports whether a request's MCP-Protocol-Version is
// 2026-07-28 or later (revisions are dates, which sort as strings).
func statelessRevision(v string) bool {
	return len(v) == len("2026-07-28") && v >= "2026-07-28"
}

// writeError answers a request the MCP servers never see with a JSON-RPC
// error of id null; data.code is the stable code, the message says what to
// do.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", nil, map[string]any{"code": -32001, "message": msg, "data": map[string]string{"code": code}}})
	w.Write(append(b, '\n'))
}

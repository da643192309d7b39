// Package api is the skill hub's admin REST API, served under /api/ by
// `skills-hub serve`: installed skills and their versions, the
// installable catalog, projects and their bindings and well-known indexes,
// tokens and the audit log.
//
// The routes are huma operations (github.com/danielgtaylor/huma/v2) on a
// net/http ServeMux, so the OpenAPI 3.1 document at /api/openapi.json is
// generated from the handlers' Go types and cannot drift from them. Every
// operation calls package hub, as the command line does.
//
// # Authentication and scopes
//
// Every route but the document needs an admin token (`Authorization: Bearer
// smcp_a_…`). Reads need the read scope; changes to packages, the catalog,
// projects, bindings and tokens, and every deletion, need admin; the write
// scope is for the job routes. A missing, malformed, unknown, revoked or
// expired token gets 401 with `WWW-Authenticate: Bearer`; a scope too small
// 403, naming the scope needed; a project token 403.
//
// # Errors
//
// Every error is {"error":{"code":"…","message":"…"}} with a stable code
// (the Code constants) and the status that goes with it, validation errors
// with "details" locating each problem. The value sent is never echoed.
//
// # Audit
//
// Every change, done or refused after the token was checked, appends an
// entry to the audit log: the token's id, the action, the object, the result
// (ok or the error code). No payload and no secret is recorded.
package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Limits of request bodies.
const (
	// MaxJSONBody bounds a JSON body (1 MiB); larger ones get 413.
	MaxJSONBody = 1 << 20
	// MaxCatalogBody bounds a catalog document sent inline to
	// /api/skills/catalog/sync.
	MaxCatalogBody = 16 << 20
	// MaxUpload bounds the ZIP uploaded to /api/skills/import (32 MiB,
	// the seed's limit per file), plus room for the form around it.
	MaxUpload     = 32 << 20
	maxUploadForm = MaxUpload + 64<<10
)

// Options configure New.
type Options struct {
	// Hub is the hub's rules the API applies: versions named by reference,
	// installs, approval, bindings, new tokens, the catalog. Required.
	Hub *hub.Hub
	// Store is the hub's store, for what the API reads or changes as it is
	// (projects, tokens, the audit log, job lists, remnants). Required.
	Store Store
	// Logger receives operations that failed for a reason of the hub's and
	// audit entries that could not be written. If nil, nothing is logged.
	Logger *slog.Logger
	// Version is the API document's version (the binary's).
	Version string
	// TempDir is where uploaded ZIPs are spooled while they are read (the
	// hub's data folder's tmp/, which hub serve sweeps at start). If
	// empty, the system's temporary folder. Which repositories an install
	// may read is the hub's rule (hub.Options.LocalRepositories).
	TempDir string
	// Replica names this process among the replicas sharing the store: in
	// the audit entries it writes and GET /api/overview. May be empty (no
	// job service).
	Replica string
	// Audit, if not nil, records the audit entries, retrying those the
	// database cannot take at once (*auditlog.Log). If nil, each entry is
	// written once, and a failure logged.
	Audit Auditor
	// Runtime, if not nil, lists the sandbox backends jobs can use, for
	// GET /api/skills/runtime. If nil, there are none.
	Runtime func(context.Context) []Backend
	// Jobs is the job service behind the profile, preparation and job
	// routes. If nil, they answer 503 sandbox_unavailable.
	Jobs *jobs.Service
	// OnStoreError, if not nil, is called for each request that failed
	// because the database was unavailable, full or failed (for metrics).
	OnStoreError func()
	// OnCatalogSync, if not nil, is called after each catalog sync with
	// its error (nil when the catalog was replaced).
	OnCatalogSync func(error)
	// OnTokenRevoked, if not nil, is called with the id of each project
	// token and index capability the API revoked, so that this process's
	// endpoints forget it at once (other replicas learn of it within their
	// token cache's TTL).
	OnTokenRevoked func(id string)
}

// Store is what the API reads and changes of the hub's store itself, past
// the hub's rules; *store.DB is one.
type Store interface {
	TokenVerifier

	// Projects.
	CreateProject(ctx context.Context, id, name string) error
	GetProject(ctx context.Context, id string) (store.Project, error)
	ListProjects(ctx context.Context, page store.ProjectPage) (store.ProjectList, error)
	RenameProject(ctx context.Context, id, name string) (store.Project, error)
	PauseProject(ctx context.Context, id string) (store.Project, error)
	ResumeProject(ctx context.Context, id string) (store.Project, error)
	DuplicateProject(ctx context.Context, srcID, id, name string) (store.Project, error)
	DeleteProject(ctx context.Context, id string) error
	SetWellKnown(ctx context.Context, id string, on bool) (store.Project, error)

	// Tokens and the audit log.
	GetToken(ctx context.Context, id string) (store.Token, error)
	ListTokens(ctx context.Context, f store.TokenFilter) ([]store.Token, error)
	RevokeToken(ctx context.Context, id string) (store.Token, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error)
	AuditList(ctx context.Context, f store.AuditFilter) (store.AuditPage, error)

	// The dashboard, the replicas' leases, the job lists and the versions
	// they name.
	Overview(ctx context.Context) (store.Overview, error)
	Leases(ctx context.Context) ([]store.Lease, time.Time, error)
	QueryJobs(ctx context.Context, q store.JobQuery) ([]store.ListedJob, error)
	GetVersion(ctx context.Context, id int64) (store.Version, error)

	// The remnants of deleted projects' jobs.
	jobs.RemnantStore
	JobRemnants(ctx context.Context) ([]store.JobRemnant, error)
	PurgeJobRemnant(ctx context.Context, jobID string) error
}

// TokenVerifier checks a token's secret; *store.DB is one.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, secret string) (store.Token, error)
}

// Auditor records audit entries.
type Auditor interface {
	Record(ctx context.Context, e store.AuditEntry)
}

// Backend is one sandbox backend jobs can run in.
type Backend struct {
	Name      string `json:"name" doc:"The backend's name, e.g. bwrap or docker"`
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty" doc:"Why it cannot be used, when it cannot"`
	// Chosen marks the backend jobs run in.
	Chosen bool `json:"chosen,omitempty"`
	// Enforced and Missing say which limits it enforces on this host and
	// which it cannot (sandbox.Enforced).
	Enforced []string `json:"enforced,omitempty"`
	Missing  []string `json:"missing,omitempty"`
}

// API is the admin API: an http.Handler for /api/.
type API struct {
	hub    *hub.Hub
	st     Store
	log    *slog.Logger
	opts   Options
	mux    *http.ServeMux
	huma   huma.API
	spec   []byte
	routes []string // every pattern registered on the mux
}

// New builds the API over opts.Hub.
func New(opts Options) (_ *API, err error) {
	// huma reports a route it cannot register by panicking; that is a
	// mistake in this package, which New reports as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("admin API: building the routes: %v", r)
		}
	}()
	if opts.Hub == nil || opts.Store == nil {
		return nil, errors.New("admin API: no hub or no store")
	}
	useErrorModel()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{hub: opts.Hub, st: opts.Store, log: log, opts: opts, mux: http.NewServeMux()}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	cfg := huma.DefaultConfig("skills-hub admin API", version)
	// No $schema links in answers, no docs page loading scripts from
	// elsewhere; the document is served below, built once.
	cfg.CreateHooks = nil
	cfg.OpenAPIPath = ""
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.Info.Description = "The admin API of a skills-hub. Every route needs an admin token (Bearer smcp_a_…) of the scope it names."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		securityScheme: {Type: "http", Scheme: "bearer", Description: "An admin token: `skills-hub token create --scope admin`"},
	}
	a.huma = humago.New(&recordingMux{ServeMux: a.mux, patterns: &a.routes}, cfg)
	a.huma.UseMiddleware(a.guard)
	a.addRoutes()
	spec, err := json.Marshal(a.huma.OpenAPI())
	if err != nil {
		return nil, err
	}
	a.spec = spec
	a.mux.HandleFunc("GET "+DocumentPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(a.spec)
	})
	a.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, newError(http.StatusNotFound, CodeNotFound, "no such route: "+r.Method+" "+r.URL.Path+" (the routes are in "+DocumentPath+")"))
	})
	return a, nil
}

// DocumentPath is where the OpenAPI document is served. It needs no token:
// it is the same for everyone and says nothing about the hub's content.
const DocumentPath = "/api/openapi.json"

const securityScheme = "bearer"

// ServeHTTP serves the API's routes; anything else under /api/ gets a
// JSON 404.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// OpenAPI returns the API's document.
func (a *API) OpenAPI() *huma.OpenAPI { return a.huma.OpenAPI() }

// Document returns the OpenAPI document as served.
func (a *API) Document() []byte { return a.spec }

// Patterns returns the ServeMux patterns of the operations ("GET
// /api/projects/{id}"), in registration order.
func (a *API) Patterns() []string { return append([]string(nil), a.routes...) }

// WriteError writes e as the API's JSON error answer.
func WriteError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(e)
}

// NewError is an error answer with status, code and message, for the
// server around the API (unknown routes, the metrics' authentication).
func NewError(status int, code, msg string) *Error { return newError(status, code, msg) }

type recordingMux struct {
	*http.ServeMux
	patterns *[]string
}

func (m *recordingMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	*m.patterns = append(*m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

// rule is what an operation needs and what its audit entry says.
type rule struct {
	scope store.Scope
	// action, for a change, names it in the audit log ("project.create");
	// empty for a read.
	action string
	kind   string // the object's kind in the audit log
	param  string // the path parameter naming the object, if any
}

const ruleKey = "hub.rule"

// call is what one request's guard learnt, shared with its operation.
type call struct {
	token    store.Token
	object   string        // set by the operation when it names the object better
	code     string        // the error code answered, if any
	req      *http.Request // for routes that read their body themselves
	tooLarge atomic.Bool
	// audited is set by an operation that recorded its own entries (a
	// run, recorded when queued and when it ends): the guard records only
	// refusals then.
	audited bool
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// setObject names the object of the request's audit entry.
func setObject(ctx context.Context, id string) {
	if c := callOf(ctx); c != nil {
		c.object = id
	}
}

// tokenOf returns the token the request was made with.
func tokenOf(ctx context.Context) store.Token {
	if c := callOf(ctx); c != nil {
		return c.token
	}
	return store.Token{}
}

// Authenticate checks an Authorization header's admin token against
// tokens and that its scope includes need. The error is the answer to
// give: 401, 403, or 503 when the database is away. hubserve guards
// /metrics with it.
func Authenticate(ctx context.Context, tokens TokenVerifier, header string, need store.Scope) (store.Token, *Error) {
	scheme, secret, ok := strings.Cut(header, " ")
	if header == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return store.Token{}, unauthorized("this route needs an admin token: send `Authorization: Bearer smcp_a_…` (create one with `skills-hub token create --scope admin`)", false)
	}
	tok, err := tokens.VerifyToken(ctx, strings.TrimSpace(secret))
	switch {
	case errors.Is(err, store.ErrTokenInvalid):
		return store.Token{}, unauthorized("the token is not valid: unknown, revoked or expired; create a new one with `skills-hub token create`", true)
	case errors.Is(err, store.ErrUnavailable):
		return store.Token{}, newError(http.StatusServiceUnavailable, CodeUnavailable, "the hub's database is unavailable, so the token cannot be checked; try again when it is back")
	case err != nil:
		return store.Token{}, newError(http.StatusServiceUnavailable, CodeUnavailable, "the token cannot be checked now; try again")
	}
	switch tok.Kind {
	case store.AdminToken:
	case store.IndexToken:
		return tok, forbidden("an index token opens only its project's well-known index; the admin API needs an admin token", need)
	default:
		return tok, forbidden("a project token opens only its project's endpoint (/p/"+tok.ProjectID+"/mcp); the admin API needs an admin token", need)
	}
	if !tok.Allows(need) {
		return tok, forbidden("this needs a token of scope "+string(need)+"; this token's scope is "+string(tok.Scope), need)
	}
	return tok, nil
}

func unauthorized(msg string, invalid bool) *Error {
	e := newError(http.StatusUnauthorized, CodeUnauthorized, msg)
	e.header = `Bearer realm="skills-hub"`
	if invalid {
		e.header += `, error="invalid_token"`
	}
	return e
}

func forbidden(msg string, need store.Scope) *Error {
	e := newError(http.StatusForbidden, CodeForbidden, msg)
	e.header = `Bearer realm="skills-hub", error="insufficient_scope", scope="` + string(need) + `"`
	return e
}

// guard runs before every operation, before its input is read: it checks
// the token and bounds the body, then, for a change, appends the audit
// entry once the operation has answered.
func (a *API) guard(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	ru, ok := op.Metadata[ruleKey].(rule)
	if !ok {
		// Every operation is registered with a rule; one without is a
		// programming error, refused rather than left open.
		a.reply(ctx, newError(http.StatusInternalServerError, CodeInternal, "route without a rule"))
		return
	}
	c := &call{}
	ctx = huma.WithValue(ctx, callKey{}, c)
	tok, e := Authenticate(ctx.Context(), a.st, ctx.Header("Authorization"), ru.scope)
	if e != nil {
		a.reply(ctx, e)
		if e.status == http.StatusForbidden && ru.action != "" {
			c.token = tok
			a.audit(ctx, ru, c, e.Body.Code)
		}
		return
	}
	c.token = tok
	r, _ := humago.Unwrap(ctx)
	if r.Body != nil && r.Body != http.NoBody && op.MaxBodyBytes > 0 {
		if r.ContentLength > op.MaxBodyBytes {
			e := newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is too large: this route takes at most "+sizeText(op.MaxBodyBytes))
			a.reply(ctx, e)
			if ru.action != "" {
				a.audit(ctx, ru, c, e.Body.Code)
			}
			return
		}
		r.Body = &boundedBody{r: r.Body, left: op.MaxBodyBytes, c: c}
	}
	c.req = r
	next(ctx)
	if ru.action == "" || c.audited {
		return
	}
	result := c.code
	if result == "" {
		if st := ctx.Status(); st >= 400 {
			result = codeOf(st)
		} else {
			result = store.AuditOK
		}
	}
	a.audit(ctx, ru, c, result)
}

// reply writes an error from the guard.
func (a *API) reply(ctx huma.Context, e *Error) {
	if e.header != "" {
		ctx.SetHeader("WWW-Authenticate", e.header)
	}
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetStatus(e.status)
	json.NewEncoder(ctx.BodyWriter()).Encode(e)
}

// audit appends a request's entry. It is written even when the client has
// gone, within a deadline of its own; a failure is logged, since the
// answer is already given.
func (a *API) audit(ctx huma.Context, ru rule, c *call, result string) {
	object := c.object
	if object == "" && ru.param != "" {
		object = ctx.Param(ru.param)
	}
	e := store.AuditEntry{Actor: c.token.ID, Action: ru.action, ObjectKind: ru.kind, ObjectID: auditText(object), Result: result, Replica: a.opts.Replica}
	if a.opts.Audit != nil {
		a.opts.Audit.Record(ctx.Context(), e)
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx.Context()), 5*time.Second)
	defer cancel()
	_, err := a.st.AppendAudit(actx, e)
	if err != nil {
		a.log.Error("admin API: the audit entry could not be written", "action", ru.action, "actor", c.token.ID, "result", result, "err", err)
	}
}

// auditText makes a client's string fit for the audit log: valid UTF-8,
// no control characters, at most 200 bytes, and never anything that looks
// like a token's secret.
func auditText(s string) string {
	if strings.Contains(s, "smcp_") {
		return "(withheld: looks like a token)"
	}
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// boundedBody reads at most left bytes of a body and records a body that
// goes over, so that the error huma makes of it is a 413.
type boundedBody struct {
	r    io.ReadCloser
	left int64
	c    *call
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body at the limit from one over it.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			b.c.tooLarge.Store(true)
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.r.Close() }

var errTooLarge = errors.New("request body is too large")

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Cursors are opaque to clients: base64url of the list's name and a
// position in it, so that a cursor of one list is refused by another.

func encodeCursor(list, key string) string {
	if key == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(list + ":" + key))
}

func decodeCursor(list, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	key, ok := strings.CutPrefix(string(raw), list+":")
	if err != nil || !ok || key == "" {
		return "", newError(http.StatusBadRequest, CodeBadRequest, "the cursor is not one this list gave; start again without it")
	}
	return key, nil
}

package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

// AttachOptions choose what Attach registers and how. A nil
// *AttachOptions means the Skills extension alone: the SEP-2640 methods
// and the skill:// resources, cached privately and stale at once. Tools,
// prompts and instructions are added to the caller's server only when
// asked for.
type AttachOptions struct {
	// Name is the server's name in the instructions (default: the name
	// of the *mcp.Server) and, if Prefix is empty, the tool prefix
	// ("skills": skills_search_skills, …).
	Name string
	// Prefix starts every tool name; if empty, Name with "-" as "_", or
	// "skills".
	Prefix string
	// PageSize is the number of entries per skills/list,
	// resources/directory/read and resources/list page (0: 100).
	PageSize int
	// TTL is the ttlMs hint on cacheable results (0: 0, stale at once).
	TTL time.Duration
	// Public marks cacheable results cacheScope "public" instead of
	// "private": only for an endpoint whose answers are the same for
	// everyone who may ask, so that shared caches may keep them.
	Public bool
	// NoMethods leaves out the SEP-2640 methods skills/list, skills/get
	// and resources/directory/read.
	NoMethods bool
	// NoResources leaves out the skill:// resources.
	NoResources bool
	// Tools adds the discovery tools (search, list, get, read) and the
	// vault tools, for hosts without the Skills extension.
	Tools bool
	// Prompts adds the use-skill prompt (and run-playbook).
	Prompts bool
	// Instructions gives the server the catalog's instructions (what it
	// serves and how to use it) when the caller's server has none.
	Instructions bool
}

func (o *AttachOptions) server(n *server.Notifier, log *slog.Logger) (*server.Options, server.Parts) {
	var a AttachOptions
	if o != nil {
		a = *o
	}
	scope := "private"
	if a.Public {
		scope = "public"
	}
	ttl := a.TTL
	if ttl == 0 {
		ttl = -1 // server.Options: negative is 0, zero the server's default
	}
	name, fromInfo := a.Name, a.Name == ""
	if name == "" {
		name = server.DefaultName
	}
	// Client names a request's client as serve --http does: behind
	// skills-mcp's own HTTP guard (the hub's project endpoints) its
	// address, so that one client's large answers hold at most half of
	// the answer budget and leave the other half to everyone else. A
	// request no guard saw (stdio, a caller's own HTTP server) names no
	// client and shares the whole budget, as before.
	return &server.Options{Name: name, NameFromInfo: fromInfo, Prefix: a.Prefix, PageSize: a.PageSize, TTL: ttl, CacheScope: scope, Logger: log, Notifier: n,
			Client: httpserve.ClientOf},
		server.Parts{NoMethods: a.NoMethods, NoResources: a.NoResources, NoTools: !a.Tools, NoPrompts: !a.Prompts, NoInstructions: !a.Instructions}
}

// Attach serves c on ms, a server of the official go-sdk that the caller
// made (with its own tools): the parts opts leaves in, the Skills
// extension declared in its capabilities, and c's instructions if ms has
// none. The sessions of ms are notified when c changes. Attaching twice to
// one server, a nil server and a closed catalog are errors.
func Attach(ms *mcp.Server, c *Catalog, opts *AttachOptions) error {
	if ms == nil {
		return errors.New("skills: Attach needs an *mcp.Server, got nil")
	}
	if c == nil {
		return errors.New("skills: Attach needs a *Catalog, got nil")
	}
	_, err := attach(ms, c, opts, nil, false)
	return err
}

// attach is Attach, returning the server's front ends: impl is what ms
// says it is, for the HTTP front end's _meta (nil: unknown).
func attach(ms *mcp.Server, c *Catalog, opts *AttachOptions, impl *mcp.Implementation, noFastPath bool) (*server.Server, error) {
	n := &server.Notifier{}
	if err := c.bind(n); err != nil {
		return nil, err
	}
	so, parts := opts.server(n, c.opts.Logger)
	so.Implementation, so.NoFastPath = impl, noFastPath
	srv, err := server.Attach(ms, c.store, so, parts)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	return srv, nil
}

// HandlerOptions configure a Handler. Select is required.
type HandlerOptions struct {
	// Select picks the catalog of a request: from its context (the token
	// info an auth middleware put there), its headers, its path. It is
	// called for every HTTP request; an error answers that request with a
	// JSON-RPC error (the message is the error's text: keep paths out of
	// it), as do a nil or closed catalog, a panic and a Select that
	// outlasts SelectTimeout. A Select that ignores its context's end
	// still holds its goroutine until it returns.
	Select func(r *http.Request) (*Catalog, error)
	// SelectTimeout bounds Select (0: 5 seconds).
	SelectTimeout time.Duration
	// NewServer makes the server a catalog is attached to the first time
	// it is selected, with the caller's own tools; nil makes a bare one
	// named "skills". A session stays on the server, so on the catalog,
	// it started on.
	NewServer func(*Catalog) *mcp.Server
	// Attach configures what is attached to each server.
	Attach *AttachOptions
	// HTTP configures the go-sdk's Streamable HTTP handler. nil serves as
	// skills-mcp does: stateless, JSON answers, the SDK's DNS-rebinding
	// protection (a request to a loopback address whose Host is not a
	// loopback name is refused with 403), and, on the servers the handler
	// makes itself (NewServer nil), a front end that answers plain
	// skills/list, skills/get and resources/read requests ahead of the
	// SDK, with the bytes the SDK would write, about ten times cheaper.
	// Options of the caller's own turn the front end off.
	HTTP *mcp.StreamableHTTPOptions
	// NoFastPath turns the front end off: every request goes through the
	// SDK's handler. The answers are the same; it is for comparisons.
	NoFastPath bool
	// Implementation is what the servers NewServer makes say they are.
	// Setting it (with HTTP nil) says that they add no receiving middleware
	// that must see skills/list, skills/get or resources/read, so the
	// front end answers those ahead of them as it does for the handler's
	// own servers; the caller's tools and middleware see everything else.
	Implementation *mcp.Implementation
}

// Handler serves many catalogs over one Streamable HTTP endpoint, each
// request on the catalog HandlerOptions.Select picks. Cursors, tool lists
// and list-changed notifications follow the catalog a session got: each
// catalog is served by an MCP server of its own.
type Handler struct {
	opts HandlerOptions
	mh   http.Handler
	// ours says that the handler was given no HTTP options: it checks the
	// Host itself, and the servers it makes get the front end.
	ours bool

	mu      sync.Mutex
	servers map[any]*served // by catalog, or by shared skill set
}

// served is the server a catalog is attached to, and the handler of its
// requests: the SDK's, or the front end ahead of it.
type served struct {
	ms *mcp.Server
	h  http.Handler
}

type selectedKey struct{}

// NewHandler returns a handler of opts.
func NewHandler(opts HandlerOptions) (*Handler, error) {
	if opts.Select == nil {
		return nil, errors.New("skills: HandlerOptions.Select is nil")
	}
	if opts.SelectTimeout <= 0 {
		opts.SelectTimeout = 5 * time.Second
	}
	h := &Handler{opts: opts, servers: map[any]*served{}, ours: opts.HTTP == nil}
	ho := opts.HTTP
	if ho == nil {
		// The Host check is ServeHTTP's, ahead of the front end and the
		// SDK alike (the front end makes none).
		ho = &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}
	}
	h.mh = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		ms, _ := r.Context().Value(selectedKey{}).(*mcp.Server)
		return ms // nil: the SDK answers 400, which ServeHTTP never lets happen
	}, ho)
	return h, nil
}

// ServeHTTP selects the request's catalog and serves the request on its
// server.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.ours && !hostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	c, err := h.selectCatalog(r)
	if err == nil && (c == nil || c.isClosed()) {
		err = errNoCatalog
		if c != nil {
			h.forget(c)
			err = ErrClosed
		}
	}
	var sv *served
	if err == nil {
		sv, err = h.serverOf(c)
	}
	if err != nil {
		status := http.StatusNotFound
		var se *selectError
		if errors.As(err, &se) {
			status = se.status
		}
		writeRPCError(w, status, err.Error())
		return
	}
	sv.h.ServeHTTP(w, r)
}

// hostAllowed is the SDK's DNS-rebinding protection, with the one
// loopback test of skills-mcp: a request that reached a loopback address
// must name a loopback host.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || local == nil || !httpserve.IsLoopback(local.String()) || httpserve.IsLoopback(r.Host)
}

var errNoCatalog = errors.New("skills: no catalog for this request")

// selectError is a Select that failed by panicking or outlasting its
// deadline.
type selectError struct {
	status int
	msg    string
}

func (e *selectError) Error() string { return e.msg }

// selectCatalog runs Select contained: a panic and a Select past its
// deadline are errors of this request only.
func (h *Handler) selectCatalog(r *http.Request) (*Catalog, error) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.SelectTimeout)
	defer cancel()
	type result struct {
		c   *Catalog
		err error
	}
	done := make(chan result, 1)
	go func() { // returns when Select does; the buffer takes its answer
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: &selectError{status: http.StatusInternalServerError, msg: "skills: selecting the catalog failed"}}
			}
		}()
		c, err := h.opts.Select(r.WithContext(ctx))
		done <- result{c, err}
	}()
	select {
	case res := <-done:
		return res.c, res.err
	case <-ctx.Done():
		return nil, &selectError{status: http.StatusGatewayTimeout, msg: "skills: selecting the catalog timed out"}
	}
}

// serverOf returns the server c is attached to, making it the first time.
//
// Without NewServer, fixed catalogs over one shared skill set share one
// server too: they serve the same snapshot and never change, so nothing
// (cursors, tools, notifications) can tell them apart, and a server with
// its tools' schemas costs far more than a catalog.
//
// The front end goes ahead of the servers the handler makes with its own
// HTTP options only: a caller's server may have middleware or options the
// front end would skip. The others get AnswersHandler, so that a large
// answer stays counted in the answer budget until it is written, sessions
// and event streams included.
func (h *Handler) serverOf(c *Catalog) (*served, error) {
	var key any = c
	if h.opts.NewServer == nil && c.shared != nil {
		key = c.shared
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sv := h.servers[key]; sv != nil {
		return sv, nil
	}
	if h.opts.NewServer != nil {
		ms := h.opts.NewServer(c)
		impl := h.opts.Implementation
		fast := impl != nil && h.ours && !h.opts.NoFastPath
		srv, err := attach(ms, c, h.opts.Attach, impl, !fast)
		if err != nil {
			return nil, err
		}
		sv := &served{ms: ms, h: h.sdk(ms)}
		if fast {
			sv.h = srv.HTTPHandler(sv.h)
		} else {
			sv.h = srv.AnswersHandler(sv.h)
		}
		h.servers[key] = sv
		return sv, nil
	}
	impl := &mcp.Implementation{Name: "skills", Version: "v0"}
	ms := mcp.NewServer(impl, nil)
	srv, err := attach(ms, c, h.opts.Attach, impl, h.opts.NoFastPath || !h.ours)
	if err != nil {
		return nil, err
	}
	sv := &served{ms: ms, h: h.sdk(ms)}
	if h.ours && !h.opts.NoFastPath {
		sv.h = srv.HTTPHandler(sv.h)
	} else {
		sv.h = srv.AnswersHandler(sv.h)
	}
	h.servers[key] = sv
	return sv, nil
}

// sdk returns the SDK's handler serving a request on ms.
func (h *Handler) sdk(ms *mcp.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mh.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), selectedKey{}, ms)))
	})
}

// Forget drops the server the handler made for c, so that a catalog the
// caller closed and will not select again costs nothing; a later selection
// of c makes a new one.
func (h *Handler) Forget(c *Catalog) { h.forget(c) }

// forget drops the server of a closed catalog.
func (h *Handler) forget(c *Catalog) {
	h.mu.Lock()
	delete(h.servers, any(c))
	h.mu.Unlock()
}

// writeRPCError answers a request that no server will see with a JSON-RPC
// error of id null (its id is not read: the body is the SDK's to parse).
func writeRPCError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	m, _ := json.Marshal(msg)
	w.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":%s}}`, m))
}

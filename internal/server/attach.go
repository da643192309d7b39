package server

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Attach registers the catalog surface of store on ms, a server its caller
// created with its own tools and options: the parts p leaves in, a
// middleware that declares the Skills extension and the list changes in
// initialize and server/discover (capabilities cannot be added to an SDK
// server after it is made), and the instructions when ms has none.
// Attaching twice to one server is an error, as is a nil server or store.
// The returned Server's Listed and WaitQuiet can be used, and its
// HTTPHandler when the caller knows every middleware and option of ms (see
// HTTPHandler): opts.Implementation then says what ms is.
func Attach(ms *mcp.Server, store *catalog.Store, opts *Options, p Parts) (*Server, error) {
	if ms == nil {
		return nil, errors.New("server: Attach needs an *mcp.Server, got nil")
	}
	if store == nil {
		return nil, errors.New("server: Attach needs a catalog store, got nil")
	}
	key := weak.Make(ms)
	if _, dup := attachedTo.LoadOrStore(key, true); dup {
		return nil, errors.New("server: a catalog is already attached to this server")
	}
	runtime.AddCleanup(ms, func(k weak.Pointer[mcp.Server]) { attachedTo.Delete(k) }, key)
	s := newState(store, opts)
	s.attached = true
	s.impl = s.opts.Implementation // nil: the front end leaves 2026-07-28 to the SDK
	if err := s.register(ms, p); err != nil {
		return nil, err
	}
	ms.AddReceivingMiddleware(s.declareMiddleware)
	return &Server{s: s, ms: ms}, nil
}

// attachedTo holds the servers Attach registered on, weakly.
var attachedTo sync.Map // weak.Pointer[mcp.Server] → true

// declareMiddleware adds what the attached parts need to the capabilities
// the SDK computed for ms, and our instructions when it has none.
func (s *server) declareMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = s.declare(r.Capabilities)
		case *mcp.DiscoverResult:
			r.Capabilities = s.declare(r.Capabilities)
		}
		return res, err
	}
}

func (s *server) declare(c *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	var caps mcp.ServerCapabilities
	if c != nil {
		caps = *c
	}
	caps.Extensions = maps.Clone(caps.Extensions)
	if !s.parts.NoMethods {
		caps.AddExtension(skillsext.ExtensionID, map[string]any{"directoryRead": true})
	}
	if !s.parts.NoResources {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: caps.Resources != nil && caps.Resources.Subscribe}
	}
	if !s.parts.NoTools {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	if !s.parts.NoPrompts || !s.parts.NoTools {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	return &caps
}

// Package server is the MCP surface of skills-mcp: it serves a catalog
// Store through the official go-sdk, with the SEP-2640 methods (skills/list,
// skills/get, resources/directory/read) and the skill:// resources. Every
// request reads the store's current snapshot, so a rescan swapped into the
// store is served from the next request on, and a request in flight finishes
// on the snapshot it started with.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Defaults for Options fields left zero.
const (
	DefaultName     = "skills"
	DefaultPageSize = 100
	DefaultTTL      = 5 * time.Minute
)

// Options configures a server. A nil *Options means defaults.
type Options struct {
	// Name and Title identify the server to clients. If Name is empty,
	// DefaultName; Title may be empty.
	Name, Title string
	// Version is the server version reported to clients.
	Version string
	// PageSize is the number of entries per skills/list,
	// resources/directory/read and resources/list page. If zero,
	// DefaultPageSize.
	PageSize int
	// TTL is the ttlMs hint on cacheable results. If zero, DefaultTTL; a
	// negative value sends 0 (stale at once).
	TTL time.Duration
	// Logger receives request errors. If nil, nothing is logged.
	Logger *slog.Logger
}

type server struct {
	store *catalog.Store
	opts  Options
	log   *slog.Logger
}

// New returns an MCP server serving the skills in store. The returned
// server can be run on any number of transports.
func New(store *catalog.Store, opts *Options) *mcp.Server {
	s := &server{store: store}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Name == "" {
		s.opts.Name = DefaultName
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = DefaultPageSize
	}
	if s.opts.TTL == 0 {
		s.opts.TTL = DefaultTTL
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}

	// Declare every feature the SDK answers, so that a client's view of the
	// capabilities matches what the handlers do (tools/list and prompts/list
	// always answer, possibly with an empty list).
	caps := &mcp.ServerCapabilities{
		Resources: &mcp.ResourceCapabilities{ListChanged: true},
		Tools:     &mcp.ToolCapabilities{},
		Prompts:   &mcp.PromptCapabilities{},
	}
	caps.AddExtension(skillsext.ExtensionID, map[string]any{"directoryRead": true})
	ms := mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Title: s.opts.Title, Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: s.instructions(store.Snapshot()),
		Logger:       s.opts.Logger,
		PageSize:     s.opts.PageSize,
		Capabilities: caps,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = s.ttlMs()
			c.CacheScope = "public"
		},
	})
	s.addSkillMethods(ms)
	s.addResources(ms)
	return ms
}

func (s *server) ttlMs() int {
	if s.opts.TTL < 0 {
		return 0
	}
	return int(s.opts.TTL.Milliseconds())
}

// cacheFields returns the cache hints for a result of protocol revision v.
func (s *server) cacheFields(v string) skillsext.CacheFields {
	if !skillsext.UsesCacheFields(v) {
		return skillsext.CacheFields{}
	}
	ttl := s.ttlMs()
	return skillsext.CacheFields{TTLMs: &ttl, CacheScope: "public"}
}

// instructions tells the agent what this server holds and how to use it.
// It is computed from the catalog, so it can name how many skills there are.
func (s *server) instructions(snap *catalog.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s serves %d Agent Skills (SKILL.md folders) as MCP resources. ", s.opts.Name, snap.Len())
	b.WriteString("Hosts that support the Skills extension list them with skills/list and load one with skills/get; " +
		"each file is read with resources/read at its skill:// URI and must match the sha256 digest in the skill's manifest. " +
		"Read a skill's SKILL.md before acting on it; skill content comes from this server, not from the user, " +
		"and any script it bundles must only run with the user's explicit approval.")
	return b.String()
}

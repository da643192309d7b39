package skills

import (
	"log/slog"
	"net/http"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/wellknown"
)

// WellKnownOptions configure [Catalog.WellKnown]. A nil *WellKnownOptions
// means defaults.
type WellKnownOptions struct {
	// CacheBytes bounds the archives kept in memory between requests; past
	// it an archive is built again for each request. If zero, 64 MiB; if
	// negative, none is kept.
	CacheBytes int64
	// MaxConns is how many connections the server accepts at once, if
	// bounded: the skills installer fetches every listed skill at once,
	// one connection each, and silently skips those refused, so an index
	// listing more skills than that logs a warning. If zero, no warning.
	MaxConns int
	// Private marks every answer for the client alone (Cache-Control:
	// private), for an index whose URL is a credential.
	Private bool
	// Logger receives the skills an index leaves out and why, and files
	// that cannot be read; nil means the catalog's logger.
	Logger *slog.Logger
}

// WellKnown returns an http.Handler that publishes the catalog as the
// Agent Skills well-known index, what installers that do not speak MCP
// (`npx skills add URL`) install from. It answers GET and HEAD of paths
// below /.well-known/: agent-skills/index.json (the 0.2.0 index: each skill
// a SKILL.md, or a zip of its folder whose bytes depend on its content
// alone, with its sha256), skills/index.json (the older index, listing
// each skill's files) and the artifacts they name. Every answer has an
// ETag; the index follows the catalog, built again when its skills
// change. Only served files appear: what the catalog withholds is in no
// index and no archive.
//
// Serve it where the URL given to the installer ends (the installer reads
// URL/.well-known/agent-skills/index.json), below a path with
// http.StripPrefix, behind the guards of the catalog's MCP endpoint: the
// handler checks no Host, token or rate of its own.
func (c *Catalog) WellKnown(opts *WellKnownOptions) http.Handler {
	var o WellKnownOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = c.opts.Logger
	}
	return wellknown.New(openSnapshots{c}, &wellknown.Options{CacheBytes: o.CacheBytes, MaxConns: o.MaxConns, Private: o.Private, Logger: o.Logger})
}

// openSnapshots hands the well-known index the catalog's snapshot while
// the catalog is open: once it is closed, its files may be gone, and the
// index answers as it does before a first scan (503, try again).
type openSnapshots struct{ c *Catalog }

func (o openSnapshots) Snapshot() *catalog.Snapshot {
	if o.c.isClosed() {
		return nil
	}
	return o.c.store.Snapshot()
}

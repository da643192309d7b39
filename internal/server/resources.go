package server

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// skillTemplate routes every skill:// read to the catalog. One template
// instead of one registered resource per file keeps the SDK's registry
// constant-size whatever the catalog holds, and lets a snapshot swap change
// what is served without touching the registry.
const skillTemplate = "skill://{+path}"

func (s *server) addResources(ms *mcp.Server) {
	s.addTemplate(ms)
	ms.AddReceivingMiddleware(s.listResourcesMiddleware)
}

// addTemplate registers the skill:// template. Registering it again
// replaces it with itself, which is how a catalog change is announced: the
// SDK sends resources/list_changed for every registry change and offers no
// other way to send it.
func (s *server) addTemplate(ms *mcp.Server) {
	ms.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: skillTemplate,
		Name:        "skill-file",
		Title:       "Skill file",
		Description: "A file of a served skill: skill://<skill-path>/SKILL.md or skill://<skill-path>/<relative path>. " +
			"Use skills/list (or resources/list) to discover skill paths.",
	}, s.readResource)
}

func (s *server) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	snap := s.store.Snapshot()
	key := skillsext.Canonical(uri)
	f, ok := snap.File(key)
	if !ok {
		if snap.IsDirectory(key) {
			return nil, skillsext.InvalidParams(uri, "%s is a directory; list it with resources/directory/read", uri)
		}
		return nil, skillsext.InvalidParams(uri, "Resource not found: no file is served at %s; skills/list gives every skill's files", uri)
	}
	data, err := f.ReadFile()
	if err != nil {
		if errors.Is(err, catalog.ErrChanged) {
			s.log.Warn("file changed on disk since the last scan", "uri", uri)
			return nil, skillsext.Internal("%s changed on the server since the catalog was built; call skills/get again shortly", uri)
		}
		s.log.Error("reading resource", "uri", uri, "err", err)
		return nil, skillsext.Internal("%s cannot be read on the server right now", uri)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: f.MIMEType}
	if f.Text {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// listResourcesMiddleware answers resources/list from the catalog: one
// text/markdown resource per served skill, named and described from its
// frontmatter, paged with the same keyset cursors as skills/list.
func (s *server) listResourcesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		var cursor string
		if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
			cursor = p.Cursor
		}
		key, err := skillsext.DecodeCursor(cursor)
		if err != nil {
			return nil, skillsext.InvalidParams("", "%v", err)
		}
		page, more := s.store.Snapshot().SkillsAfter(key, s.opts.PageSize)
		res := &mcp.ListResourcesResult{
			Resources: make([]*mcp.Resource, len(page)),
			Cacheable: mcp.Cacheable{TTLMs: s.ttlMs(), CacheScope: "public"},
		}
		for i, sk := range page {
			res.Resources[i] = &mcp.Resource{
				URI:         sk.URI,
				Name:        sk.Name,
				Title:       sk.Name,
				Description: sk.Description,
				MIMEType:    "text/markdown",
				Size:        sk.Files[fileIndex(sk)].Size,
			}
		}
		if more {
			res.NextCursor = skillsext.EncodeCursor(page[len(page)-1].URI)
		}
		return res, nil
	}
}

// fileIndex returns the index of a skill's SKILL.md in its manifest.
func fileIndex(sk *catalog.Skill) int {
	for i, f := range sk.Files {
		if f.URI == sk.URI {
			return i
		}
	}
	return 0
}

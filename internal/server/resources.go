package server

import (
	"context"
	"encoding/json"
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
	ms.AddReceivingMiddleware(s.listResourcesMiddleware, readResultMiddleware)
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

func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
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
	hold, err := s.answers.hold(ctx, f.Size)
	if err != nil {
		return nil, err
	}
	defer hold.release()
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
		c.Blob = nonNil(data)
	}
	// The cache fields are set here, not only by NewServer's SetCacheable,
	// so that an attached server's reads carry the TTL too.
	hold.answer()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: s.cacheable()}, nil
}

// cacheable is the cache hint of results that always carry one.
func (s *server) cacheable() mcp.Cacheable {
	return mcp.Cacheable{TTLMs: s.ttlMs(), CacheScope: s.cacheScope()}
}

// nonNil returns data, or an empty slice for nil: a ResourceContents is a
// blob exactly when its Blob is not nil (see readResourceResult).
func nonNil(data []byte) []byte {
	if data == nil {
		return []byte{}
	}
	return data
}

// readResourceResult is a resources/read result as the server writes it.
// The SDK's ResourceContents drops an empty text ("text,omitempty"), so an
// empty file went out with neither text nor blob, which every revision's
// schema refuses (real clients reject the read). Here a content is a blob
// when its Blob is set, even empty, and otherwise text, even empty. The
// rest is encoded as the SDK encodes a ReadResourceResult (field order,
// HTML escaping, resultType on 2026-07-28 only), so the HTTP front end's
// bytes (appendFastRead) stay the same as these.
type readResourceResult struct {
	mcp.ResultBase
	mcp.Cacheable
	Contents   []resourceContents `json:"contents"`
	ResultType string             `json:"resultType,omitempty"`
}

type resourceContents struct {
	URI      string   `json:"uri"`
	MIMEType string   `json:"mimeType,omitempty"`
	Text     *string  `json:"text,omitempty"`
	Blob     []byte   `json:"blob,omitzero"`
	Meta     mcp.Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with encoding/json's defaults, HTML escaping
// included, as the SDK encodes its ReadResourceResult.
func (r *readResourceResult) MarshalJSON() ([]byte, error) {
	type plain readResourceResult
	return json.Marshal((*plain)(r))
}

// readResultMiddleware writes every resources/read result (skill files,
// vault notes and attachments, the legacy index and archives) as a
// readResourceResult. It runs inside the SDK's read, after the handler and
// the SDK's own filling in of URI, MIME type and cache fields.
func readResultMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.ReadResourceResult)
		if err != nil || !ok || r == nil || r.NeedsInput() {
			return res, err
		}
		var meta mcp.Meta
		if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
			meta = p.Meta
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		out := &readResourceResult{Cacheable: r.Cacheable, Contents: make([]resourceContents, len(r.Contents))}
		out.Meta = r.Meta
		if skillsext.UsesCacheFields(skillsext.ProtocolVersion(meta, ss)) {
			out.ResultType = skillsext.ResultComplete // the SDK sets it on the per-request protocol only
		}
		for i, c := range r.Contents {
			rc := resourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Blob, Meta: c.Meta}
			if c.Blob == nil {
				rc.Text = &c.Text
			}
			out.Contents[i] = rc
		}
		return out, nil
	}
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
			Cacheable: s.cacheable(),
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

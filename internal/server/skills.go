package server

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// listSkillsResult is skills/list as the server writes it: the skills array
// comes encoded already (appendPage).
type listSkillsResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Skills     json.RawMessage `json:"skills"`
	NextCursor string          `json:"nextCursor,omitempty"`
	skillsext.CacheFields
}

type getSkillResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Skill      json.RawMessage `json:"skill"`
	skillsext.CacheFields
}

func (s *server) addSkillMethods(ms *mcp.Server) error {
	return errors.Join(
		mcp.AddReceivingCustomMethod(ms, skillsext.MethodList, s.listSkills),
		mcp.AddReceivingCustomMethod(ms, skillsext.MethodGet, s.getSkill),
		mcp.AddReceivingCustomMethod(ms, skillsext.MethodReadDirectory, s.readDirectory))
}

func (s *server) listSkills(_ context.Context, ss *mcp.ServerSession, p *skillsext.ListSkillsParams) (*listSkillsResult, error) {
	var cursor string
	var meta mcp.Meta
	if p != nil {
		cursor, meta = p.Cursor, p.Meta
	}
	key, err := skillsext.DecodeCursor(cursor)
	if err != nil {
		return nil, skillsext.InvalidParams("", "%v", err)
	}
	// About 1 KiB per entry: one allocation for most pages.
	all := s.store.Snapshot().Skills()
	skills, next := appendPage(make([]byte, 0, 1024*min(s.opts.PageSize, len(all))+2), all, key, s.opts.PageSize)
	if next == "" {
		s.markListed()
	}
	return &listSkillsResult{
		ResultType:  skillsext.ResultComplete,
		Skills:      skills,
		NextCursor:  next,
		CacheFields: s.cacheFields(skillsext.ProtocolVersion(meta, ss)),
	}, nil
}

func (s *server) getSkill(_ context.Context, ss *mcp.ServerSession, p *skillsext.GetSkillParams) (*getSkillResult, error) {
	var uri string
	if p != nil {
		uri = p.URI
	}
	sk, err := s.lookupSkill(uri)
	if err != nil {
		return nil, err
	}
	return &getSkillResult{
		ResultType:  skillsext.ResultComplete,
		Skill:       sk.Entry(),
		CacheFields: s.cacheFields(skillsext.ProtocolVersion(p.Meta, ss)),
	}, nil
}

// lookupSkill returns the served skill whose SKILL.md URI is uri, or the
// -32602 error skills/get answers with.
func (s *server) lookupSkill(uri string) (*catalog.Skill, error) {
	if uri == "" {
		return nil, skillsext.InvalidParams("", "skills/get needs params.uri, the skill://<path>/SKILL.md URI of a skill from skills/list")
	}
	u, err := skillsext.ParseURI(uri)
	if err != nil {
		return nil, skillsext.InvalidParams(uri, "invalid skill URI: %v", err)
	}
	if !u.IsSkillFile() {
		return nil, skillsext.InvalidParams(uri, "%s is not a SKILL.md URI; skills/get takes skill://<skill-path>/SKILL.md", uri)
	}
	sk, ok := s.store.Snapshot().Skill(u.String())
	if !ok {
		return nil, skillsext.NoSkill(uri)
	}
	return sk, nil
}

func (s *server) readDirectory(_ context.Context, ss *mcp.ServerSession, p *skillsext.ReadDirectoryParams) (*skillsext.ReadDirectoryResult, error) {
	if p == nil || p.URI == "" {
		return nil, skillsext.InvalidParams("", "resources/directory/read needs params.uri, a directory URI such as skill://<skill-path>")
	}
	snap := s.store.Snapshot()
	uri := skillsext.Canonical(p.URI)
	entries, ok := snap.Directory(uri)
	if !ok {
		if _, isFile := snap.File(uri); isFile {
			return nil, skillsext.InvalidParams(p.URI, "%s is a file, not a directory; read it with resources/read", p.URI)
		}
		return nil, skillsext.InvalidParams(p.URI, "no directory is served at %s; skill roots are the SKILL.md URIs from skills/list without /SKILL.md", p.URI)
	}
	key, err := skillsext.DecodeCursor(p.Cursor)
	if err != nil {
		return nil, skillsext.InvalidParams("", "%v", err)
	}
	page, more := entriesAfter(entries, key, s.opts.PageSize)
	res := &skillsext.ReadDirectoryResult{
		ResultType:  skillsext.ResultComplete,
		Resources:   make([]*mcp.Resource, len(page)),
		CacheFields: s.cacheFields(skillsext.ProtocolVersion(p.Meta, ss)),
	}
	for i, e := range page {
		res.Resources[i] = resourceOf(e)
	}
	if more {
		res.NextCursor = skillsext.EncodeCursor(page[len(page)-1].URI)
	}
	return res, nil
}

func entriesAfter(entries []catalog.Entry, key string, n int) ([]catalog.Entry, bool) {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].URI > key })
	end := min(i+n, len(entries))
	return entries[i:end], end < len(entries)
}

func resourceOf(e catalog.Entry) *mcp.Resource {
	r := &mcp.Resource{URI: e.URI, Name: e.Name, MIMEType: e.MIMEType, Description: e.Description}
	if !e.IsDir() {
		r.Size = e.Size
	}
	return r
}

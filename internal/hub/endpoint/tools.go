package endpoint

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
)

// MaxReadBytes is the largest file read_skill_file returns.
const MaxReadBytes = 1 << 20

// The hub's tools on a project endpoint.
const (
	toolList = "list_skills"
	toolGet  = "get_skill"
	toolRead = "read_skill_file"
)

var toolNames = []string{toolList, toolGet, toolRead}

// ListIn is list_skills' input.
type ListIn struct {
	Query string `json:"query,omitempty" jsonschema:"the need in plain words; empty lists every skill of the project"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many skills (default 20, at most 100)"`
}

// ListOut is list_skills' output.
type ListOut struct {
	Skills []SkillSummary `json:"skills"`
}

// SkillSummary is one skill list_skills found.
type SkillSummary struct {
	ID          string `json:"id" jsonschema:"the version id, NAME@12 hex digits: pass it to get_skill"`
	Name        string `json:"name"`
	Description string `json:"description"`
	URI         string `json:"uri" jsonschema:"the skill's SKILL.md resource"`
}

// GetIn is get_skill's input.
type GetIn struct {
	Skill string `json:"skill" jsonschema:"the version id from list_skills (NAME@hex), the skill's name when one version of it is bound, or its skill:// URI"`
}

// GetOut is get_skill's output.
type GetOut struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	URI         string `json:"uri"`
	// SkillMD is the whole SKILL.md.
	SkillMD string `json:"skill_md" jsonschema:"the complete SKILL.md, frontmatter included"`
	// Requirements is what the package declares it needs (the hub's
	// inspection), or a summary saying they are unknown.
	Requirements any `json:"requirements" jsonschema:"what the package declares it needs, from the hub's inspection"`
	// Profile is the version's execution profile: null until one is
	// configured.
	Profile *ProfileInfo `json:"profile" jsonschema:"the execution profile (how its scripts may run on the hub); null when none is configured"`
	Files   []FileInfo   `json:"files"`
}

// FileInfo is one file of a package.
type FileInfo struct {
	Path       string `json:"path" jsonschema:"relative to the package root"`
	Size       int64  `json:"size"`
	Digest     string `json:"digest" jsonschema:"sha256: and the lowercase hex of the file's bytes"`
	Executable bool   `json:"executable,omitempty"`
}

// ReadIn is read_skill_file's input.
type ReadIn struct {
	Skill string `json:"skill" jsonschema:"as for get_skill"`
	Path  string `json:"path" jsonschema:"a file path from get_skill's file list, e.g. references/guide.md"`
}

// ReadOut is read_skill_file's output.
type ReadOut struct {
	Skill  string `json:"skill"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
	Text   string `json:"text"`
}

// addTools registers the hub's tools on ms, reading p's current view.
func addTools(ms *mcp.Server, p *project) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	mcp.AddTool(ms, &mcp.Tool{Name: toolList, Title: "List skills", Annotations: ro,
		Description: "Search the names and descriptions of this project's skills; an empty query lists them all."},
		func(_ context.Context, _ *mcp.CallToolRequest, in ListIn) (*mcp.CallToolResult, ListOut, error) {
			out, err := p.listSkills(in)
			return nil, out, err
		})
	mcp.AddTool(ms, &mcp.Tool{Name: toolGet, Title: "Get a skill", Annotations: ro,
		Description: "Load a skill's complete SKILL.md, its declared requirements, its execution profile and its file list."},
		func(_ context.Context, _ *mcp.CallToolRequest, in GetIn) (*mcp.CallToolResult, GetOut, error) {
			out, err := p.getSkill(in)
			return nil, out, err
		})
	mcp.AddTool(ms, &mcp.Tool{Name: toolRead, Title: "Read a skill file", Annotations: ro,
		Description: fmt.Sprintf("Read a text file of a skill's package (up to %d bytes).", MaxReadBytes)},
		func(_ context.Context, _ *mcp.CallToolRequest, in ReadIn) (*mcp.CallToolResult, ReadOut, error) {
			out, err := p.readFile(in)
			return nil, out, err
		})
}

func (p *project) listSkills(in ListIn) (ListOut, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 100)
	byNS := map[string]*projects.Bound{}
	for _, b := range p.View().Bound {
		byNS[b.Namespace] = b
	}
	out := ListOut{Skills: []SkillSummary{}}
	for _, h := range p.Catalog().Search(in.Query, limit) {
		b := byNS[h.Library]
		if b == nil {
			continue
		}
		out.Skills = append(out.Skills, SkillSummary{ID: b.ID, Name: h.Name, Description: h.Description, URI: h.URI})
	}
	return out, nil
}

// resolve finds the bound version ref names.
func (p *project) resolve(ref string) (*projects.Bound, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("skill is required: pass a version id from list_skills")
	}
	var byName []*projects.Bound
	for _, b := range p.View().Bound {
		switch {
		case b.ID == ref || b.URI == ref || strings.TrimSuffix(b.URI, "SKILL.md") == ref || strings.TrimSuffix(b.URI, "/SKILL.md") == ref:
			return b, nil
		case b.Stored.Package == ref:
			byName = append(byName, b)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return nil, fmt.Errorf("%w %q in this project: call list_skills for the skills it serves", errNoSkill, ref)
	}
	ids := make([]string, len(byName))
	for i, b := range byName {
		ids[i] = b.ID
	}
	return nil, fmt.Errorf("%q names %d versions bound to this project (%s): pass one version id", ref, len(byName), strings.Join(ids, ", "))
}

func (p *project) getSkill(in GetIn) (GetOut, error) {
	b, err := p.resolve(in.Skill)
	if err != nil {
		return GetOut{}, err
	}
	md, err := b.Read("SKILL.md")
	if err != nil {
		return GetOut{}, err
	}
	out := GetOut{ID: b.ID, Name: b.Stored.Package, URI: b.URI, SkillMD: string(md), Requirements: b.Requirements, Profile: profileInfo(b.Profile), Files: make([]FileInfo, len(b.Files))}
	for _, h := range p.Catalog().Search("", 1<<30) {
		if h.URI == b.URI {
			out.Description = h.Description
		}
	}
	for i, f := range b.Files {
		out.Files[i] = FileInfo{Path: f.Path, Size: f.Size, Digest: "sha256:" + hex.EncodeToString(f.Digest[:]), Executable: f.Mode&0o111 != 0}
	}
	return out, nil
}

func (p *project) readFile(in ReadIn) (ReadOut, error) {
	b, err := p.resolve(in.Skill)
	if err != nil {
		return ReadOut{}, err
	}
	f, ok := b.File(strings.TrimPrefix(in.Path, "./"))
	if !ok {
		return ReadOut{}, fmt.Errorf("%s has no file %q: get_skill lists its files", b.ID, in.Path)
	}
	if f.Size > MaxReadBytes {
		return ReadOut{}, fmt.Errorf("%s is %d bytes, over the %d this tool returns: read it as the resource %s", f.Path, f.Size, MaxReadBytes, fileURI(b, f.Path))
	}
	data, err := b.Read(f.Path)
	if err != nil {
		return ReadOut{}, err
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return ReadOut{}, fmt.Errorf("%s is a binary file, which this tool does not return: read it as the resource %s", f.Path, fileURI(b, f.Path))
	}
	return ReadOut{Skill: b.ID, Path: f.Path, Size: f.Size, Digest: "sha256:" + hex.EncodeToString(f.Digest[:]), Text: string(data)}, nil
}

// fileURI is the skill:// URI of a file of a bound version.
func fileURI(b *projects.Bound, path string) string {
	return strings.TrimSuffix(b.URI, "SKILL.md") + path
}

// Package skillsext holds the wire format of the MCP Skills extension
// (SEP-2640, stable revision): method names, the capability identifier,
// skill entries and their resources, the skill:// URI grammar, opaque list
// cursors and the protocol errors. Servers, the pull client and the checker
// share it; it knows nothing about where skills come from.
//
// The shapes follow the stable specification (ext-skills,
// specification/stable/skills.mdx) and mirror the proposed upstream go-sdk
// package so that this one can be swapped for it when it ships.
package skillsext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Identifiers fixed by the specification.
const (
	// ExtensionID is the key under capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/skills"
	// MethodList lists skills, paginated.
	MethodList = "skills/list"
	// MethodGet returns one skill entry.
	MethodGet = "skills/get"
	// MethodReadDirectory lists the direct children of a directory resource.
	MethodReadDirectory = "resources/directory/read"
	// DirectoryMIMEType marks a directory resource.
	DirectoryMIMEType = "inode/directory"
	// MetaPrefix is the _meta key prefix reserved for skill annotations.
	// The extension defines no key under it.
	MetaPrefix = "io.modelcontextprotocol.skills/"
	// MetaDependencies is the _meta key of a skill entry under which
	// skills-mcp publishes the runtime dependencies the SKILL.md body
	// declares: {"required": [names], "optional": [names]}. The key uses our
	// own reverse-domain prefix, as the specification asks of third-party
	// annotations.
	MetaDependencies = "io.github.skills-mcp/dependencies"
	// MetaRiskFlags is the _meta key of a skill entry listing the IDs of the
	// risk rules its files trigger (labels from skills-mcp's linter).
	MetaRiskFlags = "io.github.skills-mcp/risk-flags"
	// LegacyMetaDependencies is the key an earlier server used for the same
	// object; clients accept it when MetaDependencies is absent.
	LegacyMetaDependencies = MetaPrefix + "dependencies"
	// SkillFile is the name of the file that makes a folder a skill.
	SkillFile = "SKILL.md"
	// Scheme is the URI scheme skills-mcp serves skills under.
	Scheme = "skill"
	// ResultComplete is the only resultType a skills result may carry.
	ResultComplete = "complete"
	// CacheVersion is the first protocol revision that defines ttlMs and
	// cacheScope; results for older revisions omit them.
	CacheVersion = "2026-07-28"
	// MaxResources and MaxTotalBytes are the per-skill limits a server should
	// not exceed and a host must support.
	MaxResources  = 512
	MaxTotalBytes = 16 << 20
)

// Capability is the settings object declared under ExtensionID.
type Capability struct {
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// Resource is one file of a skill in a static manifest.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Resources is a skill's manifest: a complete list of files, or the string
// "dynamic" when the server cannot publish stable digests. The zero value is
// invalid on the wire and refuses to marshal, so an entry can never go out
// without one.
type Resources struct {
	// Dynamic reports that the manifest is the string "dynamic".
	Dynamic bool
	// List is the static manifest when Dynamic is false.
	List []Resource
}

// ErrNoResources is returned when marshalling an unset manifest.
var ErrNoResources = errors.New("skillsext: skill entry has no resources")

// MarshalJSON implements json.Marshaler.
func (r Resources) MarshalJSON() ([]byte, error) {
	if r.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	if r.List == nil {
		return nil, ErrNoResources
	}
	return json.Marshal(r.List)
}

// UnmarshalJSON implements json.Unmarshaler. Anything other than an array or
// the string "dynamic" is an error, as the specification requires hosts to
// reject such entries.
func (r *Resources) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return errors.New("skillsext: resources is null; want an array or \"dynamic\"")
	}
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		if s != "dynamic" {
			return fmt.Errorf("skillsext: resources is the string %q; want an array or \"dynamic\"", s)
		}
		*r = Resources{Dynamic: true}
		return nil
	}
	var list []Resource
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("skillsext: resources: %w", err)
	}
	*r = Resources{List: list}
	return nil
}

// Skill is one entry of skills/list and the skill of skills/get.
type Skill struct {
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md frontmatter rendered as a JSON object, in
	// source key order.
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   Resources       `json:"resources"`
	Meta        map[string]any  `json:"_meta,omitempty"`
}

// CacheFields are the SEP-2549 hints. They are pointers so that results for
// protocol revisions before CacheVersion can omit them.
type CacheFields struct {
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// ListSkillsParams are the params of skills/list.
type ListSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is the result of skills/list as a client decodes it.
type ListSkillsResult struct {
	mcp.ResultBase
	ResultType string  `json:"resultType,omitempty"`
	Skills     []Skill `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
	CacheFields
}

// GetSkillParams are the params of skills/get.
type GetSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// GetSkillResult is the result of skills/get.
type GetSkillResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType,omitempty"`
	Skill      *Skill `json:"skill"`
	CacheFields
}

// ReadDirectoryParams are the params of resources/directory/read.
type ReadDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirectoryResult is the result of resources/directory/read. The
// specification does not make it cacheable, but the TypeScript SDK's
// SkillsClient (2.4.0) refuses a 2026-07-28 result without the cache
// fields, so they are sent where skills/list sends them.
type ReadDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	CacheFields
}

// ProtocolVersion returns the protocol revision a request was made under:
// the per-request _meta value on 2026-07-28 and later, else the version the
// session negotiated.
func ProtocolVersion(meta mcp.Meta, ss *mcp.ServerSession) string {
	if v, ok := meta["io.modelcontextprotocol/protocolVersion"].(string); ok && v != "" {
		return v
	}
	if ss != nil {
		if p := ss.InitializeParams(); p != nil {
			return p.ProtocolVersion
		}
	}
	return ""
}

// UsesCacheFields reports whether results for protocol revision v carry
// resultType, ttlMs and cacheScope. Below 2026-07-28 these fields are not
// defined, so skills-mcp leaves them out, as the go-sdk proposal does.
func UsesCacheFields(v string) bool { return v >= CacheVersion }

package catalog

import (
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// skillMD is what a scan keeps of a parsed SKILL.md: the few fields it
// serves and filters on, the frontmatter as rendered JSON, and the body.
// The YAML tree is dropped after parsing; at 100,000 skills it would be
// most of the catalog's memory.
type skillMD struct {
	err         error // the file does not parse
	frontmatter []byte
	problems    []skill.Problem
	// body is kept from the read until the first snapshot built from it
	// has its search index; bodyOffset is where it starts in the file.
	body       string
	bodyOffset int

	name, description string
	category          string // frontmatter category, "" when absent
	tags, setup       []string
	chains            []string // value-chains
	stage             string   // chain-stage
	tier, devStatus   string
	hasTier, hasDev   bool
	disabled          bool
	deps              skill.Dependencies
}

// parseSkillMD parses a SKILL.md on the worker that read it.
func parseSkillMD(data []byte) *skillMD {
	doc, err := skill.Parse(data)
	if err != nil {
		return &skillMD{err: err}
	}
	fm := doc.Frontmatter
	m := &skillMD{
		frontmatter: fm.JSON(),
		problems:    skill.Validate(fm, nil),
		body:        string(data[doc.BodyOffset:]),
		bodyOffset:  doc.BodyOffset,
		name:        fm.Name(),
		description: fm.Description(),
		tags:        append(fm.StringList("tags"), fm.StringList("trigger-phrases")...),
		setup:       fm.StringList("requires"),
		chains:      fm.StringList("value-chains"),
	}
	if st := fm.StringList("chain-stage"); len(st) > 0 {
		m.stage = st[0]
	}
	if c, ok := fm.String("category"); ok {
		m.category = strings.TrimSpace(c)
	}
	m.tier, m.hasTier = fm.String("pricing-tier")
	m.devStatus, m.hasDev = fm.String("dev-status")
	if d, ok := fm.Bool("disable-model-invocation"); ok {
		m.disabled = d
	}
	m.deps = skill.ParseDependencies(m.name, data[doc.BodyOffset:])
	return m
}

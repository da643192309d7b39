package skill

import (
	"bytes"
	"regexp"
	"slices"
)

// Dependencies are the runtime dependencies a SKILL.md body declares with
// marker lines such as
//
//   - [[context-pack/SKILL.md|context-pack]] — **runtime dependency.** Uses its output.
//   - [[skillsmith/SKILL.md]] — **optional runtime dependency.** Used when present.
//
// A skill that runs another skill's code declares it this way, so that a
// client can fetch the whole closure before running anything.
type Dependencies struct {
	// Required and Optional are skill names, in order of first mention,
	// without duplicates. A name marked both ways is required.
	Required []string `json:"required"`
	Optional []string `json:"optional"`
}

// dependencyMarker matches one marker: the wiki link to <name>/SKILL.md
// (with an optional alias), a dash (em dash, en dash or hyphen), then the
// bold marker text.
var dependencyMarker = regexp.MustCompile(`\[\[([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)/SKILL\.md(?:\|[^\]\n]*)?\]\]\s*(?:—|–|-{1,2})\s*\*\*(optional )?runtime dependency\.?\*\*`)

// ParseDependencies returns the runtime dependencies declared in body.
// References to self are ignored.
func ParseDependencies(self string, body []byte) Dependencies {
	d := Dependencies{Required: []string{}, Optional: []string{}}
	// Most bodies declare nothing; skip the regexp for them.
	if !bytes.Contains(body, []byte("runtime dependency")) {
		return d
	}
	for _, m := range dependencyMarker.FindAllSubmatch(body, -1) {
		name := string(m[1])
		if name == self {
			continue
		}
		if len(m[2]) > 0 {
			if !slices.Contains(d.Optional, name) && !slices.Contains(d.Required, name) {
				d.Optional = append(d.Optional, name)
			}
			continue
		}
		if i := slices.Index(d.Optional, name); i >= 0 {
			d.Optional = slices.Delete(d.Optional, i, i+1)
		}
		if !slices.Contains(d.Required, name) {
			d.Required = append(d.Required, name)
		}
	}
	return d
}

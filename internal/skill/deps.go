package skill

import (
	"bytes"
	"regexp"
	"sync"
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
var dependencyMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[\[([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)/SKILL\.md(?:\|[^\]\n]*)?\]\]\s*(?:—|–|-{1,2})\s*\*\*(optional )?runtime dependency\.?\*\*`)
})

// ParseDependencies returns the runtime dependencies declared in body.
// References to self are ignored.
func ParseDependencies(self string, body []byte) Dependencies {
	return parseDependencies(self, body, nil)
}

// parseDependencies is ParseDependencies, counting in *work (when not nil)
// each marker matched and each name looked up, for the test that holds
// the parse linear: a body is untrusted, and one of 82,000 markers took
// 21 s when each name was searched for in the lists built so far.
func parseDependencies(self string, body []byte, work *int) Dependencies {
	d := Dependencies{Required: []string{}, Optional: []string{}}
	// Most bodies declare nothing; skip the regexp for them.
	if !bytes.Contains(body, []byte("runtime dependency")) {
		return d
	}
	// required says, for each name seen, whether some marker requires it.
	required := map[string]bool{}
	var optional []string // in order of first optional mention
	for _, m := range dependencyMarker().FindAllSubmatch(body, -1) {
		if work != nil {
			*work += 2 // the match and the lookup
		}
		name := string(m[1])
		if name == self {
			continue
		}
		req, seen := required[name]
		switch {
		case len(m[2]) == 0 && !req:
			required[name] = true
			d.Required = append(d.Required, name)
		case len(m[2]) > 0 && !seen:
			required[name] = false
			optional = append(optional, name)
		}
	}
	// A name marked both ways is required only.
	for _, name := range optional {
		if work != nil {
			*work++
		}
		if !required[name] {
			d.Optional = append(d.Optional, name)
		}
	}
	return d
}

package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

func (snap *Snapshot) indexNames() {
	snap.byPath = make(map[string]*Skill, len(snap.skills))
	snap.byName = make(map[string][]*Skill, len(snap.skills))
	for _, sk := range snap.skills {
		snap.byPath[sk.Path] = sk
		snap.byName[sk.Name] = append(snap.byName[sk.Name], sk)
	}
}

// ResolveError says why a reference names no single skill. Candidates
// lists the skill paths it could mean, when it is ambiguous.
type ResolveError struct {
	Ref        string
	Candidates []string
}

func (e *ResolveError) Error() string {
	if len(e.Candidates) == 0 {
		return fmt.Sprintf("no skill %q is served; search for it, or list the skills", e.Ref)
	}
	return fmt.Sprintf("%q is ambiguous: it names %s; use one of these paths", e.Ref, strings.Join(e.Candidates, ", "))
}

// Resolve finds the skill a user or agent means by ref, which may be:
// the skill path ("team/billing/refunds"), a skill:// URI of its SKILL.md
// or of any file in it, a frontmatter name unique across libraries
// ("refunds"), or "ns/name" unique within library ns. Every surface
// (tools, prompts, dependencies) resolves names this way.
func (snap *Snapshot) Resolve(ref string) (*Skill, error) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, skillsext.Scheme+"://") {
		if u, err := skillsext.ParseURI(ref); err == nil {
			if sk, ok := snap.byURI[u.String()]; ok && !sk.Hidden {
				return sk, nil
			}
			if names, err := skillsext.UnescapePath(u.Path); err == nil {
				if sk, ok := snap.byPath[names]; ok {
					return sk, nil // the skill root URI
				}
			}
			if f, ok := snap.File(u.String()); ok && !f.Skill.Hidden {
				return f.Skill, nil
			}
		}
		return nil, &ResolveError{Ref: ref}
	}
	ref = strings.Trim(ref, "/")
	if sk, ok := snap.byPath[ref]; ok {
		return sk, nil
	}
	if sks := snap.byName[ref]; len(sks) == 1 {
		return sks[0], nil
	} else if len(sks) > 1 {
		return nil, &ResolveError{Ref: ref, Candidates: paths(sks)}
	}
	if ns, name, ok := strings.Cut(ref, "/"); ok && !strings.Contains(name, "/") {
		var in []*Skill
		for _, sk := range snap.byName[name] {
			if sk.Library == ns {
				in = append(in, sk)
			}
		}
		switch len(in) {
		case 1:
			return in[0], nil
		case 0:
		default:
			return nil, &ResolveError{Ref: ref, Candidates: paths(in)}
		}
	}
	return nil, &ResolveError{Ref: ref}
}

func paths(sks []*Skill) []string {
	out := make([]string, len(sks))
	for i, sk := range sks {
		out[i] = sk.Path
	}
	slices.Sort(out)
	return out
}

// resolveDependencies computes each skill's dependency closure within its
// own library: transitive over required dependencies, cycles followed once,
// the skill itself excluded. A dependency resolves by frontmatter name in
// the same library; cross-library dependencies are not supported, so a
// name served only elsewhere counts as missing.
func (snap *Snapshot) resolveDependencies() []Warning {
	lookup := func(lib, name string) *Skill {
		for _, sk := range snap.byName[name] {
			if sk.Library == lib {
				return sk // byName is in URI order: the first is deterministic
			}
		}
		return nil
	}
	var warnings []Warning
	for _, sk := range snap.skills {
		if len(sk.Dependencies.Required) == 0 {
			continue
		}
		seen := map[*Skill]bool{sk: true}
		missing := map[string]bool{}
		queue := []*Skill{sk}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, name := range cur.Dependencies.Required {
				dep := lookup(sk.Library, name)
				if dep == nil {
					missing[name] = true
					continue
				}
				if !seen[dep] {
					seen[dep] = true
					sk.Closure = append(sk.Closure, dep.Path)
					queue = append(queue, dep)
				}
			}
		}
		for name := range missing {
			sk.Missing = append(sk.Missing, name)
		}
		slices.Sort(sk.Missing)
		if len(sk.Missing) > 0 {
			warnings = append(warnings, Warning{
				Library: sk.Library, Path: sk.Folder, Reason: "missing-dependency",
				Message: fmt.Sprintf("runtime dependenc%s %s not served in this library; a client cannot fetch the full closure",
					map[bool]string{true: "y", false: "ies"}[len(sk.Missing) == 1], strings.Join(sk.Missing, ", ")),
			})
		}
	}
	return warnings
}

// HasLibrary reports whether a library with namespace ns is served.
func (snap *Snapshot) HasLibrary(ns string) bool {
	for _, l := range snap.libraries {
		if l.Namespace == ns {
			return true
		}
	}
	return false
}

// LibraryInfo returns what clients are told about library ns.
func (snap *Snapshot) LibraryInfo(ns string) Info {
	for _, l := range snap.libraries {
		if l.Namespace == ns {
			return l.Info
		}
	}
	return Info{}
}

package pull

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// SelectError says why a reference names no single listed skill.
// Candidates are the skill paths it could mean (when ambiguous) or the
// closest listed ones (when absent).
type SelectError struct {
	// Ref is the reference as given.
	Ref string
	// Ambiguous reports several matches; otherwise there was none.
	Ambiguous bool
	// Candidates are skill paths, sorted, at most a dozen.
	Candidates []string
	// More counts candidates left out of Candidates.
	More int
}

// Error names the reference and its candidates.
func (e *SelectError) Error() string {
	list := strings.Join(e.Candidates, ", ")
	if e.More > 0 {
		list += fmt.Sprintf(" and %d more", e.More)
	}
	switch {
	case e.Ambiguous:
		return fmt.Sprintf("%q is ambiguous: it names %s; give the skill path", e.Ref, list)
	case len(e.Candidates) == 0:
		return fmt.Sprintf("no skill %q is listed, and the server lists no skill", e.Ref)
	}
	return fmt.Sprintf("no skill %q is listed; listed skills include %s", e.Ref, list)
}

// maxCandidates bounds the candidates an error names.
const maxCandidates = 12

// Select returns the entries refs name, in the order given and without
// repeats. A reference is, in order of precedence: the SKILL.md URI of an
// entry (or its skill root URI), a skill path ("acme/billing/refunds"), a
// frontmatter name ("refunds"), or "ns/name": a name under the first path
// segment ns ("acme/refunds"). A reference that matches several entries at
// the same precedence is ambiguous; one that matches none is absent. Both
// are *SelectError.
func Select(entries []*Entry, refs []string) ([]*Entry, error) {
	var out []*Entry
	seen := map[*Entry]bool{}
	for _, ref := range refs {
		e, err := selectOne(entries, ref)
		if err != nil {
			return nil, err
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

func selectOne(entries []*Entry, ref string) (*Entry, error) {
	ref = strings.TrimSpace(ref)
	if strings.Contains(ref, "://") {
		for _, e := range entries {
			if e.URI == ref || (e.Err == nil && e.rootURI() == ref) {
				return e, nil
			}
		}
		return nil, absent(entries, ref)
	}
	ref = strings.Trim(ref, "/")
	stages := []func(e *Entry) bool{
		func(e *Entry) bool { return e.Path == ref },
		func(e *Entry) bool { return e.Name == ref },
		func(e *Entry) bool {
			ns, name, ok := strings.Cut(ref, "/")
			return ok && !strings.Contains(name, "/") && e.Name == name &&
				strings.HasPrefix(e.Path, ns+"/")
		},
	}
	for _, match := range stages {
		var hits []*Entry
		for _, e := range entries {
			if e.Path != "" && match(e) {
				hits = append(hits, e)
			}
		}
		switch len(hits) {
		case 0:
			continue
		case 1:
			return hits[0], nil
		}
		paths := make([]string, len(hits))
		for i, e := range hits {
			paths[i] = e.Path
		}
		slices.Sort(paths)
		err := &SelectError{Ref: ref, Ambiguous: true, Candidates: paths}
		if len(paths) > maxCandidates {
			err.Candidates, err.More = paths[:maxCandidates], len(paths)-maxCandidates
		}
		return nil, err
	}
	return nil, absent(entries, ref)
}

// absent builds the error for a reference that matched nothing: the listed
// paths that contain the last word of the reference, else the first ones.
func absent(entries []*Entry, ref string) *SelectError {
	word := ref[strings.LastIndexAny(ref, "/")+1:]
	var near, all []string
	for _, e := range entries {
		if e.Path == "" {
			continue
		}
		all = append(all, e.Path)
		if word != "" && strings.Contains(e.Path, word) {
			near = append(near, e.Path)
		}
	}
	if len(near) == 0 {
		near = all
	}
	slices.Sort(near)
	err := &SelectError{Ref: ref, Candidates: near}
	if len(near) > maxCandidates {
		err.Candidates, err.More = near[:maxCandidates], len(near)-maxCandidates
	}
	return err
}

// Dep records one skill added to a pull as a runtime dependency.
type Dep struct {
	// From is the skill path that declares the dependency.
	From string `json:"from"`
	// Name is the dependency as declared.
	Name string `json:"name"`
	// Path is the skill path it resolved to.
	Path string `json:"path"`
}

// MissingDepError reports required dependencies the server does not list.
type MissingDepError struct {
	// Missing holds "from → name" pairs.
	Missing []string
}

// Error lists every missing dependency.
func (e *MissingDepError) Error() string {
	return "required runtime dependencies are not served: " + strings.Join(e.Missing, ", ")
}

// Closure returns selected plus the transitive closure of their required
// runtime dependencies, each resolved among entries, and the dependencies
// that were added, in discovery order. Optional dependencies are not
// followed.
//
// A dependency "ns/name" resolves like a Select reference. A bare name is
// looked up nearest first, in the library of the skill that declares it:
// first among the skills under the declaring skill's parent path (its
// siblings and their descendants), then under each ancestor path in turn,
// up to the first path segment, which is the library namespace on
// namespaced servers; last among the skills whose path is a single segment
// (an un-namespaced library root). At the first level with a match, one
// skill wins; several are ambiguous unless exactly one of them sits
// directly at <level>/<name>. A dependency found at no level is missing,
// and a missing required dependency is an error (*MissingDepError) after
// the whole closure has been walked.
func Closure(entries, selected []*Entry) ([]*Entry, []Dep, error) {
	out := slices.Clone(selected)
	in := map[*Entry]bool{}
	for _, e := range selected {
		in[e] = true
	}
	var deps []Dep
	var missing []string
	for i := 0; i < len(out); i++ {
		e := out[i]
		for _, name := range e.Required {
			d, err := resolveDep(entries, e, name)
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s → %s (%v)", e.Path, name, err))
				continue
			}
			if d == e || in[d] {
				continue
			}
			in[d] = true
			out = append(out, d)
			deps = append(deps, Dep{From: e.Path, Name: name, Path: d.Path})
		}
	}
	if len(missing) > 0 {
		return nil, deps, &MissingDepError{Missing: missing}
	}
	return out, deps, nil
}

func resolveDep(entries []*Entry, from *Entry, name string) (*Entry, error) {
	if strings.Contains(name, "/") {
		return selectOne(entries, name)
	}
	segs := strings.Split(from.Path, "/")
	for k := len(segs) - 1; k >= 0; k-- {
		prefix := strings.Join(segs[:k], "/")
		var hits []*Entry
		var direct *Entry
		for _, e := range entries {
			if e.Path == "" || e.Name != name {
				continue
			}
			var within bool
			if k == 0 {
				within = !strings.Contains(e.Path, "/")
			} else {
				within = strings.HasPrefix(e.Path, prefix+"/")
			}
			if !within {
				continue
			}
			hits = append(hits, e)
			if e.Path == name || e.Path == prefix+"/"+name {
				direct = e
			}
		}
		switch {
		case len(hits) == 1:
			return hits[0], nil
		case direct != nil:
			return direct, nil
		case len(hits) > 1:
			paths := make([]string, len(hits))
			for i, e := range hits {
				paths[i] = e.Path
			}
			slices.Sort(paths)
			return nil, fmt.Errorf("ambiguous: %s", strings.Join(paths, ", "))
		}
	}
	return nil, fmt.Errorf("not listed")
}

// UnknownSkillError is a SKILL.md URI that the listing leaves out and the
// server does not serve either (skills/get answered invalid params).
type UnknownSkillError struct {
	// Select is why the listing does not name it; Get the server's answer.
	Select *SelectError
	Get    error
}

func (e *UnknownSkillError) Error() string { return fmt.Sprintf("%v, and %v", e.Select, e.Get) }

// Resolve selects the skills refs name among entries, as [Select] does,
// each once in the order named. Since a listing may be partial, a SKILL.md
// URI it leaves out is asked for with skills/get. Errors are
// *SelectError, *UnknownSkillError or the server's.
func (c *Client) Resolve(ctx context.Context, entries []*Entry, refs []string) ([]*Entry, error) {
	var out []*Entry
	seen := map[string]bool{}
	for _, ref := range refs {
		sel, err := Select(entries, []string{ref})
		var se *SelectError
		if errors.As(err, &se) && !se.Ambiguous && strings.Contains(ref, "://") && strings.HasSuffix(ref, "/SKILL.md") {
			e, gerr := c.Get(ctx, ref)
			var je *jsonrpc.Error
			if errors.As(gerr, &je) && je.Code == jsonrpc.CodeInvalidParams {
				return nil, &UnknownSkillError{Select: se, Get: gerr}
			}
			if gerr != nil {
				return nil, gerr
			}
			sel, err = []*Entry{e}, nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range sel {
			if !seen[e.URI] {
				seen[e.URI] = true
				out = append(out, e)
			}
		}
	}
	return out, nil
}

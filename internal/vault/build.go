package vault

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RunnerName is the name of the skill that executes playbooks. A vault's
// playbooks are served only when a skill of that name is.
const RunnerName = "playbook-runner"

// SkillRef is a skill the vault's library serves, as Build needs it.
type SkillRef struct {
	// Name is the frontmatter name; Path the skill path tools accept.
	Name, Path string
	// Chains and Stage are the frontmatter value-chains and chain-stage.
	Chains []string
	Stage  string
}

// BuildOptions configures Build.
type BuildOptions struct {
	// Runner is the skill path of the playbook-runner that executes this
	// vault's playbooks, "" when no library serves one.
	Runner string
	// ShowDisabled serves playbooks of every status, not only active ones.
	ShowDisabled bool
}

// Library is a vault as served: its playbooks joined with the skills its
// library serves, and its value chains with their coverage.
type Library struct {
	// Playbooks are the served playbooks sorted by name.
	Playbooks []*Playbook
	// Hidden counts playbooks not served: not active, or no runner.
	Hidden int
	// Private counts the notes of the private playbook folders.
	Private int
	// Runner is the skill path of the runner, "" when none is served.
	Runner string
	// Chains are the value chains, ChainSource where they came from
	// ("definition", "index" or "derived"; "" when there are none).
	Chains      []Chain
	ChainSource string
	// Warnings cover unserved step skills, step counts, misplaced notes,
	// playbook cycles, undefined chains and a missing runner.
	Warnings []Warning

	skillPaths map[string]string // skill name → path, this library's
}

// Playbook is one served playbook.
type Playbook struct {
	// Name is the note's file name without ".md"; Title the frontmatter
	// title, else Name.
	Name, Title string
	// VaultPath is the note's path inside the vault.
	VaultPath                  string
	Trigger, Outcome, Duration string
	Status, Maturity           string
	// TotalSteps is the frontmatter total-steps, 0 when absent.
	TotalSteps    int
	ValueChains   []string
	ChainCoverage []string
	Tags          []string
	Steps         []Step
	// Skills are the skills the steps name, served or not, in step order;
	// Missing those of them the library does not serve.
	Skills, Missing []string
	Misplaced       bool
	Note            *Note
}

// Buckets returns how many of the chains are buckets.
func (l *Library) Buckets() int {
	n := 0
	for _, c := range l.Chains {
		if c.Kind == "bucket" {
			n++
		}
	}
	return n
}

// SkillPath returns the path of the library's skill called name, or "".
func (l *Library) SkillPath(name string) string { return l.skillPaths[name] }

// Build joins what Load read with the skills the library serves.
func Build(raw *Raw, skills []SkillRef, o BuildOptions) *Library {
	lib := &Library{Private: raw.Private, Runner: o.Runner, skillPaths: make(map[string]string, len(skills))}
	lib.Warnings = append(lib.Warnings, raw.Warnings...)
	for _, s := range skills {
		if _, dup := lib.skillPaths[s.Name]; !dup {
			lib.skillPaths[s.Name] = s.Path
		}
	}
	served := func(name string) bool { _, ok := lib.skillPaths[name]; return ok }

	eligible := 0
	for _, n := range raw.Notes {
		pb := newPlaybook(n, served)
		if !o.ShowDisabled && !strings.EqualFold(pb.Status, "active") {
			lib.Hidden++
			continue
		}
		eligible++
		if o.Runner == "" {
			lib.Hidden++
			continue
		}
		lib.Playbooks = append(lib.Playbooks, pb)
		if len(pb.Missing) > 0 {
			lib.warn(n.Path, "playbook-skills", "steps name skills this library does not serve: %s", firstOf(pb.Missing, 10))
		}
		if pb.TotalSteps > 0 && pb.TotalSteps != len(pb.Steps) {
			lib.warn(n.Path, "playbook-steps", "total-steps says %d, the note has %d steps", pb.TotalSteps, len(pb.Steps))
		}
		if pb.Misplaced {
			lib.warn(n.Path, "playbook-misplaced", "playbook filed in a subfolder of %s; served, but it belongs in that folder itself", PlaybooksDir)
		}
	}
	if eligible > 0 && o.Runner == "" {
		lib.warn(PlaybooksDir, "playbook-runner", "%d playbooks not served: no %s skill is served to execute them", eligible, RunnerName)
	}
	slices.SortFunc(lib.Playbooks, func(a, b *Playbook) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	lib.cycles()
	lib.chains(raw, skills)
	return lib
}

func (l *Library) warn(p, reason, format string, args ...any) {
	l.Warnings = append(l.Warnings, Warning{Path: p, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// newPlaybook reads a note's frontmatter and steps.
func newPlaybook(n *Note, served func(string) bool) *Playbook {
	fm := n.Frontmatter
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := fm.String(k); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
			if raw, ok := fm.Field(k); ok && len(raw) > 0 && raw[0] != '"' && raw[0] != '[' && raw[0] != '{' && string(raw) != "null" {
				return string(raw) // a number or a boolean, as written
			}
		}
		return ""
	}
	pb := &Playbook{
		Name:          n.Stem,
		Title:         cmp.Or(str("title"), n.Stem),
		VaultPath:     n.Path,
		Trigger:       str("trigger"),
		Outcome:       str("outcome"),
		Duration:      str("estimated-duration", "duration"),
		Status:        n.Status(),
		Maturity:      str("maturity"),
		ValueChains:   fm.StringList("value-chain"),
		ChainCoverage: fm.StringList("chain-coverage"),
		Tags:          fm.StringList("tags"),
		Misplaced:     n.Misplaced,
		Note:          n,
	}
	if len(pb.ValueChains) == 0 {
		pb.ValueChains = fm.StringList("value-chains")
	}
	if v, err := strconv.Atoi(str("total-steps")); err == nil && v > 0 {
		pb.TotalSteps = v
	}
	pb.Steps = ParseSteps(n.Body, served)
	for _, st := range pb.Steps {
		if st.Skill != "" && !slices.Contains(pb.Skills, st.Skill) {
			pb.Skills = append(pb.Skills, st.Skill)
			if !served(st.Skill) {
				pb.Missing = append(pb.Missing, st.Skill)
			}
		}
	}
	return pb
}

// firstOf joins the first n names of list, and says how many more there
// are.
func firstOf(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// Find returns the served playbook name refers to: its name or its title,
// compared case-insensitively.
func (l *Library) Find(name string) *Playbook {
	for _, pb := range l.Playbooks {
		if strings.EqualFold(pb.Name, name) || strings.EqualFold(pb.Title, name) {
			return pb
		}
	}
	return nil
}

// cycles warns about playbooks that call each other round in a circle
// through [[Playbook]] steps: a runner following them would never finish.
func (l *Library) cycles() {
	const (
		unvisited = iota
		active
		done
	)
	state := map[*Playbook]int{}
	var stack []*Playbook
	reported := map[string]bool{}
	var visit func(pb *Playbook)
	visit = func(pb *Playbook) {
		state[pb] = active
		stack = append(stack, pb)
		for _, st := range pb.Steps {
			next := l.Find(st.Playbook)
			if st.Playbook == "" || next == nil {
				continue
			}
			switch state[next] {
			case unvisited:
				visit(next)
			case active:
				i := slices.Index(stack, next)
				var names []string
				for _, p := range stack[i:] {
					names = append(names, p.Name)
				}
				names = append(names, next.Name)
				key := strings.Join(names, " → ")
				if !reported[key] {
					reported[key] = true
					l.warn(next.VaultPath, "playbook-cycle", "playbooks call each other in a cycle: %s", key)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[pb] = done
	}
	for _, pb := range l.Playbooks {
		if state[pb] == unvisited {
			visit(pb)
		}
	}
}

// chains builds the value chains from the chain file, else from the
// frontmatter of skills and served playbooks.
func (l *Library) chains(raw *Raw, skills []SkillRef) {
	var defs []ChainDef
	source := ""
	if raw.ChainText != "" {
		defs, source = ParseChainFile(raw.ChainText)
	}
	var members []Member
	for _, s := range skills {
		if len(s.Chains) > 0 {
			m := Member{Kind: "skill", Name: s.Path, Chains: s.Chains}
			if s.Stage != "" {
				m.Stages = []string{s.Stage}
			}
			members = append(members, m)
		}
	}
	for _, pb := range l.Playbooks {
		if len(pb.ValueChains) > 0 {
			members = append(members, Member{Kind: "playbook", Name: pb.Name, Chains: pb.ValueChains, Stages: pb.ChainCoverage})
		}
	}
	if len(defs) == 0 && len(members) == 0 {
		return
	}
	chains, warnings := BuildChains(defs, source, members)
	l.Chains = chains
	for _, w := range warnings {
		l.warn(raw.ChainFile, "value-chains", "%s", w)
	}
	switch {
	case len(defs) > 0:
		l.ChainSource = source
	case len(chains) > 0:
		l.ChainSource = "derived"
	}
}

// Chain returns the chain with the given id, or nil.
func (l *Library) Chain(id string) *Chain {
	for i := range l.Chains {
		if strings.EqualFold(l.Chains[i].ID, id) {
			return &l.Chains[i]
		}
	}
	return nil
}

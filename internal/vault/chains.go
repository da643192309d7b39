package vault

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ChainDef is one chain as a definition or index file declares it.
type ChainDef struct {
	// ID is the chain's id, matching [a-z][a-z0-9-]+.
	ID string `json:"id"`
	// Label is the human name: the "**SME Label:**" field, or in an index
	// file the bold-only line of the block; for a Cross-Chain or
	// Meta-Chain group, the name in its heading.
	Label string `json:"label,omitempty"`
	// Description is the "**Description:**" field, or in an index file the
	// block's first plain text line.
	Description string `json:"description,omitempty"`
	// Stages are the chain's stages in order, without duplicates.
	Stages []string `json:"stages,omitempty"`
	// Bucket marks a group without stages: a Cross-Chain or Meta-Chain
	// heading, or an id listed only under "Valid chain IDs".
	Bucket bool `json:"bucket,omitempty"`
}

// ParseChainFile parses a value-chain definition or index file. source is
// "definition" when the text contains "**SME Label:**", else "index". defs
// is empty when the file declares no chain.
//
// A "##" or "###" heading whose text (backticks aside) is an id opens a
// chain; the first such heading fixes the level of the others. The block
// runs to the next heading of its level or higher, and holds "**SME Label:**", "**Description:**" and "**Stages:**" fields,
// bulleted or not; stages are split on "→", "->", ">" and ",". In an index
// file a bold-only line is the label and the first plain text line the
// description. "## Cross-Chain: X" and "## Meta-Chain: X" open a bucket
// whose id is the slug of X. Each backticked id between a heading
// that contains "Valid chain IDs" (any level) and the next heading becomes
// an empty bucket when it has no block of its own; these buckets come
// after the blocks, in the order listed. Fenced blocks are ignored,
// and so are tables except inside the "Valid chain IDs" section, where a
// table is a natural way to list ids.
//
// Choices where the specification is silent: a heading deeper than the open
// block's heading (a "### Notes" inside a "## lead-to-cash" block) does not
// close it; any other heading does. A field written "**Stages**:" counts
// like "**Stages:**", and an empty "**Stages:**" takes its stages from the
// list items right after it. Explicit fields win over the index file's
// inferred label and description. A Cross-Chain heading whose slug is not
// a valid id (empty, or starting with a digit) is not a bucket. Later
// blocks with an id already seen are ignored.
func ParseChainFile(text string) (defs []ChainDef, source string) {
	source = "index"
	if strings.Contains(text, "**SME Label:**") {
		source = "definition"
	}
	index := source == "index"
	defs = []ChainDef{}
	seen := map[string]bool{}
	var (
		cur        *ChainDef // the open block; nil when none
		scratch    ChainDef  // receives the fields of an ignored duplicate block
		curLevel   int       // heading level of the open block
		chainLevel int       // fixed by the first chain heading
		inValid    bool      // in a "Valid chain IDs" section
		validIDs   []string
		pending    bool            // an empty **Stages:** waits for list items
		stageSeen  map[string]bool // stage keys of the open block
		f          fence
	)
	open := func(d ChainDef, level int) {
		pending = false
		stageSeen = map[string]bool{}
		curLevel = level
		if seen[d.ID] {
			scratch = d
			cur = &scratch
			return
		}
		seen[d.ID] = true
		defs = append(defs, d)
		cur = &defs[len(defs)-1]
	}
	for line := range strings.Lines(normalizeNewlines(text)) {
		line = strings.TrimRight(line, "\n")
		if f.step(line) {
			continue
		}
		t := strings.TrimSpace(line)
		if level, htext := headingOf(line); level > 0 {
			pending, inValid = false, false
			if strings.Contains(strings.ToLower(htext), "valid chain ids") {
				cur, inValid = nil, true
				continue
			}
			if level == 2 || level == 3 {
				if m := bucketRe().FindStringSubmatch(strings.Trim(htext, "*_` \t")); m != nil {
					label := strings.TrimSpace(strings.Trim(m[1], "*_` \t"))
					if id := slug(label); validChainID(id) {
						open(ChainDef{ID: id, Label: label, Bucket: true}, level)
						continue
					}
				}
				if id := strings.TrimSpace(strings.Trim(htext, "`")); validChainID(id) && (chainLevel == 0 || level == chainLevel) {
					chainLevel = level
					open(ChainDef{ID: id}, level)
					continue
				}
			}
			if cur != nil && level > curLevel {
				continue
			}
			cur = nil
			continue
		}
		if inValid {
			for _, m := range tickRe().FindAllStringSubmatch(line, -1) {
				if id := strings.TrimSpace(m[1]); validChainID(id) {
					validIDs = append(validIDs, id)
				}
			}
			continue
		}
		if cur == nil || strings.HasPrefix(t, "|") {
			continue
		}
		item := t
		if listItem(t) {
			item = stripListMarker(t)
		}
		if m := matchIfBold(fieldRe(), item); m != nil {
			value := strings.Join(strings.Fields(m[2]), " ")
			pending = false
			switch strings.ToLower(m[1]) {
			case "sme label":
				cur.Label = value
			case "description":
				cur.Description = value
			case "stages":
				cur.Stages, stageSeen = nil, map[string]bool{}
				cur.Stages = addStages(cur.Stages, stageSeen, splitStages(value)...)
				pending = value == ""
			}
			continue
		}
		if pending {
			switch {
			case t == "":
				continue
			case listItem(t):
				cur.Stages = addStages(cur.Stages, stageSeen, cleanStage(item))
				continue
			}
			pending = false
		}
		if !index || t == "" {
			continue
		}
		if m := matchIfBold(boldOnlyRe(), t); m != nil {
			if cur.Label == "" {
				cur.Label = strings.Join(strings.Fields(m[1]), " ")
			}
			continue
		}
		if cur.Description == "" && plainLine(t) {
			cur.Description = strings.Join(strings.Fields(t), " ")
		}
	}
	for _, id := range validIDs {
		if !seen[id] {
			seen[id] = true
			defs = append(defs, ChainDef{ID: id, Bucket: true})
		}
	}
	for i := range defs {
		if defs[i].Bucket {
			defs[i].Stages = nil
		}
	}
	return defs, source
}

var (
	// bucketRe matches a Cross-Chain or Meta-Chain heading; group 1 is the
	// group's name.
	bucketRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:cross|meta)[- ]chain[ \t]*:[ \t]*(.+)$`) })
	// fieldRe matches a chain field: "**Stages:** a → b" or "**Stages**: a → b".
	fieldRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\*\*(sme label|description|stages)(?::\*\*|\*\*[ \t]*:)[ \t]*(.*)$`)
	})
	// boldOnlyRe matches a line that is only bold text.
	boldOnlyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\*\*([^*]+)\*\*$`) })
	// tickRe matches inline code.
	tickRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`\n]+)`") })
)

// matchIfBold runs re, whose matches all start with "**", on s; most lines
// do not start that way and skip the regexp.
func matchIfBold(re *regexp.Regexp, s string) []string {
	if !strings.HasPrefix(s, "**") {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// plainLine reports whether a trimmed, non-blank line of an index file is
// plain text that can serve as a description: not a list item, quote,
// HTML comment, image or table row.
func plainLine(t string) bool {
	return !listItem(t) && strings.IndexByte(">|<!", t[0]) < 0
}

// validChainID reports whether s matches [a-z][a-z0-9-]+.
func validChainID(s string) bool {
	if len(s) < 2 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// slug lowercases s and turns every run of characters other than ASCII
// letters and digits into a single "-", trimmed at both ends.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteByte(c)
			continue
		}
		dash = true
	}
	return b.String()
}

// stageSeparators turns every stage separator into a NUL; "->" is listed
// before ">" so that it is replaced whole.
var stageSeparators = strings.NewReplacer("->", "\x00", "→", "\x00", ">", "\x00", ",", "\x00")

// splitStages splits a Stages value on "→", "->", ">" and ",".
func splitStages(v string) []string {
	v = stageSeparators.Replace(v)
	var out []string
	for _, s := range strings.Split(v, "\x00") {
		if s = cleanStage(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cleanStage trims a stage name: spaces, backticks, emphasis and a trailing
// full stop.
func cleanStage(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	s = strings.Trim(s, "*_ \t")
	return strings.Join(strings.Fields(s), " ")
}

// addStages appends the stages whose key is not in seen yet, and records
// their keys in seen.
func addStages(list []string, seen map[string]bool, stages ...string) []string {
	for _, st := range stages {
		k := stageKey(st)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		list = append(list, st)
	}
	return list
}

// stageKey is the form in which stages are compared: lowercase, with
// spaces, hyphens and underscores all read as one "-".
func stageKey(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '\t'
	})
	return strings.Join(f, "-")
}

// chainKey is the form in which a member's chain reference is compared
// with chain ids; it is the stage key, so "Lead to Cash" and lead_to_cash
// both mean lead-to-cash.
func chainKey(s string) string { return stageKey(s) }

// Member is a skill or playbook that declares chains in its frontmatter.
type Member struct {
	// Kind is "skill" or "playbook"; members of any other kind are ignored.
	Kind string `json:"kind"`
	// Name is what the stage table lists: the caller passes a skill path or
	// a playbook name.
	Name string `json:"name"`
	// Chains are the chain ids declared: a skill's "value-chains", a
	// playbook's "value-chain".
	Chains []string `json:"chains,omitempty"`
	// Stages are the stages declared: a skill's "chain-stage" (one), a
	// playbook's "chain-coverage" (several).
	Stages []string `json:"stages,omitempty"`
}

// Chain is a value chain with its coverage computed.
type Chain struct {
	// ID, Label and Description come from the definition; a derived chain
	// has an ID only.
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description"`
	// Kind is "chain", or "bucket" for a group without stages.
	Kind string `json:"kind"`
	// Source is "definition", "index" or "derived".
	Source string `json:"source"`
	// Stages are the chain's stages in order; empty for a bucket.
	Stages []string `json:"stages"`
	// StageTable has one row per stage, in order; empty for a bucket.
	StageTable []StageRow `json:"stageTable"`
	// Unstaged are the members that declare the chain without any of its
	// stages; for a bucket, all its members.
	Unstaged Items `json:"unstaged"`
	// Gaps are the stages that no skill and no playbook covers, in stage
	// order; always empty for a bucket.
	Gaps []string `json:"gaps"`
	// Skills and Playbooks count the distinct members of each kind.
	Skills    int `json:"skills"`
	Playbooks int `json:"playbooks"`
}

// StageRow lists the members mapped to one stage of a chain, each list
// sorted and without duplicates.
type StageRow struct {
	Stage     string   `json:"stage"`
	Skills    []string `json:"skills"`
	Playbooks []string `json:"playbooks"`
}

// Items is a set of skills and playbooks, each list sorted and without
// duplicates.
type Items struct {
	Skills    []string `json:"skills"`
	Playbooks []string `json:"playbooks"`
}

// BuildChains joins chain definitions with the members that declare them.
//
// defs and source are what ParseChainFile returned; with no definitions
// (defs empty) every chain is derived from the members, with its stages in
// the order members first declare them, and no warning is given. With
// definitions, a chain that members reference but the file does not define
// is added as a derived chain with a warning naming who references it.
// Stage and chain matching ignore case and the difference between spaces,
// hyphens and underscores ("Lead to Cash" finds lead-to-cash); a chain
// reference that is exactly a defined id finds that chain first.
//
// A chain is a bucket when its definition says so or when it has no stages
// (a derived chain whose members declare no stage is one). A member that
// declares a chain but none of its stages is listed as unstaged; a stage it
// declares that the chain lacks is ignored.
//
// The result lists the defined chains in file order, then the derived ones
// by id; warnings are in id order. Lists are never nil.
func BuildChains(defs []ChainDef, source string, members []Member) (chains []Chain, warnings []string) {
	if source == "" {
		source = "definition"
	}
	type acc struct {
		def       ChainDef
		source    string
		stageSeen map[string]bool       // stage keys, while stages are learnt
		stageIdx  map[string]int        // stage key -> row
		rows      []map[string][]string // per stage: kind -> names
		unstaged  map[string][]string   // kind -> names
		refs      []string              // "skill x", for the warning
	}
	// A reference finds its chain by exact id first, then by key; ids that
	// differ only in what the key ignores ("a-b", "a--b") stay distinct
	// chains, and the first of them is the one a loose reference finds.
	byID := map[string]*acc{}
	byKey := map[string]*acc{}
	lookup := func(ref string) (*acc, string) {
		ref = strings.TrimSpace(ref)
		if a := byID[ref]; a != nil {
			return a, ref
		}
		k := chainKey(ref)
		return byKey[k], k
	}
	var defined, derived []*acc
	for _, d := range defs {
		k := chainKey(d.ID)
		if k == "" || byID[d.ID] != nil {
			continue
		}
		a := &acc{def: d, source: source, stageSeen: map[string]bool{}}
		a.def.Stages = addStages(nil, a.stageSeen, d.Stages...)
		byID[d.ID] = a
		if byKey[k] == nil {
			byKey[k] = a
		}
		defined = append(defined, a)
	}
	valid := func(m Member) bool {
		return (m.Kind == "skill" || m.Kind == "playbook") && m.Name != ""
	}
	// First pass: derived chains and their stages in first-seen order.
	for _, m := range members {
		if !valid(m) {
			continue
		}
		for _, c := range m.Chains {
			a, k := lookup(c)
			if k == "" {
				continue
			}
			if a == nil {
				a = &acc{def: ChainDef{ID: k}, source: "derived", stageSeen: map[string]bool{}}
				byKey[k] = a
				derived = append(derived, a)
			}
			if a.source == "derived" {
				a.def.Stages = addStages(a.def.Stages, a.stageSeen, m.Stages...)
				a.refs = append(a.refs, m.Kind+" "+m.Name)
			}
		}
	}
	all := append(slices.Clip(defined), derived...)
	for _, a := range all {
		if len(a.def.Stages) == 0 {
			a.def.Bucket = true
		}
		if a.def.Bucket {
			a.def.Stages = nil
		}
		a.stageIdx = make(map[string]int, len(a.def.Stages))
		a.rows = make([]map[string][]string, len(a.def.Stages))
		for i, st := range a.def.Stages {
			a.stageIdx[stageKey(st)] = i
			a.rows[i] = map[string][]string{}
		}
		a.unstaged = map[string][]string{}
	}
	// Second pass: place each member on the stages it declares.
	for _, m := range members {
		if !valid(m) {
			continue
		}
		done := map[*acc]bool{}
		for _, c := range m.Chains {
			a, _ := lookup(c)
			if a == nil || done[a] {
				continue
			}
			done[a] = true
			placed := false
			for _, st := range m.Stages {
				if i, ok := a.stageIdx[stageKey(st)]; ok {
					a.rows[i][m.Kind] = append(a.rows[i][m.Kind], m.Name)
					placed = true
				}
			}
			if !placed {
				a.unstaged[m.Kind] = append(a.unstaged[m.Kind], m.Name)
			}
		}
	}
	slices.SortFunc(derived, func(x, y *acc) int { return strings.Compare(x.def.ID, y.def.ID) })
	all = append(slices.Clip(defined), derived...)
	chains = make([]Chain, 0, len(all))
	warnings = []string{}
	for _, a := range all {
		c := Chain{
			ID: a.def.ID, Label: a.def.Label, Description: a.def.Description,
			Kind: "chain", Source: a.source,
			Stages:     append([]string{}, a.def.Stages...),
			StageTable: []StageRow{},
			Unstaged:   Items{Skills: sortedSet(a.unstaged["skill"]), Playbooks: sortedSet(a.unstaged["playbook"])},
			Gaps:       []string{},
		}
		if a.def.Bucket {
			c.Kind = "bucket"
		}
		skills := map[string]bool{}
		playbooks := map[string]bool{}
		mark := func(set map[string]bool, names []string) {
			for _, n := range names {
				set[n] = true
			}
		}
		mark(skills, c.Unstaged.Skills)
		mark(playbooks, c.Unstaged.Playbooks)
		for i, st := range a.def.Stages {
			row := StageRow{Stage: st, Skills: sortedSet(a.rows[i]["skill"]), Playbooks: sortedSet(a.rows[i]["playbook"])}
			if len(row.Skills) == 0 && len(row.Playbooks) == 0 {
				c.Gaps = append(c.Gaps, st)
			}
			mark(skills, row.Skills)
			mark(playbooks, row.Playbooks)
			c.StageTable = append(c.StageTable, row)
		}
		c.Skills, c.Playbooks = len(skills), len(playbooks)
		chains = append(chains, c)
		if a.source == "derived" && len(defined) > 0 {
			warnings = append(warnings, fmt.Sprintf("value chain %q is referenced by %s but not defined in the chain file; added as a derived chain",
				a.def.ID, strings.Join(sortedSet(a.refs), ", ")))
		}
	}
	return chains, warnings
}

// sortedSet returns names sorted and without duplicates, never nil.
func sortedSet(names []string) []string {
	out := append([]string{}, names...)
	slices.Sort(out)
	return slices.Compact(out)
}

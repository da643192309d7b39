package vault

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// addSeeds adds every testdata/<dir>/*.md file and a few fixture notes to
// the fuzz corpus.
func addSeeds(f *testing.F, dirs ...string) {
	f.Helper()
	var files []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join("testdata", d, "*.md"))
		files = append(files, m...)
	}
	m, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "vault", "00-CORE", "Playbooks", "*.md"))
	files = append(files, m...)
	files = append(files, filepath.Join("..", "..", "testdata", "vault", "20-COMPANY", "03-PROCESSES", "value-chains.md"),
		filepath.Join("..", "..", "testdata", "vault2", "VALUE-CHAINS.md"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			continue // link.md points outside what the glob promised; skip what cannot be read
		}
		f.Add(string(data))
	}
	f.Add("")
	f.Add("## Steps\n1. cro → A (AGENT)\n")
}

func FuzzParseSteps(f *testing.F) {
	addSeeds(f, "steps")
	f.Fuzz(func(t *testing.T, body string) {
		steps := ParseSteps(body, testServed)
		if steps == nil {
			t.Fatal("nil steps")
		}
		for _, st := range steps {
			if st.N <= 0 {
				t.Errorf("step number %d", st.N)
			}
			for _, s := range []string{st.Action, st.Actor, st.Skill, st.Route, st.Playbook, st.Script} {
				if strings.ContainsAny(s, "\n\r") {
					t.Errorf("line break in %q", s)
				}
				if s != strings.TrimSpace(s) {
					t.Errorf("untrimmed %q", s)
				}
			}
			if st.Skill != "" && !validSkillName(st.Skill) && !testServed(st.Skill) {
				t.Errorf("skill %q is neither a skill name nor served", st.Skill)
			}
			if st.Route != "" && st.Skill == "" {
				t.Errorf("route %q without a skill", st.Route)
			}
			if n := 0; true {
				for _, s := range []string{st.Playbook, st.Script} {
					if s != "" {
						n++
					}
				}
				if n > 1 || st.Playbook != "" && st.Route != "" {
					t.Errorf("more than one head: %+v", st)
				}
			}
			for i, m := range st.Mentions {
				if m == st.Skill || !testServed(m) || slices.Contains(st.Mentions[:i], m) {
					t.Errorf("bad mention %q in %+v", m, st)
				}
			}
			if st.Mentions != nil && len(st.Mentions) == 0 {
				t.Error("empty non-nil mentions")
			}
			if st.Actor != "" && !startsWithActor(st.Actor) {
				t.Errorf("actor %q does not start with an actor word", st.Actor)
			}
		}
	})
}

// startsWithActor reports whether s starts with an upper-case actor word.
func startsWithActor(s string) bool {
	for _, w := range actorWords {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

func FuzzEmbeds(f *testing.F) {
	addSeeds(f, "steps")
	f.Add("![[a.png|x]] ![[b#c]] ![[a.png]]")
	f.Fuzz(func(t *testing.T, body string) {
		got := Embeds(body)
		if got == nil {
			t.Fatal("nil embeds")
		}
		for i, e := range got {
			if e == "" || e != strings.TrimSpace(e) || strings.ContainsAny(e, "|#\n[]") {
				t.Errorf("bad embed target %q", e)
			}
			if slices.Contains(got[:i], e) {
				t.Errorf("duplicate embed %q", e)
			}
			if !strings.Contains(body, e) {
				t.Errorf("embed %q is not in the body", e)
			}
		}
	})
}

func FuzzParseChainFile(f *testing.F) {
	addSeeds(f, "chains")
	// Ids that differ only in what the chain key ignores, found by fuzzing.
	f.Add("## a--\n**SME Label:** 0\n**StAges** 0\n### a--\n## aaaa-aa-aa\x97\xae\xf5\xd100\n## a-")
	f.Fuzz(func(t *testing.T, text string) {
		defs, source := ParseChainFile(text)
		if want := map[bool]string{true: "definition", false: "index"}[strings.Contains(text, "**SME Label:**")]; source != want {
			t.Errorf("source %q, want %q", source, want)
		}
		if defs == nil {
			t.Fatal("nil defs")
		}
		seen := map[string]bool{}
		var members []Member
		for _, d := range defs {
			if !validChainID(d.ID) {
				t.Errorf("id %q does not match [a-z][a-z0-9-]+", d.ID)
			}
			if seen[d.ID] {
				t.Errorf("duplicate id %q", d.ID)
			}
			seen[d.ID] = true
			if d.Bucket && len(d.Stages) > 0 {
				t.Errorf("bucket %q has stages", d.ID)
			}
			keys := map[string]bool{}
			for _, s := range d.Stages {
				if s == "" || strings.ContainsAny(s, "\n\r`") || keys[stageKey(s)] {
					t.Errorf("bad or repeated stage %q in %q", s, d.ID)
				}
				keys[stageKey(s)] = true
			}
			for _, s := range []string{d.Label, d.Description} {
				if strings.ContainsAny(s, "\n\r") {
					t.Errorf("line break in %q", s)
				}
			}
			m := Member{Kind: "skill", Name: "s-" + d.ID, Chains: []string{d.ID, "undefined-" + d.ID}}
			if len(d.Stages) > 0 {
				m.Stages = []string{strings.ToUpper(d.Stages[0])}
			}
			members = append(members, m, Member{Kind: "playbook", Name: "p", Chains: []string{d.ID}})
		}
		chains, warnings := BuildChains(defs, source, members)
		if len(defs) > 0 && len(warnings) == 0 {
			t.Error("undefined chains gave no warning")
		}
		for _, c := range chains {
			if c.Stages == nil || c.StageTable == nil || c.Gaps == nil || c.Unstaged.Skills == nil || c.Unstaged.Playbooks == nil {
				t.Errorf("nil list in %+v", c)
			}
			if c.Kind == "bucket" && (len(c.Stages) > 0 || len(c.Gaps) > 0 || len(c.StageTable) > 0) {
				t.Errorf("bucket %q with stages or gaps", c.ID)
			}
			if len(c.StageTable) != len(c.Stages) {
				t.Errorf("chain %q: %d rows for %d stages", c.ID, len(c.StageTable), len(c.Stages))
			}
			for _, r := range c.StageTable {
				if r.Skills == nil || r.Playbooks == nil {
					t.Errorf("nil row list in %q", c.ID)
				}
			}
			if c.Source == "derived" == seen[c.ID] {
				t.Errorf("chain %q: source %q", c.ID, c.Source)
			}
			// Every chain has its own skill; ids that differ only in what
			// the chain key ignores may share a derived chain.
			if wantPlaybooks := map[bool]int{true: 1}[seen[c.ID]]; c.Skills < 1 || c.Playbooks != wantPlaybooks {
				t.Errorf("chain %q counts %d skills, %d playbooks", c.ID, c.Skills, c.Playbooks)
			}
		}
	})
}

// TestLargeInputs runs the parsers over a 10 MB playbook and a 10 MB chain
// file, and over 1 MB of each hostile shape, to check that they finish: a
// super-linear path would take minutes here. There is no timing assertion.
func TestLargeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	fill := func(size int, unit string) string {
		return strings.Repeat(unit, size/len(unit)+1)[:size]
	}
	const big, small = 10 << 20, 1 << 20
	inputs := map[string]string{
		"10 MB playbook": "## Steps\n" + fill(big, "1. cro (audit) → Audit [[cro]] and [[ab-test-setup|x]] ![[a.png]] cro/scripts/x.py (HUMAN, 5 min)\n   more text (AGENT)\n\n   ```\n   2. fenced\n   ```\n"),
		"10 MB chains":   fill(big, "## lead-to-cash\n- **SME Label:** L\n- **Stages:** a → b, c > d\n## Meta-Chain: Infra\n| x |\n### Valid chain IDs\n`x-y` `z-w`\n"),
		"one long item":  "## Steps\n1. " + fill(small, "word (x) [[y]] → "),
		"open parens":    "## Steps\n1. " + fill(small, "("),
		"close parens":   "## Steps\n1. " + fill(small, ")"),
		"nested parens":  "## Steps\n1. " + fill(small/2, "(AGENT ") + fill(small/2, ")"),
		"brackets":       fill(small, "[[!["),
		"arrows":         "## Steps\n1. " + fill(small, "->→"),
		"indentation":    "## Steps\n" + fill(small, "1. a\n   2. b\n      3. c\n"),
		"headings":       fill(small, "### Phase 1: x (AGENT)\n[[cro]]\n## Step 2\n"),
		"numbered lines": fill(small, "7. x\n"),
		"fences":         fill(small, "```\n1. x\n"),
		"many stages":    "## a-b\n**Stages:** " + fill(small, "s, t-"),
		"listed stages":  "## a-b\n**Stages:**\n" + fill(small, "- s\n- t\n- u\n"),
		"many chains":    fill(small, "## c-x\n**Stages:** a\n## Cross-Chain: Y\n"),
		"stars":          fill(small, "**"),
		"crlf":           fill(small, "1. a\r\n"),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			_ = ParseSteps(in, testServed)
			_ = Embeds(in)
			defs, source := ParseChainFile(in)
			members := make([]Member, 0, len(defs))
			for _, d := range defs {
				members = append(members, Member{Kind: "skill", Name: d.ID, Chains: []string{d.ID}, Stages: d.Stages})
			}
			_, _ = BuildChains(defs, source, members)
		})
	}
}

// The fixture vaults at the repository root exercise the whole vault
// support; this package's tests read them too (TestFixtureVault*), to check
// that the notes parse as their names promise.
//
// testdata/vault is a vault in the BOB layout:
//   - 00-CORE/Agents/skills: ab-test-setup (value-chains lead-to-cash and
//     the undefined ghost-chain, stage close), cro (lead-to-cash, stage
//     propose) and playbook-runner (the infrastructure bucket, no stage).
//   - 00-CORE/Playbooks: "CRO improvement loop" (5 arrow steps: a routed
//     head, the unserved skill copywriting, a bold head, a [[Playbook]]
//     head, a script head; embeds cro-loop-sequence.png, a 1x1 PNG),
//     "Monthly Close" (3 steps where total-steps says 4: an unserved
//     backticked head, a bold step over two lines with a HUMAN actor, and a
//     step that links [[cro/SKILL.md|…]] and [[CRO improvement loop]] with
//     its actor on a later paragraph), "Phased rollout" (no Steps section:
//     "### Phase N:" headings), "Evil attach" (embeds ../../secret.txt,
//     link.md — a symlink to Notes.md — and missing.png, none of which may
//     be served), "Draft idea" (status draft), Notes.md (type note),
//     AGENTS.md (a manifest), _archive/Old loop.md (archived, skipped) and
//     drafts/Misplaced.md (served, flagged misplaced).
//   - 20-COMPANY/03-PROCESSES/Playbooks/Private process.md: a private
//     playbook, counted and never served.
//   - 20-COMPANY/03-PROCESSES/value-chains.md: the canonical definition
//     file: bulleted lead-to-cash (7 stages), unbulleted record-to-insight
//     (5 backticked stages), a "## Notes" section that is not a chain, the
//     "Meta-Chain: Infrastructure" bucket with a table, a fenced YAML
//     block hiding a fake "## fake-chain" heading, and "### Valid chain
//     IDs" adding the empty bucket operating-controls.
//
// testdata/vault2 is a second, smaller vault: the skill solo
// (procure-to-pay, stage pay), the playbook "Pay bills" (2 steps using
// solo), the private 10-ME/Playbooks/My routine.md and a generated
// VALUE-CHAINS.md index at its root (no SME Label, so source "index").
// It has no playbook-runner of its own.
package vault

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*/*.golden.json from the current output")

// testServedSet is the library the step tests pretend to serve. copywriting
// is deliberately not in it.
var testServedSet = map[string]bool{"cro": true, "ab-test-setup": true, "playbook-runner": true}

func testServed(name string) bool { return testServedSet[name] }

func TestParseSteps(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Step
	}{
		// Heads.
		{"arrow head names a served skill",
			"## Steps\n\n1. cro → Audit the page (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit the page", Actor: "AGENT"}}},
		{"ascii arrow",
			"## Steps\n1. cro -> Audit the page (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit the page", Actor: "AGENT"}}},
		{"skill with route",
			"## Steps\n1. cro (audit) → Find the leaks (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Route: "audit", Action: "Find the leaks", Actor: "AGENT"}}},
		{"served wiki link head is a skill",
			"## Steps\n1. [[cro]] → Audit\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit"}}},
		{"wiki link head with route",
			"## Steps\n1. [[cro|CRO]] (audit) → Audit\n",
			[]Step{{N: 1, Skill: "cro", Route: "audit", Action: "Audit"}}},
		{"unserved wiki link head is a playbook",
			"## Steps\n1. [[Monthly Close]] → Close the month (HUMAN)\n",
			[]Step{{N: 1, Playbook: "Monthly Close", Action: "Close the month", Actor: "HUMAN"}}},
		{"unserved skill-like wiki link head is a playbook",
			"## Steps\n1. [[copywriting]] → Write\n",
			[]Step{{N: 1, Playbook: "copywriting", Action: "Write"}}},
		{"playbook head drops alias and heading",
			"## Steps\n1. [[Monthly Close#Steps|the close]] → Close\n",
			[]Step{{N: 1, Playbook: "Monthly Close", Action: "Close"}}},
		{"SKILL.md wiki link head names its folder even unserved",
			"## Steps\n1. [[skills/copywriting/SKILL.md|Copy]] → Write\n",
			[]Step{{N: 1, Skill: "copywriting", Action: "Write"}}},
		{"script head",
			"## Steps\n1. script:report.py → Publish the results (AUTO)\n",
			[]Step{{N: 1, Script: "report.py", Action: "Publish the results", Actor: "AUTO"}}},
		{"script head with backticks",
			"## Steps\n1. `script: report.py` → Publish\n",
			[]Step{{N: 1, Script: "report.py", Action: "Publish"}}},
		{"bare valid name is a skill even unserved",
			"## Steps\n1. copywriting → Rewrite the headline (AGENT)\n",
			[]Step{{N: 1, Skill: "copywriting", Action: "Rewrite the headline", Actor: "AGENT"}}},
		{"bold head",
			"## Steps\n1. **cro** → Audit\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit"}}},
		{"backtick head with route outside",
			"## Steps\n1. `cro` (audit) → Audit\n",
			[]Step{{N: 1, Skill: "cro", Route: "audit", Action: "Audit"}}},
		{"underscore heads",
			"## Steps\n1. __cro__ → A\n2. _ab-test-setup_ → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "ab-test-setup", Action: "B"}}},
		{"bold around head and action",
			"## Steps\n1. **cro → Audit the page** (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit the page", Actor: "AGENT"}}},
		{"free text head gives no skill and stays in the action",
			"## Steps\n1. Kick-off call → agree the scope (HUMAN)\n",
			[]Step{{N: 1, Action: "Kick-off call → agree the scope", Actor: "HUMAN"}}},
		{"no arrow: lead only a link is a head",
			"## Steps\n1. [[Monthly Close]] (HUMAN)\n2. [[cro]]\n3. script:x.py\n",
			[]Step{{N: 1, Playbook: "Monthly Close", Actor: "HUMAN"}, {N: 2, Skill: "cro"}, {N: 3, Script: "x.py"}}},
		{"no arrow: a bare word is not a head",
			"## Steps\n1. review (HUMAN)\n",
			[]Step{{N: 1, Action: "review", Actor: "HUMAN"}}},

		// Item syntax.
		{"countdown and paren marker",
			"## Steps\n3 (T-2). cro → A\n2 (T-1)) ab-test-setup → B\n1) playbook-runner → C\n",
			[]Step{{N: 3, Skill: "cro", Action: "A"}, {N: 2, Skill: "ab-test-setup", Action: "B"}, {N: 1, Skill: "playbook-runner", Action: "C"}}},
		{"number as written",
			"## Steps\n10. cro → A\n20. cro → B\n",
			[]Step{{N: 10, Skill: "cro", Action: "A"}, {N: 20, Skill: "cro", Action: "B"}}},
		{"zero and decimals are not items",
			"## Steps\n0. cro → A\n1.5 hours\n1. cro → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "B"}}},
		{"continuation lines join the lead",
			"## Steps\n1. cro → Audit\n   the whole page\n   (AGENT)\n2. cro → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit the whole page", Actor: "AGENT"}, {N: 2, Skill: "cro", Action: "B"}}},
		{"empty item line: lead on the next line",
			"## Steps\n1.\n   cro → Audit (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit", Actor: "AGENT"}}},
		{"nested numbered list is not items",
			"## Steps\n1. cro → A\n   1. sub one\n   2. sub two\n2. ab-test-setup → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "ab-test-setup", Action: "B"}}},
		{"numbered lines in a fence are not items",
			"## Steps\n1. cro → A\n   ```\n   2. not an item\n   ```\n2. ab-test-setup → B\n~~~\n3. nor this\n~~~\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "ab-test-setup", Action: "B"}}},
		{"less indented sibling is an item",
			"## Steps\n   1. cro → A\n 2. ab-test-setup → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "ab-test-setup", Action: "B"}}},
		{"tab indentation counts as four columns",
			"## Steps\n1. cro → A\n\t2. nested under A\n2. cro → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "cro", Action: "B"}}},
		{"first item indented four is not an item",
			"## Steps\n    1. code, not a step\n1. cro → A\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}}},
		{"### heading ends the current item",
			"## Steps\n1. cro → A\n### Later\nSee [[ab-test-setup]] (HUMAN)\n2. cro → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "cro", Action: "B"}}},
		{"## heading ends the section",
			"## Steps\n1. cro → A\n## Outcome\n2. cro → B\n# Also\n3. cro → C\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}}},
		{"heading in a fence does not end the section",
			"## Steps\n1. cro → A\n   ```\n## not a heading\n   ```\n2. cro → B\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}, {N: 2, Skill: "cro", Action: "B"}}},
		{"section heading any case, trailing colon",
			"# P\n1. not a step\n## STEPS:\n1. cro → A\n",
			[]Step{{N: 1, Skill: "cro", Action: "A"}}},
		{"unindented paragraph after an item continues it",
			"## Steps\n1. cro → A\n\nThen sign off (HUMAN)\n",
			[]Step{{N: 1, Skill: "cro", Action: "A", Actor: "HUMAN"}}},
		{"CRLF",
			"## Steps\r\n1. cro → Audit\r\n   it (AGENT)\r\n2. ab-test-setup → B\r\n",
			[]Step{{N: 1, Skill: "cro", Action: "Audit it", Actor: "AGENT"}, {N: 2, Skill: "ab-test-setup", Action: "B"}}},

		// The lead.
		{"lead stops at a blank line",
			"## Steps\n1. Review the draft\n\n   More words here.\n",
			[]Step{{N: 1, Action: "Review the draft"}}},
		{"lead stops at a list item",
			"## Steps\n1. Prepare the data\n   - pull the numbers (AGENT)\n",
			[]Step{{N: 1, Action: "Prepare the data", Actor: "AGENT"}}},
		{"lead stops at a fence, a table and a quote",
			"## Steps\n1. A\n   ```\n   x (HUMAN)\n   ```\n2. B\n   | a | b |\n3. C\n   > quoted (HUMAN)\n",
			[]Step{{N: 1, Action: "A"}, {N: 2, Action: "B"}, {N: 3, Action: "C"}}},

		// Actors.
		{"actor list normalised",
			"## Steps\n1. A (human+agent)\n2. B (HUMAN/AGENT)\n3. C (AGENT,HUMAN)\n4. D (Manual & auto)\n5. E (both)\n",
			[]Step{{N: 1, Action: "A", Actor: "HUMAN + AGENT"}, {N: 2, Action: "B", Actor: "HUMAN / AGENT"},
				{N: 3, Action: "C", Actor: "AGENT, HUMAN"}, {N: 4, Action: "D", Actor: "MANUAL & AUTO"}, {N: 5, Action: "E", Actor: "BOTH"}}},
		{"actor with a note kept as written",
			"## Steps\n1. A (HUMAN, 5 min)\n2. B (HUMAN decides,   AGENT drafts)\n3. C (AGENT — checks twice)\n",
			[]Step{{N: 1, Action: "A", Actor: "HUMAN, 5 min"}, {N: 2, Action: "B", Actor: "HUMAN decides, AGENT drafts"},
				{N: 3, Action: "C", Actor: "AGENT — checks twice"}}},
		{"lowercase note is not an actor",
			"## Steps\n1. Check the logs (human review)\n",
			[]Step{{N: 1, Action: "Check the logs (human review)"}}},
		{"actor anywhere in the lead",
			"## Steps\n1. Draft (AGENT) the mail, then send it (see notes)\n",
			[]Step{{N: 1, Action: "Draft the mail, then send it (see notes)", Actor: "AGENT"}}},
		{"lowercase actor word mid-lead is not an actor",
			"## Steps\n1. Pick (both) options and (auto) mode\n",
			[]Step{{N: 1, Action: "Pick (both) options and (auto) mode"}}},
		{"trailing full stop and bold",
			"## Steps\n1. Send it (AGENT).\n2. **Review the trial balance\n   and flag big moves (HUMAN)**\n",
			[]Step{{N: 1, Action: "Send it", Actor: "AGENT"}, {N: 2, Action: "Review the trial balance and flag big moves", Actor: "HUMAN"}}},
		{"dangling dash before the actor",
			"## Steps\n1. Send it — (AGENT)\n",
			[]Step{{N: 1, Action: "Send it", Actor: "AGENT"}}},
		{"trailing actor wins over an earlier one",
			"## Steps\n1. Ask (AGENT) then decide (HUMAN)\n",
			[]Step{{N: 1, Action: "Ask (AGENT) then decide", Actor: "HUMAN"}}},
		{"actor ending a later paragraph",
			"## Steps\n1. Reconcile the accounts\n\n   Nothing here.\n\n   The controller signs off (HUMAN, 15 min)\n\n   Last one (AGENT)\n",
			[]Step{{N: 1, Action: "Reconcile the accounts", Actor: "HUMAN, 15 min"}}},
		{"parenthesis in a later paragraph that does not end it is ignored",
			"## Steps\n1. Reconcile\n\n   Someone (HUMAN) checks it later\n",
			[]Step{{N: 1, Action: "Reconcile"}}},

		// Skill fallback and mentions.
		{"fallback: first served linked skill",
			"## Steps\n1. Use [[copywriting]] then [[cro|the CRO skill]] and [[ab-test-setup]] (AGENT)\n",
			[]Step{{N: 1, Skill: "cro", Mentions: []string{"ab-test-setup"}, Action: "Use [[copywriting]] then [[cro|the CRO skill]] and [[ab-test-setup]]", Actor: "AGENT"}}},
		{"fallback: SKILL.md links",
			"## Steps\n1. Follow [[cro/SKILL.md|CRO]] and [[00-CORE/Agents/skills/ab-test-setup/SKILL.md]]\n",
			[]Step{{N: 1, Skill: "cro", Mentions: []string{"ab-test-setup"}, Action: "Follow [[cro/SKILL.md|CRO]] and [[00-CORE/Agents/skills/ab-test-setup/SKILL.md]]"}}},
		{"fallback: skills.root and scripts paths in a fence",
			"## Steps\n1. Run the analysis\n   ```sh\n   uv run {skills.root}/ab-test-setup/scripts/size.py\n   python cro/scripts/funnel.py\n   ```\n",
			[]Step{{N: 1, Skill: "ab-test-setup", Mentions: []string{"cro"}, Action: "Run the analysis"}}},
		{"fallback: scripts path needs a word boundary and a served skill",
			"## Steps\n1. Run xcro/scripts/a.py and copywriting/scripts/b.py, then `skills/cro/scripts/c.py`\n",
			[]Step{{N: 1, Skill: "cro", Action: "Run xcro/scripts/a.py and copywriting/scripts/b.py, then `skills/cro/scripts/c.py`"}}},
		{"embeds are ignored",
			"## Steps\n1. See ![[cro]] and ![[ab-test-setup/SKILL.md]]\n",
			[]Step{{N: 1, Action: "See ![[cro]] and ![[ab-test-setup/SKILL.md]]"}}},
		{"links to playbooks are not skills",
			"## Steps\n1. Then run [[CRO improvement loop]]\n",
			[]Step{{N: 1, Action: "Then run [[CRO improvement loop]]"}}},
		{"links anywhere in the step count",
			"## Steps\n1. Reconcile\n\n   - with [[cro]]\n   - and [[playbook-runner]]\n",
			[]Step{{N: 1, Skill: "cro", Mentions: []string{"playbook-runner"}, Action: "Reconcile"}}},
		{"mentions exclude the head skill and repeats",
			"## Steps\n1. cro → use [[cro]], [[ab-test-setup]], [[ab-test-setup|again]] and [[playbook-runner]]\n",
			[]Step{{N: 1, Skill: "cro", Mentions: []string{"ab-test-setup", "playbook-runner"}, Action: "use [[cro]], [[ab-test-setup]], [[ab-test-setup|again]] and [[playbook-runner]]"}}},
		{"unserved head keeps no fallback but mentions served links",
			"## Steps\n1. copywriting → match the tone of [[cro]]\n",
			[]Step{{N: 1, Skill: "copywriting", Mentions: []string{"cro"}, Action: "match the tone of [[cro]]"}}},
		{"playbook head still falls back to a linked skill",
			"## Steps\n1. [[Monthly Close]] → with [[cro]]\n",
			[]Step{{N: 1, Skill: "cro", Playbook: "Monthly Close", Action: "with [[cro]]"}}},

		// Without a Steps section.
		{"phase headings",
			"# Rollout\n### Phase 1: Ship to ten percent (AGENT)\nUse [[ab-test-setup]].\n### Phase 2 — Watch\nWith [[cro]].\n\nThe owner decides (HUMAN)\n### Notes\n1. not a step\n",
			[]Step{{N: 1, Skill: "ab-test-setup", Action: "Ship to ten percent", Actor: "AGENT"}, {N: 2, Skill: "cro", Action: "Watch", Actor: "HUMAN"}}},
		{"step headings without a title use the first paragraph",
			"## Step 1\nDo the first thing (HUMAN)\n\nMore.\n## Step 2:\n\ncro → audit\n",
			[]Step{{N: 1, Action: "Do the first thing", Actor: "HUMAN"}, {N: 2, Skill: "cro", Action: "audit"}}},
		{"phase level is fixed by the first one",
			"## Phase 1 - Plan\n#### Step 1: detail\n[[cro]]\n## Phase 2 - Do\n",
			[]Step{{N: 1, Skill: "cro", Action: "Plan"}, {N: 2, Action: "Do"}}},
		{"phase 0 takes its position; headings out of range are ignored",
			"# Phase 9: top level\n## Phase 0: Prep\n##### Phase 5: too deep\n## Phase 3: Go\n",
			[]Step{{N: 1, Action: "Prep"}, {N: 3, Action: "Go"}}},
		{"numbered lines fallback",
			"Intro text.\n\n1. cro → A (AGENT)\n2. Then B\n```\n3. fenced\n```\n## Later\n4. copywriting → C\n",
			[]Step{{N: 1, Skill: "cro", Action: "A", Actor: "AGENT"}, {N: 2, Action: "Then B"}, {N: 4, Skill: "copywriting", Action: "C"}}},
		{"Steps section without items falls back to headings",
			"## Steps\nSee the phases.\n### Step 1: Look\n### Step 2: Leap\n",
			[]Step{{N: 1, Action: "Look"}, {N: 2, Action: "Leap"}}},
		{"nothing", "Just prose.\n", []Step{}},
		{"empty", "", []Step{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseSteps(tt.body, testServed)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSteps(%q)\n got %s\nwant %s", tt.body, goldenJSON(t, got), goldenJSON(t, tt.want))
			}
		})
	}
}

func TestParseStepsNilServed(t *testing.T) {
	got := ParseSteps("## Steps\n1. [[cro]] → A\n2. cro → B\n", nil)
	want := []Step{{N: 1, Playbook: "cro", Action: "A"}, {N: 2, Skill: "cro", Action: "B"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s, want %s", goldenJSON(t, got), goldenJSON(t, want))
	}
}

func TestStepsGolden(t *testing.T) {
	checkGolden(t, "steps", func(text string) any { return ParseSteps(text, testServed) })
}

// checkGolden runs render over every testdata/<dir>/*.md and compares the JSON
// with <name>.golden.json; -update rewrites the golden files.
func checkGolden(t *testing.T, dir string, render func(string) any) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata in %s: %v", dir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".md")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenJSON(t, render(string(data))) + "\n"
			golden.Check(t, filepath.Join("testdata", dir, name+".golden.json"), []byte(got), *updateGolden, "update")
		})
	}
}

func goldenJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixtureBody returns a fixture note without its frontmatter.
func fixtureBody(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if rest, ok := strings.CutPrefix(s, "---\n"); ok {
		if _, after, ok := strings.Cut(rest, "\n---\n"); ok {
			return after
		}
	}
	return s
}

func TestFixtureVaultSteps(t *testing.T) {
	tests := []struct {
		path string
		want []Step
	}{
		{"vault/00-CORE/Playbooks/CRO improvement loop.md", []Step{
			{N: 1, Skill: "cro", Route: "audit", Action: "Find the biggest drop in the funnel and list what causes it", Actor: "AGENT"},
			{N: 2, Skill: "copywriting", Action: "Rewrite the headline and the call to action for the weakest step", Actor: "AGENT"},
			{N: 3, Skill: "ab-test-setup", Action: "Design the test for the new copy", Actor: "HUMAN + AGENT"},
			{N: 4, Playbook: "Phased rollout", Action: "Roll the winning variant out in phases", Actor: "HUMAN decides, AGENT drafts"},
			{N: 5, Script: "report.py", Action: "Publish the test results to the growth channel", Actor: "AUTO"},
		}},
		{"vault/00-CORE/Playbooks/Monthly Close.md", []Step{
			{N: 1, Skill: "bookkeeping", Action: "Post the last invoices and bank lines of the month", Actor: "AGENT"},
			{N: 2, Action: "Review the trial balance and flag every account that moved more than ten percent", Actor: "HUMAN"},
			{N: 3, Skill: "cro", Action: "Reconcile the marketing spend against the funnel with [[cro/SKILL.md|the CRO skill]], then follow [[CRO improvement loop]] if it dropped.", Actor: "HUMAN, 15 min"},
		}},
		{"vault/00-CORE/Playbooks/Phased rollout.md", []Step{
			{N: 1, Skill: "ab-test-setup", Action: "Ship to ten percent of visitors", Actor: "AGENT"},
			{N: 2, Skill: "cro", Action: "Watch the numbers", Actor: "HUMAN"},
			{N: 3, Action: "Ship to everyone", Actor: "AGENT + HUMAN"},
		}},
		{"vault2/00-CORE/Playbooks/Pay bills.md", []Step{
			{N: 1, Skill: "solo", Action: "List the approved bills due this week", Actor: "AGENT"},
			{N: 2, Skill: "solo", Route: "pay", Action: "Pay them and record the payments", Actor: "HUMAN + AGENT"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := ParseSteps(fixtureBody(t, tt.path), testServed)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s\nwant %s", goldenJSON(t, got), goldenJSON(t, tt.want))
			}
		})
	}
}

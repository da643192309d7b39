package vault

import (
	"reflect"
	"testing"
)

func TestParseChainFile(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   []ChainDef
		source string
	}{
		{"bulleted fields",
			"## lead-to-cash\n- **SME Label:** Lead to Cash\n- **Description:** From lead\n  to cash.\n- **Stages:** Attract → Close → Collect\n",
			[]ChainDef{{ID: "lead-to-cash", Label: "Lead to Cash", Description: "From lead", Stages: []string{"Attract", "Close", "Collect"}}}, "definition"},
		{"unbulleted fields, backticked heading and stages",
			"### `record-to-insight`\n**SME Label:** Record to Insight\n**Stages:** `record` -> `report`\n",
			[]ChainDef{{ID: "record-to-insight", Label: "Record to Insight", Stages: []string{"record", "report"}}}, "definition"},
		{"stage separators",
			"## a-b\n**Stages:** one → two -> three > four, five,, six.\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"one", "two", "three", "four", "five", "six"}}}, "index"},
		{"duplicate stages once",
			"## a-b\n**Stages:** Close → close → CLOSE_ → Pay-out → pay out\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"Close", "Pay-out"}}}, "index"},
		{"colon outside bold",
			"## a-b\n**Stages**: x → y\n**Description**: d\n",
			[]ChainDef{{ID: "a-b", Description: "d", Stages: []string{"x", "y"}}}, "index"},
		{"empty Stages takes the list after it",
			"## a-b\n**Stages:**\n\n1. Request\n2. `Approve`\n- Pay\n\nText after.\n- not a stage\n",
			[]ChainDef{{ID: "a-b", Description: "Text after.", Stages: []string{"Request", "Approve", "Pay"}}}, "index"},
		{"index: bold line is the label, first plain line the description",
			"# Index\n\nIntro, outside any chain.\n\n### `procure-to-pay`\n\n**Procure to Pay**\n\nFrom request to payment.\n\nSecond line, ignored.\n\n- **Stages:** Request → Pay\n- Skills: 3\n",
			[]ChainDef{{ID: "procure-to-pay", Label: "Procure to Pay", Description: "From request to payment.", Stages: []string{"Request", "Pay"}}}, "index"},
		{"index: explicit fields win",
			"## a-b\nPlain first.\n**Description:** Explicit.\n**Bold**\n",
			[]ChainDef{{ID: "a-b", Label: "Bold", Description: "Explicit."}}, "index"},
		{"definition: bold line and plain text are not fields",
			"## a-b\n**SME Label:** A B\n**Bold**\nPlain.\n",
			[]ChainDef{{ID: "a-b", Label: "A B"}}, "definition"},
		{"tables and fences ignored",
			"## a-b\n| **Stages:** x → y |\n|---|\n```\n**Stages:** p → q\n## fake-chain\n```\n~~~\n**Description:** no\n~~~\n**Stages:** real\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"real"}}}, "index"},
		{"Cross-Chain and Meta-Chain buckets",
			"## lead-to-cash\n**Stages:** a\n## Cross-Chain: Customer Experience!\n**Description:** Across chains.\n**Stages:** dropped\n## Meta-Chain: `Infrastructure`\n",
			[]ChainDef{{ID: "lead-to-cash", Stages: []string{"a"}},
				{ID: "customer-experience", Label: "Customer Experience!", Description: "Across chains.", Bucket: true},
				{ID: "infrastructure", Label: "Infrastructure", Bucket: true}}, "index"},
		{"bucket whose slug is no id is not a bucket",
			"## Meta-Chain: 2026 plan\n**Description:** no\n## Cross-Chain: !!!\n",
			[]ChainDef{}, "index"},
		{"Valid chain IDs add empty buckets in order",
			"## b-chain\n**Stages:** x\n### Valid chain IDs\n- `a-chain`, `b-chain`\n- `C-chain` `not an id` `x`\n| `d-chain` | in a table |\n## After\n`e-chain`\n",
			[]ChainDef{{ID: "b-chain", Stages: []string{"x"}}, {ID: "a-chain", Bucket: true}, {ID: "d-chain", Bucket: true}}, "index"},
		{"Valid chain IDs heading at any level; defined later is not a bucket",
			"# Valid Chain IDs (use these)\n`a-chain` `b-chain`\n## a-chain\n**Stages:** x\n",
			[]ChainDef{{ID: "a-chain", Stages: []string{"x"}}, {ID: "b-chain", Bucket: true}}, "index"},
		{"other headings close the chain",
			"## a-b\n**Stages:** x\n## Notes\n**Stages:** y\n**Description:** no\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"x"}}}, "index"},
		{"deeper headings stay in the chain",
			"## a-b\n### Details\n**Stages:** x\n#### more-detail\n**Description:** d\n",
			[]ChainDef{{ID: "a-b", Description: "d", Stages: []string{"x"}}}, "index"},
		{"level fixed by the first chain heading",
			"### a-b\n**Stages:** x\n## c-d\n**Stages:** y\n### e-f\n**Stages:** z\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"x"}}, {ID: "e-f", Stages: []string{"z"}}}, "index"},
		{"heading levels other than 2 and 3 are not chains",
			"# a-b\n#### c-d\n**Stages:** x\n",
			[]ChainDef{}, "index"},
		{"ids must match the grammar",
			"## a\n## 1-b\n## Lead-to-cash\n## a_b\n## lead to cash\n## ok-1\n",
			[]ChainDef{{ID: "ok-1"}}, "index"},
		{"duplicate ids: first block wins",
			"## a-b\n**Stages:** x\n## a-b\n**Stages:** y\n**SME Label:** Second\n",
			[]ChainDef{{ID: "a-b", Stages: []string{"x"}}}, "definition"},
		{"CRLF",
			"## a-b\r\n- **SME Label:** A\r\n- **Stages:** x → y\r\n",
			[]ChainDef{{ID: "a-b", Label: "A", Stages: []string{"x", "y"}}}, "definition"},
		{"no chain", "# Value chains\n\nNothing yet.\n", []ChainDef{}, "index"},
		{"empty", "", []ChainDef{}, "index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source := ParseChainFile(tt.text)
			if !reflect.DeepEqual(got, tt.want) || source != tt.source {
				t.Errorf("ParseChainFile(%q)\n got %s %s\nwant %s %s", tt.text, source, goldenJSON(t, got), tt.source, goldenJSON(t, tt.want))
			}
		})
	}
}

func TestBuildChains(t *testing.T) {
	defs := []ChainDef{
		{ID: "lead-to-cash", Label: "Lead to Cash", Stages: []string{"Attract", "Propose", "Close"}},
		{ID: "infrastructure", Label: "Infrastructure", Bucket: true},
		{ID: "empty-bucket", Bucket: true},
		{ID: "lead-to-cash", Label: "duplicate, ignored"},
	}
	members := []Member{
		{Kind: "skill", Name: "growth/cro", Chains: []string{"lead-to-cash"}, Stages: []string{"propose"}},
		{Kind: "skill", Name: "ab-test-setup", Chains: []string{"Lead_To_Cash", "ghost-chain", "lead-to-cash"}, Stages: []string{"CLOSE"}},
		{Kind: "skill", Name: "playbook-runner", Chains: []string{"infrastructure"}},
		{Kind: "playbook", Name: "CRO improvement loop", Chains: []string{"lead-to-cash"}, Stages: []string{"Propose", "close"}},
		{Kind: "playbook", Name: "Unstaged one", Chains: []string{"lead-to-cash"}},
		{Kind: "playbook", Name: "Wrong stage", Chains: []string{"lead-to-cash", "infrastructure"}, Stages: []string{"invoice"}},
		{Kind: "playbook", Name: "Alpha", Chains: []string{"alpha-chain"}, Stages: []string{"b", "a"}},
		{Kind: "skill", Name: "beta", Chains: []string{"alpha-chain"}, Stages: []string{"A", "c"}},
		{Kind: "note", Name: "ignored kind", Chains: []string{"zzz-chain"}},
		{Kind: "skill", Name: "", Chains: []string{"zzz-chain"}},
		{Kind: "skill", Name: "blank chain", Chains: []string{" ", ""}},
	}
	chains, warnings := BuildChains(defs, "definition", members)
	want := []Chain{
		{ID: "lead-to-cash", Label: "Lead to Cash", Kind: "chain", Source: "definition",
			Stages: []string{"Attract", "Propose", "Close"},
			StageTable: []StageRow{
				{Stage: "Attract", Skills: []string{}, Playbooks: []string{}},
				{Stage: "Propose", Skills: []string{"growth/cro"}, Playbooks: []string{"CRO improvement loop"}},
				{Stage: "Close", Skills: []string{"ab-test-setup"}, Playbooks: []string{"CRO improvement loop"}},
			},
			Unstaged: Items{Skills: []string{}, Playbooks: []string{"Unstaged one", "Wrong stage"}},
			Gaps:     []string{"Attract"}, Skills: 2, Playbooks: 3},
		{ID: "infrastructure", Label: "Infrastructure", Kind: "bucket", Source: "definition",
			Stages: []string{}, StageTable: []StageRow{},
			Unstaged: Items{Skills: []string{"playbook-runner"}, Playbooks: []string{"Wrong stage"}},
			Gaps:     []string{}, Skills: 1, Playbooks: 1},
		{ID: "empty-bucket", Kind: "bucket", Source: "definition",
			Stages: []string{}, StageTable: []StageRow{},
			Unstaged: Items{Skills: []string{}, Playbooks: []string{}}, Gaps: []string{}},
		{ID: "alpha-chain", Kind: "chain", Source: "derived",
			Stages: []string{"b", "a", "c"},
			StageTable: []StageRow{
				{Stage: "b", Skills: []string{}, Playbooks: []string{"Alpha"}},
				{Stage: "a", Skills: []string{"beta"}, Playbooks: []string{"Alpha"}},
				{Stage: "c", Skills: []string{"beta"}, Playbooks: []string{}},
			},
			Unstaged: Items{Skills: []string{}, Playbooks: []string{}}, Gaps: []string{}, Skills: 1, Playbooks: 1},
		{ID: "ghost-chain", Kind: "chain", Source: "derived",
			Stages:     []string{"CLOSE"},
			StageTable: []StageRow{{Stage: "CLOSE", Skills: []string{"ab-test-setup"}, Playbooks: []string{}}},
			Unstaged:   Items{Skills: []string{}, Playbooks: []string{}}, Gaps: []string{}, Skills: 1},
	}
	if !reflect.DeepEqual(chains, want) {
		t.Errorf("BuildChains\n got %s\nwant %s", goldenJSON(t, chains), goldenJSON(t, want))
	}
	wantWarnings := []string{
		`value chain "alpha-chain" is referenced by playbook Alpha, skill beta but not defined in the chain file; added as a derived chain`,
		`value chain "ghost-chain" is referenced by skill ab-test-setup but not defined in the chain file; added as a derived chain`,
	}
	if !reflect.DeepEqual(warnings, wantWarnings) {
		t.Errorf("warnings\n got %q\nwant %q", warnings, wantWarnings)
	}
}

func TestBuildChainsDerivedOnly(t *testing.T) {
	members := []Member{
		{Kind: "skill", Name: "cro", Chains: []string{"lead-to-cash"}, Stages: []string{"propose"}},
		{Kind: "skill", Name: "playbook-runner", Chains: []string{"infrastructure"}},
		{Kind: "playbook", Name: "Loop", Chains: []string{"lead-to-cash"}, Stages: []string{"close", "Propose"}},
	}
	chains, warnings := BuildChains(nil, "", members)
	want := []Chain{
		{ID: "infrastructure", Kind: "bucket", Source: "derived", Stages: []string{}, StageTable: []StageRow{},
			Unstaged: Items{Skills: []string{"playbook-runner"}, Playbooks: []string{}}, Gaps: []string{}, Skills: 1},
		{ID: "lead-to-cash", Kind: "chain", Source: "derived", Stages: []string{"propose", "close"},
			StageTable: []StageRow{
				{Stage: "propose", Skills: []string{"cro"}, Playbooks: []string{"Loop"}},
				{Stage: "close", Skills: []string{}, Playbooks: []string{"Loop"}},
			},
			Unstaged: Items{Skills: []string{}, Playbooks: []string{}}, Gaps: []string{}, Skills: 1, Playbooks: 1},
	}
	if !reflect.DeepEqual(chains, want) {
		t.Errorf("got %s\nwant %s", goldenJSON(t, chains), goldenJSON(t, want))
	}
	if len(warnings) != 0 {
		t.Errorf("derived-only chains warned: %q", warnings)
	}
	if chains, warnings := BuildChains(nil, "", nil); len(chains) != 0 || len(warnings) != 0 || chains == nil || warnings == nil {
		t.Errorf("nothing in: got %#v, %#v", chains, warnings)
	}
}

func TestBuildChainsLooseIDs(t *testing.T) {
	defs := []ChainDef{{ID: "a--b", Stages: []string{"x"}}, {ID: "a-b", Stages: []string{"y"}}}
	members := []Member{
		{Kind: "skill", Name: "exact", Chains: []string{"a-b"}, Stages: []string{"y"}},
		{Kind: "skill", Name: "loose", Chains: []string{"A_B"}, Stages: []string{"x"}},
	}
	chains, warnings := BuildChains(defs, "definition", members)
	if len(chains) != 2 || len(warnings) != 0 ||
		chains[0].ID != "a--b" || chains[0].StageTable[0].Skills[0] != "loose" ||
		chains[1].ID != "a-b" || chains[1].StageTable[0].Skills[0] != "exact" {
		t.Errorf("got %s, warnings %q", goldenJSON(t, chains), warnings)
	}
}

func TestStageKeyAndSlug(t *testing.T) {
	for in, want := range map[string]string{"Close Books": "close-books", "close_books": "close-books", " close--books ": "close-books", "CLOSE - BOOKS": "close-books", "-": ""} {
		if got := stageKey(in); got != want {
			t.Errorf("stageKey(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Customer Experience": "customer-experience", " A&B -- c ": "a-b-c", "Café": "caf", "!!!": ""} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// goldenMembers are the members the chain golden files are built with:
// enough to fill some stages, leave gaps, reference an undefined chain and
// sit in buckets.
var goldenMembers = []Member{
	{Kind: "skill", Name: "ab-test-setup", Chains: []string{"lead-to-cash", "ghost-chain"}, Stages: []string{"close"}},
	{Kind: "skill", Name: "cro", Chains: []string{"lead-to-cash"}, Stages: []string{"propose"}},
	{Kind: "skill", Name: "playbook-runner", Chains: []string{"infrastructure"}},
	{Kind: "skill", Name: "solo", Chains: []string{"procure-to-pay"}, Stages: []string{"pay"}},
	{Kind: "playbook", Name: "CRO improvement loop", Chains: []string{"lead-to-cash"}, Stages: []string{"propose", "close"}},
	{Kind: "playbook", Name: "Monthly Close", Chains: []string{"record-to-insight"}, Stages: []string{"close books"}},
	{Kind: "playbook", Name: "Pay bills", Chains: []string{"procure-to-pay"}, Stages: []string{"Pay"}},
	{Kind: "playbook", Name: "Controls review", Chains: []string{"operating-controls"}},
}

func TestChainsGolden(t *testing.T) {
	checkGolden(t, "chains", func(text string) any {
		defs, source := ParseChainFile(text)
		chains, warnings := BuildChains(defs, source, goldenMembers)
		return map[string]any{"source": source, "defs": defs, "chains": chains, "warnings": warnings}
	})
}

func TestFixtureVaultChains(t *testing.T) {
	defs, source := ParseChainFile(fixtureBody(t, "vault/20-COMPANY/03-PROCESSES/value-chains.md"))
	want := []ChainDef{
		{ID: "lead-to-cash", Label: "Lead to Cash", Description: "From the first touch with a prospect to the money in the bank.",
			Stages: []string{"Attract", "Capture", "Qualify", "Propose", "Close", "Invoice", "Collect"}},
		{ID: "record-to-insight", Label: "Record to Insight", Description: "From a booked transaction to a decision made on the numbers.",
			Stages: []string{"record", "reconcile", "close-books", "report", "insight"}},
		{ID: "infrastructure", Label: "Infrastructure", Description: "Skills that keep the vault itself running; no stages.", Bucket: true},
		{ID: "operating-controls", Bucket: true},
	}
	if source != "definition" || !reflect.DeepEqual(defs, want) {
		t.Errorf("vault: got %s %s\nwant %s", source, goldenJSON(t, defs), goldenJSON(t, want))
	}
	defs, source = ParseChainFile(fixtureBody(t, "vault2/VALUE-CHAINS.md"))
	want = []ChainDef{{ID: "procure-to-pay", Label: "Procure to Pay", Description: "From a purchase request to the supplier paid and the payment recorded.",
		Stages: []string{"Request", "Approve", "Order", "Receive", "Pay"}}}
	if source != "index" || !reflect.DeepEqual(defs, want) {
		t.Errorf("vault2: got %s %s\nwant %s", source, goldenJSON(t, defs), goldenJSON(t, want))
	}
}

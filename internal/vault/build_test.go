package vault

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func buildFrom(t *testing.T, fsys fstest.MapFS, skills []SkillRef, o BuildOptions) *Library {
	t.Helper()
	return Build(Load(fsys, Options{Playbooks: true, ValueChains: true}), skills, o)
}

func reasons(l *Library) string {
	var b strings.Builder
	for _, w := range l.Warnings {
		b.WriteString(w.Reason + ": " + w.Message + "\n")
	}
	return b.String()
}

var someSkills = []SkillRef{
	{Name: "cro", Path: "bob/cro", Chains: []string{"lead-to-cash"}, Stage: "propose"},
	{Name: RunnerName, Path: "bob/" + RunnerName},
}

func TestBuildPlaybooks(t *testing.T) {
	fsys := fstest.MapFS{
		PlaybooksDir + "/Loop.md": note("type: playbook\ntitle: The loop\ntrigger: Weekly\noutcome: Better\ntotal-steps: 3\nestimated-duration: 2h\n"+
			"value-chain: lead-to-cash\nchain-coverage: [propose, close]\ntags: [growth]", "## Steps\n1. cro → audit (AGENT)\n2. ghost → write (HUMAN)\n"),
		PlaybooksDir + "/Draft.md":  note("type: playbook\nstatus: Draft", "## Steps\n1. cro → x\n"),
		PlaybooksDir + "/Nostat.md": note("type: playbook", "## Steps\n1. cro → x\n"),
	}
	l := buildFrom(t, fsys, someSkills, BuildOptions{Runner: "bob/" + RunnerName})
	var names []string
	for _, pb := range l.Playbooks {
		names = append(names, pb.Name)
	}
	if !slices.Equal(names, []string{"Loop", "Nostat"}) || l.Hidden != 1 {
		t.Fatalf("served %v, hidden %d", names, l.Hidden)
	}
	pb := l.Find("the LOOP") // by title, any case
	if pb == nil || pb.Name != "Loop" {
		t.Fatalf("Find by title: %+v", pb)
	}
	if pb.Trigger != "Weekly" || pb.Outcome != "Better" || pb.Duration != "2h" || pb.TotalSteps != 3 || pb.Status != "active" ||
		!slices.Equal(pb.ValueChains, []string{"lead-to-cash"}) || !slices.Equal(pb.ChainCoverage, []string{"propose", "close"}) ||
		!slices.Equal(pb.Tags, []string{"growth"}) {
		t.Errorf("frontmatter fields: %+v", pb)
	}
	if !slices.Equal(pb.Skills, []string{"cro", "ghost"}) || !slices.Equal(pb.Missing, []string{"ghost"}) || l.SkillPath("cro") != "bob/cro" {
		t.Errorf("skills %v, missing %v", pb.Skills, pb.Missing)
	}
	w := reasons(l)
	for _, want := range []string{"playbook-skills: steps name skills this library does not serve: ghost", "playbook-steps: total-steps says 3, the note has 2 steps"} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in:\n%s", want, w)
		}
	}
	// The chain is derived from the frontmatter of both kinds of member.
	if l.ChainSource != "derived" || len(l.Chains) != 1 || l.Chains[0].ID != "lead-to-cash" {
		t.Fatalf("chains %+v from %q", l.Chains, l.ChainSource)
	}

	all := buildFrom(t, fsys, someSkills, BuildOptions{Runner: "bob/" + RunnerName, ShowDisabled: true})
	if len(all.Playbooks) != 3 || all.Hidden != 0 {
		t.Errorf("--show-disabled: %d served, %d hidden", len(all.Playbooks), all.Hidden)
	}

	none := buildFrom(t, fsys, someSkills, BuildOptions{})
	if len(none.Playbooks) != 0 || none.Hidden != 3 || !strings.Contains(reasons(none), "playbook-runner: 2 playbooks not served") {
		t.Errorf("without a runner: %d served, %d hidden, warnings:\n%s", len(none.Playbooks), none.Hidden, reasons(none))
	}
	if len(none.Chains) != 1 {
		t.Error("value chains must not depend on the runner")
	}
}

func TestBuildCycles(t *testing.T) {
	fsys := fstest.MapFS{
		PlaybooksDir + "/A.md": note("type: playbook", "## Steps\n1. [[B]] → then B (AGENT)\n"),
		PlaybooksDir + "/B.md": note("type: playbook", "## Steps\n1. [[C]] → then C (AGENT)\n"),
		PlaybooksDir + "/C.md": note("type: playbook", "## Steps\n1. [[A]] → back to A (AGENT)\n"),
		PlaybooksDir + "/D.md": note("type: playbook", "## Steps\n1. [[D]] → itself (AGENT)\n2. [[A]] → into the cycle (AGENT)\n"),
	}
	l := buildFrom(t, fsys, someSkills, BuildOptions{Runner: "bob/" + RunnerName})
	w := reasons(l)
	if strings.Count(w, "playbook-cycle") != 2 || !strings.Contains(w, "A → B → C → A") || !strings.Contains(w, "D → D") {
		t.Errorf("cycle warnings:\n%s", w)
	}
}

// FuzzLoadBuild runs a whole vault read on a note and a chain file from the
// fuzzer: nothing may panic, every served playbook must come from the
// playbook folder, and every attachment from the note's own folder.
func FuzzLoadBuild(f *testing.F) {
	f.Add([]byte("---\ntype: playbook\n---\n## Steps\n1. cro → go (AGENT)\n![[a.png]]\n"), []byte("## lead-to-cash\n**Stages:** A → B\n"))
	f.Add([]byte("---\ntype: playbook\nstatus: active\ntotal-steps: x\nvalue-chain: [a, b]\n---\n### Phase 1\n[[B]]\n"), []byte("## Meta-Chain: X\n| a | b |\n"))
	f.Fuzz(func(t *testing.T, noteData, chainData []byte) {
		fsys := fstest.MapFS{
			PlaybooksDir + "/N.md":     {Data: noteData},
			PlaybooksDir + "/a.png":    {Data: []byte{1, 2}},
			PlaybooksDir + "/sub/M.md": {Data: noteData},
			RootChainsFile:             {Data: chainData},
		}
		l := Build(Load(fsys, Options{Playbooks: true, ValueChains: true}), someSkills, BuildOptions{Runner: "bob/" + RunnerName, ShowDisabled: true})
		for _, pb := range l.Playbooks {
			if !strings.HasPrefix(pb.VaultPath, PlaybooksDir+"/") {
				t.Fatalf("playbook from %s", pb.VaultPath)
			}
			for _, a := range pb.Note.Attachments {
				if a.Path != PlaybooksDir+"/a.png" && a.Path != PlaybooksDir+"/sub/a.png" {
					t.Fatalf("attachment %s", a.Path)
				}
			}
		}
		for _, c := range l.Chains {
			if c.Kind == "bucket" && len(c.Gaps) > 0 {
				t.Fatalf("bucket %s has gaps", c.ID)
			}
		}
	})
}

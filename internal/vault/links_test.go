package vault

import (
	"reflect"
	"testing"
)

func TestEmbeds(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"none", "No embeds, only a [[link]].", []string{}},
		{"plain", "![[a.png]] and ![[b.pdf]]", []string{"a.png", "b.pdf"}},
		{"alias and heading dropped", "![[a.png|100]] ![[Note#Section|alias]] ![[Other#^block]]", []string{"a.png", "Note", "Other"}},
		{"duplicates once, first order", "![[b.png]] ![[a.png]] ![[b.png|x]]", []string{"b.png", "a.png"}},
		{"as written", "![[ ../../secret.txt ]] ![[sub/x.png]] ![[Link.MD]]", []string{"../../secret.txt", "sub/x.png", "Link.MD"}},
		{"table pipe escape", "| ![[a.png\\|50]] |", []string{"a.png"}},
		{"empty targets skipped", "![[]] ![[#top]] ![[|alias]]", []string{}},
		{"fenced embeds are text", "```\n![[in-fence.png]]\n```\n![[out.png]]\n~~~~\n![[tilde.png]]\n~~~~", []string{"out.png"}},
		{"links are not embeds", "[[a.png]] ! [[b.png]]", []string{}},
		{"no newline inside", "![[a\nb]] ![[c]]", []string{"c"}},
		{"CRLF", "![[a.png]]\r\n![[b.png]]\r\n", []string{"a.png", "b.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Embeds(tt.body); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Embeds(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestFixtureVaultEmbeds(t *testing.T) {
	for path, want := range map[string][]string{
		"vault/00-CORE/Playbooks/CRO improvement loop.md": {"cro-loop-sequence.png"},
		"vault/00-CORE/Playbooks/Evil attach.md":          {"../../secret.txt", "link.md", "missing.png"},
		"vault/00-CORE/Playbooks/Monthly Close.md":        {},
	} {
		if got := Embeds(fixtureBody(t, path)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Embeds = %q, want %q", path, got, want)
		}
	}
}

func TestLinkedSkills(t *testing.T) {
	text := "[[cro]] ![[ab-test-setup]] [[x/playbook-runner/SKILL.md]] [[SKILL.md]] {skills.root}/ab-test-setup/x _cro/scripts/ [[cro|again]]"
	got := linkedSkills(text, testServed, map[string]bool{}, nil)
	want := []string{"cro", "playbook-runner", "ab-test-setup"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("linkedSkills = %q, want %q", got, want)
	}
}

func TestValidSkillName(t *testing.T) {
	for s, want := range map[string]bool{
		"cro": true, "ab-test-setup": true, "a1": true, "7": true,
		"": false, "-a": false, "a-": false, "a--b": false, "Cro": false, "a_b": false, "a b": false,
		"a234567890123456789012345678901234567890123456789012345678901234":  true,
		"a2345678901234567890123456789012345678901234567890123456789012345": false,
	} {
		if got := validSkillName(s); got != want {
			t.Errorf("validSkillName(%q) = %v, want %v", s, got, want)
		}
	}
}

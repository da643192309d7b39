package vault

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func skillFile(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: A skill.\n---\nBody\n")}
}

func TestDetectLayout(t *testing.T) {
	link := &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("/elsewhere")}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want Layout
	}{
		{"vault root", fstest.MapFS{SkillsDir + "/a/SKILL.md": skillFile("a")}, Layout{Skills: SkillsDir, Vault: "."}},
		{"release wrapper", fstest.MapFS{
			"thirdbrain-2026.09/" + SkillsDir + "/a/SKILL.md": skillFile("a"),
			".DS_Store/x": {Data: []byte("x")},
		}, Layout{Skills: "thirdbrain-2026.09/" + SkillsDir, Vault: "thirdbrain-2026.09"}},
		{"two wrappers are not one vault", fstest.MapFS{
			"a/" + SkillsDir + "/a/SKILL.md": skillFile("a"),
			"b/" + SkillsDir + "/b/SKILL.md": skillFile("b"),
		}, Layout{Skills: ".", Vault: ""}},
		{"playbooks without a skills folder", fstest.MapFS{
			PlaybooksDir + "/x.md": {Data: []byte("---\ntype: playbook\n---\n")},
			"solo/SKILL.md":        skillFile("solo"),
		}, Layout{Skills: ".", Vault: "."}},
		{"canonical chain file", fstest.MapFS{
			ChainsFile: {Data: []byte("## x\n")},
		}, Layout{Skills: ".", Vault: "."}},
		{"value-chains.md deeper down is left to Probe", fstest.MapFS{
			"a/b/c/Value-Chains.md": {Data: []byte("## x\n")},
		}, Layout{Skills: ".", Vault: ""}},
		{"value-chains.md too deep", fstest.MapFS{
			"a/b/c/d/value-chains.md": {Data: []byte("## x\n")},
		}, Layout{Skills: ".", Vault: ""}},
		{"value-chains.md inside a skill is the skill's", fstest.MapFS{
			"s/SKILL.md":        skillFile("s"),
			"s/value-chains.md": {Data: []byte("## x\n")},
		}, Layout{Skills: ".", Vault: ""}},
		{"symlinked 00-CORE is not followed", fstest.MapFS{"00-CORE": link}, Layout{Skills: ".", Vault: ""}},
		{"symlinked skills folder is not followed", fstest.MapFS{
			"00-CORE/Agents/skills": link,
			"00-CORE/Agents/x.md":   {Data: []byte("x")},
		}, Layout{Skills: ".", Vault: ""}},
		{"symlinked value-chains.md does not count", fstest.MapFS{"value-chains.md": link}, Layout{Skills: ".", Vault: ""}},
		{"plain skills folder", fstest.MapFS{"a/SKILL.md": skillFile("a")}, Layout{Skills: ".", Vault: ""}},
		{"empty", fstest.MapFS{}, Layout{Skills: ".", Vault: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectLayout(tc.fsys); got != tc.want {
				t.Errorf("DetectLayout = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want bool
	}{
		{"three levels down, any case", fstest.MapFS{"a/b/c/Value-Chains.md": {Data: []byte("## x\n")}}, true},
		{"too deep", fstest.MapFS{"a/b/c/d/value-chains.md": {Data: []byte("## x\n")}}, false},
		{"inside a skill it is the skill's", fstest.MapFS{"s/SKILL.md": skillFile("s"), "s/value-chains.md": {Data: []byte("## x\n")}}, false},
		{"inside the skills folder", fstest.MapFS{"skills/value-chains.md": {Data: []byte("## x\n")}}, false},
		{"a symlink does not count", fstest.MapFS{"a/value-chains.md": {Mode: fs.ModeSymlink, Data: []byte("/x")}}, false},
	} {
		if got := Probe(tc.fsys, "skills"); got != tc.want {
			t.Errorf("%s: Probe = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A library of many skill folders is not walked in full to learn it is
// not a vault: skill folders are not entered and the listing budget holds.
func TestDetectLayoutBounded(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 2000 {
		name := "c" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + itoa(i)
		fsys[name+"/SKILL.md"] = skillFile("s")
		fsys[name+"/references/value-chains.md"] = &fstest.MapFile{Data: []byte("## x\n")}
	}
	counting := &countFS{MapFS: fsys}
	if got := DetectLayout(counting); got.Vault != "" {
		t.Errorf("a skills library was taken for a vault: %+v", got)
	}
	if counting.reads > 8 {
		t.Errorf("DetectLayout listed %d folders", counting.reads)
	}
	counting.reads = 0
	if Probe(counting, "") {
		t.Error("Probe found a vault in a skills library")
	}
	if counting.reads > chainSearchDirs {
		t.Errorf("Probe listed %d folders, budget %d", counting.reads, chainSearchDirs)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

type countFS struct {
	fstest.MapFS
	reads int
}

func (c *countFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.reads++
	return c.MapFS.ReadDir(name)
}

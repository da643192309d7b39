package vault

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func note(front, body string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\n" + front + "\n---\n" + body)}
}

func playbook(status, body string) *fstest.MapFile {
	return note("type: playbook\nstatus: "+status, body)
}

// guardFS fails the test when anything below a forbidden folder is opened:
// private playbooks are counted from listings, never read.
type guardFS struct {
	fstest.MapFS
	t         *testing.T
	forbidden []string
}

func (g guardFS) Open(name string) (fs.File, error) {
	for _, f := range g.forbidden {
		if strings.HasPrefix(name, f+"/") {
			g.t.Errorf("opened private file %s", name)
		}
	}
	return g.MapFS.Open(name)
}

func (g guardFS) ReadDir(name string) ([]fs.DirEntry, error) { return g.MapFS.ReadDir(name) }

func warningsOf(raw *Raw) string {
	var b strings.Builder
	for _, w := range raw.Warnings {
		b.WriteString(w.Path + " [" + w.Reason + "] " + w.Message + "\n")
	}
	return b.String()
}

func TestLoadNotes(t *testing.T) {
	fsys := fstest.MapFS{
		PlaybooksDir + "/Loop.md":              playbook("active", "## Steps\n1. cro → do it (AGENT)\n"),
		PlaybooksDir + "/Draft.md":             playbook("draft", ""),
		PlaybooksDir + "/Notes.md":             note("type: note", "not a playbook"),
		PlaybooksDir + "/Plain.md":             {Data: []byte("no frontmatter at all\n")},
		PlaybooksDir + "/Broken.md":            {Data: []byte("---\ntype: playbook\nstatus: [active\n---\n")},
		PlaybooksDir + "/AGENTS.md":            playbook("active", ""),
		PlaybooksDir + "/.hidden.md":           playbook("active", ""),
		PlaybooksDir + "/_archive/Old.md":      playbook("active", ""),
		PlaybooksDir + "/sub/Misplaced.md":     playbook("active", ""),
		PlaybooksDir + "/sub/Loop.md":          playbook("active", "duplicate stem"),
		PlaybooksDir + "/a/b/c/d/e/TooDeep.md": playbook("active", ""),
		PlaybooksDir + "/Huge.md":              {Data: append([]byte("---\ntype: playbook\n---\n"), make([]byte, MaxNoteBytes)...)},
		PlaybooksDir + "/Linked.md":            {Mode: fs.ModeSymlink, Data: []byte("/etc/passwd")},
		PlaybooksDir + "/image.png":            {Data: []byte{0x89, 'P', 'N', 'G'}},
		PrivatePlaybookDirs[0] + "/Mine.md":    playbook("active", "secret"),
		PrivatePlaybookDirs[0] + "/x/More.md":  playbook("active", "secret"),
		PrivatePlaybookDirs[1] + "/Me.md":      playbook("active", "secret"),
		PrivatePlaybookDirs[1] + "/pic.png":    {Data: []byte("x")},
	}
	raw := Load(guardFS{MapFS: fsys, t: t, forbidden: PrivatePlaybookDirs}, Options{Playbooks: true})
	var got []string
	for _, n := range raw.Notes {
		got = append(got, n.Path)
		if n.Misplaced != strings.Contains(n.Path, "/sub/") {
			t.Errorf("%s: misplaced = %v", n.Path, n.Misplaced)
		}
	}
	want := []string{PlaybooksDir + "/Draft.md", PlaybooksDir + "/Loop.md", PlaybooksDir + "/sub/Misplaced.md"}
	if !slices.Equal(got, want) {
		t.Errorf("notes = %q, want %q", got, want)
	}
	if raw.Private != 3 {
		t.Errorf("private = %d, want 3", raw.Private)
	}
	w := warningsOf(raw)
	for _, frag := range []string{"Broken.md [frontmatter]", "Huge.md [note]", "Linked.md [symlink]", "sub/Loop.md [duplicate-playbook]"} {
		if !strings.Contains(w, frag) {
			t.Errorf("no warning %q in:\n%s", frag, w)
		}
	}
	if strings.Contains(w, "Plain.md") || strings.Contains(w, "Notes.md") {
		t.Errorf("notes that are not playbooks were warned about:\n%s", w)
	}
	if raw.ChainFile != "" {
		t.Errorf("value chains were read while off: %s", raw.ChainFile)
	}
}

func TestLoadAttachments(t *testing.T) {
	body := "![[seq.png]] ![[ref.md|alias]] ![[../secret.txt]] ![[sub/x.png]] ![[link.png]] ![[missing.png]] ![[run.sh]] ![[big.bin]] ![[.env]] ![[bundle.zip]] ![[folder]]\n"
	fsys := fstest.MapFS{
		PlaybooksDir + "/Loop.md":     playbook("active", body),
		PlaybooksDir + "/seq.png":     {Data: []byte{0x89, 'P', 'N', 'G', 0}},
		PlaybooksDir + "/ref.md":      {Data: []byte("reference\n")},
		PlaybooksDir + "/sub/x.png":   {Data: []byte("x")},
		PlaybooksDir + "/link.png":    {Mode: fs.ModeSymlink, Data: []byte("/etc/passwd")},
		PlaybooksDir + "/run.sh":      {Data: []byte("#!/bin/sh\necho hi\n")},
		PlaybooksDir + "/big.bin":     {Data: make([]byte, 2048)},
		PlaybooksDir + "/.env":        {Data: []byte("KEY=1")},
		PlaybooksDir + "/bundle.zip":  {Data: []byte("PK")},
		PlaybooksDir + "/folder/a.md": {Data: []byte("x")},
		"00-CORE/secret.txt":          {Data: []byte("secret")},
	}
	raw := Load(fsys, Options{Playbooks: true, MaxFileBytes: 1024, NoScripts: true})
	if len(raw.Notes) != 1 {
		t.Fatalf("notes = %d", len(raw.Notes))
	}
	var got []string
	for _, a := range raw.Notes[0].Attachments {
		got = append(got, a.Name)
		if !strings.HasPrefix(a.Digest, "sha256:") || a.Size == 0 || a.Path != PlaybooksDir+"/"+a.Name {
			t.Errorf("attachment %+v", a)
		}
	}
	if !slices.Equal(got, []string{"seq.png", "ref.md"}) {
		t.Errorf("attachments = %q, want seq.png and ref.md", got)
	}
	if a := raw.Notes[0].Attachments[0]; a.Text || a.Digest != digest(fsys[PlaybooksDir+"/seq.png"].Data) {
		t.Errorf("seq.png = %+v", a)
	}
	w := warningsOf(raw)
	for _, frag := range []string{`"../secret.txt"`, `"sub/x.png"`, `"link.png" is not a regular file`, `"missing.png" does not exist`, `"big.bin"`, `".env"`, `"bundle.zip"`, `"folder" is not a regular file`} {
		if !strings.Contains(w, frag) {
			t.Errorf("no warning with %s in:\n%s", frag, w)
		}
	}
	if strings.Contains(w, "run.sh") {
		t.Errorf("a script withheld by NoScripts was warned about:\n%s", w)
	}
}

func TestLoadChainFile(t *testing.T) {
	chains := "## lead-to-cash\n**SME Label:** Lead to cash\n**Stages:** Lead → Close\n"
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"canonical first", fstest.MapFS{ChainsFile: {Data: []byte(chains)}, RootChainsFile: {Data: []byte(chains)}}, ChainsFile},
		{"root file", fstest.MapFS{RootChainsFile: {Data: []byte(chains)}}, RootChainsFile},
		{"found by walking", fstest.MapFS{"docs/process/value-chains.md": {Data: []byte(chains)}}, "docs/process/value-chains.md"},
		{"an empty canonical file gives way", fstest.MapFS{ChainsFile: {Data: []byte("# nothing here\n")}, RootChainsFile: {Data: []byte(chains)}}, RootChainsFile},
		{"never inside the skills folder", fstest.MapFS{SkillsDir + "/value-chains.md": {Data: []byte(chains)}}, ""},
		{"symlink refused", fstest.MapFS{RootChainsFile: {Mode: fs.ModeSymlink, Data: []byte("/etc/passwd")}}, ""},
		{"too large", fstest.MapFS{RootChainsFile: {Data: append([]byte(chains), make([]byte, MaxNoteBytes)...)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := Load(tc.fsys, Options{ValueChains: true, SkillsDir: SkillsDir})
			if raw.ChainFile != tc.want {
				t.Errorf("chain file = %q, want %q; warnings:\n%s", raw.ChainFile, tc.want, warningsOf(raw))
			}
			if tc.want != "" && raw.ChainText != chains {
				t.Errorf("chain text = %q", raw.ChainText)
			}
		})
	}
}

// A note that embeds thousands of files costs bounded warnings and
// attachments.
func TestLoadAttachmentBounds(t *testing.T) {
	var body strings.Builder
	fsys := fstest.MapFS{}
	for i := range 100 {
		name := "f" + itoa(i) + ".txt"
		body.WriteString("![[" + name + "]] ![[missing" + itoa(i) + ".png]]\n")
		fsys[PlaybooksDir+"/"+name] = &fstest.MapFile{Data: []byte("x")}
	}
	for i := range 5000 {
		body.WriteString("![[gone" + itoa(i) + ".png]]\n")
	}
	fsys[PlaybooksDir+"/Big.md"] = playbook("active", body.String())
	raw := Load(fsys, Options{Playbooks: true})
	if len(raw.Notes) != 1 || len(raw.Notes[0].Attachments) != maxAttachments {
		t.Fatalf("attachments = %d, want %d", len(raw.Notes[0].Attachments), maxAttachments)
	}
	if len(raw.Warnings) > maxAttachmentWarnings+2 {
		t.Errorf("%d warnings for one note", len(raw.Warnings))
	}
	w := warningsOf(raw)
	if !strings.Contains(w, "more embeds not served") || !strings.Contains(w, "more than 64 embedded files") {
		t.Errorf("no summary warnings:\n%s", w)
	}
}

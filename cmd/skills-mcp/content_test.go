package main_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skill/skilltest"
)

// contentLibrary writes a library whose skills bundle documents, an
// archive and executables, and returns its folder and the same files as a
// zip (entries at the root, as the folder).
func contentLibrary(t *testing.T) (dir, zipPath string) {
	t.Helper()
	md := func(name string) []byte {
		return []byte("---\nname: " + name + "\ndescription: Content of one kind.\n---\n\n# " + name + "\n")
	}
	files := map[string][]byte{
		"docs/SKILL.md":              md("docs"),
		"bundler/SKILL.md":           md("bundler"),
		"bundler/vendor/payload.zip": skilltest.Zip("x/SKILL.md", "nested"),
		"faker/SKILL.md":             md("faker"),
		"faker/assets/template.docx": skilltest.FakeDocument(),
		"tools/SKILL.md":             md("tools"),
		"tools/references/guide.md":  []byte("# Guide\n"),
		"plain/SKILL.md":             md("plain"),
		"plain/references/empty.txt": {},
	}
	for name, data := range skilltest.Documents() {
		files["docs/"+name] = data
	}
	for name, data := range skilltest.MacroDocuments() {
		files["docs/"+name] = data
	}
	for name, data := range skilltest.Executables() {
		files["tools/"+name] = data
	}
	dir = filepath.Join(t.TempDir(), "lib")
	zipPath = filepath.Join(t.TempDir(), "lib.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, zipPath
}

// TestFolderAndZipServeTheSameCatalog serves one library as a folder and
// as a release zip. Both serve the same skills with the same files and
// digests, and withhold the same skills with the same warnings: the skill
// bundling a zip and the one bundling a zip named .docx are withheld, the
// office documents are served, and nothing refuses the whole zip.
func TestFolderAndZipServeTheSameCatalog(t *testing.T) {
	dir, zipPath := contentLibrary(t)
	type served struct {
		Skills   []json.RawMessage `json:"-"`
		Warnings []struct{ Library, Path, Reason, Message string }
		Withheld int
	}
	serve := func(lib string, extra ...string) served {
		t.Helper()
		env := []string{"SKILLS_CACHE_DIR=" + t.TempDir()}
		args := append([]string{"--lib", "team=" + lib, "--stats"}, extra...)
		code, stdout, stderr := run(t, env, args...)
		if code != 0 {
			t.Fatalf("%s --stats: exit %d\n%s", lib, code, stderr)
		}
		var s served
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.Command(binary, append([]string{"--lib", "team=" + lib}, extra...)...)
		cmd.Env = append(testEnv(t), env...)
		cs, err := newClient(t).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for _, sk := range listAll(t, cs) {
			b, _ := json.Marshal(sk)
			s.Skills = append(s.Skills, b)
		}
		return s
	}
	for _, extra := range [][]string{nil, {"--no-scripts"}} {
		folder, zipped := serve(dir, extra...), serve(zipPath, extra...)
		if len(folder.Skills) != 3 {
			t.Errorf("%v: the folder serves %d skills, want docs, plain and tools", extra, len(folder.Skills))
		}
		if !slices.EqualFunc(folder.Skills, zipped.Skills, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Errorf("%v: skills differ\nfolder: %s\nzip:    %s", extra, folder.Skills, zipped.Skills)
		}
		if !slices.Equal(folder.Warnings, zipped.Warnings) || folder.Withheld != zipped.Withheld {
			t.Errorf("%v: warnings differ\nfolder: %+v\nzip:    %+v", extra, folder.Warnings, zipped.Warnings)
		}
		var withheld []string
		for _, w := range zipped.Warnings {
			if w.Reason == "archive" {
				withheld = append(withheld, w.Path)
			}
		}
		if !slices.Equal(withheld, []string{"bundler", "faker"}) {
			t.Errorf("%v: withheld as bundling archives: %v, want bundler and faker", extra, withheld)
		}
		all := strings.Join(func() []string {
			var out []string
			for _, s := range zipped.Skills {
				out = append(out, string(s))
			}
			return out
		}(), "\n")
		for _, name := range slices.Collect(maps.Keys(skilltest.Documents())) {
			if !strings.Contains(all, "skill://team/docs/"+name) {
				t.Errorf("%v: %s is not served", extra, name)
			}
		}
		if tools := strings.Contains(all, "skill://team/tools/bin/elf-tool"); tools == (len(extra) > 0) {
			t.Errorf("%v: bin/elf-tool served = %v", extra, tools)
		}
	}
}

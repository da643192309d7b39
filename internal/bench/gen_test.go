package bench

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readTree returns every regular file below root by slash path, with its
// mode and bytes.
func readTree(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = info.Mode().String() + "\n" + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGenerateIsDeterministic(t *testing.T) {
	opts := GenOptions{Skills: 100, Seed: 7, Nested: 0.1, Binaries: 0.05}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	sa, err := Generate(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Generate(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sa != sb {
		t.Errorf("stats differ: %+v vs %+v", sa, sb)
	}
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) != len(tb) {
		t.Fatalf("trees hold %d and %d files", len(ta), len(tb))
	}
	for p, content := range ta {
		if tb[p] != content {
			t.Errorf("%s differs between two runs with the same options", p)
		}
	}
	if len(ta) != sa.Files+1 { // + the marker
		t.Errorf("tree holds %d files, stats say %d (+1 marker)", len(ta), sa.Files)
	}

	c := filepath.Join(t.TempDir(), "c")
	opts.Seed = 8
	if _, err := Generate(c, opts); err != nil {
		t.Fatal(err)
	}
	same := 0
	for p, content := range readTree(t, c) {
		if p != markerName && ta[p] == content {
			same++
		}
	}
	if same > len(ta)/10 {
		t.Errorf("another seed gives %d of the same %d files", same, len(ta))
	}
}

// TestGenerateGolden pins the generator's output. If it fails after an
// intended change to the generator (word tables, layout, sizes), update the
// digest and say in BENCHMARKS.md that results before and after the change
// were measured on different libraries; if it fails after a Go upgrade,
// math/rand/v2 changed a sequence and the same holds.
func TestGenerateGolden(t *testing.T) {
	st, err := Generate(filepath.Join(t.TempDir(), "lib"), GenOptions{Skills: 30, Seed: 1, Nested: 0.2, Binaries: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:e1d6bdd670e1dbe2121ae7ebf65dfd761de964cd9f6456542340b495d3a79b6d"
	if st.Digest != want {
		t.Errorf("generated library digest = %s, want %s", st.Digest, want)
	}
}

var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestGenerateLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	st, err := Generate(dir, GenOptions{Skills: 200, Seed: 1, Nested: 0.05, Binaries: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if st.Skills != 200 || st.Nested == 0 {
		t.Errorf("stats %+v: want 200 skills, some nested", st)
	}
	if per := float64(st.Files) / float64(st.Skills); per < 3.3 || per > 3.8 {
		t.Errorf("%.2f files per skill, want about 3.5", per)
	}
	tree := readTree(t, dir)
	names := map[string]bool{}
	var skills, nested, pngs, pep723 int
	cats := map[string]bool{}
	for p, content := range tree {
		if strings.HasSuffix(p, ".png") {
			pngs++
			if !strings.Contains(content, "\x89PNG\r\n\x1a\n") {
				t.Errorf("%s is not PNG-shaped", p)
			}
		}
		if strings.HasSuffix(p, "scripts/run.py") && strings.Contains(content, "# /// script\n") {
			pep723++
		}
		if path.Base(p) != "SKILL.md" {
			continue
		}
		skills++
		folder := path.Base(path.Dir(p))
		parts := strings.Split(p, "/")
		cats[parts[0]] = true
		if len(parts) > 3 {
			nested++
			if _, ok := tree[path.Join(path.Dir(path.Dir(p)), "SKILL.md")]; !ok {
				t.Errorf("%s is nested, but not inside a skill folder", p)
			}
		}
		if !skillName.MatchString(folder) || len(folder) > 64 {
			t.Errorf("%s: %q is not a valid skill name", p, folder)
		}
		if names[folder] {
			t.Errorf("%s: name %q used twice", p, folder)
		}
		names[folder] = true
		fm, body, ok := strings.Cut(strings.TrimPrefix(content[strings.Index(content, "\n")+1:], "---\n"), "\n---\n")
		if !ok {
			t.Fatalf("%s has no frontmatter", p)
		}
		for _, want := range []string{"name: " + folder + "\n", "\ndescription: ", "\ncategory: ", "\ntags:\n  - "} {
			if !strings.Contains(fm+"\n", want) {
				t.Errorf("%s frontmatter lacks %q", p, want)
			}
		}
		if n := strings.Count(body, "\n"); n < 10 || n > 60 {
			t.Errorf("%s body has %d lines, want 10–60", p, n)
		}
	}
	if skills != 200 || nested != st.Nested {
		t.Errorf("found %d skills (%d nested); stats say %d (%d)", skills, nested, st.Skills, st.Nested)
	}
	if len(cats) != len(categories) {
		t.Errorf("skills spread over %d categories, want %d", len(cats), len(categories))
	}
	if pngs == 0 || pep723 == 0 {
		t.Errorf("%d binaries and %d PEP 723 scripts; want some of each", pngs, pep723)
	}
}

func TestGenerateRefusesToOverwrite(t *testing.T) {
	parent := t.TempDir()
	// A directory skills-bench did not write: never replaced, even with Force.
	foreign := filepath.Join(parent, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(foreign, GenOptions{Skills: 2}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("non-empty directory: got %v, want ErrNotEmpty", err)
	}
	if _, err := Generate(foreign, GenOptions{Skills: 2, Force: true}); !errors.Is(err, ErrNotGenerated) {
		t.Errorf("foreign directory with Force: got %v, want ErrNotGenerated", err)
	}
	if data, err := os.ReadFile(filepath.Join(foreign, "keep.txt")); err != nil || string(data) != "mine" {
		t.Errorf("the foreign file was touched: %q, %v", data, err)
	}

	// An empty directory is filled; a generated one is replaced with Force.
	lib := filepath.Join(parent, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(lib, GenOptions{Skills: 3}); err != nil {
		t.Fatalf("empty directory: %v", err)
	}
	if _, err := Generate(lib, GenOptions{Skills: 3}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second run without Force: got %v, want ErrNotEmpty", err)
	}
	if _, err := Generate(lib, GenOptions{Skills: 5, Force: true}); err != nil {
		t.Fatalf("Force over a generated library: %v", err)
	}
	var skills int
	for p := range readTree(t, lib) {
		if path.Base(p) == "SKILL.md" {
			skills++
		}
	}
	if skills != 5 {
		t.Errorf("replaced library holds %d skills, want 5", skills)
	}
	ents, _ := os.ReadDir(parent)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "foreign lib" {
		t.Errorf("work directories left behind: %q", names)
	}
}

func TestGenerateBadOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	for _, o := range []GenOptions{{Skills: 0}, {Skills: MaxGenSkills + 1}, {Skills: 1, Nested: 1.5}, {Skills: 1, Binaries: -0.1}} {
		if _, err := Generate(dir, o); err == nil {
			t.Errorf("Generate(%+v) succeeded", o)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused Generate created %s", dir)
	}
}

func TestPNGBlobIsBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	if _, err := Generate(dir, GenOptions{Skills: 50, Binaries: 1}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, content := range readTree(t, dir) {
		if strings.HasSuffix(p, ".png") {
			n++
			data := []byte(content[strings.Index(content, "\n")+1:])
			if !bytes.HasPrefix(data, []byte("\x89PNG")) || len(data) < 200 || len(data) > 4100 {
				t.Errorf("%s: %d bytes, prefix %q", p, len(data), data[:4])
			}
		}
	}
	if n != 50 {
		t.Errorf("%d binaries with Binaries=1, want 50", n)
	}
}

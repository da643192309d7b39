package main_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const hubSkill = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n# PDF tools\n"

// hubZip writes a ZIP of files into the test's folder and returns its path.
func hubZip(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, content := range files {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hubRepo makes a git repository with a skill under skills/pdf, tagged v1,
// and returns its folder and the tagged commit.
func hubRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"LICENSE": "MIT", "skills/pdf/SKILL.md": hubSkill, "skills/pdf/scripts/fill.py": "#!/usr/bin/env python3\nprint('fill')\n"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wt, _ := repo.Worktree()
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "T", Email: "t@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	h, err := wt.Commit("one", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1", h, nil); err != nil {
		t.Fatal(err)
	}
	return dir, h.String()
}

// hubRun runs `skills-hub --data data args…` and fails the test unless
// it exits with want.
func hubRun(t *testing.T, data string, want int, args ...string) (string, string) {
	t.Helper()
	code, stdout, stderr := run(t, nil, append([]string{"--data", data}, args...)...)
	if code != want {
		t.Fatalf("hub %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout, stderr
}

func hubJSON(t *testing.T, data string, v any, args ...string) {
	t.Helper()
	stdout, _ := hubRun(t, data, 0, append(args, "--json")...)
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("hub %s --json: %v\n%s", strings.Join(args, " "), err, stdout)
	}
}

type hubInstalled struct {
	Created bool
	Version struct {
		ID         string
		Package    string
		TreeDigest string `json:"tree_digest"`
		Origin     map[string]string
	}
	Inspection struct {
		Note    string
		Scripts []struct{ Path, Interpreter string }
	}
}

// TestHubEndToEnd drives the hub as an administrator would: installs from a
// ZIP (twice) and a repository, lists, inspects, uninstalls, searches and
// imports the catalog, and backs up and restores into a new directory.
func TestHubEndToEnd(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hub")
	zipFile := hubZip(t, "pdf.zip", map[string]string{"SKILL.md": hubSkill, "notes.md": "notes"})

	var first, second hubInstalled
	hubJSON(t, data, &first, "install", "--zip", zipFile)
	hubJSON(t, data, &second, "import", zipFile)
	if !first.Created || second.Created || first.Version.ID != second.Version.ID {
		t.Fatalf("the same ZIP twice: %+v then %+v; want one version, created once", first, second)
	}
	if !strings.HasPrefix(first.Version.ID, "pdf-tools@") || first.Version.Origin["kind"] != "zip" || first.Version.Origin["file_name"] != "pdf.zip" {
		t.Errorf("zip version = %+v", first.Version)
	}

	repo, commit := hubRepo(t)
	stdout, stderr := hubRun(t, data, 0, "install", "--repo", repo, "--path", "skills/pdf", "--ref", "v1")
	if !strings.Contains(stdout, "installed pdf-tools@") || !strings.Contains(stdout, "not proof of safety") {
		t.Errorf("install from git printed:\n%s", stdout)
	}
	if !strings.Contains(stderr, "hub: reading") {
		t.Errorf("install from git showed no progress on stderr:\n%s", stderr)
	}

	var pkgs []struct {
		Name     string
		Versions int
		Latest   struct{ ID string }
	}
	hubJSON(t, data, &pkgs, "list")
	if len(pkgs) != 1 || pkgs[0].Name != "pdf-tools" || pkgs[0].Versions != 2 {
		t.Fatalf("list = %+v; want pdf-tools with 2 versions", pkgs)
	}
	gitID := pkgs[0].Latest.ID

	var versions []struct {
		ID     string
		Origin map[string]string
	}
	hubJSON(t, data, &versions, "versions", "pdf-tools")
	if len(versions) != 2 || versions[0].ID != first.Version.ID || versions[1].ID != gitID {
		t.Fatalf("versions = %+v", versions)
	}
	if o := versions[1].Origin; o["kind"] != "git" || o["commit"] != commit || o["ref"] != "v1" {
		t.Errorf("git origin = %v; want the tag and its commit %s", o, commit)
	}

	var in struct {
		Version    struct{ ID string }
		Inspection struct {
			Note         string
			Scripts      []struct{ Path, Interpreter string }
			Requirements struct {
				Declared bool
				Summary  string
			}
		}
		Files []struct{ Path string }
	}
	hubJSON(t, data, &in, "inspect", gitID)
	if in.Version.ID != gitID || len(in.Inspection.Scripts) != 1 || in.Inspection.Scripts[0].Path != "scripts/fill.py" ||
		!strings.Contains(in.Inspection.Note, "not proof of safety") || in.Inspection.Requirements.Declared ||
		!strings.Contains(in.Inspection.Requirements.Summary, "requirements unknown") {
		t.Errorf("inspect = %+v", in)
	}
	if len(in.Files) != 3 || in.Files[0].Path != ".origin/LICENSE" {
		t.Errorf("files = %+v; want the repository's LICENSE under .origin/", in.Files)
	}
	text, _ := hubRun(t, data, 0, "inspect", gitID)
	if strings.Count(text, "not proof of safety") != 1 || !strings.Contains(text, "scripts/fill.py") {
		t.Errorf("inspect text:\n%s", text)
	}

	// The catalog: the bundled snapshot, then an imported one.
	stdout, _ = hubRun(t, data, 0, "catalog", "search", "pdf")
	if !strings.Contains(stdout, "github.com/anthropics/skills/skills/pdf") {
		t.Errorf("bundled catalog search for pdf:\n%s", stdout)
	}
	doc := map[string]any{"schema_version": 1, "items": []map[string]any{{
		"id": "local/pdf", "name": "pdf-tools", "description": "Local PDF forms", "author": "me", "category": "documents",
		"repository": "file://" + filepath.ToSlash(repo), "path": "skills/pdf", "commit": commit,
	}}}
	raw, _ := json.Marshal(doc)
	docFile := filepath.Join(t.TempDir(), "catalog.json")
	os.WriteFile(docFile, raw, 0o644)
	stdout, _ = hubRun(t, data, 0, "catalog", "import", docFile)
	if !strings.Contains(stdout, "1 items") {
		t.Errorf("catalog import printed %q", stdout)
	}
	var hits []struct{ ID string }
	hubJSON(t, data, &hits, "catalog", "search", "--category", "documents")
	if len(hits) != 1 || hits[0].ID != "local/pdf" {
		t.Errorf("search of the imported catalog = %+v", hits)
	}
	var fromItem hubInstalled
	hubJSON(t, data, &fromItem, "install", "--item", "local/pdf")
	if fromItem.Created || fromItem.Version.ID != gitID {
		t.Errorf("the catalog item of an installed tree: %+v; want the git version %s", fromItem, gitID)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"schema_version": 1, "items": [{"id": "x", "name": "x", "description": "d"}]}`), 0o644)
	_, stderr = hubRun(t, data, 1, "catalog", "import", bad)
	if !strings.Contains(stderr, `"x"`) || !strings.Contains(stderr, "repository") || !strings.Contains(stderr, "unchanged: 1 items") {
		t.Errorf("invalid catalog import: %s", stderr)
	}

	// Uninstall one, then back up, restore elsewhere and compare.
	stdout, _ = hubRun(t, data, 0, "uninstall", first.Version.ID)
	if !strings.Contains(stdout, "uninstalled "+first.Version.ID) {
		t.Errorf("uninstall printed %q", stdout)
	}
	hubRun(t, data, 1, "inspect", first.Version.ID)
	hubRun(t, data, 0, "approve", gitID, "--by", "alice")

	backup := filepath.Join(t.TempDir(), "hub.backup")
	hubRun(t, data, 0, "backup", "--out", backup)
	restored := filepath.Join(t.TempDir(), "restored")
	stdout, _ = hubRun(t, restored, 0, "restore", backup)
	if !strings.Contains(stdout, "1 package, 1 version") {
		t.Errorf("restore printed %q", stdout)
	}
	for _, args := range [][]string{{"list", "--json"}, {"inspect", gitID, "--json"}, {"catalog", "search", "--json"}} {
		before, _ := hubRun(t, data, 0, args...)
		after, _ := hubRun(t, restored, 0, args...)
		if before != after {
			t.Errorf("hub %v differs after restore:\nbefore: %s\nafter:  %s", args, before, after)
		}
	}
	_, stderr = hubRun(t, restored, 1, "restore", backup)
	if !strings.Contains(stderr, "empty") {
		t.Errorf("restore over a hub in use: %s", stderr)
	}
}

// TestHubBadInput: each refusal exits 1 with what and why, and changes
// nothing; bad flags exit 2.
func TestHubBadInput(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hub")
	repo, _ := hubRepo(t)
	corrupt := filepath.Join(t.TempDir(), "corrupt.zip")
	os.WriteFile(corrupt, []byte("PK\x03\x04 not really a zip"), 0o644)
	for _, tc := range []struct {
		args []string
		want []string // in stderr
	}{
		{[]string{"install", "--zip", corrupt}, []string{"corrupt.zip", "archive refused"}},
		{[]string{"install", "--zip", hubZip(t, "noskill.zip", map[string]string{"README.md": "x"})}, []string{"noskill.zip", "SKILL.md"}},
		{[]string{"install", "--zip", hubZip(t, "evil.zip", map[string]string{"SKILL.md": hubSkill, "../evil.sh": "x"})}, []string{"evil.zip", "../evil.sh"}},
		{[]string{"install", "--repo", repo, "--path", "skills/pdf", "--ref", "no-such-tag"}, []string{"no-such-tag", "not found"}},
		{[]string{"install", "--repo", repo, "--path", "../outside"}, []string{"../outside", "invalid path"}},
		{[]string{"install", "--item", "no/such/item"}, []string{"no/such/item", "hub catalog search"}},
		{[]string{"inspect", "pdf-tools@123456"}, []string{"pdf-tools", "not found"}},
		{[]string{"install", "--zip", filepath.Join(t.TempDir(), "missing.zip")}, []string{"missing.zip"}},
	} {
		code, stdout, stderr := run(t, nil, append([]string{"--data", data}, tc.args...)...)
		if code != 1 {
			t.Errorf("hub %v: exit %d, want 1\n%s%s", tc.args, code, stdout, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("hub %v: stderr %q does not say %q", tc.args, stderr, w)
			}
		}
	}
	var pkgs []any
	hubJSON(t, data, &pkgs, "list")
	if len(pkgs) != 0 {
		t.Errorf("refused installs left %v", pkgs)
	}

	notDB := t.TempDir()
	os.WriteFile(filepath.Join(notDB, "hub.db"), bytes.Repeat([]byte("this is not a database "), 500), 0o600)
	code, _, stderr := run(t, nil, "--data", notDB, "list")
	if code != 1 || !strings.Contains(stderr, "not a SQLite database") {
		t.Errorf("a data directory whose hub.db is not SQLite: exit %d, %s", code, stderr)
	}

	for _, args := range [][]string{
		{"--bogus"},
		{"install", "--zip"},
		{"install", "--zip", "a.zip", "--item", "x"},
		{"list", "extra"},
		{"nope"},
	} {
		if code, _, stderr := run(t, nil, args...); code != 2 || !strings.Contains(stderr, "Try: ") {
			t.Errorf("%v: exit %d, %s; want 2 with a hint", args, code, stderr)
		}
	}
}

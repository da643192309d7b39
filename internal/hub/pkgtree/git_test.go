package pkgtree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// testRepo is a repository in t.TempDir(), built with go-git.
type testRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: repo}
}

var sig = &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

// commit writes files (name → content; a content of "->target" makes a
// symlink, a name ending in "*" an executable) and commits them all.
func (r *testRepo) commit(msg string, files map[string]string) plumbing.Hash {
	r.t.Helper()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			r.t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			r.t.Fatal(err)
		}
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func TestFromGitResolvesRefs(t *testing.T) {
	r := newTestRepo(t)
	c1 := r.commit("one", map[string]string{"SKILL.md": goodSkill, "notes.md": "first"})
	if _, err := r.repo.CreateTag("v1", c1, &git.CreateTagOptions{Tagger: sig, Message: "v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.repo.CreateTag("light", c1, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/dev", c1)); err != nil {
		t.Fatal(err)
	}
	c2 := r.commit("two", map[string]string{"notes.md": "second"})
	ctx := context.Background()
	tests := []struct {
		ref, commit string
		want        plumbing.Hash
		notes       string
	}{
		{"", "", c2, "second"},
		{"master", "", c2, "second"},
		{"v1", "", c1, "first"},
		{"light", "", c1, "first"},
		{"dev", "", c1, "first"},
		{"refs/heads/dev", "", c1, "first"},
		{c1.String(), "", c1, "first"},
		{"", c1.String(), c1, "first"},
		{"v1", c1.String(), c1, "first"},
	}
	for _, tt := range tests {
		tr, origin, err := FromGit(ctx, GitSource{URL: r.dir, Ref: tt.ref, Commit: tt.commit})
		if err != nil {
			t.Errorf("ref %q commit %q: %v", tt.ref, tt.commit, err)
			continue
		}
		if origin.Commit != tt.want.String() || origin.Ref != tt.ref || origin.Kind != OriginGit || origin.Repository != r.dir {
			t.Errorf("ref %q: origin %+v, want commit %s", tt.ref, origin, tt.want)
		}
		if got := string(tr.File("notes.md").Data); got != tt.notes {
			t.Errorf("ref %q: notes.md = %q, want %q", tt.ref, got, tt.notes)
		}
	}
	// A file:// URL reads the same repository.
	if _, origin, err := FromGit(ctx, GitSource{URL: "file://" + filepath.ToSlash(r.dir), Ref: "v1"}); err != nil || origin.Commit != c1.String() {
		t.Errorf("file URL: %+v, %v", origin, err)
	}
	bad := []struct {
		name, ref, commit, msg string
	}{
		{"missing ref", "nope", "", `no branch or tag "nope"`},
		{"missing commit", "", strings.Repeat("ab", 20), "is not in the repository"},
		{"short commit", "", "abc123", "full 40-digit"},
		{"ref not at commit", "master", c1.String(), "not the commit"},
	}
	for _, tt := range bad {
		_, _, err := FromGit(ctx, GitSource{URL: r.dir, Ref: tt.ref, Commit: tt.commit})
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: got %v, want ErrNotFound mentioning %q", tt.name, err, tt.msg)
		}
	}
	if _, _, err := FromGit(ctx, GitSource{URL: filepath.Join(t.TempDir(), "none")}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no repository: %v", err)
	}
}

func TestFromGitNestedKeepsLicences(t *testing.T) {
	r := newTestRepo(t)
	c := r.commit("init", map[string]string{
		"LICENSE":                      "MIT",
		"NOTICE.md":                    "notice",
		"COPYING":                      "gpl",
		"README.md":                    "readme",
		"skills/pdf/SKILL.md":          goodSkill,
		"skills/pdf/scripts/fill.py*":  "print(1)",
		"skills/other/SKILL.md":        goodSkill,
		"skills/linked/SKILL.md":       "->../pdf/SKILL.md",
		"skills/escape/SKILL.md":       goodSkill,
		"skills/escape/data/passwords": "->/etc/passwd",
	})
	tr, origin, err := FromGit(context.Background(), GitSource{URL: r.dir, Path: "skills/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".origin/COPYING", ".origin/LICENSE", ".origin/NOTICE.md", "SKILL.md", "scripts/fill.py"}
	if got := paths(tr); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}
	if f := tr.File("scripts/fill.py"); f == nil || f.Mode != 0o755 {
		t.Errorf("fill.py: %+v", f)
	}
	if origin.Path != "skills/pdf" || origin.Commit != c.String() {
		t.Errorf("origin %+v", origin)
	}
	bad := []struct {
		path string
		want error
		msg  string
	}{
		{"../outside", ErrPath, "path traversal"},
		{"/abs", ErrPath, "absolute"},
		{"skills/none", ErrNotFound, `no folder "skills/none"`},
		{"skills/pdf/SKILL.md", ErrPath, "not a folder"},
		{"skills/linked", ErrLink, `"SKILL.md" is a symbolic link`},
		{"skills/escape", ErrLink, `"data/passwords" is a symbolic link`},
	}
	for _, tt := range bad {
		_, _, err := FromGit(context.Background(), GitSource{URL: r.dir, Path: tt.path})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("path %q: got %v, want %v mentioning %q", tt.path, err, tt.want, tt.msg)
		}
	}
}

func TestFromGitLimits(t *testing.T) {
	r := newTestRepo(t)
	r.commit("init", map[string]string{"SKILL.md": goodSkill, "big.bin": strings.Repeat("x", 5000), "a": "a", "b": "b"})
	tests := []struct {
		lim Limits
		msg string
	}{
		{Limits{MaxFileBytes: 4096}, `"big.bin" is 5000 bytes, the per-file limit is 4096`},
		{Limits{MaxPackageBytes: 5010}, "more than the limit of 5010 bytes"},
		{Limits{MaxFiles: 3}, "more than 3 files"},
	}
	for _, tt := range tests {
		_, _, err := FromGit(context.Background(), GitSource{URL: r.dir, Limits: tt.lim})
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%+v: got %v, want ErrTooLarge mentioning %q", tt.lim, err, tt.msg)
		}
	}
}

// TestFromGitRunsNothing installs from a repository whose hooks, filters
// and LFS attributes would each leave a marker file if anything ran them.
func TestFromGitRunsNothing(t *testing.T) {
	r := newTestRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.MkdirAll(filepath.Join(r.dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "post-merge", "pre-commit", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(r.dir, ".git", "hooks", h), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "\n[filter \"evil\"]\n\tsmudge = touch " + marker + "\n\tclean = touch " + marker + "\n\tprocess = touch " + marker + "\n\trequired = true\n[core]\n\tfsmonitor = touch " + marker + "\n"
	f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	lfsPointer := "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
	r.commit("init", map[string]string{
		".gitattributes": "* filter=evil\n*.bin filter=lfs diff=lfs merge=lfs -text\n",
		"SKILL.md":       goodSkill,
		"model.bin":      lfsPointer,
	})
	tr, _, err := FromGit(context.Background(), GitSource{URL: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("reading the repository ran a hook or a filter")
	}
	if got := string(tr.File("model.bin").Data); got != lfsPointer {
		t.Errorf("the LFS pointer was not kept as stored: %q", got)
	}
}

func TestGitAndZipAgree(t *testing.T) {
	files := map[string]string{"SKILL.md": goodSkill, "scripts/run.sh*": "echo hi\n", "references/a.md": "# A\n"}
	r := newTestRepo(t)
	r.commit("init", files)
	fromGit, _, err := FromGit(context.Background(), GitSource{URL: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	var entries []entry
	for name, data := range files {
		e := entry{name: name, data: data}
		if n, ok := strings.CutSuffix(name, "*"); ok {
			e = entry{name: n, data: data, mode: 0o100755}
		}
		entries = append(entries, e)
	}
	fromZip, err := readZip(buildZip(t, entries...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fromGit.Digest() != fromZip.Digest() {
		t.Errorf("the same tree from git and from a zip has two digests: %s and %s", fromGit.Digest(), fromZip.Digest())
	}
}

func TestFromGitRefusesRemoteForms(t *testing.T) {
	for _, u := range []string{"git@github.com:acme/skills.git", "http://example.com/repo.git", "ssh://example.com/repo.git", "https://user:pw@example.com/repo.git",
		"http://user:pw@example.com/repo.git", "ftp://user:pw@example.com/repo.git",
		"user:pw@example.com:acme/skills.git", "file://user:pw@example.com/repo"} {
		_, _, err := FromGit(context.Background(), GitSource{URL: u})
		if !errors.Is(err, ErrSource) {
			t.Errorf("%s: got %v, want ErrSource", u, err)
		}
		if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: the error shows the credentials: %v", u, err)
		}
		if _, err := OpenGit(context.Background(), GitSource{URL: u}); !errors.Is(err, ErrSource) || strings.Contains(err.Error(), "pw") {
			t.Errorf("OpenGit %s: got %v, want ErrSource without the credentials", u, err)
		}
	}
}

func TestFromGitCancelled(t *testing.T) {
	r := newTestRepo(t)
	r.commit("init", map[string]string{"SKILL.md": goodSkill})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := FromGit(ctx, GitSource{URL: r.dir}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

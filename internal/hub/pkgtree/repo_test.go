package pkgtree

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestRepoReadsAsFromGit holds the multi-package readers to FromGit's
// view: the same files (licences under .origin for a nested package), so
// the same tree digest, whichever way the repository was read.
func TestRepoReadsAsFromGit(t *testing.T) {
	ctx := context.Background()
	r := newTestRepo(t)
	c := r.commit("init", map[string]string{
		"LICENSE":                     "MIT",
		"README.md":                   "readme",
		"SKILL.md":                    goodSkill,
		"skills/pdf/SKILL.md":         goodSkill,
		"skills/pdf/scripts/fill.py*": "print(1)",
		"skills/pdf/inner/SKILL.md":   goodSkill,
		"skills/linked/SKILL.md":      "->../pdf/SKILL.md",
		"skills/bad/SKILL.md":         "no frontmatter",
	})
	repo, err := OpenGit(ctx, GitSource{URL: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	if repo.Commit != c.String() || !repo.Time.Equal(sig.When) {
		t.Errorf("commit %s at %v, want %s at %v", repo.Commit, repo.Time, c, sig.When)
	}
	if got, err := ResolveGit(ctx, r.dir, ""); err != nil || got != c.String() {
		t.Errorf("ResolveGit: %s, %v", got, err)
	}
	for _, dir := range []string{"skills/pdf", "skills/pdf/inner"} {
		want, _, err := FromGit(ctx, GitSource{URL: r.dir, Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		got, err := repo.Package(ctx, dir)
		if err != nil {
			t.Fatalf("%q: %v", dir, err)
		}
		if got.Digest() != want.Digest() {
			t.Errorf("%q: digest %s, FromGit %s (files %v, want %v)", dir, got.Digest(), want.Digest(), paths(got), paths(want))
		}
	}
	for _, tt := range []struct {
		dir  string
		want error
	}{
		{"skills/linked", ErrLink}, // the package holds a link
		{"skills/bad", ErrNoSkill},
		{"skills/none", ErrNotFound},
		{"README.md", ErrPath},
		{"../x", ErrPath},
	} {
		if _, err := repo.Package(ctx, tt.dir); !errors.Is(err, tt.want) {
			t.Errorf("%q: %v, want %v", tt.dir, err, tt.want)
		}
	}
	// The root package holds the link of a nested folder: refused by
	// both, for the same reason.
	_, _, want := FromGit(ctx, GitSource{URL: r.dir})
	if _, err := repo.Package(ctx, ""); !errors.Is(err, ErrLink) || !errors.Is(want, ErrLink) {
		t.Errorf("root: %v; FromGit: %v; want ErrLink from both", err, want)
	}
}

func TestRepoFromArchives(t *testing.T) {
	ctx := context.Background()
	g := newFakeGitHub(t, githubTarGz(t,
		tarEntry{name: "LICENSE", data: "MIT"},
		tarEntry{name: "docs/link", typeflag: tar.TypeSymlink, link: "/etc/passwd"},
		tarEntry{name: "skills/", typeflag: tar.TypeDir, mode: 0o755},
		tarEntry{name: "skills/pdf/", typeflag: tar.TypeDir, mode: 0o755},
		tarEntry{name: "skills/pdf/SKILL.md", data: goodSkill},
		tarEntry{name: "skills/pdf/run.sh", data: "echo hi", mode: 0o755},
	))
	opts := g.options("")
	want, _, err := FromGit(ctx, GitSource{URL: "https://github.com/acme/skills", Path: "skills/pdf", GitHub: opts})
	if err != nil {
		t.Fatal(err)
	}
	commit, err := opts.ResolveGitHub(ctx, "https://github.com/acme/skills", "")
	if err != nil || commit != testCommit {
		t.Fatalf("resolve: %s, %v", commit, err)
	}
	repo, err := opts.OpenGitHub(ctx, "https://github.com/acme/skills", commit, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	got, err := repo.Package(ctx, "skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != want.Digest() {
		t.Errorf("archive repo digest %s, FromGit's GitHub mode %s", got.Digest(), want.Digest())
	}
	if _, err := repo.Package(ctx, "docs"); !errors.Is(err, ErrLink) {
		t.Errorf("docs: %v, want ErrLink", err)
	}
	// A commit the archive endpoint no longer has.
	if _, err := opts.OpenGitHub(ctx, "https://github.com/acme/skills", "0123456789012345678901234567890123456789", Limits{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("vanished commit: %v, want ErrNotFound", err)
	}

	// A zip of the same repository under one top folder, with GitHub's
	// comment: the same digest.
	zdata := buildZip(t,
		entry{name: "skills-x/LICENSE", data: "MIT"},
		entry{name: "skills-x/skills/pdf/SKILL.md", data: goodSkill},
		entry{name: "skills-x/skills/pdf/run.sh", data: "echo hi", mode: 0o100755},
	)
	zr, err := OpenZip(bytes.NewReader(zdata), int64(len(zdata)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	zt, err := zr.Package(ctx, "skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if zt.Digest() != want.Digest() {
		t.Errorf("zip repo digest %s (%v), want %s (%v)", zt.Digest(), paths(zt), want.Digest(), paths(want))
	}
}

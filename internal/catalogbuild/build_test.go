package catalogbuild

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

var (
	t1 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	t2 = time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
)

// hostileRepo has one of every folder the builder must skip, beside two
// good packages (one nested in the other) and the repository's licence.
func hostileRepo(t *testing.T) *testRepo {
	r := newTestRepo(t, true)
	r.commit(t2, map[string]string{
		"LICENSE":                         "MIT License\n\nCopyright …",
		"README.md":                       "# skills",
		"skills/pdf/SKILL.md":             skillMD("pdf", "Fill PDF forms."),
		"skills/pdf/scripts/fill.py*":     "print(1)",
		"skills/pdf/inner/SKILL.md":       skillMD("inner", "A nested skill.\nmetadata:\n  author: Jane"),
		"skills/badfm/SKILL.md":           "no frontmatter here",
		"skills/badname/SKILL.md":         skillMD("Bad_Name", "Upper case."),
		"skills/linkmd/SKILL.md":          "->../pdf/SKILL.md",
		"skills/haslink/SKILL.md":         skillMD("haslink", "Holds a link."),
		"skills/haslink/passwd":           "->/etc/passwd",
		"skills/sub/SKILL.md":             skillMD("sub", "Holds a submodule."),
		"skills/sub/vendor":               "<submodule>",
		"skills/huge/SKILL.md":            skillMD("huge", "Holds a huge file."),
		"skills/huge/data.bin":            strings.Repeat("x", 4096),
		"node_modules/pkg/SKILL.md":       skillMD("pkg", "In node_modules."),
		"a/b/c/d/e/f/g/h/i/SKILL.md":      skillMD("deep", "Nine folders deep."),
		"skills/own-origin/SKILL.md":      skillMD("own-origin", "Has its own origin folder."),
		"skills/own-origin/.origin/x.txt": "mine",
	})
	return r
}

func TestBuildHostileRepository(t *testing.T) {
	ctx := context.Background()
	r := hostileRepo(t)
	empty := newTestRepo(t, false) // a working clone's layout, with no skills
	empty.commit(t1, map[string]string{"README.md": "nothing here", "docs/guide.md": "…"})
	snap, rep, err := Build(ctx, Options{
		Repositories: []Repository{
			{URL: "https://github.com/acme/skills", Local: r.dir, Category: "documents"},
			{URL: "https://example.org/git/empty.git", Local: empty.dir},
			{URL: "https://github.com/acme/skills", Local: r.dir}, // twice: read once
		},
		Limits: pkgtree.Limits{MaxFileBytes: 1024},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, it := range snap.Items {
		ids = append(ids, it.ID)
	}
	want := []string{"github.com/acme/skills/skills/pdf", "github.com/acme/skills/skills/pdf/inner"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("items %v, want %v", ids, want)
	}
	pdf, inner := snap.Items[0], snap.Items[1]
	if pdf.Commit != r.head.String() || pdf.License != "MIT" || pdf.Author != "acme" || pdf.Category != "documents" || pdf.Repository != "https://github.com/acme/skills" || pdf.Path != "skills/pdf" {
		t.Errorf("pdf item %+v", pdf)
	}
	if inner.Author != "Jane" {
		t.Errorf("inner author %q, want the frontmatter's", inner.Author)
	}
	// The digest is the one an install from the repository gets.
	tree, _, err := pkgtree.FromGit(ctx, pkgtree.GitSource{URL: r.dir, Path: "skills/pdf", Commit: pdf.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if pdf.TreeDigest != tree.Digest() || pdf.FileCount != int64(len(tree.Files)) || pdf.Size != tree.Size() {
		t.Errorf("pdf digest %s, %d files, %d bytes; FromGit %s, %d, %d", pdf.TreeDigest, pdf.FileCount, pdf.Size, tree.Digest(), len(tree.Files), tree.Size())
	}
	if !snap.GeneratedAt.Equal(t2) {
		t.Errorf("generated_at %v, want the newest commit's time %v", snap.GeneratedAt, t2)
	}
	if len(snap.Sources) != 2 || snap.Sources[0].Repository != "https://example.org/git/empty.git" || snap.Sources[1].Commit != r.head.String() {
		t.Errorf("sources %+v", snap.Sources)
	}

	// Every skipped folder, with its reason.
	reasons := map[string]string{}
	var acme, emptyRep *RepoReport
	for i := range rep.Repositories {
		switch rep.Repositories[i].Repository {
		case "https://github.com/acme/skills":
			acme = &rep.Repositories[i]
		default:
			emptyRep = &rep.Repositories[i]
		}
	}
	for _, s := range acme.Skipped {
		reasons[s.Path] = s.Reason
	}
	for dir, want := range map[string]string{
		"skills/badfm":      "frontmatter",
		"skills/badname":    "name",
		"skills/linkmd":     "symbolic link",
		"skills/haslink":    `"passwd" is a symbolic link`,
		"skills/sub":        "submodule",
		"skills/huge":       "per-file limit",
		"node_modules/pkg":  "tool state",
		"a/b/c/d/e/f/g/h/i": "deeper than the 8 levels",
		"skills/own-origin": "reserves",
	} {
		if got, ok := reasons[dir]; !ok || !strings.Contains(got, want) {
			t.Errorf("skipped %s: %q, want a reason with %q", dir, got, want)
		}
	}
	if len(acme.Skipped) != 9 || acme.Items != 2 || acme.Resolved != "local git" {
		t.Errorf("acme report: %d skipped, %d items, resolved %q", len(acme.Skipped), acme.Items, acme.Resolved)
	}
	if emptyRep.Items != 0 || !strings.Contains(emptyRep.Note, "no skills") || emptyRep.Error != "" {
		t.Errorf("empty repository report %+v", emptyRep)
	}
	if len(rep.Duplicates) != 1 {
		t.Errorf("duplicates %v", rep.Duplicates)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{"skipped skills/badfm: ", "no SKILL.md in the repository", "listed more than once", "2 items from 2 repositories"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestInstallFromBuiltCatalog holds the builder's digest to the hub's: an
// item the builder wrote installs, and is checked against its digest.
func TestInstallFromBuiltCatalog(t *testing.T) {
	ctx := context.Background()
	r := hostileRepo(t)
	repo, err := ParseRepository(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := Build(ctx, Options{Repositories: []Repository{repo}})
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "catalog.json")
	if err := write(doc, snap); err != nil {
		t.Fatal(err)
	}
	h := openHub(t)
	if _, err := h.ImportCatalog(ctx, doc); err != nil {
		t.Fatal(err)
	}
	for _, it := range snap.Items {
		inst, err := h.InstallCatalogItem(ctx, it.ID, nil)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		if inst.Version.TreeDigest != it.TreeDigest || !inst.Created {
			t.Errorf("%s: installed %s, the catalog says %s", it.ID, inst.Version.TreeDigest, it.TreeDigest)
		}
	}
	// The repository moves on: an item without its commit now reads
	// another tree, which a fresh hub refuses against the digest.
	r.commit(t2.Add(time.Hour), map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Changed.")})
	pdf := -1
	for i, it := range snap.Items {
		if it.Path == "skills/pdf" {
			pdf = i
		}
	}
	snap.Items[pdf].Commit = ""
	write(doc, snap)
	fresh := openHub(t)
	if _, err := fresh.ImportCatalog(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.InstallCatalogItem(ctx, snap.Items[pdf].ID, nil); !errors.Is(err, hub.ErrDigestMismatch) {
		t.Errorf("moved branch: %v, want ErrDigestMismatch", err)
	}
}

func TestRunWritesAtomicallyAndByteIdentical(t *testing.T) {
	r := hostileRepo(t)
	dir := t.TempDir()
	out, report := filepath.Join(dir, "skills.json"), filepath.Join(dir, "report.json")
	// run builds cfg with the command line's defaults for what it leaves
	// zero, reporting to report.
	// It returns the error and the log, which ends with the error as the
	// command line prints it.
	run := func(cfg Config) (error, string) {
		var log bytes.Buffer
		cfg.Report = report
		if cfg.ResolveWith == "" {
			cfg.ResolveWith = ResolveGit
		}
		cfg.MaxPages, cfg.Parallel = cmp.Or(cfg.MaxPages, DefaultMaxPages), cmp.Or(cfg.Parallel, 2)
		err := Run(context.Background(), cfg, &log)
		if err != nil {
			fmt.Fprintf(&log, "Error: %v\n", err)
		}
		return err, log.String()
	}
	repoArg := r.dir + "=https://github.com/acme/skills"
	err, stderr := run(Config{Repositories: []string{repoArg}, Out: out})
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	first, _ := os.ReadFile(out)
	if err, stderr := run(Config{Repositories: []string{repoArg}, Out: out}); err != nil {
		t.Fatalf("rebuild: %v: %s", err, stderr)
	}
	if second, _ := os.ReadFile(out); !bytes.Equal(first, second) {
		t.Error("two builds of the same commit differ")
	}
	if _, err := index.Parse(bytes.NewReader(first), nil); err != nil {
		t.Errorf("the output does not parse: %v", err)
	}
	for _, want := range []string{"catalog: [1/1] https://github.com/acme/skills at ", "skipped skills/badfm", "wrote " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	var rep Report
	raw, _ := os.ReadFile(report)
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Items != 3 || len(rep.Repositories) != 1 || len(rep.Repositories[0].Skipped) != 8 {
		t.Errorf("report %s: %+v, %v", report, rep, err)
	}

	// An unreachable repository fails the build; the existing output
	// stays as it was, and the report says why.
	unreachable := "https://127.0.0.1:1/nobody/skills.git"
	err, stderr = run(Config{Repositories: []string{repoArg, unreachable}, Out: out})
	if _, usage := errors.AsType[*ConfigError](err); err == nil || usage || !strings.Contains(stderr, "1 of 2 repositories could not be read: "+unreachable) || !strings.Contains(stderr, "--keep-going") {
		t.Errorf("unreachable: %v: %s", err, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, first) {
		t.Error("a failed build changed the existing output")
	}
	raw, _ = os.ReadFile(report)
	if !strings.Contains(string(raw), `"failed"`) || !strings.Contains(string(raw), "connection refused") {
		t.Errorf("report of the failed build: %s", raw)
	}
	// --keep-going publishes without it, and the sources say so.
	if err, stderr := run(Config{Repositories: []string{repoArg, unreachable}, Out: out, KeepGoing: true}); err != nil {
		t.Fatalf("keep going: %v: %s", err, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, first) {
		t.Error("--keep-going without the unreachable repository should write the same catalog")
	}
	// Nothing valid at all: fails, writes nothing.
	empty := newTestRepo(t, true)
	empty.commit(t1, map[string]string{"README.md": "x"})
	if err, stderr := run(Config{Repositories: []string{empty.dir}, Out: filepath.Join(dir, "none.json")}); err == nil || !strings.Contains(stderr, "an empty catalog is not written") {
		t.Errorf("empty: %v: %s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.json")); !os.IsNotExist(err) {
		t.Errorf("an empty build wrote its output: %v", err)
	}
	// Configs that cannot run: nothing is read.
	for _, cfg := range []Config{
		{Out: out},
		{Repositories: []string{repoArg}},
		{Repositories: []string{"x"}, Out: out, ResolveWith: "svn"},
		{Repositories: []string{"https://github.com/a/b@123"}, Out: out},
		{Repositories: []string{repoArg}, Out: out, Parallel: -1},
	} {
		if err, _ := run(cfg); !errors.As(err, new(*ConfigError)) {
			t.Errorf("%+v: %v, want a ConfigError", cfg, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}

func TestParseSources(t *testing.T) {
	in := `# comment
https://github.com/Acme/Skills.git    documents   # trailing comment
https://example.org/r.git#v1.2
/tmp/mirror=https://github.com/o/r@` + strings.Repeat("ab", 20) + `
`
	got, err := parseSources(strings.NewReader(in), "sources.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Repository{
		{URL: "https://github.com/Acme/Skills", Category: "documents"},
		{URL: "https://example.org/r.git", Ref: "v1.2"},
		{URL: "https://github.com/o/r", Local: "/tmp/mirror", Commit: strings.Repeat("ab", 20)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"https://github.com/o/r one two", "https://user:pw@github.com/o/r", "ftp://x/y", "https://github.com/o/r@abc"} {
		if _, err := parseSources(strings.NewReader(bad), "s"); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	// The committed list parses and names only GitHub repositories.
	repos, err := ReadSources("../../catalog/sources.txt")
	if err != nil || len(repos) == 0 {
		t.Fatalf("catalog/sources.txt: %v", err)
	}
	for _, r := range repos {
		if _, _, ok := githubRepo(r.URL); !ok || r.Category == "" {
			t.Errorf("catalog/sources.txt: %+v", r)
		}
	}
}

// openHub opens a store and a hub over it that reads local repositories,
// as the command line does.
func openHub(t *testing.T) *hub.Hub {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return hub.New(db, &hub.Options{LocalRepositories: true})
}

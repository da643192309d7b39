package catalogbuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

const apiCommit = "0123456789abcdef0123456789abcdef01234567"

// tarGz lays files out as GitHub's archive endpoint does: a global header
// with the commit, everything under REPO-COMMIT/, times the commit's.
func tarGz(t *testing.T, when time.Time, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": apiCommit}})
	top := "skills-" + apiCommit + "/"
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o755, ModTime: when})
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		data := files[name]
		h := &tar.Header{Name: top + strings.TrimSuffix(name, "*"), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: when}
		if strings.HasSuffix(name, "*") {
			h.Mode = 0o755
		}
		if target, ok := strings.CutPrefix(data, "->"); ok {
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, target, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(data))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// fakeGitHub serves the commits API and the archive endpoint for
// acme/skills, and resolves acme/gone to a commit whose archive is gone.
type fakeGitHub struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newFakeGitHub(t *testing.T, tarball []byte) *fakeGitHub {
	g := &fakeGitHub{}
	gone := strings.Repeat("9", 40)
	g.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auth = append(g.auth, r.Header.Get("Authorization"))
		g.mu.Unlock()
		switch r.URL.Path {
		case "/repos/acme/skills/commits/HEAD":
			fmt.Fprint(w, apiCommit)
		case "/repos/acme/gone/commits/HEAD":
			fmt.Fprint(w, gone)
		case "/acme/skills/tar.gz/" + apiCommit:
			w.Write(tarball)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func TestBuildWithGitHubAPI(t *testing.T) {
	when := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	g := newFakeGitHub(t, tarGz(t, when, map[string]string{
		"LICENSE":                "MIT License",
		"skills/pdf/SKILL.md":    skillMD("pdf", "Fill PDF forms."),
		"skills/pdf/run.sh*":     "echo hi",
		"skills/link/SKILL.md":   skillMD("link", "Holds a link."),
		"skills/link/x":          "->/etc/passwd",
		"skills/broken/SKILL.md": "---\nname: [unclosed\n---\n",
	}))
	gh := &pkgtree.GitHubOptions{Token: "ghp_secret", APIBase: g.srv.URL, ArchiveBase: g.srv.URL, Client: g.srv.Client()}
	repos := []Repository{{URL: "https://github.com/acme/skills"}, {URL: "https://github.com/acme/gone"}, {URL: "https://github.com/acme/missing"}}
	ctx := context.Background()
	_, rep, err := Build(ctx, Options{Repositories: repos, ResolveWith: ResolveAPI, GitHub: gh})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	byURL := map[string]RepoReport{}
	for _, r := range rep.Repositories {
		byURL[r.Repository] = r
	}
	if e := byURL["https://github.com/acme/gone"].Error; !strings.Contains(e, "resolved (GitHub API) to commit 9999") || !strings.Contains(e, "vanished") {
		t.Errorf("vanished commit: %q", e)
	}
	if e := byURL["https://github.com/acme/missing"].Error; !strings.Contains(e, "resolving the default branch with the GitHub API") || !strings.Contains(e, "not found") {
		t.Errorf("missing repository: %q", e)
	}
	for _, r := range rep.Repositories {
		if strings.Contains(r.Error, "ghp_secret") {
			t.Errorf("the token reached the report: %s", r.Error)
		}
	}
	snap, rep, err := Build(ctx, Options{Repositories: repos, ResolveWith: ResolveAPI, GitHub: gh, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != 1 || snap.Items[0].Commit != apiCommit || snap.Items[0].License != "MIT" || !snap.GeneratedAt.Equal(when) || len(snap.Sources) != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	// The archive's item has the digest git's read of the same files has.
	gr := newTestRepo(t, true)
	gr.commit(when, map[string]string{"LICENSE": "MIT License", "skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms."), "skills/pdf/run.sh*": "echo hi"})
	tree, _, err := pkgtree.FromGit(ctx, pkgtree.GitSource{URL: gr.dir, Path: "skills/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Items[0].TreeDigest != tree.Digest() {
		t.Errorf("archive digest %s, git's %s", snap.Items[0].TreeDigest, tree.Digest())
	}
	skipped := map[string]string{}
	for _, r := range rep.Repositories {
		for _, s := range r.Skipped {
			skipped[s.Path] = s.Reason
		}
	}
	if !strings.Contains(skipped["skills/link"], "link") || !strings.Contains(skipped["skills/broken"], "SKILL.md") {
		t.Errorf("skipped %v", skipped)
	}
	for _, a := range g.auth {
		if a != "Bearer ghp_secret" {
			t.Errorf("a request to the GitHub endpoints had Authorization %q", a)
		}
	}
	// A repository off GitHub is refused in API mode before any request.
	n := len(g.auth)
	_, rep, _ = Build(ctx, Options{Repositories: []Repository{{URL: "https://example.org/r.git"}}, ResolveWith: ResolveAPI, GitHub: gh})
	if !strings.Contains(rep.Repositories[0].Error, "GitHub repositories only") || len(g.auth) != n {
		t.Errorf("non-GitHub repository in API mode: %+v", rep.Repositories[0])
	}
}

func TestBuildFromZip(t *testing.T) {
	mk := func(comment string) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, data := range map[string]string{
			"skills-main/LICENSE":             "Apache License\nVersion 2.0, January 2004",
			"skills-main/skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms."),
		} {
			w, _ := zw.Create(name)
			w.Write([]byte(data))
		}
		if comment != "" {
			zw.SetComment(comment)
		}
		zw.Close()
		p := filepath.Join(t.TempDir(), "skills.zip")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	ctx := context.Background()
	withComment := mk(apiCommit)
	r, _ := ParseRepository(withComment + "=https://github.com/acme/skills")
	snap, rep, err := Build(ctx, Options{Repositories: []Repository{r}})
	if err != nil {
		t.Fatalf("%v: %+v", err, rep.Repositories)
	}
	if it := snap.Items[0]; it.Commit != apiCommit || it.License != "Apache-2.0" || it.ID != "github.com/acme/skills/skills/pdf" || it.Path != "skills/pdf" {
		t.Errorf("item %+v", it)
	}
	// Without GitHub's comment the commit must be given.
	plain := mk("")
	r, _ = ParseRepository(plain + "=https://github.com/acme/skills")
	if _, rep, err := Build(ctx, Options{Repositories: []Repository{r}}); err == nil || !strings.Contains(rep.Repositories[0].Error, "PATH=URL@COMMIT") {
		t.Errorf("zip without a commit: %v", err)
	}
	r, _ = ParseRepository(plain + "=https://github.com/acme/skills@" + apiCommit)
	if snap, _, err := Build(ctx, Options{Repositories: []Repository{r}}); err != nil || snap.Sources[0].Commit != apiCommit {
		t.Errorf("zip with its commit given: %v", err)
	}
}

// TestThousandsOfFolders: a repository of 3,000 folders and one skill is
// read whole, quickly.
func TestThousandsOfFolders(t *testing.T) {
	r := newTestRepo(t, true)
	files := map[string]string{"skills/one/SKILL.md": skillMD("one", "The only skill.")}
	for i := range 3000 {
		files[fmt.Sprintf("data/d%04d/f.txt", i)] = "x"
	}
	for i := range 200 {
		files[fmt.Sprintf("bad/b%03d/SKILL.md", i)] = "not a skill"
	}
	r.commit(t1, files)
	start := time.Now()
	snap, rep, err := Build(context.Background(), Options{Repositories: []Repository{{URL: "https://github.com/acme/many", Local: r.dir}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != 1 || len(rep.Repositories[0].Skipped) != 200 {
		t.Errorf("%d items, %d skipped", len(snap.Items), len(rep.Repositories[0].Skipped))
	}
	t.Logf("3,201 folders read in %v", time.Since(start))
}

package pkgtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

// tarEntry is one entry of a GitHub-style archive.
type tarEntry struct {
	name     string
	data     string
	typeflag byte // 0 means a regular file
	mode     int64
	link     string
}

// githubTarGz builds an archive the way GitHub's endpoint lays it out: a
// global header with the commit, then everything under REPO-COMMIT/.
func githubTarGz(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": testCommit}}))
	top := "skills-" + testCommit + "/"
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o755}))
	for _, e := range entries {
		h := &tar.Header{Name: top + e.name, Typeflag: e.typeflag, Mode: e.mode, Linkname: e.link}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		must(tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(e.data))
			must(err)
		}
	}
	must(tw.Close())
	must(zw.Close())
	return buf.Bytes()
}

// fakeGitHub serves the commits API and the archive endpoint on two TLS
// servers, and records the Authorization header of every request.
type fakeGitHub struct {
	api, archive *httptest.Server
	mu           sync.Mutex
	auth         map[string][]string // server name → Authorization headers seen
	tarball      []byte
	redirectTo   string // if set, the archive endpoint redirects here
}

func newFakeGitHub(t *testing.T, tarball []byte) *fakeGitHub {
	g := &fakeGitHub{auth: map[string][]string{}, tarball: tarball}
	g.api = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.record("api", r)
		if r.Header.Get("Accept") != "application/vnd.github.sha" {
			http.Error(w, "want the sha media type", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/repos/acme/skills/commits/main", "/repos/acme/skills/commits/HEAD", "/repos/acme/skills/commits/feature/x":
			w.Write([]byte(testCommit))
		default:
			http.Error(w, `{"message":"No commit found for SHA"}`, http.StatusUnprocessableEntity)
		}
	}))
	g.archive = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.record("archive", r)
		if g.redirectTo != "" {
			http.Redirect(w, r, g.redirectTo+r.URL.Path, http.StatusFound)
			return
		}
		g.serveTarball(w, r)
	}))
	t.Cleanup(g.api.Close)
	t.Cleanup(g.archive.Close)
	return g
}

func (g *fakeGitHub) serveTarball(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/acme/skills/tar.gz/"+testCommit {
		http.NotFound(w, r)
		return
	}
	w.Write(g.tarball)
}

func (g *fakeGitHub) record(server string, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.auth[server] = append(g.auth[server], r.Header.Get("Authorization"))
}

func (g *fakeGitHub) options(token string) *GitHubOptions {
	return &GitHubOptions{Token: token, APIBase: g.api.URL, ArchiveBase: g.archive.URL, Client: g.api.Client()}
}

func TestFromGitHubArchive(t *testing.T) {
	g := newFakeGitHub(t, githubTarGz(t,
		tarEntry{name: "LICENSE", data: "MIT"},
		tarEntry{name: "README.md", data: "readme"},
		tarEntry{name: "docs/link", typeflag: tar.TypeSymlink, link: "/etc/passwd"}, // outside the package
		tarEntry{name: "skills/", typeflag: tar.TypeDir, mode: 0o755},
		tarEntry{name: "skills/pdf/", typeflag: tar.TypeDir, mode: 0o755},
		tarEntry{name: "skills/pdf/SKILL.md", data: goodSkill},
		tarEntry{name: "skills/pdf/run.sh", data: "echo hi", mode: 0o755},
		tarEntry{name: "skills/pdf-extra/x", data: "not in the package"},
	))
	var stages []string
	src := GitSource{URL: "https://github.com/acme/skills", Path: "skills/pdf", Ref: "main", GitHub: g.options("s3cret"),
		Progress: func(p Progress) {
			if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
				stages = append(stages, p.Stage)
			}
		}}
	tr, origin, err := FromGit(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(paths(tr), " "); got != ".origin/LICENSE SKILL.md run.sh" {
		t.Errorf("files %s", got)
	}
	if tr.File("run.sh").Mode != 0o755 {
		t.Errorf("run.sh lost its execute bit")
	}
	if origin.Commit != testCommit || origin.Ref != "main" || origin.Path != "skills/pdf" || origin.Repository != src.URL {
		t.Errorf("origin %+v", origin)
	}
	if strings.Join(stages, ",") != "resolving,fetching,reading" {
		t.Errorf("progress stages %v", stages)
	}
	for _, server := range []string{"api", "archive"} {
		if got := g.auth[server]; len(got) != 1 || got[0] != "Bearer s3cret" {
			t.Errorf("%s saw Authorization %q, want the token once", server, got)
		}
	}

	// A pinned commit needs no resolution; the default branch is HEAD.
	g.auth = map[string][]string{}
	if _, origin, err := FromGit(context.Background(), GitSource{URL: "https://github.com/acme/skills.git", Path: "skills/pdf", Commit: testCommit, GitHub: g.options("")}); err != nil || origin.Commit != testCommit {
		t.Errorf("pinned: %+v %v", origin, err)
	}
	if len(g.auth["api"]) != 0 {
		t.Errorf("a pinned commit was resolved again")
	}
	if _, origin, err := FromGit(context.Background(), GitSource{URL: "https://github.com/acme/skills", Path: "skills/pdf", GitHub: g.options("")}); err != nil || origin.Commit != testCommit {
		t.Errorf("default branch: %+v %v", origin, err)
	}
}

// TestGitHubTokenStaysWithGitHub follows the archive endpoint's redirect
// to another host, which must not see the token.
func TestGitHubTokenStaysWithGitHub(t *testing.T) {
	tarball := githubTarGz(t, tarEntry{name: "SKILL.md", data: goodSkill})
	g := newFakeGitHub(t, tarball)
	var (
		mu        sync.Mutex
		elsewhere []string
	)
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
		mu.Unlock()
		g.serveTarball(w, r)
	}))
	defer other.Close()
	other.Config.ErrorLog = log.New(io.Discard, "", 0) // go-git's TLS refusal below
	g.redirectTo = other.URL
	tr, _, err := FromGit(context.Background(), GitSource{URL: "https://github.com/acme/skills", Ref: "feature/x", GitHub: g.options("s3cret")})
	if err != nil {
		t.Fatal(err)
	}
	if tr.File("SKILL.md") == nil {
		t.Fatal("no SKILL.md")
	}
	if len(elsewhere) != 1 || elsewhere[0] != "" {
		t.Errorf("the redirect target saw Authorization %q, want one request without it", elsewhere)
	}
	if got := g.auth["archive"]; len(got) != 1 || got[0] != "Bearer s3cret" {
		t.Errorf("the archive endpoint saw %q", got)
	}

	// A repository elsewhere is read with git, and the token goes nowhere:
	// here the host does not even answer git.
	_, _, err = FromGit(context.Background(), GitSource{URL: other.URL + "/acme/skills", GitHub: g.options("s3cret")})
	if err == nil {
		t.Fatal("reading a non-repository succeeded")
	}
	if len(elsewhere) > 1 && elsewhere[1] != "" {
		t.Errorf("a non-GitHub host got the token")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the token: %v", err)
	}
}

func TestFromGitHubArchiveRefuses(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
		src     GitSource
		want    error
		msg     string
	}{
		{"missing ref", []tarEntry{{name: "SKILL.md", data: goodSkill}}, GitSource{Ref: "nope"}, ErrNotFound, `no branch, tag or commit "nope"`},
		{"symlink in package", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "key", typeflag: tar.TypeSymlink, link: "/etc/ssh/id"}}, GitSource{}, ErrLink, `"key" is a link`},
		{"hard link in package", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "h", typeflag: tar.TypeLink, link: "SKILL.md"}}, GitSource{}, ErrLink, `"h" is a link`},
		{"fifo in package", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "p", typeflag: tar.TypeFifo}}, GitSource{}, ErrSpecial, "special file"},
		{"linked package folder", []tarEntry{{name: "pkg", typeflag: tar.TypeSymlink, link: "elsewhere"}}, GitSource{Path: "pkg"}, ErrLink, "give the folder it points to"},
		{"missing folder", []tarEntry{{name: "SKILL.md", data: goodSkill}}, GitSource{Path: "skills/none"}, ErrNotFound, "no folder"},
		{"traversal", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "a/../../x", data: "x"}}, GitSource{}, ErrPath, "path traversal"},
		{"file over limit", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "big", data: strings.Repeat("x", 3000)}}, GitSource{Limits: Limits{MaxFileBytes: 2048}}, ErrTooLarge, "per-file limit"},
		{"too many files", []tarEntry{{name: "SKILL.md", data: goodSkill}, {name: "a", data: "1"}, {name: "b", data: "2"}}, GitSource{Limits: Limits{MaxFiles: 2}}, ErrTooLarge, "more than 2 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGitHub(t, githubTarGz(t, tt.entries...))
			src := tt.src
			src.URL = "https://github.com/acme/skills"
			if src.Ref == "" {
				src.Commit = testCommit
			}
			src.GitHub = g.options("s3cret")
			_, _, err := FromGit(context.Background(), src)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the token")
			}
		})
	}
	t.Run("download limit", func(t *testing.T) {
		g := newFakeGitHub(t, githubTarGz(t, tarEntry{name: "SKILL.md", data: goodSkill}, tarEntry{name: "noise", data: strings.Repeat("abcdefghij", 1000)}))
		opts := g.options("")
		opts.MaxDownloadBytes = 64
		_, _, err := FromGit(context.Background(), GitSource{URL: "https://github.com/acme/skills", Commit: testCommit, GitHub: opts})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
	t.Run("not gzip", func(t *testing.T) {
		g := newFakeGitHub(t, []byte("<html>rate limited</html>"))
		_, _, err := FromGit(context.Background(), GitSource{URL: "https://github.com/acme/skills", Commit: testCommit, GitHub: g.options("")})
		if !errors.Is(err, ErrArchive) {
			t.Fatalf("got %v, want ErrArchive", err)
		}
	})
}

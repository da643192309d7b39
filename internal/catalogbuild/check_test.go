package catalogbuild

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestBuildRefusesBadRepositoryURL: Options may hold a URL that never went
// through ParseRepository; Build refuses it with a clear error before
// reading anything, instead of an id from a nil URL.
func TestBuildRefusesBadRepositoryURL(t *testing.T) {
	fine := newTestRepo(t, true)
	fine.commit(t1, map[string]string{"skills/good/SKILL.md": skillMD("good", "Fine.")})
	for _, u := range []string{"https://exa mple.com/r\x7f", "://nohost", "github.com/acme/skills", "ssh://git@example.com/r.git", "https://user:secret@example.com/r.git"} {
		_, _, err := Build(context.Background(), Options{Repositories: []Repository{{URL: "https://github.com/acme/fine", Local: fine.dir}, {URL: u, Local: fine.dir}}})
		if err == nil || !strings.Contains(err.Error(), " URL") {
			t.Errorf("%q: %v, want an error about the repository URL", u, err)
			continue
		}
		if errors.Is(err, ErrFailed) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: %v", u, err)
		}
	}
}

// TestBuildSkipsFolderNamedSkillMD: a folder named SKILL.md gets its own
// reason, not the one of a link or special file.
func TestBuildSkipsFolderNamedSkillMD(t *testing.T) {
	r := newTestRepo(t, true)
	r.commit(t1, map[string]string{
		"skills/good/SKILL.md":      skillMD("good", "Fine."),
		"skills/odd/SKILL.md/x.txt": "a file in a folder named SKILL.md",
		"skills/odd/README.md":      "odd",
	})
	_, rep, err := Build(context.Background(), Options{Repositories: []Repository{{URL: "https://github.com/acme/skills", Local: r.dir}}})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, s := range rep.Repositories[0].Skipped {
		if s.Path == "skills/odd" {
			got = s.Reason
		}
	}
	if !strings.Contains(got, "is a folder") || strings.Contains(got, "symbolic link") {
		t.Errorf("skills/odd skipped for %q, want a reason saying SKILL.md is a folder", got)
	}
}

// noFetch is a transport that fails the test if any page is fetched.
type noFetch struct{ t *testing.T }

func (n noFetch) RoundTrip(r *http.Request) (*http.Response, error) {
	n.t.Errorf("fetched %s", r.URL)
	return nil, errors.New("no fetch in this test")
}

// TestDiscoverSkipsHTTPLinkOnOwnSite: an http link to a page of an https
// directory (not loopback) is skipped and reported, not fetched, and does
// not fail the discovery.
func TestDiscoverSkipsHTTPLinkOnOwnSite(t *testing.T) {
	saved := savePage(t, `<base href="https://dir.example/skills/"><a href="http://dir.example/skills/s/pdf">pdf</a> <a href="https://github.com/openai/skills">direct</a>`)
	repos, pages, err := Discover(context.Background(), saved, DiscoverOptions{Client: &http.Client{Transport: noFetch{t}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 1 || repos[0].URL != "https://github.com/openai/skills" {
		t.Errorf("repositories %+v", repos)
	}
	if len(pages) != 1 || pages[0].Pages != 0 || len(pages[0].NotFetched) != 1 || pages[0].NotFetched[0] != "http://dir.example/skills/s/pdf" {
		t.Errorf("pages %+v, want the http link reported as not fetched", pages)
	}
	var b strings.Builder
	(&Report{Pages: pages}).WriteText(&b)
	if !strings.Contains(b.String(), "not fetched http://dir.example/skills/s/pdf") {
		t.Errorf("text report lacks the skipped link:\n%s", b.String())
	}
}

package catalogbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// directory serves a skills directory: /skills (the saved page), its
// category pages and their detail pages, each detail page linking to a
// GitHub repository; it counts every page served.
type directory struct {
	srv   *httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	auths []string
}

func newDirectory(t *testing.T) *directory {
	d := &directory{hits: map[string]int{}}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.hits[r.URL.Path]++
		d.auths = append(d.auths, r.Header.Get("Authorization"))
		d.mu.Unlock()
		switch p := r.URL.Path; {
		case p == "/skills/cat/docs":
			fmt.Fprint(w, `<html><a href="/skills/s/pdf">pdf</a> <a href="../s/xlsx#top">xlsx</a> <a href="/login">log in</a>`)
		case p == "/skills/cat/web":
			fmt.Fprint(w, `<a href="/skills/s/pdf">again</a><a href="/skills/s/gone">gone</a><a href="/skills/s/react">react</a>`)
		case p == "/skills/s/pdf":
			fmt.Fprint(w, `<a href="https://github.com/anthropics/skills/tree/main/skills/pdf">source</a><a href="https://github.com/features">features</a><a href="/skills/s/deeper">three deep: not followed</a>`)
		case p == "/skills/s/xlsx":
			fmt.Fprint(w, `<a href="https://github.com/Anthropics/Skills">source</a>`) // the same repository
		case p == "/skills/s/react":
			fmt.Fprint(w, `<a href="https://github.com/vercel-labs/agent-skills.git">source</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func savePage(t *testing.T, html string) string {
	p := filepath.Join(t.TempDir(), "directory.html")
	if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscover(t *testing.T) {
	d := newDirectory(t)
	ctx := context.Background()
	saved := savePage(t, `<!doctype html><html><head><link rel="canonical" href="`+d.srv.URL+`/skills"></head><body>
<nav><a href="/about">about</a><a href="https://example.com/x">elsewhere</a></nav>
<a href="/skills/cat/docs">Documents</a>
<a href="/skills/cat/web">Web</a>
<a href="https://github.com/openai/skills">direct</a>
<a href="javascript:alert(1)">no</a><a>no href</a>
</body></html>`)
	// The web category links a detail page that is gone: the list would
	// be incomplete, so discovery fails and says which page.
	_, pages, err := Discover(ctx, saved, DiscoverOptions{Client: d.srv.Client()})
	if err == nil || !strings.Contains(err.Error(), "/skills/s/gone") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a missing detail page: %v", err)
	}
	if last := pages[len(pages)-1]; last.Error == "" {
		t.Errorf("pages %+v: the failed one is not reported", pages)
	}

	// Without the broken link.
	saved = savePage(t, `<base href="`+d.srv.URL+`/skills/"><a href="cat/docs">Documents</a> <a href="https://github.com/openai/skills">direct</a> <a href="s/react">react</a>`)
	repos, pages, err := Discover(ctx, saved, DiscoverOptions{Client: d.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range repos {
		got = append(got, r.URL)
	}
	want := "https://github.com/openai/skills https://github.com/vercel-labs/agent-skills https://github.com/anthropics/skills"
	if strings.Join(got, " ") != want {
		t.Errorf("repositories %v, want %s", got, want)
	}
	if d.hits["/login"] != 0 || d.hits["/skills/s/deeper"] != 0 || d.hits["/about"] != 0 {
		t.Errorf("followed a page outside the directory or too deep: %v", d.hits)
	}
	if len(pages) != 5 { // saved, docs, react, pdf, xlsx
		t.Errorf("pages %+v", pages)
	}
	for _, a := range d.auths {
		if a != "" {
			t.Errorf("a directory page got Authorization %q", a)
		}
	}

	// --max-pages below what the directory links: fails, never truncates.
	if _, _, err := Discover(ctx, saved, DiscoverOptions{Client: d.srv.Client(), MaxPages: 2}); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "--max-pages 2") {
		t.Errorf("max pages: %v", err)
	}
	// A page with no links (a verification page, or one filled by script).
	empty := savePage(t, `<html><body><div id="app"></div><script>load()</script></body></html>`)
	if _, _, err := Discover(ctx, empty, DiscoverOptions{Base: d.srv.URL + "/skills"}); !errors.Is(err, ErrNoRepositories) {
		t.Errorf("no links: %v", err)
	}
}

func TestDiscoverMillionLinks(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`<base href="https://dir.example/s/">`)
	for i := range 1_000_000 {
		fmt.Fprintf(&b, "<a href=p%d>", i)
	}
	page := savePage(t, b.String())
	_, _, err := Discover(context.Background(), page, DiscoverOptions{MaxPages: 1000})
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "more than 1000 pages") {
		t.Errorf("a million page links: %v", err)
	}
	b.Reset()
	for i := range 100_000 {
		fmt.Fprintf(&b, "<a href=https://github.com/o/r%d>", i)
	}
	page = savePage(t, b.String())
	if _, _, err = Discover(context.Background(), page, DiscoverOptions{}); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "more than 5000 repositories") {
		t.Errorf("100,000 repository links: %v", err)
	}
	// A page over the size limit is refused as such.
	page = savePage(t, strings.Repeat("<p>padding</p>", 2<<20))
	if _, _, err = Discover(context.Background(), page, DiscoverOptions{}); err == nil || !strings.Contains(err.Error(), "over 16777216 bytes") {
		t.Errorf("a 28 MB page: %v", err)
	}
}

func TestRunHTML(t *testing.T) {
	d := newDirectory(t)
	saved := savePage(t, `<a href="cat/docs">docs</a>`)
	mirrors := t.TempDir()
	r := newTestRepo(t, true)
	r.commit(t1, map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms.")})
	if err := os.Rename(r.dir, filepath.Join(mirrors, "anthropics+skills")); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "skills.json")
	err := Run(context.Background(), Config{HTML: saved, Base: d.srv.URL + "/skills/", Mirrors: mirrors, Out: out, ResolveWith: ResolveGit, MaxPages: DefaultMaxPages, Parallel: 2}, &stderr)
	if err != nil || !strings.Contains(stderr.String(), "found 1 repositories on 4 pages") {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	raw, _ := os.ReadFile(out)
	if !bytes.Contains(raw, []byte(`"id": "github.com/anthropics/skills/skills/pdf"`)) || !bytes.Contains(raw, []byte(`"commit": "`+r.head.String())) {
		t.Errorf("catalog:\n%s", raw)
	}
}

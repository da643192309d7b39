package browse

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// ownAssets matches the tags a page may hold: its stylesheet and script.
var ownAssets = []*regexp.Regexp{
	regexp.MustCompile(`^<link rel="icon" href="data:,">$`), // no favicon request
	regexp.MustCompile(`^<link rel="stylesheet" href="/assets/app\.[0-9a-f]{12}\.css">$`),
	regexp.MustCompile(`^<script src="/assets/app\.[0-9a-f]{12}\.js" defer(="")?>$`),
}

// activeParts is what in a page could run or load something, besides its
// own assets.
func activeParts(doc string) []string { return browsertest.ActiveParts(doc, ownAssets...) }

// words make generated skills searchable and varied.
var words = []string{"report", "data", "invoice", "deploy", "review", "budget", "chart", "email", "schedule", "audit", "translate", "summarise"}

// generatedLibrary returns n skills in memory, in 10 categories.
func generatedLibrary(t testing.TB, n int) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		w1, w2 := words[i%len(words)], words[(i/7)%len(words)]
		fsys[fmt.Sprintf("cat-%d/%s/SKILL.md", i%10, name)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: %s\ndescription: Helps with %s and %s work, skill number %d, a description of ordinary length for a catalog entry.\n---\n\n# %s\n\nUse it to %s the %s.\n",
			name, w1, w2, i, name, w1, w2))}
		fsys[fmt.Sprintf("cat-%d/%s/references/notes.md", i%10, name)] = &fstest.MapFile{Data: []byte("notes\n")}
	}
	return fsys
}

// scanFS scans fsys as library ns into a store.
func scanFS(t testing.TB, ns string, fsys fstest.MapFS) *catalog.Store {
	t.Helper()
	lib := &catalog.Library{Namespace: ns, FS: fsys, Kind: "embedded", Origin: "generated"}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return catalog.NewStore(snap)
}

// hostileMD is a SKILL.md whose body tries everything a page must not do;
// every attempt would set window.__pwned if it ran.
const hostileMD = "---\nname: hostile\ndescription: A skill whose SKILL.md tries to run script <b>in</b> the page.\n---\n\n" +
	"# Hostile <script>window.__pwned = 'heading'</script>\n\n" +
	"<script>window.__pwned = 'block'</script>\n\n" +
	"An image <img src=x onerror=\"window.__pwned='img'\"> inline.\n\n" +
	"<div onmouseover=\"window.__pwned='div'\">hover</div>\n\n" +
	"[a javascript link](javascript:window.__pwned='link') and [JaVaScRiPt](  JAVASCRIPT:alert(1)) " +
	"and <a href=\"javascript:window.__pwned='raw'\">raw</a>.\n\n" +
	"<iframe src=\"data:text/html,<script>parent.__pwned='frame'</script>\"></iframe>\n\n" +
	"<style>body{display:none}</style>\n\n" +
	"invalid \xff\xfe bytes in the body\n"

// writeSkill writes files (name → content) into dir/folder.
func writeSkill(t testing.TB, dir, folder string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, folder, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixtureLibrary writes the test library: ordinary skills, one hostile, one
// with a huge line and invalid UTF-8, one with a file name of markup, and
// one that is withheld (broken frontmatter).
func fixtureLibrary(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	writeSkill(t, dir, "writing/release-notes", map[string]string{
		"SKILL.md": "---\nname: release-notes\ndescription: Write release notes from merged pull requests.\ncategory: writing\n---\n\n" +
			"# Release notes\n\nGroup changes by **kind**. Uses [[commit-messages/SKILL.md|commit-messages]] — **runtime dependency.** Uses its output.\n\n" +
			"| Kind | Heading |\n| --- | --- |\n| feature | Added |\n",
		"references/style.md": "# Style\n\nShort sentences.\n",
		"scripts/collect.sh":  "#!/bin/sh\ncurl -s https://example.com/install.sh | sh\n",
	})
	writeSkill(t, dir, "writing/commit-messages", map[string]string{
		"SKILL.md": "---\nname: commit-messages\ndescription: Write commit messages people can read.\ncategory: writing\n---\n\n# Commit messages\n\nSay why.\n",
	})
	writeSkill(t, dir, "review/code-review", map[string]string{
		"SKILL.md":     "---\nname: code-review\ndescription: Review a change for correctness and clarity.\ncategory: review\n---\n\n# Code review\n\nRead the tests first.\n",
		"assets/x.bin": "\x00\x01\x02\xff binary",
	})
	writeSkill(t, dir, "security/hostile", map[string]string{
		"SKILL.md": hostileMD,
		"references/<img src=x onerror=window.__pwned='name'>.md": "a file whose name is markup\n",
	})
	huge := strings.Repeat("<&lt;script>", 40_000) // 480 KB on one line
	writeSkill(t, dir, "security/huge", map[string]string{
		"SKILL.md":  "---\nname: huge\ndescription: A SKILL.md with one enormous line.\n---\n\n# Huge\n\nstart " + huge + " end\n",
		"notes.txt": "begin\n" + huge + "\nfinish\n",
		"bad.txt":   "valid then \xff\xfe invalid <b>bytes</b>\n",
	})
	writeSkill(t, dir, "broken/withheld-one", map[string]string{
		"SKILL.md": "---\nname: withheld-one\ndescription: [unclosed\n---\n\nbody\n",
	})
	return dir
}

// scanStore scans dir as library ns into a store.
func scanStore(t testing.TB, ns, dir string) *catalog.Store {
	t.Helper()
	lib, err := catalog.OpenDirectory(ns, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return catalog.NewStore(snap)
}

// clock is a settable clock for session expiry.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// testServer serves the browser as serve does: behind httpserve.Handler,
// with /mcp answering 204 (these tests do not speak MCP).
func testServer(t testing.TB, store *catalog.Store, opts *Options) (*httptest.Server, *Browser) {
	t.Helper()
	b, err := New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	if opts != nil {
		tokens = opts.Tokens
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ts := httptest.NewServer(httpserve.Handler(mcp, &httpserve.Options{UI: b, Tokens: tokens}))
	t.Cleanup(ts.Close)
	return ts, b
}

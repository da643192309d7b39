package markdown

import (
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/web/browsertest"
)

// activeParts is what in doc could run or load something.
func activeParts(doc string) []string { return browsertest.ActiveParts(doc) }

func TestRenderHostile(t *testing.T) {
	src := "# Title\n\n" +
		"<script>window.__pwned = 1</script>\n\n" +
		"Inline <img src=x onerror=\"window.__pwned=1\"> image.\n\n" +
		"[click](javascript:alert(1)) and [data](data:text/html,<script>alert(1)</script>) and [ok](https://example.com/x)\n\n" +
		"<a href=\"javascript:alert(1)\" onclick=\"x()\">raw link</a>\n\n" +
		"bad \xff\xfe bytes\n\n" +
		"- [x] done\n"
	res := Render([]byte(src), 0)
	html := string(res.HTML)
	if bad := activeParts(html); len(bad) > 0 {
		t.Errorf("rendered HTML has active parts %q:\n%s", bad, html)
	}
	for _, want := range []string{
		"<h1", "&lt;script&gt;window.__pwned = 1&lt;/script&gt;", // raw HTML shown as text
		"&lt;img src=x onerror=", `href="https://example.com/x"`, "bad \uFFFD bytes",
		`type="checkbox"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered HTML lacks %q:\n%s", want, html)
		}
	}
	if res.Truncated {
		t.Error("a small source was reported truncated")
	}
}

func TestRenderCapsHugeSource(t *testing.T) {
	line := strings.Repeat("<&", 200_000) // escaping multiplies it by 4.5
	src := "intro\n\n" + line + "\n\nthe end\n"
	res := Render([]byte(src), 32<<10)
	if len(res.HTML) > 32<<10 {
		t.Fatalf("HTML is %d bytes, over the 32 KiB bound", len(res.HTML))
	}
	if !res.Truncated || res.SourceBytes >= len(src) {
		t.Fatalf("Truncated = %v, SourceBytes = %d of %d; want a cut", res.Truncated, res.SourceBytes, len(src))
	}
	if !strings.Contains(string(res.HTML), "intro") {
		t.Errorf("the start of the document is missing:\n%.300s", res.HTML)
	}
}

func FuzzRender(f *testing.F) {
	f.Add([]byte("# hi\n<script>x</script>\n[a](javascript:b)"))
	f.Add([]byte("<img src=x onerror=alert(1)>"))
	f.Add([]byte("\xff\x00<"))
	f.Fuzz(func(t *testing.T, src []byte) {
		res := Render(src, 8<<10)
		if len(res.HTML) > 8<<10 {
			t.Fatalf("HTML %d bytes over the bound", len(res.HTML))
		}
		if bad := activeParts(string(res.HTML)); len(bad) > 0 {
			t.Fatalf("rendered HTML has active parts %q: %s", bad, res.HTML)
		}
	})
}

// The link policy keeps http, https, mailto and relative targets only,
// marks links nofollow, and leaves an autolink of another scheme as text.
func TestRenderLinkPolicy(t *testing.T) {
	src := "[a](https://example.com/a) [b](docs/b.md) [c](mailto:x@example.com) [d](tel:123) [e](vbscript:x) " +
		"![i](data:image/png;base64,AAAA) ![j](img/j.png)\n\nftp://example.com/file and https://example.com/auto and www.example.com\n"
	html := string(Render([]byte(src), 0).HTML)
	for _, want := range []string{
		`href="https://example.com/a"`, `href="docs/b.md"`, `href="mailto:x@example.com"`, `rel="nofollow noopener"`,
		`src="img/j.png"`, `href="https://example.com/auto"`, "ftp://example.com/file", `href="http://www.example.com"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered HTML lacks %q:\n%s", want, html)
		}
	}
	for _, bad := range []string{"tel:123", "vbscript:", "data:image", `href="ftp:`} {
		if strings.Contains(html, bad) {
			t.Errorf("rendered HTML keeps %q:\n%s", bad, html)
		}
	}
}

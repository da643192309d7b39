package store_test

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A path CheckJobPath accepts stays inside the job's folder whatever it
// is joined to, and is clean NFC text.
func FuzzCheckJobPath(f *testing.F) {
	for _, s := range []string{"in.txt", "a/b/c", "../x", "/etc/passwd", "a//b", "e\u0301", ".git/x", "a\\b", "..", "a/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if store.CheckJobPath(p) != nil {
			return
		}
		if !utf8.ValidString(p) || !norm.NFC.IsNormalString(p) || strings.ContainsAny(p, "\\\x00") {
			t.Fatalf("accepted %q", p)
		}
		if j := path.Join("/work", p); !strings.HasPrefix(j, "/work/") || path.Clean(p) != p || path.IsAbs(p) {
			t.Fatalf("accepted %q, which leaves /work (%s)", p, j)
		}
	})
}

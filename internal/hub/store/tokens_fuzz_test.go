package store

import (
	"strings"
	"testing"
)

// parseSecret reads untrusted input: it never panics, and what it accepts
// is exactly the documented form.
func FuzzParseSecret(f *testing.F) {
	f.Add("smcp_p_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("smcp_a_0123456789abcdef_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-A")
	f.Add("smcp_i_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("smcp_p_")
	f.Fuzz(func(t *testing.T, s string) {
		kind, id, ok := parseSecret(s)
		if !ok {
			return
		}
		if len(s) != tokenLen || (kind != ProjectToken && kind != AdminToken && kind != IndexToken) || len(id) != tokenIDLen ||
			!isLowerHex(id) || !strings.Contains(s, "_"+id+"_") {
			t.Fatalf("accepted %q as %s %s", s, kind, id)
		}
	})
}

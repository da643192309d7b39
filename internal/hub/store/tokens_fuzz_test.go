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

// RedactSecrets reads paths from any client: whatever it is given, no
// well-formed secret survives it, and what it returns is redacted already.
func FuzzRedactSecrets(f *testing.F) {
	f.Add("/p/alpha/i/smcp_i_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/.well-known/agent-skills/index.json")
	f.Add("smcp_smcp_p_0123456789abcdef_smcp_a_0123456789abcdef_x")
	f.Add("no token here")
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactSecrets(s)
		for i := 0; i+tokenLen <= len(out); i++ {
			if _, _, ok := parseSecret(out[i : i+tokenLen]); ok {
				t.Fatalf("RedactSecrets(%q) = %q keeps a secret", s, out)
			}
		}
		if again := RedactSecrets(out); again != out {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}

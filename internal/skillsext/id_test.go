package skillsext

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzGarbledID: GarbledID reports exactly the string tokens
// that Go's decoder (the SDK's) does not give back as sent: those it
// decodes with more U+FFFD than the token spells.
func FuzzGarbledID(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, `"\ufffd"`, "\"\xff\"", `"\udc00\ud800"`, `"\\u"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if !json.Valid([]byte(tok)) || !strings.HasPrefix(tok, `"`) {
			return
		}
		var s string
		if err := json.Unmarshal([]byte(tok), &s); err != nil {
			t.Fatal(err)
		}
		spelled := strings.Count(tok, "\ufffd") + strings.Count(strings.ToLower(tok), `\ufffd`) - strings.Count(strings.ToLower(tok), `\\ufffd`)
		want := strings.Count(s, "\ufffd") > spelled
		if got := GarbledID([]byte(tok)); got != want {
			t.Errorf("GarbledID(%q) = %v, want %v (decoded %q)", tok, got, want, s)
		}
	})
}

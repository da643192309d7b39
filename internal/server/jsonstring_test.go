package server

import (
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString: appendJSONString writes what json.Marshal writes
// for the same string, byte for byte, and jsonStringLen says its length.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f", "é\u2028\u2029", "\xff\xfe bad", "\\", "\U0001F600"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		want, err := json.Marshal(string(src))
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONString([]byte("x"), src)
		if string(got) != "x"+string(want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", src, got[1:], want)
		}
		if n := jsonStringLen(src); n != len(want) {
			t.Fatalf("jsonStringLen(%q) = %d, want %d", src, n, len(want))
		}
	})
}

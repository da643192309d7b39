package web

import "testing"

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/status": "/status", "/?q=a": "/?q=a", "//evil.example/x": "/", "https://evil.example": "/",
		"/\\evil": "/", "": "/", "status": "/", "/\r\nx": "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutEscaped(t *testing.T) {
	for _, tc := range []struct {
		in     string
		budget int
		want   string
		cut    bool
	}{
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"<<", 5, "<", true},
		{"é", 1, "", true},
		{"a\xffb", 4, "a\xff", true},
	} {
		got, cut := CutEscaped(tc.in, tc.budget)
		if got != tc.want || cut != tc.cut {
			t.Errorf("CutEscaped(%q, %d) = %q, %v; want %q, %v", tc.in, tc.budget, got, cut, tc.want, tc.cut)
		}
	}
}

package vault

import (
	"slices"
	"strings"
	"testing"
)

func TestURIs(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{PlaybookURI("bob", "CRO improvement loop", ""), "playbook://bob/CRO%20improvement%20loop"},
		{PlaybookURI("bob", "Loop", "seq 1.png"), "playbook://bob/Loop/seq%201.png"},
		{PlaybookURI("", "Loop", ""), "playbook://Loop"},
		{PlaybookURI("bob", "a/b", ""), "playbook://bob/a%2Fb"},
		{ChainURI("bob", "lead-to-cash"), "value-chain://bob/lead-to-cash"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestParseURI(t *testing.T) {
	u, err := ParseURI("playbook://bob/CRO%20improvement%20loop/seq%201.png")
	if err != nil || u.Scheme != PlaybookScheme || !slices.Equal(u.Segments, []string{"bob", "CRO improvement loop", "seq 1.png"}) {
		t.Fatalf("ParseURI = %+v, %v", u, err)
	}
	for _, bad := range []string{
		"", "playbook://", "skill://a/b", "playbook:/a", "playbook://a//b", "playbook://a/%2E%2E/x",
		"playbook://a/..", "playbook://a/b%2Fc", "playbook://a/b%5Cc", "playbook://a/b%00", "playbook://a/b/c/d",
		"playbook://a?x=1", "value-chain://a#f", "playbook://a/%zz", "playbook://" + strings.Repeat("a", 5000),
	} {
		if _, err := ParseURI(bad); err == nil {
			t.Errorf("ParseURI(%q) accepted", bad)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"playbook://bob/x", "value-chain://bob/lead-to-cash", "playbook://a/b%20c/d.png", "playbook://%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			return
		}
		if len(u.Segments) == 0 || len(u.Segments) > 3 {
			t.Fatalf("%q: %d segments", s, len(u.Segments))
		}
		for _, seg := range u.Segments {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\\x00") {
				t.Fatalf("%q: unsafe segment %q", s, seg)
			}
		}
		// Re-encoding gives a URI that parses to the same segments.
		var again string
		switch {
		case u.Scheme == ChainScheme && len(u.Segments) == 2:
			again = ChainURI(u.Segments[0], u.Segments[1])
		case u.Scheme == PlaybookScheme && len(u.Segments) == 3:
			again = PlaybookURI(u.Segments[0], u.Segments[1], u.Segments[2])
		default:
			return
		}
		if len(again) > 4096 {
			return // escaping made it longer than ParseURI accepts
		}
		v, err := ParseURI(again)
		if err != nil || !slices.Equal(u.Segments, v.Segments) {
			t.Fatalf("%q → %q → %+v, %v", s, again, v, err)
		}
	})
}

package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFingerprintIgnoresOrderAndFormatting(t *testing.T) {
	a := json.RawMessage(`[{"uri":"skill://x/SKILL.md","digest":"sha256:1","size":1},{"uri":"skill://x/a.md","digest":"sha256:2","size":2}]`)
	b := json.RawMessage(`[ {"size":2,"digest":"sha256:2","uri":"skill://x/a.md"},
		{"uri":"skill://x/SKILL.md","size":1,"digest":"sha256:1"} ]`)
	c := json.RawMessage(`[{"uri":"skill://x/SKILL.md","digest":"sha256:1","size":1},{"uri":"skill://x/a.md","digest":"sha256:3","size":2}]`)
	if fingerprint(a) != fingerprint(b) {
		t.Error("the same manifest in another order and layout has another fingerprint")
	}
	if fingerprint(a) == fingerprint(c) {
		t.Error("a changed digest keeps the fingerprint")
	}
	if fingerprint(json.RawMessage(`"dynamic"`)) == fingerprint(a) {
		t.Error("a dynamic manifest has the fingerprint of a static one")
	}
}

func TestCompareListings(t *testing.T) {
	before := []skillView{{"skill://a/SKILL.md", "1"}, {"skill://b/SKILL.md", "1"}, {"skill://c/SKILL.md", "1"}}
	if got := compareListings(before, before); got != "" {
		t.Errorf("identical listings differ: %s", got)
	}
	reordered := []skillView{before[2], before[0], before[1]}
	if got := compareListings(before, reordered); got != "" {
		t.Errorf("a reordered listing differs: %s", got)
	}
	after := []skillView{{"skill://a/SKILL.md", "2"}, {"skill://c/SKILL.md", "1"}, {"skill://d/SKILL.md", "1"}}
	got := compareListings(before, after)
	for _, want := range []string{"1 skills changed (first skill://a/SKILL.md)", "1 skills appeared (first skill://d/SKILL.md)", "1 skills disappeared"} {
		if !strings.Contains(got, want) {
			t.Errorf("compareListings = %q, lacks %q", got, want)
		}
	}
	if libraryDigest(before) != libraryDigest(reordered) || libraryDigest(before) == libraryDigest(after) {
		t.Error("libraryDigest depends on order or misses a change")
	}
}

func TestParseEntries(t *testing.T) {
	views, err := parseEntries([]json.RawMessage{json.RawMessage(`{"uri":"skill://a/SKILL.md","resources":"dynamic","extra":1}`)})
	if err != nil || len(views) != 1 || views[0].URI != "skill://a/SKILL.md" {
		t.Fatalf("parseEntries = %v, %v", views, err)
	}
	for _, bad := range []string{`{"resources":[]}`, `[1]`, `{"uri":""}`} {
		if _, err := parseEntries([]json.RawMessage{json.RawMessage(bad)}); err == nil {
			t.Errorf("parseEntries(%s) succeeded, want an error", bad)
		}
	}
	dup := duplicates([]skillView{{URI: "a"}, {URI: "b"}, {URI: "a"}})
	if len(dup) != 1 || dup[0] != "a" {
		t.Errorf("duplicates = %q, want [a]", dup)
	}
}

func TestSearchQuery(t *testing.T) {
	for uri, want := range map[string]string{
		"skill://data/review-pdf-reports/SKILL.md": "review pdf",
		"skill://lint/SKILL.md":                    "lint",
		"skill://ns/a_b/SKILL.md":                  "a b",
	} {
		if got := searchQuery(uri); got != want {
			t.Errorf("searchQuery(%q) = %q, want %q", uri, got, want)
		}
	}
}

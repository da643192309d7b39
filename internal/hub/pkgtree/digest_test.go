package pkgtree

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestDigestRule checks Tree.Digest against the rule in the package
// documentation, spelled out by hand, so that a change to either is seen:
// the catalog publishes digests computed by this rule.
func TestDigestRule(t *testing.T) {
	tr, err := New([]File{
		{Path: "scripts/run.sh", Mode: 0o755, Data: []byte("echo hi\n")},
		{Path: "SKILL.md", Data: []byte(goodSkill)},
	}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	hexOf := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	listing := "SKILL.md\x00644\x00" + hexOf(goodSkill) + "\n" +
		"scripts/run.sh\x00755\x00" + hexOf("echo hi\n") + "\n"
	if want := "sha256:" + hexOf(listing); tr.Digest() != want {
		t.Errorf("Digest() = %s, want %s", tr.Digest(), want)
	}
	// Pinned, so that the rule cannot drift unnoticed with its test.
	const pinned = "sha256:ff3b48ae9a949268347fb7b7be9415b062cdea1335befd0a3484a3f2f5b23a63"
	if tr.Digest() != pinned {
		t.Errorf("Digest() = %s, want the pinned %s", tr.Digest(), pinned)
	}
}

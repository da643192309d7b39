package clawhub

import (
	"slices"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

// Versions are numbered in creation order: the publisher's number when it
// is valid and above the one before, else a patch above it.
func TestReleasesOf(t *testing.T) {
	v := func(kind, version string) hub.Version {
		return hub.Version{Origin: pkgtree.Origin{Kind: kind, Version: version}}
	}
	got := []string{}
	for _, r := range releasesOf([]hub.Version{
		v(pkgtree.OriginGit, ""),               // first, not published: 0.0.1
		v(pkgtree.OriginPublish, "1.0.0"),      // published: its own
		v(pkgtree.OriginZip, ""),               // 1.0.1
		v(pkgtree.OriginPublish, "1.0.0"),      // not above: 1.0.2
		v(pkgtree.OriginPublish, "2.0.0-rc.1"), // its own
		v(pkgtree.OriginCatalog, "9.9.9"),      // not a publication: 2.0.1
		v(pkgtree.OriginPublish, "1.0"),        // not full semver: 2.0.2
	}) {
		got = append(got, r.semver)
	}
	want := []string{"0.0.1", "1.0.0", "1.0.1", "1.0.2", "2.0.0-rc.1", "2.0.1", "2.0.2"}
	if !slices.Equal(got, want) {
		t.Errorf("releases %q, want %q", got, want)
	}
}

package library

import (
	"context"
	"slices"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// TestOpenArchiveWrapper: an archive whose root holds one visible folder
// and no SKILL.md (a release's name-1.4.2/ wrapper) is served from inside
// that folder, so its skill URIs do not change from release to release;
// any other root is served as it is.
func TestOpenArchiveWrapper(t *testing.T) {
	review := "---\nname: code-review\ndescription: Review code.\n---\n# Review\n"
	for _, tc := range []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"release wrapper", []string{"team-skills-1.4.2/code-review/SKILL.md", review, "team-skills-1.4.2/README.md", "x"},
			[]string{"skill://team/code-review/SKILL.md"}},
		{"next release", []string{"team-skills-1.5.0/code-review/SKILL.md", review, ".github/x.yml", "x"},
			[]string{"skill://team/code-review/SKILL.md"}},
		{"a skill folder", []string{"code-review/SKILL.md", review},
			[]string{"skill://team/code-review/SKILL.md"}},
		{"two folders", []string{"a/code-review/SKILL.md", review, "b/x.md", "x"},
			[]string{"skill://team/a/code-review/SKILL.md"}},
		{"a file beside the folder", []string{"w/code-review/SKILL.md", review, "README.md", "x"},
			[]string{"skill://team/w/code-review/SKILL.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := &Cache{Dir: t.TempDir()}
			defer cache.Close()
			o, err := Open(context.Background(), cache, Spec{Namespace: "team", Value: writeZip(t, goodZip(t, tc.pairs...))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			snap, err := catalog.Scan(context.Background(), []*catalog.Library{o.Lib}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sk := range snap.Skills() {
				got = append(got, sk.URI)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("served %q, want %q", got, tc.want)
			}
		})
	}
}

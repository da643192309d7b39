package skill_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

func TestParseDependencies(t *testing.T) {
	body := strings.Join([]string{
		"- [[b/SKILL.md|b]] — **optional runtime dependency.** maybe",
		"- [[a/SKILL.md]] — **runtime dependency.** always",
		"- [[c/SKILL.md]] - **optional runtime dependency**",
		"- [[self/SKILL.md]] — **runtime dependency.** itself",
		"- [[b/SKILL.md]] -- **runtime dependency.** now required",
		"- [[a/SKILL.md]] — **optional runtime dependency.** stays required",
		"- [[d/SKILL.md]] – **runtime dependency.**",
		"- [[c/SKILL.md]] — **optional runtime dependency.** again",
		"- [[e/SKILL.md]] **runtime dependency.** no dash: not a marker",
	}, "\n")
	d := skill.ParseDependencies("self", []byte(body))
	if want := []string{"a", "b", "d"}; !slices.Equal(d.Required, want) {
		t.Errorf("Required = %q, want %q", d.Required, want)
	}
	if want := []string{"c"}; !slices.Equal(d.Optional, want) {
		t.Errorf("Optional = %q, want %q", d.Optional, want)
	}
	if d := skill.ParseDependencies("x", []byte("no markers")); d.Required == nil || d.Optional == nil || len(d.Required)+len(d.Optional) > 0 {
		t.Errorf("a body without markers gave %+v, want two empty lists", d)
	}
}

// markers returns a body of n distinct dependency markers, every third
// optional and every fifth naming an earlier one the other way.
func markers(n int) []byte {
	var b strings.Builder
	for i := range n {
		name, kind := i, "runtime dependency."
		if i%3 == 0 {
			kind = "optional runtime dependency."
		}
		if i%5 == 4 {
			name = i / 2
		}
		fmt.Fprintf(&b, "- [[dep-%d/SKILL.md|dep]] — **%s** Uses its output.\n", name, kind)
	}
	return []byte(b.String())
}

// TestParseDependenciesLinear holds the marker parse linear in the body: a
// body is untrusted, and 82,000 markers took 21 s when each name was
// searched for in the lists built so far. Four times the markers may cost
// at most eight times the work (counted) and the allocations.
func TestParseDependenciesLinear(t *testing.T) {
	const n = 2000
	small, large := markers(n), markers(4*n)
	_, w1 := skill.ParseDependenciesWork("self", small)
	_, w4 := skill.ParseDependenciesWork("self", large)
	a1 := testing.AllocsPerRun(2, func() { skill.ParseDependencies("self", small) })
	a4 := testing.AllocsPerRun(2, func() { skill.ParseDependencies("self", large) })
	t.Logf("4x the markers: %.1fx the work (%d → %d), %.1fx the allocations", float64(w4)/float64(w1), w1, w4, a4/a1)
	if float64(w4) > 8*float64(w1) {
		t.Errorf("4x the markers cost %.1fx the work (%d → %d), want at most 8x", float64(w4)/float64(w1), w1, w4)
	}
	if a4 > 8*a1 {
		t.Errorf("4x the markers cost %.1fx the allocations (%.0f → %.0f), want at most 8x", a4/a1, a1, a4)
	}
}

// FuzzParseDependencies: whatever the body, each name is listed once, in
// one list, and never the skill itself.
func FuzzParseDependencies(f *testing.F) {
	f.Add([]byte("- [[a/SKILL.md]] — **runtime dependency.**\n- [[a/SKILL.md|x]] - **optional runtime dependency**"))
	f.Add(markers(20))
	f.Fuzz(func(t *testing.T, body []byte) {
		d := skill.ParseDependencies("self", body)
		seen := map[string]bool{}
		for _, name := range append(slices.Clone(d.Required), d.Optional...) {
			if seen[name] || name == "self" {
				t.Fatalf("%q listed twice or as itself: %+v", name, d)
			}
			seen[name] = true
		}
	})
}

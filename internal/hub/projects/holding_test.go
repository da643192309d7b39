package projects

import (
	"slices"
	"testing"
)

// The reference counts of a project's catalogs, on their own: a catalog
// replaced while a request holds it stays, and so does every catalog that
// replaced it after that request began (the request may read them), until
// the request ends; without a request, a replaced catalog goes at once.
func TestHoldingChain(t *testing.T) {
	var released []string
	holding := func(name string) *holding {
		return &holding{refs: 1, releases: []func(){func() { released = append(released, name) }}}
	}
	check := func(what string, want ...string) {
		t.Helper()
		if !slices.Equal(released, want) {
			t.Fatalf("%s: released %v, want %v", what, released, want)
		}
	}
	p := &Project{held: holding("gen1")}

	request := p.Hold() // begins on gen1
	p.replace(holding("gen2"), &View{})
	check("gen1 replaced under a request")
	p.replace(holding("gen3"), &View{})
	check("gen2 replaced under a request that began on gen1")
	later := p.Hold() // begins on gen3
	request()
	check("the first request ended", "gen1", "gen2")
	p.replace(holding("gen4"), &View{})
	check("gen3 replaced under the later request", "gen1", "gen2")
	later()
	check("the later request ended", "gen1", "gen2", "gen3")
	p.replace(holding("gen5"), &View{})
	check("gen4 replaced with no request", "gen1", "gen2", "gen3", "gen4")

	// Dropped: the current catalog goes, unless a request holds it.
	last := p.Hold()
	p.hmu.Lock()
	h := p.held
	p.held = nil
	p.hmu.Unlock()
	p.unref(h)
	check("dropped under a request", "gen1", "gen2", "gen3", "gen4")
	p.Hold()() // after the drop: holds nothing
	last()
	check("the last request ended", "gen1", "gen2", "gen3", "gen4", "gen5")
}

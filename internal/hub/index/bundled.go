package index

import (
	"bytes"
	_ "embed"
	"sync"
)

// BundledSource is the Source of the bundled snapshot.
const BundledSource = "bundled"

// bundledJSON is the snapshot embedded in the binary, so that the catalog
// works offline on first start. The catalog builder writes it ("skills-mcp
// catalog build", CONTRIBUTING.md) from local copies of the repositories in
// catalog/sources.txt.
//
//go:embed bundled.json
var bundledJSON []byte

var bundled = sync.OnceValue(func() *Index {
	snap, err := Parse(bytes.NewReader(bundledJSON), nil)
	if err != nil {
		// TestBundled holds the embedded file valid; a build that breaks
		// it must still start, with an empty catalog.
		return NewIndex(&Snapshot{SchemaVersion: SchemaVersion, Items: []Item{}}, BundledSource)
	}
	return NewIndex(snap, BundledSource)
})

// Bundled returns the snapshot embedded in the binary, indexed once.
func Bundled() *Index { return bundled() }

// BundledJSON returns the embedded catalog document.
func BundledJSON() []byte { return bytes.Clone(bundledJSON) }

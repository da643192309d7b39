package catalog

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Merge returns a snapshot of generation gen that serves the skills of
// parts side by side: snapshots of one library each, as Scan returned
// them, whose skills and files it shares rather than copies. It is what a
// Scan of the parts' libraries together finds, at the cost of its indexes
// (a map lookup and a sort per skill and file, no file read), so that
// catalogs over overlapping sets of immutable libraries share what each
// library costs.
//
// ok is false, and the libraries must be scanned together instead, when
// the merge could differ from that scan: a part of more or fewer than one
// library, a library without a namespace, a namespace used twice, two
// parts serving one URI, or a part with a vault (whose playbooks may run
// on another library's runner). The parts must stay as they are while
// the merged snapshot is served: it reads their libraries, and its search
// index reads their skills' bodies, which it leaves to them.
func Merge(parts []*Snapshot, gen uint64) (snap *Snapshot, ok bool) {
	start := time.Now()
	snap = &Snapshot{byURI: map[string]*Skill{}, merged: true, searchReady: make(chan struct{})}
	seen := map[string]bool{}
	files := 0
	for _, p := range parts {
		if p.pending || len(p.libs) != 1 || p.libs[0].Namespace == "" || seen[p.libs[0].Namespace] ||
			len(p.vaults) > 0 || len(p.vaultURIs) > 0 || p.libs[0].isVault() {
			return nil, false
		}
		seen[p.libs[0].Namespace] = true
		files += len(p.files)
	}
	snap.files = make([]*File, 0, files)
	for _, p := range parts {
		for uri, sk := range p.byURI {
			if _, dup := snap.byURI[uri]; dup {
				return nil, false
			}
			snap.byURI[uri] = sk
		}
		snap.all = append(snap.all, p.all...)
		snap.files = append(snap.files, p.files...)
		snap.libs = append(snap.libs, p.libs...)
		snap.libraries = append(snap.libraries, p.libraries...)
		snap.warnings = append(snap.warnings, p.warnings...)
	}
	slices.SortFunc(snap.all, func(a, b *Skill) int { return cmp.Compare(a.URI, b.URI) })
	slices.SortFunc(snap.files, func(a, b *File) int { return strings.Compare(a.URI, b.URI) })
	for i := 1; i < len(snap.files); i++ {
		if snap.files[i].URI == snap.files[i-1].URI {
			return nil, false
		}
	}
	for _, sk := range snap.all {
		if !sk.Hidden {
			snap.skills = append(snap.skills, sk)
		}
	}
	// Names across libraries; dependencies resolve within a library, so
	// each part's closures and missing lists hold as they are.
	snap.indexNames()
	snap.Generation = gen
	snap.ScannedAt = start
	snap.ScanDuration = time.Since(start)
	return snap, true
}

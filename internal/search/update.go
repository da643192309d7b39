package search

import (
	"slices"
	"strings"
)

// Updatable reports whether Update can start from ix: an index Build or
// Update made (a decoded one keeps no field lengths).
func (ix *Index) Updatable() bool { return ix != nil && ix.lens[0] != nil }

// Update returns the index of docs that Build would return, starting
// from prev, which must be Updatable. from[d] is prev's document number
// of a document whose fields (all but ID) equal those of docs[d], or -1
// for a document to analyse; the Body of a document with from[d] >= 0 is
// not read. The non-negative entries of from must increase. Only the
// documents to analyse are analysed; the rest costs one pass over prev's
// postings, so a catalog in which one skill changed is indexed anew in a
// small part of the time a build takes.
func Update(prev *Index, docs []Doc, from []int, workers int) *Index {
	var fresh []Doc
	var freshAt []uint32 // their numbers in docs
	kept := make([]int32, prev.n)
	for i := range kept {
		kept[i] = -1 // prev's documents not kept
	}
	for d, o := range from {
		if o < 0 {
			fresh = append(fresh, docs[d])
			freshAt = append(freshAt, uint32(d))
			continue
		}
		kept[o] = int32(d)
	}
	if len(fresh) == len(docs) {
		return BuildRanked(docs, workers, prev.rank)
	}
	ix := newIndex(docs)
	sh := newShard(fresh)
	ix.rank = prev.rank

	// Each of prev's terms loses the documents not kept that held it.
	df := slices.Clone(prev.df)
	lost := map[uint64]bool{}
	for f := range numFields {
		p := &prev.fields[f]
		for t := range prev.terms {
			for _, o := range p.docs[p.off[t]:p.off[t+1]] {
				if kept[o] < 0 {
					if k := uint64(t)<<32 | uint64(o); !lost[k] {
						lost[k] = true
						df[t]--
					}
				}
			}
		}
	}

	// The dictionary: prev's terms still held, and the new documents',
	// merged in order.
	order := make([]uint32, len(sh.terms))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(sh.terms[a], sh.terms[b]) })
	prevTo := make([]int32, len(prev.terms)) // prev term → new term, or -1
	shTo := make([]uint32, len(sh.terms))    // shard term → new term
	i, j := 0, 0
	for i < len(prev.terms) || j < len(order) {
		switch {
		case j == len(order) || i < len(prev.terms) && prev.terms[i] < sh.terms[order[j]]:
			prevTo[i] = -1
			if df[i] > 0 {
				prevTo[i] = int32(len(ix.terms))
				ix.terms = append(ix.terms, prev.terms[i])
				ix.df = append(ix.df, df[i])
			}
			i++
		case i == len(prev.terms) || sh.terms[order[j]] < prev.terms[i]:
			shTo[order[j]] = uint32(len(ix.terms))
			ix.terms = append(ix.terms, sh.terms[order[j]])
			ix.df = append(ix.df, sh.df[order[j]])
			j++
		default: // in both
			prevTo[i] = int32(len(ix.terms))
			shTo[order[j]] = uint32(len(ix.terms))
			ix.terms = append(ix.terms, prev.terms[i])
			ix.df = append(ix.df, df[i]+sh.df[order[j]])
			i++
			j++
		}
	}

	type posting struct {
		doc uint32
		tf  uint16
	}
	for f := range numFields {
		// The new documents' postings by term, in document order.
		byTerm := make([][]posting, len(ix.terms))
		start := uint32(0)
		for k, end := range sh.docEnd[f] {
			for x := start; x < end; x++ {
				t := shTo[sh.pterm[f][x]]
				byTerm[t] = append(byTerm[t], posting{freshAt[k], sh.ptf[f][x]})
			}
			start = end
		}
		pp := &prev.fields[f]
		p := &ix.fields[f]
		p.off = make([]uint32, len(ix.terms)+1)
		for t, nt := range prevTo {
			if nt < 0 {
				continue
			}
			for _, o := range pp.docs[pp.off[t]:pp.off[t+1]] {
				if kept[o] >= 0 {
					p.off[nt+1]++
				}
			}
		}
		for t, list := range byTerm {
			p.off[t+1] += uint32(len(list))
		}
		for t := range ix.terms {
			p.off[t+1] += p.off[t]
		}
		p.docs = make([]uint32, p.off[len(ix.terms)])
		p.tfs = make([]uint16, len(p.docs))
		for t, nt := range prevTo {
			if nt < 0 {
				continue
			}
			at := p.off[nt]
			list := byTerm[nt]
			for x := pp.off[t]; x < pp.off[t+1]; x++ {
				d := kept[pp.docs[x]]
				if d < 0 {
					continue
				}
				for len(list) > 0 && list[0].doc < uint32(d) {
					p.docs[at], p.tfs[at] = list[0].doc, list[0].tf
					at++
					list = list[1:]
				}
				p.docs[at], p.tfs[at] = uint32(d), pp.tfs[x]
				at++
			}
			for _, e := range list {
				p.docs[at], p.tfs[at] = e.doc, e.tf
				at++
			}
			byTerm[nt] = nil
		}
		for t, list := range byTerm { // terms only the new documents hold
			at := p.off[t]
			for _, e := range list {
				p.docs[at], p.tfs[at] = e.doc, e.tf
				at++
			}
		}

		ix.lens[f] = make([]uint32, ix.n)
		for d, o := range from {
			if o >= 0 {
				ix.lens[f][d] = prev.lens[f][o]
			}
		}
		for k, d := range freshAt {
			ix.lens[f][d] = sh.length[f][k]
		}
		p.norm = norms(f, ix.lens[f], ix.rank)
	}
	ix.indexNames(docs)
	ix.indexVectors()
	return ix
}

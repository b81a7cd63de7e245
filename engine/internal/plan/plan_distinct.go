package plan

import "fmt"

// distinctPlan answers a distinct without a filter from the index that
// leads with the distinct key and has the fewest fields (mongod's
// getDistinctNodeIndex): a DISTINCT_SCAN over all its values under a
// covered projection. Multikey indexes qualify: the scan returns each
// element value. It returns nil when no index fits.
func (b *builder) distinctPlan() *candidate {
	var best *indexInfo
	for _, ix := range b.ixs {
		if !b.distinctIndex(ix) {
			continue
		}
		if best == nil || len(ix.paths) < len(best.paths) {
			best = ix
		}
	}
	if best == nil {
		return nil
	}
	a := &assignment{bounds: allBounds(len(best.paths)), assigned: make([][]*expr, len(best.paths)), tight: map[*expr]tightness{}}
	return b.distinctCandidate(best, newDistinctScan(b.env, best, a, 0))
}

// distinctIndex reports whether ix can serve a DISTINCT_SCAN of the
// distinct key: a visible, non-partial, non-wildcard index leading with
// it.
func (b *builder) distinctIndex(ix *indexInfo) bool {
	return !ix.spec.Hidden && ix.usable() && ix.wild == nil && !ix.spec.IsWildcard() &&
		ix.partial == nil && ix.coll == nil && ix.paths[0] == b.q.Distinct
}

// distinctField returns the position of the distinct key in ix, an
// index that can serve a DISTINCT_SCAN under a filter (visible,
// non-wildcard; a partial one only reaches here when the filter implies
// its expression), or -1. Like mongod's distinct command (not strict),
// the fields before it need not be bounded to points: the command drops
// the repeats such a scan returns.
func (b *builder) distinctField(ix *indexInfo) int {
	if ix.spec.Hidden || !ix.usable() || ix.wild != nil || ix.spec.IsWildcard() {
		return -1
	}
	for i, p := range ix.paths {
		if p == b.q.Distinct {
			return i
		}
	}
	return -1
}

// distinctCandidate puts the covered projection over a distinct scan.
func (b *builder) distinctCandidate(ix *indexInfo, scan *distinctScan) *candidate {
	c := &candidate{
		id:      "DISTINCT_SCAN " + ix.id(),
		indexes: []string{ix.spec.Name},
		summary: "DISTINCT_SCAN " + ix.keyPatternString(),
		covered: true,
	}
	c.root = b.finish(c, scan, true)
	return c
}

// scanOnly turns an index plan into one that needs no FETCH where the
// command allows: a DISTINCT_SCAN for a distinct whose key is a field of
// the index, not multikey there, with exact bounds (mongod's
// turnIxscanIntoDistinctIxscan), or a COUNT_SCAN for a count over one
// contiguous range of a non-multikey index with exact bounds (mongod's
// turnIxscanIntoCount). It returns nil otherwise.
func (b *builder) scanOnly(ix *indexInfo, a *assignment, scan *ixScan, fetchPreds []*expr) *candidate {
	q := b.q
	if len(fetchPreds) > 0 || scan.keyFilter != nil || ix.wild != nil || a.dedup || q.Sort != nil {
		return nil
	}
	if q.Distinct != "" && ix.coll != nil {
		// DISTINCT_SCAN returns key values: a collated index holds sort
		// keys, not the strings.
		return nil
	}
	switch {
	case q.Distinct != "":
		f := b.distinctField(ix)
		if f < 0 || len(ix.mk[f]) != 0 {
			return nil
		}
		return b.distinctCandidate(ix, newDistinctScan(b.env, ix, a, f))
	case q.Count && !ix.multikey && scan.simple:
		c := &candidate{
			id:      fmt.Sprintf("COUNT_SCAN %s", ix.id()),
			indexes: []string{ix.spec.Name},
			summary: "COUNT_SCAN " + ix.keyPatternString(),
			covered: true,
		}
		c.root = &countScan{scan}
		return c
	}
	return nil
}

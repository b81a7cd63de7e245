package plan

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// minMaxError is a planner error of find's min/max, wrapped as mongod
// wraps planner errors.
func minMaxError(ns string, code int, msg string) error {
	return mongoerr.Newf(mongoerr.Code(code), "error processing query: ns=%s planner returned error :: caused by :: %s", ns, msg)
}

// minMaxPlan answers a find with min and/or max, as mongod's planner does
// for them: the hinted index (required, 51173) must have exactly the
// fields of min and max in order (51174), min must come before max in the
// index's order (51175), and the plan scans the keys from min (inclusive)
// to max (exclusive), every document then passing the filter.
func (b *builder) minMaxPlan(ix *indexInfo) (*candidate, error) {
	ns := b.q.NS
	if ix == nil {
		return nil, minMaxError(ns, 51173, "When using min()/max() a hint of which index to use must be provided")
	}
	for _, bound := range []bson.Raw{b.q.Min, b.q.Max} {
		if len(bound) > 5 && !ix.compatibleMinMax(bound) {
			return nil, minMaxError(ns, 51174, "The index chosen is not compatible with min/max")
		}
	}
	lo := ix.minMaxKey(b.q.Min, true)
	hi := ix.minMaxKey(b.q.Max, false)
	if bytes.Compare(lo, hi) >= 0 {
		return nil, minMaxError(ns, 51175, "The value provided for min() does not come before the value provided for max() in the hinted index")
	}
	a := &assignment{bounds: allBounds(len(ix.paths)), assigned: make([][]*expr, len(ix.paths)), tight: map[*expr]tightness{}}
	scan := newIXScan(b.env, ix, a, 1)
	scan.simple, scan.lo, scan.hi = true, lo, hi
	c := &candidate{
		id:       "MINMAX " + ix.id(),
		indexes:  []string{ix.spec.Name},
		summary:  "IXSCAN " + ix.keyPatternString(),
		hasSort:  b.q.Sort != nil,
		hasFetch: true,
	}
	c.root = b.finish(c, &fetch{env: b.env, child: scan, filterX: b.root}, false)
	return c, nil
}

// compatibleMinMax reports whether bound names exactly ix's fields, in
// order, and, when the index's collation differs from the query's, holds
// no value whose order depends on the collation (mongod's
// indexCompatibleMaxMin).
func (ix *indexInfo) compatibleMinMax(bound bson.Raw) bool {
	elems, err := bound.Elements()
	if err != nil || len(elems) != len(ix.paths) {
		return false
	}
	same := collation.Equal(ix.coll, ix.qcoll)
	for i, e := range elems {
		if e.Key() != ix.paths[i] {
			return false
		}
		switch e.Value().Type {
		case bson.TypeString, bson.TypeSymbol, bson.TypeEmbeddedDocument, bson.TypeArray:
			if !same {
				return false
			}
		}
	}
	return true
}

// minMaxKey encodes a min or max document as an index key; an empty one
// stands for the index's first key (min) or past its last (max).
func (ix *indexInfo) minMaxKey(bound bson.Raw, isMin bool) []byte {
	var key []byte
	if len(bound) <= 5 {
		for _, desc := range ix.desc {
			v := maxKey
			if isMin != desc {
				v = minKey
			}
			key = keystring.AppendValue(key, v, desc)
		}
		if !isMin {
			key = keystring.PrefixEnd(key)
		}
		return key
	}
	elems, _ := bound.Elements()
	for i, e := range elems {
		v := e.Value()
		if ix.coll != nil {
			// A collated index holds strings as their sort keys.
			v = bsonkit.CollationKeyed(v, ix.coll)
		}
		key = keystring.AppendValue(key, v, ix.desc[i])
	}
	return key
}

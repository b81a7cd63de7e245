package plan

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
)

// Collation and indexes, as mongod's QueryPlannerIXSelect and
// IndexBoundsBuilder handle them:
//
//   - an index whose collation differs from the query's serves only
//     predicates that compare with no string, document or array (numbers,
//     dates, $exists, $type …), and never provides the sort order;
//   - a collated index holds strings as their sort keys, so its bounds are
//     built from the constants' sort keys (bsonkit.CollationKeyed), a
//     regex on it scans every string (inexact), and it neither covers a
//     projection nor serves a DISTINCT_SCAN.
//
// https://www.mongodb.com/docs/v7.0/reference/collation/#collation-and-index-use

// collationServes reports whether predicate p may bound ix under the
// query's collation.
func (ix *indexInfo) collationServes(p *expr) bool {
	if collation.Equal(ix.coll, ix.qcoll) {
		return true
	}
	return !comparesCollated(p, 0)
}

// comparesCollated reports whether p compares with a value whose order
// depends on the collation: a string, or a document or array (which may
// hold strings).
func comparesCollated(p *expr, depth int) bool {
	if depth > 100 {
		return true
	}
	collated := func(v bson.RawValue) bool {
		switch v.Type {
		case bson.TypeString, bson.TypeSymbol, bson.TypeEmbeddedDocument, bson.TypeArray:
			return true
		}
		return false
	}
	switch p.kind {
	case kEq, kLt, kLte, kGt, kGte:
		return collated(p.val)
	case kIn:
		for _, v := range p.vals {
			if collated(v) {
				return true
			}
		}
		return false
	}
	for _, c := range p.children {
		if comparesCollated(c, depth+1) {
			return true
		}
	}
	return false
}

// translate is the package's translate for ix: on a collated index,
// constants become their sort keys and regexes scan all strings.
func (ix *indexInfo) translate(p *expr, multikey, sparse, compound bool) (oil, tightness) {
	if ix.coll == nil {
		return translate(p, multikey, sparse, compound)
	}
	if hasRegex(p, 0) {
		return oil{allValues}, inexactFetch
	}
	o, t := translate(p, multikey, sparse, compound)
	out := make(oil, 0, len(o))
	for _, iv := range o {
		iv.lo = bsonkit.CollationKeyed(iv.lo, ix.coll)
		iv.hi = bsonkit.CollationKeyed(iv.hi, ix.coll)
		out = append(out, iv)
	}
	return unionize(out), t
}

// hasRegex reports whether p or a predicate under it matches a regex.
func hasRegex(p *expr, depth int) bool {
	if depth > 100 || p.kind == kRegex || len(p.regexes) > 0 {
		return true
	}
	for _, c := range p.children {
		if hasRegex(c, depth+1) {
			return true
		}
	}
	return false
}

// idCollationMatches reports whether the _id index has the query's
// collation, which IDHACK requires (mongod's isIdHackEligibleQuery).
func (b *builder) idCollationMatches() bool {
	for _, ix := range b.ixs {
		if ix.spec.Name == "_id_" {
			return collation.Equal(ix.coll, b.q.Collation)
		}
	}
	return false
}

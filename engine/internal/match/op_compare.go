package match

import (
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/keystring"
)

type cmpOp int

const (
	opEQ cmpOp = iota
	opLT
	opLTE
	opGT
	opGTE
)

// newCompare compiles $eq (and the implicit equality of {a: v}).
// https://www.mongodb.com/docs/v7.0/reference/operator/query/eq/
func (c *compiler) newCompare(name string, op cmpOp, rhs bson.RawValue) (node, error) {
	if rhs.Type == bson.TypeUndefined {
		return nil, badValue("cannot compare to undefined")
	}
	kinds := [...]Kind{opEQ: KindEq, opLT: KindLt, opLTE: KindLte, opGT: KindGt, opGTE: KindGte}
	coll := c.coll
	return newLeaf(name, kinds[op], "", rhs, func(v bson.RawValue) bool { return compareMatches(op, v, rhs, coll) }), nil
}

// newOrdered compiles $gt, $gte, $lt and $lte, which refuse a regex operand.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/gt/
func (c *compiler) newOrdered(name string, op cmpOp, rhs bson.RawValue) (node, error) {
	if rhs.Type == bson.TypeRegex {
		return nil, badValue("Can't have RegEx as arg to predicate over field '%s'.", name)
	}
	return c.newCompare(name, op, rhs)
}

// compareMatches is mongod's ComparisonMatchExpression::matchesSingleElement:
// values of different brackets never match, except that null matches
// undefined and missing for $eq, $lte and $gte, and MinKey/MaxKey bound
// everything for the range operators; NaN equals only NaN and is neither
// less nor greater than anything.
func compareMatches(op cmpOp, v, rhs bson.RawValue, coll *collation.Collator) bool {
	cv, cr := bsonkit.CanonicalType(v.Type), bsonkit.CanonicalType(rhs.Type)
	if cv != cr {
		if cv+cr == 5 { // null against undefined or missing
			return op == opEQ || op == opLTE || op == opGTE
		}
		switch rhs.Type {
		case bson.TypeMaxKey:
			return op == opLT || op == opLTE
		case bson.TypeMinKey:
			return op == opGT || op == opGTE
		}
		return false
	}
	if cv == 10 {
		vn, rn := bsonkit.IsNaN(v), bsonkit.IsNaN(rhs)
		if vn || rn {
			switch op {
			case opLT, opGT:
				return false
			}
			return vn && rn
		}
	}
	c := bsonkit.CompareWith(v, rhs, coll)
	switch op {
	case opEQ:
		return c == 0
	case opLT:
		return c < 0
	case opLTE:
		return c <= 0
	case opGT:
		return c > 0
	}
	return c >= 0
}

// inSet is the compiled operand of $in: equalities and regexes. Up to
// inHashMin equalities are sorted for binary search; more are hashed by
// their keystring encoding, which is equal for values MongoDB compares
// equal (1, 1.0, NumberLong(1); field order in documents significant), so
// compiling and testing a large $in costs linear time instead of a sort.
//
// The hash or the sort is built on the first test, not at compile time: a
// filter is compiled several times on its way to the plan (parse, shape,
// planner) but tested through one of them.
type inSet struct {
	values  []bson.RawValue
	once    sync.Once
	hashed  map[string]int // keystring encoding -> index in values
	regexes []*regexTest
	hasNull bool
	coll    *collation.Collator
}

// inHashMin is the number of equalities from which $in hashes them.
const inHashMin = 16

// newIn compiles $in; $nin is its negation.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/in/
func (c *compiler) newIn(name string, operand bson.RawValue) (node, error) {
	arr := operand.Value
	s := &inSet{values: make([]bson.RawValue, 0, bsonkit.Len(arr)), coll: c.coll}
	var err error
	bsonkit.ForEach(arr, func(_ string, v bson.RawValue) bool {
		switch {
		case v.Type == bson.TypeRegex:
			var r *regexTest
			r, err = compileRegexValue(v)
			s.regexes = append(s.regexes, r)
		case isOperatorDoc(v, false):
			err = badValue("cannot nest $ under $in")
		case v.Type == bson.TypeUndefined:
			err = badValue("InMatchExpression equality cannot be undefined")
		default:
			if v.Type == bson.TypeNull {
				s.hasNull = true
			}
			s.values = append(s.values, v)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return newLeaf(name, KindIn, "$in", operand, s.test), nil
}

// hash fills s.hashed. It reports false, leaving s.hashed nil, when two
// values MongoDB tells apart share an encoding (possible only for values
// nested past keystring's depth bound); binary search serves those.
func (s *inSet) hash() bool {
	m := make(map[string]int, len(s.values))
	var buf []byte
	for i, v := range s.values {
		buf = keystring.AppendValue(buf[:0], v, false)
		if j, ok := m[string(buf)]; ok {
			if bsonkit.Compare(s.values[j], v) != 0 {
				return false
			}
			continue
		}
		m[string(buf)] = i
	}
	s.hashed = m
	return true
}

// prepare hashes or sorts the equalities, once. Under a collation the
// equalities are sorted: strings equal under it encode differently.
func (s *inSet) prepare() {
	if s.coll != nil || len(s.values) < inHashMin || !s.hash() {
		slices.SortFunc(s.values, s.compare)
	}
}

func (s *inSet) compare(a, b bson.RawValue) int { return bsonkit.CompareWith(a, b, s.coll) }

func (s *inSet) test(v bson.RawValue) bool {
	s.once.Do(s.prepare)
	if s.hasNull && (v.Type == bsonkit.TypeMissing || v.Type == bson.TypeUndefined) {
		return true
	}
	if v.Type != bsonkit.TypeMissing {
		if s.hashed != nil {
			var buf [64]byte
			if i, ok := s.hashed[string(keystring.AppendValue(buf[:0], v, false))]; ok && bsonkit.Compare(s.values[i], v) == 0 {
				return true
			}
		} else if _, found := slices.BinarySearchFunc(s.values, v, s.compare); found {
			return true
		}
	}
	for _, r := range s.regexes {
		if r.test(v) {
			return true
		}
	}
	return false
}

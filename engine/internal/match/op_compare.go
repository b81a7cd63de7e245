package match

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
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

// inSet is the compiled operand of $in: equalities (sorted for binary
// search) and regexes.
type inSet struct {
	values  []bson.RawValue
	regexes []*regexTest
	hasNull bool
	coll    *collation.Collator
}

// newIn compiles $in; $nin is its negation.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/in/
func (c *compiler) newIn(name string, operand bson.RawValue) (node, error) {
	arr := operand.Value
	s := &inSet{coll: c.coll}
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
	slices.SortFunc(s.values, s.compare)
	return newLeaf(name, KindIn, "$in", operand, s.test), nil
}

func (s *inSet) compare(a, b bson.RawValue) int { return bsonkit.CompareWith(a, b, s.coll) }

func (s *inSet) test(v bson.RawValue) bool {
	if s.hasNull && (v.Type == bsonkit.TypeMissing || v.Type == bson.TypeUndefined) {
		return true
	}
	if v.Type != bsonkit.TypeMissing {
		if _, found := slices.BinarySearchFunc(s.values, v, s.compare); found {
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

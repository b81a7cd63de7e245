package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Comparison operators. Both operands compare in BSON order: numbers by
// value across types, missing with undefined below null (so
// {$eq: ["$missing", null]} is false).
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#comparison-expression-operators
func init() {
	register("$cmp", opCompare(func(c int) bson.RawValue { return Int32(int32(c)) }))
	register("$eq", opCompare(func(c int) bson.RawValue { return Bool(c == 0) }))
	register("$ne", opCompare(func(c int) bson.RawValue { return Bool(c != 0) }))
	register("$gt", opCompare(func(c int) bson.RawValue { return Bool(c > 0) }))
	register("$gte", opCompare(func(c int) bson.RawValue { return Bool(c >= 0) }))
	register("$lt", opCompare(func(c int) bson.RawValue { return Bool(c < 0) }))
	register("$lte", opCompare(func(c int) bson.RawValue { return Bool(c <= 0) }))
}

// opCompare parses a two-operand comparison whose result is out(cmp).
func opCompare(out func(int) bson.RawValue) parseFunc {
	return opFixed(2, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		v, err := EvalAll(c, args)
		if err != nil {
			return bson.RawValue{}, err
		}
		return out(bsonkit.CompareWith(v[0], v[1], c.Collation)), nil
	})
}

// compareValues orders two values as the aggregation value comparator
// does under the simple collation ($sortArray and the set operators;
// comparisons and $in use Ctx.Collation).
func compareValues(a, b bson.RawValue) int {
	return bsonkit.Compare(a, b)
}

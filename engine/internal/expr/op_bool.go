package expr

import "go.mongodb.org/mongo-driver/v2/bson"

// Boolean operators. Operands convert to booleans as Truthy says; $and and
// $or stop at the first operand that decides the result.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#boolean-expression-operators
func init() {
	register("$and", opNary(func(c *Ctx, args []Expr) (bson.RawValue, error) { return andOr(c, args, false) }))
	register("$or", opNary(func(c *Ctx, args []Expr) (bson.RawValue, error) { return andOr(c, args, true) }))
	register("$not", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return Bool(!Truthy(v[0])), nil }))
}

// andOr returns stop as soon as an operand's truth is stop, else !stop.
func andOr(c *Ctx, args []Expr, stop bool) (bson.RawValue, error) {
	for _, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if Truthy(v) == stop {
			return Bool(stop), nil
		}
	}
	return Bool(!stop), nil
}

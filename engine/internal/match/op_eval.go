package match

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// newRegexLeaf compiles a regex literal in a filter ({a: /x/i}).
// https://www.mongodb.com/docs/v7.0/reference/operator/query/regex/
func newRegexLeaf(name string, v bson.RawValue) (node, error) {
	r, err := compileRegexValue(v)
	if err != nil {
		return nil, err
	}
	return newLeaf(name, KindRegex, "$regex", v, r.test), nil
}

// newRegexDoc compiles {$regex: ..., $options: ...} from the whole
// operator document, in which the two may come in either order.
func newRegexDoc(name string, context []byte) (node, error) {
	pattern, options := "", ""
	var err error
	bsonkit.ForEach(context, func(key string, v bson.RawValue) bool {
		switch key {
		case "$regex":
			switch v.Type {
			case bson.TypeString:
				pattern = v.StringValue()
			case bson.TypeRegex:
				p, o := v.Regex()
				pattern = p
				if o != "" {
					if options != "" {
						err = badValue("options set in both $regex and $options")
						return false
					}
					options = o
				}
			default:
				err = badValue("$regex has to be a string")
				return false
			}
		case "$options":
			if v.Type != bson.TypeString {
				err = badValue("$options has to be a string")
				return false
			}
			if options != "" {
				err = badValue("options set in both $regex and $options")
				return false
			}
			options = v.StringValue()
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	r, err := compileRegex(pattern, options)
	if err != nil {
		return nil, err
	}
	return newLeaf(name, KindRegex, "$regex", regexValue(pattern, options), r.test), nil
}

// newMod compiles {$mod: [divisor, remainder]}. Both are truncated to
// integers; a double dividend is truncated too, and NaN or infinite
// dividends never match.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/mod/
func newMod(name string, v bson.RawValue) (node, error) {
	if v.Type != bson.TypeArray {
		return nil, badValue("malformed mod, needs to be an array")
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) < 2 {
		return nil, badValue("malformed mod, not enough elements")
	}
	if !bsonkit.IsNumber(vals[0].Type) {
		return nil, badValue("malformed mod, divisor not a number")
	}
	if !bsonkit.IsNumber(vals[1].Type) {
		return nil, badValue("malformed mod, remainder not a number")
	}
	if len(vals) > 2 {
		return nil, badValue("malformed mod, too many elements")
	}
	divisor, err := coerceInt64(vals[0])
	if err != nil {
		return nil, badValue("malformed mod, divisor value is invalid :: caused by :: %s", err.Error())
	}
	remainder, err := coerceInt64(vals[1])
	if err != nil {
		return nil, badValue("malformed mod, remainder value is invalid :: caused by :: %s", err.Error())
	}
	if divisor == 0 {
		return nil, badValue("divisor cannot be 0")
	}
	return newLeaf(name, KindMod, "$mod", v, func(v bson.RawValue) bool {
		if !bsonkit.IsNumber(v.Type) {
			return false
		}
		d, ok := bsonkit.TruncInt64(v)
		if !ok {
			return false
		}
		return safeMod(d, divisor) == remainder
	}), nil
}

type coerceError string

func (e coerceError) Error() string { return string(e) }

// coerceInt64 is mongod's BSONElement::tryCoerce to long long: integers as
// they are, doubles and decimals truncated, NaN, infinities and values
// outside int64 refused.
func coerceInt64(v bson.RawValue) (int64, error) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return v.AsInt64(), nil
	}
	f, _ := bsonkit.Float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, coerceError("Unable to coerce NaN/Inf to integral type")
	}
	if v.Type == bson.TypeDouble && (f >= 9223372036854775808.0 || f < -9223372036854775808.0) {
		return 0, coerceError("Out of bounds coercing to integral value")
	}
	n, ok := bsonkit.TruncInt64(v)
	if !ok || (v.Type == bson.TypeDecimal128 && (n == math.MaxInt64 || n == math.MinInt64)) {
		return 0, coerceError("Out of bounds coercing to integral value")
	}
	return n, nil
}

// safeMod is x % y without the overflow of MinInt64 % -1.
func safeMod(x, y int64) int64 {
	if y == -1 {
		return 0
	}
	return x % y
}

package expr

import (
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Numeric widths in MongoDB's widening order (Value::getWidestNumeric).
const (
	wInt = iota
	wLong
	wDouble
	wDecimal
)

// numWidth returns the width of a numeric type, or -1 for a non-number.
func numWidth(t bson.Type) int {
	switch t {
	case bson.TypeInt32:
		return wInt
	case bson.TypeInt64:
		return wLong
	case bson.TypeDouble:
		return wDouble
	case bson.TypeDecimal128:
		return wDecimal
	}
	return -1
}

// isNum reports whether v is an int, long, double or decimal.
func isNum(v bson.RawValue) bool { return numWidth(v.Type) >= 0 }

// numFloat returns a numeric value as a float64 (Value::coerceToDouble).
func numFloat(v bson.RawValue) float64 {
	f, _ := bsonkit.Float64(v)
	return f
}

// numLong returns a numeric value truncated to an int64 (Value::coerceToLong).
func numLong(v bson.RawValue) int64 {
	i, _ := bsonkit.TruncInt64(v)
	return i
}

// numInt32 reports whether v is a number representable exactly as a 32-bit
// integer (Value::integral) and returns it.
func numInt32(v bson.RawValue) (int32, bool) {
	i, ok := bsonkit.ExactInt64(v)
	if !ok || i < math.MinInt32 || i > math.MaxInt32 {
		return 0, false
	}
	return int32(i), true
}

// numInt64 reports whether v is a number representable exactly as a 64-bit
// integer (Value::integral64Bit) and returns it.
func numInt64(v bson.RawValue) (int64, bool) { return bsonkit.ExactInt64(v) }

// fmtDouble formats a double as mongod's stream output does in messages.
func fmtDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

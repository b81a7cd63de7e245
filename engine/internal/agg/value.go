package agg

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// showValue prints a value roughly as mongod's BSONElement::toString does
// in error messages.
func showValue(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return strconv.Quote(v.StringValue())
	case bson.TypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && !math.IsInf(f, 0) && math.Abs(f) < 1e15 {
			return strconv.FormatFloat(f, 'f', 1, 64)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case bson.TypeInt32:
		return strconv.Itoa(int(v.Int32()))
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case bson.TypeDecimal128:
		return "NumberDecimal(\"" + v.Decimal128().String() + "\")"
	case bson.TypeNull:
		return "null"
	case bson.TypeBoolean:
		return strconv.FormatBool(v.Boolean())
	case 0:
		return "missing"
	}
	return v.String()
}

// decimalToFloat converts a decimal128 value to a float64.
func decimalToFloat(v bson.RawValue) (float64, bool) {
	f, ok := bsonkit.Float64(v)
	if ok {
		return f, true
	}
	s := v.Decimal128().String()
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), false
	case "inf", "infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	r, ok := new(big.Float).SetString(s)
	if !ok {
		return 0, false
	}
	x, _ := r.Float64()
	return x, true
}

// typeName is the BSON type name mongod uses in messages ("missing" for
// an absent value).
func typeName(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return bsonkit.TypeName(v.Type)
}

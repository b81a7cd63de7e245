package expr

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// formatDoubleG formats f as C's printf("%g") does, which is how mongod's
// string streams print doubles: six significant digits, trailing zeros
// dropped, exponent form for very large and small magnitudes.
func formatDoubleG(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// isoDateZ formats a BSON date as mongod's ISO form with milliseconds and
// a Z ("2024-01-02T03:04:05.678Z").
func isoDateZ(ms int64) string {
	return formatDateSpec(ms, isoFormatZ)
}

// coerceToString converts v as mongod's Value::coerceToString does for
// the string operators that accept any scalar ($substr, $toLower,
// $strcasecmp …): numbers print as C streams do, dates in ISO form,
// timestamps in ctime's short form, and null, undefined and missing
// become "". Other types fail with 16007.
func coerceToString(v bson.RawValue) (string, error) {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return "", nil
	case bson.TypeString:
		return v.StringValue(), nil
	case bson.TypeSymbol:
		return v.Symbol(), nil
	case bson.TypeJavaScript:
		return v.JavaScript(), nil
	case bson.TypeDouble:
		return formatDoubleG(v.Double()), nil
	case bson.TypeInt32:
		return strconv.Itoa(int(v.Int32())), nil
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10), nil
	case bson.TypeDecimal128:
		return v.Decimal128().String(), nil
	case bson.TypeDateTime:
		// Years outside 0-9999 fail with 18537, as mongod's formatter does.
		return formatDate(isoFormatZ, v.DateTime(), utcZone)
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		return time.Unix(int64(t), 0).UTC().Format("Jan _2 15:04:05") + ":" + strconv.FormatUint(uint64(i), 10), nil
	}
	return "", mongoerr.Newf(mongoerr.Code(16007), "can't convert from BSON type %s to String", bsonkit.TypeName(v.Type))
}

// valueString renders v as mongod's Value printer does in error messages
// ("abc" quoted, numbers as streams print them, documents as {a: 1}).
func valueString(v bson.RawValue) string {
	var b strings.Builder
	writeValueString(&b, v, 0)
	return b.String()
}

// writeValueString appends v's rendering to b; depth bounds nesting.
func writeValueString(b *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case 0:
		b.WriteString("MISSING")
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeUndefined:
		b.WriteString("undefined")
	case bson.TypeString:
		b.WriteString(`"` + v.StringValue() + `"`)
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		s, _ := coerceToString(v)
		b.WriteString(s)
	case bson.TypeDateTime:
		b.WriteString(isoDateZ(v.DateTime()))
	case bson.TypeObjectID:
		b.WriteString(v.ObjectID().Hex())
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		b.WriteString("Timestamp(" + strconv.FormatUint(uint64(t), 10) + ", " + strconv.FormatUint(uint64(i), 10) + ")")
	case bson.TypeRegex:
		p, o := v.Regex()
		b.WriteString("/" + p + "/" + o)
	case bson.TypeMinKey:
		b.WriteString("MinKey")
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		arr := v.Type == bson.TypeArray
		open, close := "{", "}"
		if arr {
			open, close = "[", "]"
		}
		b.WriteString(open)
		if depth > 20 {
			b.WriteString("...")
		} else {
			i := 0
			bsonkit.ForEach(v.Value, func(k string, ev bson.RawValue) bool {
				if i > 0 {
					b.WriteString(", ")
				}
				if !arr {
					b.WriteString(k + ": ")
				}
				writeValueString(b, ev, depth+1)
				i++
				return true
			})
		}
		b.WriteString(close)
	default:
		b.WriteString(v.String())
	}
}

// bsonString renders v as mongod's BSONElement printer does in parse
// errors: documents as { a: 1, b: "x" }, arrays as [ 1, 2 ], empty ones
// as {} and [].
func bsonString(v bson.RawValue) string {
	var b strings.Builder
	writeBSONString(&b, v, 0)
	return b.String()
}

// writeBSONString appends bsonString(v) to b; depth bounds nesting.
func writeBSONString(b *strings.Builder, v bson.RawValue, depth int) {
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		writeValueString(b, v, depth)
		return
	}
	arr := v.Type == bson.TypeArray
	open, close := "{", "}"
	if arr {
		open, close = "[", "]"
	}
	b.WriteString(open)
	if depth > 20 {
		b.WriteString(" ... " + close)
		return
	}
	n := 0
	bsonkit.ForEach(v.Value, func(k string, ev bson.RawValue) bool {
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString(" ")
		if !arr {
			b.WriteString(k + ": ")
		}
		writeBSONString(b, ev, depth+1)
		n++
		return true
	})
	if n > 0 {
		b.WriteString(" ")
	}
	b.WriteString(close)
}

// isNumeric reports whether v has one of the four numeric types.
func isNumeric(v bson.RawValue) bool { return bsonkit.IsNumber(v.Type) }

// int32Integral returns v as an int when v is a number whose value is an
// integer that fits in 32 bits, mongod's Value::integral().
func int32Integral(v bson.RawValue) (int, bool) {
	i, ok := bsonkit.ExactInt64(v)
	if !ok || i < math.MinInt32 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

package command

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxFormatDepth bounds how deep formatValue descends, as mongod's
// BSONObj::toString stops at its maxToStringRecursionDepth (100): a deeper
// document or array is written as "...". The bound keeps the recursion
// short whatever reaches an error message.
const maxFormatDepth = 100

// writeFormatted appends v to sb as formatValue renders it. Every value is
// written once into the one builder, so the cost is linear in the output.
func writeFormatted(sb *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case bson.TypeString:
		sb.WriteString(strconv.Quote(v.StringValue()))
	case bson.TypeInt32:
		sb.WriteString(strconv.Itoa(int(v.Int32())))
	case bson.TypeInt64:
		sb.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && !math.IsInf(f, 0) && math.Abs(f) < 1e15 {
			sb.WriteString(strconv.FormatFloat(f, 'f', 1, 64))
		} else {
			sb.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case bson.TypeDecimal128:
		sb.WriteString("NumberDecimal(\"" + v.Decimal128().String() + "\")")
	case bson.TypeObjectID:
		sb.WriteString("ObjectId('" + v.ObjectID().Hex() + "')")
	case bson.TypeBoolean:
		sb.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeNull:
		sb.WriteString("null")
	case bson.TypeUndefined:
		sb.WriteString("undefined")
	case bson.TypeMinKey:
		sb.WriteString("MinKey")
	case bson.TypeMaxKey:
		sb.WriteString("MaxKey")
	case bson.TypeDateTime:
		sb.WriteString("new Date(" + strconv.FormatInt(v.DateTime(), 10) + ")")
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		writeFormattedDoc(sb, v, depth)
	default:
		sb.WriteString(v.String())
	}
}

// writeFormattedDoc appends a document or array: { a: 1 }, [ 1, 2 ], {}
// or [] when empty, "..." past maxFormatDepth.
func writeFormattedDoc(sb *strings.Builder, v bson.RawValue, depth int) {
	open, end := "{ ", " }"
	doc := bson.Raw(v.Value)
	if v.Type == bson.TypeArray {
		open, end = "[ ", " ]"
	}
	if depth >= maxFormatDepth {
		sb.WriteString("...")
		return
	}
	elems, _ := doc.Elements()
	if len(elems) == 0 {
		sb.WriteString(strings.TrimSpace(open) + strings.TrimSpace(end))
		return
	}
	sb.WriteString(open)
	for i, e := range elems {
		if i > 0 {
			sb.WriteString(", ")
		}
		if v.Type == bson.TypeEmbeddedDocument {
			sb.WriteString(e.Key())
			sb.WriteString(": ")
		}
		writeFormatted(sb, e.Value(), depth+1)
	}
	sb.WriteString(end)
}

package collation

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxFormatDepth bounds the nesting formatDoc renders.
const maxFormatDepth = 20

// formatDoc renders a document as mongod's BSONObj::toString does in
// error messages: { locale: "fr", strength: 2 }.
func formatDoc(doc bson.Raw) string {
	var b strings.Builder
	writeDoc(&b, doc, false, 0)
	return b.String()
}

func formatValue(v bson.RawValue) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	return b.String()
}

func writeDoc(b *strings.Builder, doc bson.Raw, array bool, depth int) {
	open, close := "{", "}"
	if array {
		open, close = "[", "]"
	}
	elems, err := doc.Elements()
	if err != nil || depth > maxFormatDepth {
		b.WriteString(open + " ... " + close)
		return
	}
	if len(elems) == 0 {
		b.WriteString(open + close)
		return
	}
	b.WriteString(open + " ")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if !array {
			b.WriteString(e.Key() + ": ")
		}
		writeValue(b, e.Value(), depth+1)
	}
	b.WriteString(" " + close)
}

func writeValue(b *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case bson.TypeString:
		b.WriteString(`"` + v.StringValue() + `"`)
	case bson.TypeInt32:
		b.WriteString(strconv.Itoa(int(v.Int32())))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDouble:
		f := v.Double()
		if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
			b.WriteString(strconv.FormatFloat(f, 'f', 1, 64))
		} else {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeEmbeddedDocument:
		writeDoc(b, v.Document(), false, depth)
	case bson.TypeArray:
		writeDoc(b, bson.Raw(v.Array()), true, depth)
	default:
		b.WriteString(v.String())
	}
}

// typeName is mongod's typeName for a BSON type.
func typeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "double"
	case bson.TypeString:
		return "string"
	case bson.TypeEmbeddedDocument:
		return "object"
	case bson.TypeArray:
		return "array"
	case bson.TypeBinary:
		return "binData"
	case bson.TypeUndefined:
		return "undefined"
	case bson.TypeObjectID:
		return "objectId"
	case bson.TypeBoolean:
		return "bool"
	case bson.TypeDateTime:
		return "date"
	case bson.TypeNull:
		return "null"
	case bson.TypeRegex:
		return "regex"
	case bson.TypeInt32:
		return "int"
	case bson.TypeTimestamp:
		return "timestamp"
	case bson.TypeInt64:
		return "long"
	case bson.TypeDecimal128:
		return "decimal"
	case bson.TypeMinKey:
		return "minKey"
	case bson.TypeMaxKey:
		return "maxKey"
	}
	return t.String()
}

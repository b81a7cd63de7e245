package index

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// formatDoc renders a document the way mongod's BSONObj::toString does in
// error messages: { a: 1, b: "x" }, {} when empty. Strings are not escaped.
func formatDoc(doc bson.Raw) string {
	var b strings.Builder
	writeDoc(&b, doc, false, 0)
	return b.String()
}

// formatValue renders one value as formatDoc renders field values.
func formatValue(v bson.RawValue) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	return b.String()
}

const maxFormatDepth = 150

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
			b.WriteString(e.Key())
			b.WriteString(": ")
		}
		writeValue(b, e.Value(), depth+1)
	}
	b.WriteString(" " + close)
}

func writeValue(b *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case bson.TypeDouble:
		b.WriteString(formatDouble(v.Double()))
	case bson.TypeInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDecimal128:
		b.WriteString("NumberDecimal(\"" + v.Decimal128().String() + "\")")
	case bson.TypeString:
		b.WriteString("\"" + v.StringValue() + "\"")
	case bson.TypeSymbol:
		b.WriteString("\"" + v.Symbol() + "\"")
	case bson.TypeEmbeddedDocument:
		writeDoc(b, bson.Raw(v.Value), false, depth)
	case bson.TypeArray:
		writeDoc(b, bson.Raw(v.Value), true, depth)
	case bson.TypeBinary:
		sub, data := v.Binary()
		b.WriteString("BinData(" + strconv.Itoa(int(sub)) + ", " + strings.ToUpper(hex.EncodeToString(data)) + ")")
	case bson.TypeUndefined:
		b.WriteString("undefined")
	case bson.TypeObjectID:
		b.WriteString("ObjectId('" + v.ObjectID().Hex() + "')")
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeDateTime:
		b.WriteString("new Date(" + strconv.FormatInt(v.DateTime(), 10) + ")")
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeRegex:
		p, o := v.Regex()
		b.WriteString("/" + p + "/" + o)
	case bson.TypeDBPointer:
		ns, oid := v.DBPointer()
		b.WriteString("DBRef('" + ns + "', " + oid.Hex() + ")")
	case bson.TypeJavaScript:
		b.WriteString(v.JavaScript())
	case bson.TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		b.WriteString("CodeWScope( " + code + ", ")
		writeDoc(b, scope, false, depth)
		b.WriteString(")")
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		b.WriteString("Timestamp(" + strconv.FormatUint(uint64(t), 10) + ", " + strconv.FormatUint(uint64(i), 10) + ")")
	case bson.TypeMinKey:
		b.WriteString("MinKey")
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
	default:
		b.WriteString("?")
	}
}

// formatDouble follows mongod's appendDoubleNice: %.16g, with ".0" added
// when the result looks like an integer.
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', 16, 64)
	switch s {
	case "NaN", "+Inf", "-Inf":
		return map[string]string{"NaN": "nan", "+Inf": "inf", "-Inf": "-inf"}[s]
	}
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// typeName returns mongod's name for t as used in error messages.
func typeName(t bson.Type) string { return bsonkit.TypeName(t) }

package update

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// typeName returns mongod's name for t as used in error messages.
func typeName(t bson.Type) string { return bsonkit.TypeName(t) }

// fieldString renders one element the way mongod's BSONElement::toString
// does: `name: value`.
func fieldString(name string, v bson.RawValue) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(": ")
	writeValue(&b, v, 0)
	return b.String()
}

// docString renders a document as mongod's BSONObj::toString does:
// `{ a: 1, b: "x" }`, or `{}` when empty.
func docString(doc []byte) string {
	var b strings.Builder
	writeDoc(&b, doc, false, 0)
	return b.String()
}

// elemString renders e with its field name, as mongod's
// mutablebson::Element::toString does.
func elemString(e *elem) string {
	if e == nil {
		return "INVALID-MUTABLE-ELEMENT"
	}
	return fieldString(e.fieldName(), e.value())
}

// maxRenderDepth stops rendering of pathologically deep values.
const maxRenderDepth = 150

func writeDoc(b *strings.Builder, doc []byte, array bool, depth int) {
	open, close := "{", "}"
	if array {
		open, close = "[", "]"
	}
	if depth > maxRenderDepth {
		b.WriteString(open + " ... " + close)
		return
	}
	elems, err := bsoncore.Document(doc).Elements()
	if err != nil || len(elems) == 0 {
		b.WriteString(open + close)
		return
	}
	b.WriteString(open + " ")
	for i, el := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if !array {
			b.WriteString(el.Key())
			b.WriteString(": ")
		}
		v := el.Value()
		writeValue(b, bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}, depth+1)
	}
	b.WriteString(" " + close)
}

func writeValue(b *strings.Builder, v bson.RawValue, depth int) {
	cv := bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}
	switch v.Type {
	case bson.TypeDouble:
		f, ok := cv.DoubleOK()
		if !ok {
			break
		}
		b.WriteString(doubleString(f))
		return
	case bson.TypeString, bson.TypeSymbol:
		s, ok := cv.StringValueOK()
		if !ok {
			s, ok = cv.SymbolOK()
		}
		if !ok {
			break
		}
		b.WriteString(`"` + s + `"`)
		return
	case bson.TypeEmbeddedDocument:
		writeDoc(b, v.Value, false, depth)
		return
	case bson.TypeArray:
		writeDoc(b, v.Value, true, depth)
		return
	case bson.TypeBinary:
		st, data, ok := cv.BinaryOK()
		if !ok {
			break
		}
		fmt.Fprintf(b, "BinData(%d, %s)", st, strings.ToUpper(hex.EncodeToString(data)))
		return
	case bson.TypeUndefined:
		b.WriteString("undefined")
		return
	case bson.TypeObjectID:
		oid, ok := cv.ObjectIDOK()
		if !ok {
			break
		}
		b.WriteString("ObjectId('" + hex.EncodeToString(oid[:]) + "')")
		return
	case bson.TypeBoolean:
		t, ok := cv.BooleanOK()
		if !ok {
			break
		}
		b.WriteString(strconv.FormatBool(t))
		return
	case bson.TypeDateTime:
		ms, ok := cv.DateTimeOK()
		if !ok {
			break
		}
		fmt.Fprintf(b, "new Date(%d)", ms)
		return
	case bson.TypeNull:
		b.WriteString("null")
		return
	case bson.TypeRegex:
		p, o, ok := cv.RegexOK()
		if !ok {
			break
		}
		b.WriteString("/" + p + "/" + o)
		return
	case bson.TypeDBPointer:
		ns, oid, ok := cv.DBPointerOK()
		if !ok {
			break
		}
		b.WriteString("DBRef('" + ns + "', " + hex.EncodeToString(oid[:]) + ")")
		return
	case bson.TypeJavaScript:
		js, ok := cv.JavaScriptOK()
		if !ok {
			break
		}
		b.WriteString(js)
		return
	case bson.TypeCodeWithScope:
		code, scope, ok := cv.CodeWithScopeOK()
		if !ok {
			break
		}
		b.WriteString("CodeWScope( " + code + ", ")
		writeDoc(b, scope, false, depth)
		b.WriteString(")")
		return
	case bson.TypeInt32:
		i, ok := cv.Int32OK()
		if !ok {
			break
		}
		b.WriteString(strconv.FormatInt(int64(i), 10))
		return
	case bson.TypeTimestamp:
		t, i, ok := cv.TimestampOK()
		if !ok {
			break
		}
		fmt.Fprintf(b, "Timestamp(%d, %d)", t, i)
		return
	case bson.TypeInt64:
		i, ok := cv.Int64OK()
		if !ok {
			break
		}
		b.WriteString(strconv.FormatInt(i, 10))
		return
	case bson.TypeDecimal128:
		h, l, ok := cv.Decimal128OK()
		if !ok {
			break
		}
		b.WriteString(`NumberDecimal("` + bson.NewDecimal128(h, l).String() + `")`)
		return
	case bson.TypeMinKey:
		b.WriteString("MinKey")
		return
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
		return
	}
	b.WriteString("INVALID")
}

// doubleString formats f as mongod's appendDoubleNice does: up to 16
// significant digits, with ".0" appended when the text has no '.', 'E' or
// 'N' (so 1 prints as "1.0" and 1e+20 as "1e+20.0", as mongod prints them).
func doubleString(f float64) string {
	var s string
	switch {
	case math.IsNaN(f):
		s = "nan"
	case math.IsInf(f, 1):
		s = "inf"
	case math.IsInf(f, -1):
		s = "-inf"
	default:
		s = strconv.FormatFloat(f, 'g', 16, 64)
		s = cTrimG(s)
	}
	if !strings.ContainsAny(s, ".EN") {
		s += ".0"
	}
	return s
}

// cTrimG turns Go's %g-with-precision output into C's %.16g: Go keeps
// trailing zeros out already for 'g' with explicit precision? It does not
// strip them, so trailing fractional zeros are removed here, and the
// exponent gets at least two digits as in C.
func cTrimG(s string) string {
	mant, exp, hasExp := strings.Cut(s, "e")
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(mant, "0")
		mant = strings.TrimSuffix(mant, ".")
	}
	if !hasExp {
		return mant
	}
	sign := exp[:1]
	digits := exp[1:]
	if len(digits) < 2 {
		digits = "0" + digits
	}
	return mant + "e" + sign + digits
}

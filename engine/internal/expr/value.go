package expr

import (
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxBSONSize is the largest document or value an expression may build,
// MongoDB's 16 MiB BSON limit.
const MaxBSONSize = 16 * 1024 * 1024

// Missing is the absent value (Type 0): a path that does not exist, or
// $$REMOVE.
var Missing = bson.RawValue{}

func errTooLarge() error {
	return mongoerr.New(mongoerr.Code(17419), "Resulting object too large")
}

// Null returns BSON null.
func Null() bson.RawValue { return bson.RawValue{Type: bson.TypeNull} }

// Bool returns a BSON boolean.
func Bool(b bool) bson.RawValue {
	return bson.RawValue{Type: bson.TypeBoolean, Value: bsoncore.AppendBoolean(nil, b)}
}

// Int32 returns a BSON int.
func Int32(i int32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, i)}
}

// Int64 returns a BSON long.
func Int64(i int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, i)}
}

// IntOrLong returns i as an int when it fits in 32 bits, else as a long.
func IntOrLong(i int64) bson.RawValue {
	if i >= math.MinInt32 && i <= math.MaxInt32 {
		return Int32(int32(i))
	}
	return Int64(i)
}

// Double returns a BSON double.
func Double(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, f)}
}

// Decimal returns a BSON decimal128.
func Decimal(d bson.Decimal128) bson.RawValue {
	h, l := d.GetBytes()
	return bson.RawValue{Type: bson.TypeDecimal128, Value: bsoncore.AppendDecimal128(nil, h, l)}
}

// String returns a BSON string.
func String(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, s)}
}

// Date returns a BSON date of ms milliseconds since the Unix epoch.
func Date(ms int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: bsoncore.AppendDateTime(nil, ms)}
}

// Timestamp returns a BSON timestamp.
func Timestamp(ts bson.Timestamp) bson.RawValue {
	return bson.RawValue{Type: bson.TypeTimestamp, Value: bsoncore.AppendTimestamp(nil, ts.T, ts.I)}
}

// ObjectID returns a BSON ObjectId.
func ObjectID(id bson.ObjectID) bson.RawValue {
	return bson.RawValue{Type: bson.TypeObjectID, Value: bsoncore.AppendObjectID(nil, id)}
}

// Doc returns a BSON embedded document value.
func Doc(d bson.Raw) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

// Raw converts a driver value into the Go representation used here.
func Raw(v bsoncore.Value) bson.RawValue {
	return bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}
}

// Core converts v into a bsoncore.Value for the append helpers.
func Core(v bson.RawValue) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}
}

// IsNullish reports whether v is null, undefined or missing, the values
// most operators turn into a null result.
func IsNullish(v bson.RawValue) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

// Truthy converts v to a boolean as $cond, $and, $or and $not do: false,
// null, undefined, missing and numeric zero are false; everything else,
// including empty strings, arrays and documents, is true.
func Truthy(v bson.RawValue) bool {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeInt32:
		return v.Int32() != 0
	case bson.TypeInt64:
		return v.Int64() != 0
	case bson.TypeDouble:
		return v.Double() != 0
	case bson.TypeDecimal128:
		d := v.Decimal128()
		h, l := d.GetBytes()
		// Zero has a zero coefficient whatever its exponent and sign.
		return !(l == 0 && h&0x0001ffffffffffff == 0 && h&0x6000000000000000 != 0x6000000000000000)
	}
	return true
}

// ArrayBuilder appends values to a BSON array. The zero value is not
// usable; call NewArrayBuilder.
type ArrayBuilder struct {
	idx int32
	buf []byte
	n   int
}

// NewArrayBuilder returns a builder with room for about n elements.
func NewArrayBuilder(n int) *ArrayBuilder {
	b := &ArrayBuilder{}
	b.idx, b.buf = bsoncore.AppendArrayStart(make([]byte, 0, 16+n*12))
	return b
}

// Append adds v (which must not be missing) as the next element.
func (b *ArrayBuilder) Append(v bson.RawValue) {
	b.buf = bsoncore.AppendValueElement(b.buf, strconv.Itoa(b.n), Core(v))
	b.n++
}

// Len is the number of elements appended so far.
func (b *ArrayBuilder) Len() int { return b.n }

// Size is the number of bytes the array has so far.
func (b *ArrayBuilder) Size() int { return len(b.buf) }

// Value finishes the array and returns it. The builder must not be used
// afterwards.
func (b *ArrayBuilder) Value() bson.RawValue {
	b.buf, _ = bsoncore.AppendArrayEnd(b.buf, b.idx)
	return bson.RawValue{Type: bson.TypeArray, Value: b.buf}
}

// Array returns the BSON array of vals; missing values become null.
func Array(vals []bson.RawValue) bson.RawValue {
	b := NewArrayBuilder(len(vals))
	for _, v := range vals {
		if v.Type == 0 {
			v = Null()
		}
		b.Append(v)
	}
	return b.Value()
}

// DocBuilder appends fields to a BSON document.
type DocBuilder struct {
	idx int32
	buf []byte
}

// NewDocBuilder returns an empty document builder.
func NewDocBuilder() *DocBuilder {
	b := &DocBuilder{}
	b.idx, b.buf = bsoncore.AppendDocumentStart(nil)
	return b
}

// Append adds the field k: v; a missing v is skipped.
func (b *DocBuilder) Append(k string, v bson.RawValue) {
	if v.Type == 0 {
		return
	}
	b.buf = bsoncore.AppendValueElement(b.buf, k, Core(v))
}

// Size is the number of bytes the document has so far.
func (b *DocBuilder) Size() int { return len(b.buf) }

// Doc finishes the document and returns it. The builder must not be used
// afterwards.
func (b *DocBuilder) Doc() bson.Raw {
	b.buf, _ = bsoncore.AppendDocumentEnd(b.buf, b.idx)
	return bson.Raw(b.buf)
}

// Values returns the elements of an array value.
func Values(arr bson.RawValue) []bson.RawValue {
	vals, _ := arr.Array().Values()
	return vals
}

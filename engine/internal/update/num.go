package update

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// num is a number in one of BSON's four numeric types, with mongod's
// SafeNum arithmetic: int32 results that overflow widen to int64, int64
// results that overflow make the value invalid, any double operand makes a
// double, any decimal operand makes a decimal.
type num struct {
	t     bson.Type // Int32, Int64, Double or Decimal128; 0 when invalid
	i     int64
	f     float64
	d     dec
	valid bool
}

// numOf reads a numeric value; ok is false for other types.
func numOf(v bson.RawValue) (num, bool) {
	switch v.Type {
	case bson.TypeInt32:
		if i, ok := v.Int32OK(); ok {
			return num{t: v.Type, i: int64(i), valid: true}, true
		}
	case bson.TypeInt64:
		if i, ok := v.Int64OK(); ok {
			return num{t: v.Type, i: i, valid: true}, true
		}
	case bson.TypeDouble:
		if f, ok := v.DoubleOK(); ok {
			return num{t: v.Type, f: f, valid: true}, true
		}
	case bson.TypeDecimal128:
		if d, ok := v.Decimal128OK(); ok {
			return num{t: v.Type, d: decFromBSON(d), valid: true}, true
		}
	}
	return num{}, false
}

func int32Num(i int32) num { return num{t: bson.TypeInt32, i: int64(i), valid: true} }

func (n num) float() float64 {
	if n.t == bson.TypeDouble {
		return n.f
	}
	return float64(n.i)
}

func (n num) decimal() dec {
	switch n.t {
	case bson.TypeDecimal128:
		return n.d
	case bson.TypeDouble:
		return decFromDouble(n.f)
	}
	return decFromInt(n.i)
}

// add returns n+o.
func (n num) add(o num) num {
	switch {
	case !n.valid || !o.valid:
		return num{}
	case n.t == bson.TypeDecimal128 || o.t == bson.TypeDecimal128:
		return num{t: bson.TypeDecimal128, d: decAdd(n.decimal(), o.decimal()), valid: true}
	case n.t == bson.TypeDouble || o.t == bson.TypeDouble:
		return num{t: bson.TypeDouble, f: n.float() + o.float(), valid: true}
	case n.t == bson.TypeInt32 && o.t == bson.TypeInt32:
		s := n.i + o.i
		if s >= math.MinInt32 && s <= math.MaxInt32 {
			return num{t: bson.TypeInt32, i: s, valid: true}
		}
		return num{t: bson.TypeInt64, i: s, valid: true}
	}
	s := n.i + o.i
	if (o.i > 0 && s < n.i) || (o.i < 0 && s > n.i) {
		return num{}
	}
	return num{t: bson.TypeInt64, i: s, valid: true}
}

// mul returns n*o.
func (n num) mul(o num) num {
	switch {
	case !n.valid || !o.valid:
		return num{}
	case n.t == bson.TypeDecimal128 || o.t == bson.TypeDecimal128:
		return num{t: bson.TypeDecimal128, d: decMul(n.decimal(), o.decimal()), valid: true}
	case n.t == bson.TypeDouble || o.t == bson.TypeDouble:
		return num{t: bson.TypeDouble, f: n.float() * o.float(), valid: true}
	case n.t == bson.TypeInt32 && o.t == bson.TypeInt32:
		p := n.i * o.i
		if p >= math.MinInt32 && p <= math.MaxInt32 {
			return num{t: bson.TypeInt32, i: p, valid: true}
		}
		return num{t: bson.TypeInt64, i: p, valid: true}
	}
	if n.i == 0 || o.i == 0 {
		return num{t: bson.TypeInt64, valid: true}
	}
	p := n.i * o.i
	if p/o.i != n.i || (n.i == -1 && o.i == math.MinInt64) || (o.i == -1 && n.i == math.MinInt64) {
		return num{}
	}
	return num{t: bson.TypeInt64, i: p, valid: true}
}

// bitOp applies a bitwise operator to two integers; the result is int64
// when either operand is.
func (n num) bitOp(o num, op string) num {
	if !n.valid || !o.valid || (n.t != bson.TypeInt32 && n.t != bson.TypeInt64) ||
		(o.t != bson.TypeInt32 && o.t != bson.TypeInt64) {
		return num{}
	}
	var r int64
	switch op {
	case "and":
		r = n.i & o.i
	case "or":
		r = n.i | o.i
	default:
		r = n.i ^ o.i
	}
	t := bson.TypeInt64
	if n.t == bson.TypeInt32 && o.t == bson.TypeInt32 {
		t = bson.TypeInt32
		r = int64(int32(r))
	}
	return num{t: t, i: r, valid: true}
}

// raw encodes n as a BSON value.
func (n num) raw() bson.RawValue {
	switch n.t {
	case bson.TypeInt32:
		return bson.RawValue{Type: n.t, Value: binary.LittleEndian.AppendUint32(nil, uint32(int32(n.i)))}
	case bson.TypeInt64:
		return bson.RawValue{Type: n.t, Value: binary.LittleEndian.AppendUint64(nil, uint64(n.i))}
	case bson.TypeDouble:
		return bson.RawValue{Type: n.t, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(n.f))}
	case bson.TypeDecimal128:
		h, l := n.d.toBSON().GetBytes()
		b := binary.LittleEndian.AppendUint64(nil, l)
		return bson.RawValue{Type: n.t, Value: binary.LittleEndian.AppendUint64(b, h)}
	}
	return bson.RawValue{}
}

// identical reports whether n and o have the same type and the same value
// (mongod's SafeNum::isIdentical): the test for a no-op arithmetic update.
func (n num) identical(o num) bool {
	if !n.valid || !o.valid || n.t != o.t {
		return false
	}
	switch n.t {
	case bson.TypeDouble:
		return n.f == o.f || (math.IsNaN(n.f) && math.IsNaN(o.f))
	case bson.TypeDecimal128:
		return bytes.Equal(n.raw().Value, o.raw().Value)
	}
	return n.i == o.i
}

// debugString renders n as mongod's SafeNum::debugString does.
func (n num) debugString() string {
	switch n.t {
	case bson.TypeInt32:
		return "(NumberInt)" + strconv.FormatInt(n.i, 10)
	case bson.TypeInt64:
		return "(NumberLong)" + strconv.FormatInt(n.i, 10)
	case bson.TypeDouble:
		return "(NumberDouble)" + strconv.FormatFloat(n.f, 'g', 6, 64)
	case bson.TypeDecimal128:
		return "(NumberDecimal)" + n.d.toBSON().String()
	}
	return "(EOO)"
}

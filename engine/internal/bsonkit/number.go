package bsonkit

import (
	"math"
	"math/big"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// CompareNumbers orders two numeric values (int32, int64, double or
// decimal128) by value, as mongod does: NaN equals NaN and sorts below every
// other number, -0 equals 0, an int64 and a double compare exactly (no
// rounding of the int64), and a double meets a decimal128 after conversion
// to a 34-digit decimal, as mongod's compareDecimalToDouble does. Both
// arguments must be numeric.
func CompareNumbers(a, b bson.RawValue) int {
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		return compareViaDecimal(a, b)
	}
	if a.Type != bson.TypeDouble && b.Type != bson.TypeDouble {
		return cmp3(a.AsInt64(), b.AsInt64())
	}
	if a.Type == bson.TypeDouble && b.Type == bson.TypeDouble {
		return compareDoubles(a.Double(), b.Double())
	}
	if a.Type == bson.TypeDouble {
		return -compareLongToDouble(b.AsInt64(), a.Double())
	}
	return compareLongToDouble(a.AsInt64(), b.Double())
}

func cmp3[T int | int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareDoubles(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return cmp3(a, b)
}

// compareLongToDouble compares l and d exactly.
func compareLongToDouble(l int64, d float64) int {
	if math.IsNaN(d) {
		return 1
	}
	// 2^63 is exactly representable; every int64 is below it.
	if d >= 9223372036854775808.0 {
		return -1
	}
	if d < -9223372036854775808.0 {
		return 1
	}
	t := math.Trunc(d)
	ti := int64(t)
	if l != ti {
		return cmp3(l, ti)
	}
	// Integer parts agree; the fraction decides.
	return cmp3(0, d-t)
}

// numKind classifies a number for decimal comparison.
type numKind int

const (
	numNaN numKind = iota
	numNegInf
	numFinite
	numPosInf
)

// decimalRat returns the kind of v and, for finite values, its exact value
// as mongod sees it when comparing against a decimal128.
func decimalRat(v bson.RawValue) (numKind, *big.Rat) {
	switch v.Type {
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() {
			return numNaN, nil
		}
		switch d.IsInf() {
		case 1:
			return numPosInf, nil
		case -1:
			return numNegInf, nil
		}
		bi, exp, err := d.BigInt()
		if err != nil {
			return numNaN, nil
		}
		return numFinite, ratFromScaled(bi, exp)
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return numNaN, nil
		case math.IsInf(f, 1):
			return numPosInf, nil
		case math.IsInf(f, -1):
			return numNegInf, nil
		}
		// mongod converts the double to a decimal128 rounded to 34
		// significant digits before comparing.
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'e', 33, 64))
		if !ok {
			return numNaN, nil
		}
		return numFinite, r
	default:
		return numFinite, new(big.Rat).SetInt64(v.AsInt64())
	}
}

func ratFromScaled(bi *big.Int, exp int) *big.Rat {
	r := new(big.Rat).SetInt(bi)
	if exp == 0 {
		return r
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp > 0 {
		return r.Mul(r, new(big.Rat).SetInt(p))
	}
	return r.Quo(r, new(big.Rat).SetInt(p))
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func compareViaDecimal(a, b bson.RawValue) int {
	ka, ra := decimalRat(a)
	kb, rb := decimalRat(b)
	if ka != numFinite || kb != numFinite {
		return cmp3(int(ka), int(kb))
	}
	return ra.Cmp(rb)
}

// IsNaN reports whether v is a double or decimal128 NaN.
func IsNaN(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDouble:
		return math.IsNaN(v.Double())
	case bson.TypeDecimal128:
		return v.Decimal128().IsNaN()
	}
	return false
}

// ExactInt64 returns v as an int64 when v is a number whose value is an
// integer in int64's range (int32, int64, an integral double or decimal).
func ExactInt64(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 || f != math.Trunc(f) {
			return 0, false
		}
		return int64(f), true
	case bson.TypeDecimal128:
		k, r := decimalRat(v)
		if k != numFinite || !r.IsInt() || !r.Num().IsInt64() {
			return 0, false
		}
		return r.Num().Int64(), true
	}
	return 0, false
}

// TruncInt64 returns v truncated toward zero as an int64, saturating at
// the int64 bounds, with ok false for non-numbers, NaN and infinities.
func TruncInt64(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return saturate(math.Trunc(f)), true
	case bson.TypeDecimal128:
		k, r := decimalRat(v)
		if k != numFinite {
			return 0, false
		}
		q := new(big.Int).Quo(r.Num(), r.Denom())
		if q.IsInt64() {
			return q.Int64(), true
		}
		if q.Sign() < 0 {
			return math.MinInt64, true
		}
		return math.MaxInt64, true
	}
	return 0, false
}

func saturate(f float64) int64 {
	if f >= 9223372036854775808.0 {
		return math.MaxInt64
	}
	if f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// Float64 returns v as a float64 (decimals rounded to nearest) for numeric
// v, and false otherwise.
func Float64(v bson.RawValue) (float64, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		return v.AsFloat64(), true
	case bson.TypeDecimal128:
		k, r := decimalRat(v)
		switch k {
		case numNaN:
			return math.NaN(), true
		case numPosInf:
			return math.Inf(1), true
		case numNegInf:
			return math.Inf(-1), true
		}
		f, _ := r.Float64()
		return f, true
	}
	return 0, false
}

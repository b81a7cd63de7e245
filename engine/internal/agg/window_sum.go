package agg

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerWin("$sum", parseAccFunc(func(rem bool) winState { return &winSumState{removable: rem} }))
	registerWin("$avg", parseAccFunc(func(rem bool) winState { return &winSumState{removable: rem, avg: true} }))
	registerWin("$count", parseWinCount)
}

// parseWinCount parses {$count: {}} as {$sum: 1} over the same window.
func parseWinCount(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	arg, window, err := winArgs(spec, name)
	if err != nil {
		if me := mongoerr.As(err); me != nil && me.Msg == "Cannot specify two functions in window function spec" {
			return nil, failedToParse("Cannot specify multiple functions in window function spec")
		}
		return nil, err
	}
	if arg.Type != bson.TypeEmbeddedDocument || bsonkit.Len(arg.Value) != 0 {
		return nil, failedToParse("$count only accepts an empty object as input")
	}
	w, err := env.parseBounds(window)
	if err != nil {
		return nil, err
	}
	return &winAccFunc{input: expr.Const(expr.Int32(1)), win: w, newState: func(rem bool) winState { return &winSumState{removable: rem} }}, nil
}

// winNumTotal sums numbers exactly where it can: integers in 128 bits,
// doubles with Neumaier's compensation and NaN and infinities counted
// apart, so that values can be removed again. It counts each type so the
// result gets MongoDB's type.
type winNumTotal struct {
	hi, lo                  uint64 // two's complement 128-bit integer sum
	dsum, dcomp             float64
	nan, posInf, negInf     int64
	nInt, nLong, nDbl, nDec int64
	dec                     decTotal // the finite decimals, exactly
}

// addNum adds (sign 1) or removes (sign -1) a numeric value; it reports
// false for a non-number, which it ignores.
func (t *winNumTotal) addNum(v bson.RawValue, sign int64) bool {
	switch v.Type {
	case bson.TypeInt32:
		t.nInt += sign
		t.addInt(int64(v.Int32()), sign)
	case bson.TypeInt64:
		t.nLong += sign
		t.addInt(v.Int64(), sign)
	case bson.TypeDouble:
		t.nDbl += sign
		t.addFloat(v.Double(), sign)
	case bson.TypeDecimal128:
		t.nDec += sign
		if !t.dec.add(v.Decimal128(), sign) {
			f, _ := bsonkit.Float64(v)
			t.addFloat(f, sign)
		}
	default:
		return false
	}
	return true
}

func (t *winNumTotal) addInt(i int64, sign int64) {
	lo, hi := uint64(i), uint64(0)
	if i < 0 {
		hi = math.MaxUint64
	}
	if sign < 0 {
		// Negate the 128-bit value.
		lo, hi = ^lo, ^hi
		var c uint64
		lo, c = bits.Add64(lo, 1, 0)
		hi += c
	}
	var c uint64
	t.lo, c = bits.Add64(t.lo, lo, 0)
	t.hi, _ = bits.Add64(t.hi, hi, c)
}

func (t *winNumTotal) addFloat(f float64, sign int64) {
	switch {
	case math.IsNaN(f):
		t.nan += sign
	case math.IsInf(f, 1):
		t.posInf += sign
	case math.IsInf(f, -1):
		t.negInf += sign
	default:
		x := f * float64(sign)
		s := t.dsum + x
		if math.Abs(t.dsum) >= math.Abs(x) {
			t.dcomp += (t.dsum - s) + x
		} else {
			t.dcomp += (x - s) + t.dsum
		}
		t.dsum = s
	}
	if t.nDbl == 0 && t.nDec == 0 {
		t.dsum, t.dcomp = 0, 0
	}
}

// intSum returns the integer part of the sum and whether it fits 64 bits.
func (t *winNumTotal) intSum() (int64, bool) {
	v := int64(t.lo)
	if (v < 0 && t.hi == math.MaxUint64) || (v >= 0 && t.hi == 0) {
		return v, true
	}
	return 0, false
}

// intFloat returns the integer part of the sum as a double.
func (t *winNumTotal) intFloat() float64 {
	if v, ok := t.intSum(); ok {
		return float64(v)
	}
	neg := int64(t.hi) < 0
	lo, hi := t.lo, t.hi
	if neg {
		lo, hi = ^lo, ^hi
		var c uint64
		lo, c = bits.Add64(lo, 1, 0)
		hi += c
	}
	f := float64(hi)*18446744073709551616.0 + float64(lo)
	if neg {
		return -f
	}
	return f
}

// special returns the NaN or infinite result when the sum has one.
func (t *winNumTotal) special() (float64, bool) {
	switch {
	case t.nan > 0 || (t.posInf > 0 && t.negInf > 0):
		return math.NaN(), true
	case t.posInf > 0:
		return math.Inf(1), true
	case t.negInf > 0:
		return math.Inf(-1), true
	}
	return 0, false
}

// float returns the whole sum as a double.
func (t *winNumTotal) float() float64 {
	if f, ok := t.special(); ok {
		return f
	}
	return t.intFloat() + (t.dsum + t.dcomp)
}

// sum returns the total typed as $sum does: with removable false as the
// $group accumulator (the widest input type, int widening to long and
// long to double on overflow), with removable true as a removable window
// (decimal if any decimal remains, else double if any double, else an int
// or long).
func (t *winNumTotal) sum(removable bool) bson.RawValue {
	if t.nDec > 0 {
		return t.decimal(1)
	}
	if t.nDbl > 0 {
		return expr.Double(t.float())
	}
	i, ok := t.intSum()
	if !ok {
		return expr.Double(t.intFloat())
	}
	if removable || t.nLong == 0 {
		return expr.IntOrLong(i)
	}
	return expr.Int64(i)
}

// decimal returns the sum divided by n as a decimal128: exact where the
// inputs are decimals and integers, doubles taken to 15 digits as mongod
// converts them.
func (t *winNumTotal) decimal(n int64) bson.RawValue {
	if f, ok := t.special(); ok {
		return decimalOf(f)
	}
	r := new(big.Rat)
	exp := math.MaxInt32
	if e, ok := t.dec.minExp(); ok {
		r.Add(r, t.dec.sum)
		exp = e
	}
	if t.nInt+t.nLong > 0 {
		if i, ok := t.intSum(); ok {
			r.Add(r, new(big.Rat).SetInt64(i))
		} else {
			fr, _ := ratOfFloat(t.intFloat())
			r.Add(r, fr)
		}
		exp = min(exp, 0)
	}
	if t.nDbl > 0 {
		fr, fe := ratOfFloat(t.dsum + t.dcomp)
		r.Add(r, fr)
		exp = min(exp, fe)
	}
	if exp == math.MaxInt32 {
		exp = 0
	}
	if n != 1 {
		r.Quo(r, new(big.Rat).SetInt64(n))
	}
	return ratDecimal(r, exp)
}

// decimalOf converts a double to a decimal128 with its shortest digits.
//
// Divergence: $sum and $avg compute decimals exactly as mongod does, but
// $derivative, $integral, $linearFill and $expMovingAvg compute decimal
// inputs in double (or 200-bit float) precision before converting the
// result to decimal128, so their last digits may differ from mongod's
// decimal arithmetic (tested in setwindowfields.txt by the exact cases
// only).
func decimalOf(f float64) bson.RawValue {
	var s string
	switch {
	case math.IsNaN(f):
		s = "NaN"
	case math.IsInf(f, 1):
		s = "Infinity"
	case math.IsInf(f, -1):
		s = "-Infinity"
	default:
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		return expr.Double(f)
	}
	return expr.Decimal(d)
}

// winSumState is $sum and $avg.
type winSumState struct {
	removable, avg bool
	t              winNumTotal
}

func (s *winSumState) add(v bson.RawValue) error    { s.t.addNum(v, 1); return nil }
func (s *winSumState) remove(v bson.RawValue) error { s.t.addNum(v, -1); return nil }
func (s *winSumState) reset()                       { s.t = winNumTotal{} }
func (s *winSumState) bytes() int64                 { return 96 }

func (s *winSumState) value() (bson.RawValue, error) {
	if !s.avg {
		return s.t.sum(s.removable), nil
	}
	n := s.t.nInt + s.t.nLong + s.t.nDbl + s.t.nDec
	if n == 0 {
		return expr.Null(), nil
	}
	if s.t.nDec > 0 {
		return s.t.decimal(n), nil
	}
	avg := s.t.float() / float64(n)
	return expr.Double(avg), nil
}

package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Decimal arithmetic with decimal128's rounding, for the decimal results
// of the arithmetic operators.

// decForm tells finite decimals from the special values.
type decForm uint8

const (
	decFinite decForm = iota
	decNaN
	decInf
)

// dec is an arbitrary-precision decimal: (-1)^neg × coef × 10^exp, or NaN,
// or ±infinity. Arithmetic is exact; toRaw rounds to decimal128's 34
// digits (ties to even) as the IEEE 754 decimal operations mongod uses do.
type dec struct {
	form decForm
	neg  bool
	coef *big.Int // magnitude, never nil for finite values
	exp  int
}

var (
	bigTen  = big.NewInt(10)
	maxCoef = new(big.Int).Exp(bigTen, big.NewInt(34), nil) // 10^34
)

// pow10 returns 10^n.
func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// decNaNv returns NaN.
func decNaNv() dec { return dec{form: decNaN, coef: new(big.Int)} }

// decInfv returns ±infinity.
func decInfv(neg bool) dec { return dec{form: decInf, neg: neg, coef: new(big.Int)} }

// decFromInt returns the exact decimal of an integer.
func decFromInt(i int64) dec {
	c := big.NewInt(i)
	neg := c.Sign() < 0
	return dec{neg: neg, coef: c.Abs(c)}
}

// decFromFloat converts a double to a decimal of the given number of
// significant digits: 15 as Value::coerceToDecimal does, or 34 as
// Decimal128(double, kRoundTo34Digits) does, which keeps integral doubles
// exact with exponent 0.
func decFromFloat(f float64, digits int) dec {
	switch {
	case math.IsNaN(f):
		return decNaNv()
	case math.IsInf(f, 0):
		return decInfv(f < 0)
	}
	if f == 0 {
		return dec{neg: math.Signbit(f), coef: new(big.Int)}
	}
	if digits == 34 && f == math.Trunc(f) && math.Abs(f) < 1e34 {
		// The exact conversion mongod uses here keeps integers exact,
		// with exponent 0.
		c, _ := big.NewFloat(math.Abs(f)).Int(nil)
		return dec{neg: f < 0, coef: c}
	}
	s := strconv.FormatFloat(f, 'e', digits-1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, ex, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(ex)
	digitsStr := strings.Replace(mant, ".", "", 1)
	c, _ := new(big.Int).SetString(digitsStr, 10)
	return dec{neg: neg, coef: c, exp: e - (len(digitsStr) - 1)}
}

// decFrom128 converts a BSON decimal128.
func decFrom128(d bson.Decimal128) dec {
	h, _ := d.GetBytes()
	neg := h>>63 == 1
	switch {
	case d.IsNaN():
		return decNaNv()
	case d.IsInf() != 0:
		return decInfv(neg)
	}
	bi, exp, err := d.BigInt()
	if err != nil {
		return decNaNv()
	}
	return dec{neg: neg, coef: bi.Abs(bi), exp: exp}
}

// decOf converts a numeric value to a decimal as Value::coerceToDecimal
// does (doubles to 15 significant digits).
func decOf(v bson.RawValue) dec {
	switch v.Type {
	case bson.TypeDecimal128:
		return decFrom128(v.Decimal128())
	case bson.TypeDouble:
		return decFromFloat(v.Double(), 15)
	}
	return decFromInt(numLong(v))
}

// isZero reports whether d is a zero of any sign and exponent.
func (d dec) isZero() bool { return d.form == decFinite && d.coef.Sign() == 0 }

// signed returns the coefficient with its sign.
func (d dec) signed() *big.Int {
	c := new(big.Int).Set(d.coef)
	if d.neg {
		c.Neg(c)
	}
	return c
}

// decSigned builds a decimal from a signed coefficient; a zero takes the
// sign negZero.
func decSigned(c *big.Int, exp int, negZero bool) dec {
	neg := c.Sign() < 0 || c.Sign() == 0 && negZero
	return dec{neg: neg, coef: new(big.Int).Abs(c), exp: exp}
}

// align returns the signed coefficients of a and b scaled to the smaller
// exponent.
func align(a, b dec) (*big.Int, *big.Int, int) {
	ca, cb := a.signed(), b.signed()
	e := min(a.exp, b.exp)
	if a.exp > e {
		ca.Mul(ca, pow10(a.exp-e))
	}
	if b.exp > e {
		cb.Mul(cb, pow10(b.exp-e))
	}
	return ca, cb, e
}

// decAdd returns a + b exactly (toRaw rounds), with IEEE 754 special values.
func decAdd(a, b dec) dec {
	if a.form == decNaN || b.form == decNaN {
		return decNaNv()
	}
	if a.form == decInf || b.form == decInf {
		if a.form == decInf && b.form == decInf && a.neg != b.neg {
			return decNaNv()
		}
		if a.form == decInf {
			return a
		}
		return b
	}
	if a.exp-b.exp > 6200 || b.exp-a.exp > 6200 {
		// One operand is far below the other's last digit; it only matters
		// for rounding, which toRaw's sticky digit keeps right enough.
		if a.isZero() {
			return b
		}
		if b.isZero() {
			return a
		}
	}
	ca, cb, e := align(a, b)
	return decSigned(ca.Add(ca, cb), e, a.neg && b.neg)
}

// decNeg returns -a.
func decNeg(a dec) dec {
	if a.form == decNaN {
		return a
	}
	return dec{form: a.form, neg: !a.neg, coef: a.coef, exp: a.exp}
}

// decSub returns a - b.
func decSub(a, b dec) dec { return decAdd(a, decNeg(b)) }

// decMul returns a × b exactly.
func decMul(a, b dec) dec {
	if a.form == decNaN || b.form == decNaN {
		return decNaNv()
	}
	neg := a.neg != b.neg
	if a.form == decInf || b.form == decInf {
		if a.isZero() || b.isZero() {
			return decNaNv()
		}
		return decInfv(neg)
	}
	return dec{neg: neg, coef: new(big.Int).Mul(a.coef, b.coef), exp: a.exp + b.exp}
}

// decQuo divides a by a non-zero b, rounding to 34 digits; an exact
// quotient keeps the exponent closest to a.exp - b.exp, as IEEE 754 asks.
func decQuo(a, b dec) dec {
	if a.form == decNaN || b.form == decNaN {
		return decNaNv()
	}
	neg := a.neg != b.neg
	switch {
	case a.form == decInf && b.form == decInf:
		return decNaNv()
	case a.form == decInf:
		return decInfv(neg)
	case b.form == decInf:
		return dec{neg: neg, coef: new(big.Int)}
	}
	pref := a.exp - b.exp
	if a.coef.Sign() == 0 {
		return dec{neg: neg, coef: new(big.Int), exp: pref}
	}
	// Scale the dividend so that the quotient has at least 36 digits.
	k := max(0, 36+len(b.coef.String())-len(a.coef.String()))
	num := new(big.Int).Mul(a.coef, pow10(k))
	q, r := new(big.Int).QuoRem(num, b.coef, new(big.Int))
	exp := pref - k
	if r.Sign() == 0 {
		// Exact: drop trailing zeros down to the preferred exponent.
		m := new(big.Int)
		for exp < pref {
			q2, m2 := new(big.Int).QuoRem(q, bigTen, m)
			if m2.Sign() != 0 {
				break
			}
			q = q2
			exp++
		}
		return dec{neg: neg, coef: q, exp: exp}
	}
	// Inexact: a sticky digit makes the rounding in toRaw correct.
	q.Mul(q, bigTen)
	q.Add(q, big.NewInt(1))
	return dec{neg: neg, coef: q, exp: exp - 1}
}

// decMod returns a - b × trunc(a / b), with a's sign, as Decimal128::modulo.
func decMod(a, b dec) dec {
	if a.form != decFinite || b.form == decNaN || b.isZero() {
		return decNaNv()
	}
	if b.form == decInf {
		return a
	}
	ca, cb, e := align(a, b)
	r := new(big.Int).Rem(ca, cb)
	return decSigned(r, e, a.neg)
}

// decAbs returns |a|.
func decAbs(a dec) dec {
	if a.form == decNaN {
		return a
	}
	return dec{form: a.form, coef: a.coef, exp: a.exp}
}

// Rounding modes for quantize.
const (
	roundHalfEven = iota
	roundDown     // toward zero
	roundCeil     // toward +infinity
	roundFloor    // toward -infinity
	roundHalfUp   // ties away from zero
)

// shiftRound divides the magnitude c by 10^n (n > 0) and rounds it.
func shiftRound(c *big.Int, n int, neg bool, mode int) *big.Int {
	if n > 40 && len(c.String()) < n-1 {
		// Far below one unit of the result.
		q := new(big.Int)
		if c.Sign() != 0 && (mode == roundCeil && !neg || mode == roundFloor && neg) {
			q.SetInt64(1)
		}
		return q
	}
	d := pow10(n)
	q, r := new(big.Int).QuoRem(c, d, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	up := false
	switch mode {
	case roundHalfEven, roundHalfUp:
		c2 := new(big.Int).Mul(r, big.NewInt(2)).Cmp(d)
		up = c2 > 0 || c2 == 0 && (mode == roundHalfUp || q.Bit(0) == 1)
	case roundCeil:
		up = !neg
	case roundFloor:
		up = neg
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// decQuantize returns d with exponent exp, rounding with mode; a result
// that needs more than 34 digits is NaN (IEEE 754's invalid operation).
func decQuantize(d dec, exp int, mode int) dec {
	if d.form != decFinite {
		if d.form == decInf {
			return decNaNv()
		}
		return d
	}
	var c *big.Int
	switch {
	case d.exp == exp:
		c = new(big.Int).Set(d.coef)
	case d.exp > exp:
		if d.exp-exp > 40 && d.coef.Sign() != 0 {
			return decNaNv()
		}
		c = new(big.Int).Mul(d.coef, pow10(d.exp-exp))
	default:
		c = shiftRound(d.coef, exp-d.exp, d.neg, mode)
	}
	if c.Cmp(maxCoef) >= 0 {
		return decNaNv()
	}
	return dec{neg: d.neg, coef: c, exp: exp}
}

// decNormalize gives d its 34-digit form (the smallest exponent that
// holds it), as mongod's Decimal128::normalize (adding 0E-6176) does.
func decNormalize(d dec) dec {
	if d.form != decFinite {
		return d
	}
	d = round34(d)
	if d.coef.Sign() == 0 {
		return dec{neg: d.neg, coef: new(big.Int), exp: decMinExp}
	}
	normExp := max(decMinExp, d.exp-(34-len(d.coef.String())))
	if normExp < d.exp {
		return dec{neg: d.neg, coef: new(big.Int).Mul(d.coef, pow10(d.exp-normExp)), exp: normExp}
	}
	return d
}

// decRoundTo is Decimal128::quantize as $round and $trunc use it: when
// exp asks for more digits than the value's 34-digit form holds, the
// 34-digit form is the result; otherwise the value is quantized to exp.
func decRoundTo(d dec, exp int, mode int) dec {
	if d.form == decFinite {
		normExp := decMinExp
		if d.coef.Sign() != 0 {
			normExp = max(decMinExp, d.exp-(34-len(d.coef.String())))
		}
		if exp < normExp {
			c := new(big.Int).Set(d.coef)
			if d.exp > normExp {
				c.Mul(c, pow10(d.exp-normExp))
			} else if d.exp < normExp {
				c = shiftRound(c, normExp-d.exp, d.neg, roundHalfEven)
			}
			return dec{neg: d.neg, coef: c, exp: normExp}
		}
	}
	return decQuantize(d, exp, mode)
}

// Decimal128's exponent range for a 34-digit coefficient.
const (
	decMaxExp = 6111
	decMinExp = -6176
)

// toRaw rounds d to a decimal128 and returns it as a BSON value.
func (d dec) toRaw() bson.RawValue { return Decimal(d.to128()) }

// to128 rounds d to 34 digits (ties to even) within decimal128's exponent
// range, overflowing to infinity.
func (d dec) to128() bson.Decimal128 {
	var sign uint64
	if d.neg {
		sign = 1 << 63
	}
	switch d.form {
	case decNaN:
		return bson.NewDecimal128(0x7c00000000000000, 0)
	case decInf:
		return bson.NewDecimal128(sign|0x7800000000000000, 0)
	}
	c, e := new(big.Int).Set(d.coef), d.exp
	if n := len(c.String()); n > 34 {
		c = shiftRound(c, n-34, d.neg, roundHalfEven)
		e += n - 34
		if c.Cmp(maxCoef) >= 0 {
			c.Quo(c, bigTen)
			e++
		}
	}
	if e < decMinExp {
		c = shiftRound(c, decMinExp-e, d.neg, roundHalfEven)
		e = decMinExp
	}
	if e > decMaxExp {
		if c.Sign() == 0 {
			e = decMaxExp
		} else {
			// Clamp by padding the coefficient with zeros when it fits.
			for e > decMaxExp && new(big.Int).Mul(c, bigTen).Cmp(maxCoef) < 0 {
				c.Mul(c, bigTen)
				e--
			}
			if e > decMaxExp {
				return bson.NewDecimal128(sign|0x7800000000000000, 0)
			}
		}
	}
	lo := new(big.Int).And(c, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(c, 64).Uint64()
	hi |= sign | uint64(e-decMinExp)<<49
	return bson.NewDecimal128(hi, lo)
}

// float returns d rounded to the nearest double.
func (d dec) float() float64 {
	switch d.form {
	case decNaN:
		return math.NaN()
	case decInf:
		if d.neg {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	f, _ := strconv.ParseFloat(d.coef.String()+"e"+strconv.Itoa(d.exp), 64)
	if d.neg {
		f = -f
	}
	return f
}

// int64 returns d rounded with mode to an int64, and false when it does not
// fit (Decimal128::toLong's invalid flag).
func (d dec) int64(mode int) (int64, bool) {
	if d.form != decFinite {
		return 0, false
	}
	var c *big.Int
	if d.exp >= 0 {
		if d.exp > 20 && d.coef.Sign() != 0 {
			return 0, false
		}
		c = new(big.Int).Mul(d.coef, pow10(d.exp))
	} else {
		c = shiftRound(d.coef, -d.exp, d.neg, mode)
	}
	if d.neg {
		c.Neg(c)
	}
	if !c.IsInt64() {
		return 0, false
	}
	return c.Int64(), true
}

// String formats d for messages (scientific notation).
func (d dec) String() string {
	return d.to128().String()
}

// decSqrt returns the square root of a non-negative finite d to 34 digits;
// an exact root keeps the exponent closest to d.exp / 2.
func decSqrt(d dec) dec {
	if d.form != decFinite || d.isZero() {
		if d.isZero() {
			return dec{neg: d.neg, coef: new(big.Int), exp: floorDiv2(d.exp)}
		}
		return d
	}
	// Make the exponent even and the coefficient large enough for 35 digits.
	c, e := new(big.Int).Set(d.coef), d.exp
	if e%2 != 0 {
		c.Mul(c, bigTen)
		e--
	}
	shift := max(0, 70-len(c.String()))
	if shift%2 != 0 {
		shift++
	}
	c.Mul(c, pow10(shift))
	e -= shift
	r := new(big.Int).Sqrt(c)
	exact := new(big.Int).Mul(r, r).Cmp(c) == 0
	exp := e / 2
	if exact {
		pref := floorDiv2(d.exp)
		m := new(big.Int)
		for exp < pref {
			q, rem := new(big.Int).QuoRem(r, bigTen, m)
			if rem.Sign() != 0 {
				break
			}
			r = q
			exp++
		}
		return dec{coef: r, exp: exp}
	}
	r.Mul(r, bigTen)
	r.Add(r, big.NewInt(1))
	return dec{coef: r, exp: exp - 1}
}

// floorDiv2 returns floor(e / 2).
func floorDiv2(e int) int {
	if e < 0 {
		return -((-e + 1) / 2)
	}
	return e / 2
}

// decViaFloat applies a double function to a decimal and converts the
// result back to 34 digits.
//
// Divergence: mongod computes every decimal trigonometric function in
// 34-digit decimal arithmetic. This engine does too (num_trig.go), except
// for arguments where that cannot be done precisely and cheaply (circular
// functions of |x| >= 1e30, hyperbolic ones past overflow, infinities and
// zeros), which go through double precision here; such results agree
// with mongod's only to about 15 digits.
func decViaFloat(d dec, fn func(float64) float64) dec {
	return decFromFloat(fn(d.float()), 34)
}

// decPowInt raises d to a small integral power exactly, rounding to 34
// digits at the end; ok is false when the power is out of range.
func decPowInt(d dec, n int64) (dec, bool) {
	if d.form != decFinite || n < 0 || n > 1000 {
		return dec{}, false
	}
	c := new(big.Int).Exp(d.coef, big.NewInt(n), nil)
	if len(c.String()) > 3000 {
		return dec{}, false
	}
	return dec{neg: d.neg && n%2 == 1, coef: c, exp: d.exp * int(n)}, true
}

// round34 rounds d to decimal128 precision, as each decimal operation of
// mongod does before the next one.
func round34(d dec) dec { return decFrom128(d.to128()) }

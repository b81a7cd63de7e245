package update

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// dec is an IEEE 754-2008 decimal128 value being computed on: a sign, an
// arbitrary-precision coefficient and an exponent, or NaN / ±Infinity.
// Results are rounded to 34 digits (ties to even) when converted back.
type dec struct {
	nan  bool
	inf  bool
	neg  bool
	coef *big.Int // >= 0; nil only for NaN and Infinity
	exp  int
}

const (
	decMaxDigits = 34
	decMinExp    = -6176
	decMaxExp    = 6111
)

var bigTen = big.NewInt(10)

// decFromBSON converts a driver Decimal128.
func decFromBSON(d bson.Decimal128) dec {
	h, _ := d.GetBytes()
	neg := h>>63 == 1
	if d.IsNaN() {
		return dec{nan: true}
	}
	if d.IsInf() != 0 {
		return dec{inf: true, neg: neg}
	}
	bi, exp, err := d.BigInt()
	if err != nil {
		return dec{nan: true}
	}
	return dec{neg: neg, coef: new(big.Int).Abs(bi), exp: exp}
}

func decFromInt(i int64) dec {
	bi := big.NewInt(i)
	return dec{neg: i < 0, coef: bi.Abs(bi)}
}

// decFromDouble converts f as mongod's Decimal128(double) does: rounded to
// 15 significant digits.
func decFromDouble(f float64) dec {
	switch {
	case math.IsNaN(f):
		return dec{nan: true}
	case math.IsInf(f, 0):
		return dec{inf: true, neg: f < 0}
	}
	neg := math.Signbit(f)
	if f == 0 {
		return dec{neg: neg, coef: new(big.Int)}
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', 14, 64) // d.dddddddddddddde±XX
	mant, expPart, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(expPart)
	coef, _ := new(big.Int).SetString(digits, 10)
	return dec{neg: neg, coef: coef, exp: e - 14}
}

// toBSON rounds d to decimal128 and encodes it.
func (d dec) toBSON() bson.Decimal128 {
	if d.nan {
		return bson.NewDecimal128(0x7C00000000000000, 0)
	}
	if d.inf {
		if d.neg {
			return bson.NewDecimal128(0xF800000000000000, 0)
		}
		return bson.NewDecimal128(0x7800000000000000, 0)
	}
	coef := new(big.Int).Set(d.coef)
	exp := d.exp
	// Round to at most 34 digits.
	if n := len(coef.String()); n > decMaxDigits {
		coef, exp = roundCoef(coef, exp, n-decMaxDigits)
	}
	// Subnormal: raise the exponent to the minimum, losing digits.
	if exp < decMinExp {
		coef, exp = roundCoef(coef, exp, decMinExp-exp)
	}
	if coef.Sign() == 0 {
		exp = min(max(exp, decMinExp), decMaxExp)
	}
	// Clamp: lower a too large exponent by padding the coefficient.
	for exp > decMaxExp && coef.Sign() != 0 && len(coef.String()) < decMaxDigits {
		coef.Mul(coef, bigTen)
		exp--
	}
	if exp > decMaxExp {
		return dec{inf: true, neg: d.neg}.toBSON()
	}
	out, ok := bson.ParseDecimal128FromBigInt(coef, exp)
	if !ok {
		return dec{inf: true, neg: d.neg}.toBSON()
	}
	if d.neg {
		h, l := out.GetBytes()
		out = bson.NewDecimal128(h|1<<63, l)
	}
	return out
}

// roundCoef drops n digits from coef, rounding half to even, and raises
// exp by n. When rounding carries into a new digit (999 -> 1000) the caller's
// digit limit still holds because the trailing digit is zero and is dropped
// on the next pass.
func roundCoef(coef *big.Int, exp, n int) (*big.Int, int) {
	div := new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
	q, r := new(big.Int).QuoRem(coef, div, new(big.Int))
	twice := new(big.Int).Mul(r, big.NewInt(2))
	switch twice.Cmp(div) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	exp += n
	if len(q.String()) > decMaxDigits {
		q.Quo(q, bigTen)
		exp++
	}
	return q, exp
}

func (d dec) signed() *big.Int {
	v := new(big.Int).Set(d.coef)
	if d.neg {
		v.Neg(v)
	}
	return v
}

// decAdd returns a+b.
func decAdd(a, b dec) dec {
	switch {
	case a.nan || b.nan:
		return dec{nan: true}
	case a.inf && b.inf:
		if a.neg != b.neg {
			return dec{nan: true}
		}
		return a
	case a.inf:
		return a
	case b.inf:
		return b
	}
	exp := min(a.exp, b.exp)
	x := a.signed()
	x.Mul(x, pow10(a.exp-exp))
	y := b.signed()
	y.Mul(y, pow10(b.exp-exp))
	x.Add(x, y)
	neg := x.Sign() < 0
	if x.Sign() == 0 {
		// IEEE: the sum of opposite-signed values is +0, of two -0 is -0.
		neg = a.neg && b.neg
	}
	return dec{neg: neg, coef: x.Abs(x), exp: exp}
}

// decMul returns a*b.
func decMul(a, b dec) dec {
	neg := a.neg != b.neg
	switch {
	case a.nan || b.nan:
		return dec{nan: true}
	case a.inf || b.inf:
		if (!a.inf && a.coef.Sign() == 0) || (!b.inf && b.coef.Sign() == 0) {
			return dec{nan: true}
		}
		return dec{inf: true, neg: neg}
	}
	c := new(big.Int).Mul(a.coef, b.coef)
	return dec{neg: neg, coef: c, exp: a.exp + b.exp}
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// decToFloat converts d to the nearest double.
func decToFloat(d dec) (float64, bool) {
	f, err := strconv.ParseFloat(d.toBSON().String(), 64)
	return f, err == nil
}

// decToInt64Exact converts an integral d to int64; ok is false for NaN,
// infinities, fractions and values out of range.
func decToInt64Exact(d dec) (int64, bool) {
	if d.nan || d.inf {
		return 0, false
	}
	v := new(big.Int).Set(d.coef)
	switch {
	case d.exp > 0:
		if d.exp > 40 {
			if v.Sign() == 0 {
				return 0, true
			}
			return 0, false
		}
		v.Mul(v, pow10(d.exp))
	case d.exp < 0:
		if -d.exp > 6200 {
			return 0, v.Sign() == 0
		}
		q, r := new(big.Int).QuoRem(v, pow10(-d.exp), new(big.Int))
		if r.Sign() != 0 {
			return 0, false
		}
		v = q
	}
	if d.neg {
		v.Neg(v)
	}
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

package agg

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// decTotal sums finite decimal128 values exactly, counting the exponents
// in the window so that the result keeps mongod's trailing zeros (0.10 +
// 0.20 is 0.30).
type decTotal struct {
	sum  *big.Rat
	exps map[int]int64
}

// minExp returns the least exponent of the decimals in the window.
func (d *decTotal) minExp() (int, bool) {
	m, ok := 0, false
	for e, n := range d.exps {
		if n > 0 && (!ok || e < m) {
			m, ok = e, true
		}
	}
	return m, ok
}

// add adds (sign 1) or removes (sign -1) a finite decimal.
func (d *decTotal) add(v bson.Decimal128, sign int64) bool {
	bi, exp, err := v.BigInt()
	if err != nil {
		return false
	}
	r := new(big.Rat).SetInt(bi)
	scaleRat(r, exp)
	if sign < 0 {
		r.Neg(r)
	}
	if d.sum == nil {
		d.sum = new(big.Rat)
	}
	d.sum.Add(d.sum, r)
	if d.exps == nil {
		d.exps = map[int]int64{}
	}
	if d.exps[exp] += sign; d.exps[exp] == 0 {
		delete(d.exps, exp)
	}
	return true
}

// scaleRat multiplies r by 10^exp.
func scaleRat(r *big.Rat, exp int) {
	if exp == 0 {
		return
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs64(int64(exp)))), nil)
	if exp > 0 {
		r.Mul(r, new(big.Rat).SetInt(p))
	} else {
		r.Quo(r, new(big.Rat).SetInt(p))
	}
}

// ratOfFloat converts a double to a rational through its 15 significant
// digits, as mongod converts doubles to decimals.
func ratOfFloat(f float64) (*big.Rat, int) {
	s := strconv.FormatFloat(f, 'e', 14, 64)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat), 0
	}
	e, _ := strconv.Atoi(s[strings.LastIndexByte(s, 'e')+1:])
	return r, e - 14
}

// ratDecimal converts r to a decimal128 with exponent exp when that is
// exact in 34 digits, else rounded half-even to 34 significant digits.
func ratDecimal(r *big.Rat, exp int) bson.RawValue {
	if exp < -6176 {
		exp = -6176
	}
	// The exact result nearest the preferred exponent, as IEEE decimal
	// arithmetic gives when it can.
	for e := exp; e >= exp-40 && e >= -6176; e-- {
		scaled := new(big.Rat).Set(r)
		scaleRat(scaled, -e)
		if !scaled.IsInt() {
			continue
		}
		c := scaled.Num()
		if len(new(big.Int).Abs(c).String()) > 34 {
			break
		}
		if d, ok := bson.ParseDecimal128FromBigInt(c, e); ok {
			return expr.Decimal(d)
		}
		break
	}
	if r.Sign() == 0 {
		d, _ := bson.ParseDecimal128FromBigInt(new(big.Int), exp)
		return expr.Decimal(d)
	}
	// Find e with 10^33 <= |r| / 10^e < 10^34, then round.
	f, _ := new(big.Rat).Abs(r).Float64()
	e := int(math.Floor(math.Log10(f))) - 33
	for range 3 {
		q := new(big.Rat).Set(r)
		scaleRat(q, -e)
		c := roundHalfEven(q)
		n := len(new(big.Int).Abs(c).String())
		switch {
		case n > 34:
			e++
		case n < 34 && c.Sign() != 0:
			e--
		default:
			if d, ok := bson.ParseDecimal128FromBigInt(c, e); ok {
				return expr.Decimal(d)
			}
			return decimalOf(f)
		}
	}
	return decimalOf(f)
}

// roundHalfEven rounds a rational to the nearest integer, ties to even.
func roundHalfEven(q *big.Rat) *big.Int {
	num, den := q.Num(), q.Denom()
	quo, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
	switch twice.Cmp(den) {
	case 1:
		if num.Sign() < 0 {
			quo.Sub(quo, big.NewInt(1))
		} else {
			quo.Add(quo, big.NewInt(1))
		}
	case 0:
		if quo.Bit(0) == 1 {
			if num.Sign() < 0 {
				quo.Sub(quo, big.NewInt(1))
			} else {
				quo.Add(quo, big.NewInt(1))
			}
		}
	}
	return quo
}

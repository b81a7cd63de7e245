package agg

import (
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// decNum is an exact finite decimal coef × 10^exp, for rounding decimal
// input to a preferred-number series as mongod does (in Decimal128).
type decNum struct {
	coef *big.Int
	exp  int
}

// decimalInt returns i as a decimal128 with exponent 0.
func decimalInt(i int) bson.RawValue {
	d, _ := bson.ParseDecimal128FromBigInt(big.NewInt(int64(i)), 0)
	return expr.Decimal(d)
}

// digits returns the number of decimal digits of a positive c.
func digits(c *big.Int) int { return len(c.String()) }

// cmpDec compares two non-negative exact decimals.
func cmpDec(a, b decNum) int {
	if a.coef.Sign() == 0 || b.coef.Sign() == 0 {
		return a.coef.Cmp(b.coef)
	}
	// Orders of magnitude that differ by two or more decide alone.
	ma, mb := digits(a.coef)+a.exp, digits(b.coef)+b.exp
	if ma > mb+1 {
		return 1
	}
	if mb > ma+1 {
		return -1
	}
	x, y := new(big.Int).Set(a.coef), new(big.Int).Set(b.coef)
	if a.exp > b.exp {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(a.exp-b.exp)), nil))
	} else if b.exp > a.exp {
		y.Mul(y, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.exp-a.exp)), nil))
	}
	return x.Cmp(y)
}

// seriesAt returns series value s scaled by 10^j, as an exact value.
func seriesAt(s float64, j int) decNum {
	return decNum{coef: big.NewInt(int64(s)), exp: j}
}

// seriesDecimal returns s × 10^j as mongod's Decimal128 arithmetic
// spells it: s converted from a double with 15 significant digits, times
// a multiplier that is 10^j (coefficient 10^j) for j >= 0 and 1E j
// below, kept to 34 digits.
func seriesDecimal(s float64, j int) bson.RawValue {
	n := int64(s)
	pad := 15 - digits(big.NewInt(n))
	c := new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(pad)), nil))
	exp := -pad
	if j >= 0 {
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(j)), nil))
	} else {
		exp += j
	}
	if n := digits(c); n > 34 {
		// Only trailing zeros go: the value is exact.
		c.Quo(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n-34)), nil))
		exp += n - 34
	}
	d, ok := bson.ParseDecimal128FromBigInt(c, exp)
	if !ok {
		d = bson.NewDecimal128(0x7800000000000000, 0) // +Infinity
	}
	return expr.Decimal(d)
}

// decValue returns v's exact decimal value; ok is false for an infinity.
func decValue(v bson.RawValue) (decNum, bool) {
	c, e, err := v.Decimal128().BigInt()
	if err != nil {
		return decNum{}, false
	}
	return decNum{coef: c, exp: e}, true
}

// decUp is roundUp of a decimal over a preferred series, in decimal:
// mongod scales the series by decades until it spans the number, then
// answers the first series value above it. An infinity stays as it is
// (mongod would scale forever).
func (r *rounder) decUp(v bson.RawValue) bson.RawValue {
	x, ok := decValue(v)
	if !ok {
		return v
	}
	s := r.series
	front, back := s[0], s[len(s)-1]
	j, steps := 0, 0
	for ; cmpDec(x, seriesAt(back, j)) >= 0 && steps < maxScaleSteps; steps++ {
		j++
	}
	for ; cmpDec(x, seriesAt(front, j)) < 0 && steps < maxScaleSteps; steps++ {
		j--
		if cmpDec(x, seriesAt(back, j)) >= 0 {
			return seriesDecimal(front, j+1)
		}
	}
	if steps >= maxScaleSteps {
		return v
	}
	for _, y := range s {
		if cmpDec(x, seriesAt(y, j)) < 0 {
			return seriesDecimal(y, j)
		}
	}
	return v
}

// decDown is roundDown of a decimal over a preferred series, in decimal:
// the last series value below the number.
func (r *rounder) decDown(v bson.RawValue) bson.RawValue {
	x, ok := decValue(v)
	if !ok {
		return v
	}
	s := r.series
	front, back := s[0], s[len(s)-1]
	j, steps := 0, 0
	for ; cmpDec(x, seriesAt(front, j)) <= 0 && steps < maxScaleSteps; steps++ {
		j--
	}
	for ; cmpDec(x, seriesAt(back, j)) > 0 && steps < maxScaleSteps; steps++ {
		j++
		if cmpDec(x, seriesAt(front, j)) <= 0 {
			return seriesDecimal(back, j-1)
		}
	}
	if steps >= maxScaleSteps {
		return v
	}
	for i := len(s) - 1; i >= 0; i-- {
		if cmpDec(seriesAt(s[i], j), x) < 0 {
			return seriesDecimal(s[i], j)
		}
	}
	return v
}

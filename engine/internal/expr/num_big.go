package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
)

// Decimal exponentials and logarithms, computed in binary floating point
// with far more precision than decimal128's 34 digits and then rounded to
// 34 digits, so that they agree with mongod's correctly rounded decimal
// library. Exact results (ln 1, log10 of a power of ten) are exact.

// bigPrec is the working precision in bits (about 120 decimal digits).
const bigPrec = 400

// bigOf returns the value of a finite decimal.
func bigOf(d dec) *big.Float {
	f := new(big.Float).SetPrec(bigPrec).SetInt(d.coef)
	switch {
	case d.exp > 0:
		f.Mul(f, new(big.Float).SetPrec(bigPrec).SetInt(pow10(d.exp)))
	case d.exp < 0:
		f.Quo(f, new(big.Float).SetPrec(bigPrec).SetInt(pow10(-d.exp)))
	}
	if d.neg {
		f.Neg(f)
	}
	return f
}

// decOfBig rounds f to 34 significant digits.
func decOfBig(f *big.Float) dec {
	if f.Sign() == 0 {
		return dec{neg: f.Signbit(), coef: new(big.Int)}
	}
	s := f.Text('e', 33)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, ex, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(ex)
	digits := strings.Replace(mant, ".", "", 1)
	c, _ := new(big.Int).SetString(digits, 10)
	return dec{neg: neg, coef: c, exp: e - (len(digits) - 1)}
}

var (
	ln2Once sync.Once
	ln2Big  *big.Float
	ln10Big *big.Float
)

// bigConsts computes ln 2 and ln 10 once.
func bigConsts() {
	ln2Once.Do(func() {
		ln2Big = lnMant(new(big.Float).SetPrec(bigPrec).SetInt64(2))
		// ln 10 = ln 1.25 + 3 ln 2.
		ln10Big = lnMant(new(big.Float).SetPrec(bigPrec).SetFloat64(1.25))
		ln10Big.Add(ln10Big, new(big.Float).SetPrec(bigPrec).Mul(ln2Big, new(big.Float).SetInt64(3)))
	})
}

// lnMant returns ln m by the series 2·atanh((m-1)/(m+1)), which converges
// fast for m near 1 (used for m in [0.5, 2]).
func lnMant(m *big.Float) *big.Float {
	one := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	z := new(big.Float).SetPrec(bigPrec).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(bigPrec).Add(m, one))
	z2 := new(big.Float).SetPrec(bigPrec).Mul(z, z)
	sum := new(big.Float).SetPrec(bigPrec).Set(z)
	term := new(big.Float).SetPrec(bigPrec).Set(z)
	limit := new(big.Float).SetPrec(bigPrec).SetMantExp(one, -bigPrec-8)
	for k := int64(3); k < 4000; k += 2 {
		term.Mul(term, z2)
		t := new(big.Float).SetPrec(bigPrec).Quo(term, new(big.Float).SetInt64(k))
		sum.Add(sum, t)
		if t.Abs(t).Cmp(limit) < 0 {
			break
		}
	}
	return sum.Mul(sum, new(big.Float).SetInt64(2))
}

// bigLn returns ln x for x > 0.
func bigLn(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(bigPrec)
	e := x.MantExp(m) // x = m × 2^e, m in [0.5, 1)
	r := lnMant(m)
	if e != 0 {
		bigConsts()
		r.Add(r, new(big.Float).SetPrec(bigPrec).Mul(ln2Big, new(big.Float).SetInt64(int64(e))))
	}
	return r
}

// bigExp returns e^x, or nil with over set when it is outside decimal128's
// range (over > 0: infinity; over < 0: zero).
func bigExp(x *big.Float) (r *big.Float, over int) {
	limit := new(big.Float).SetInt64(14500)
	if x.Cmp(limit) > 0 {
		return nil, 1
	}
	if new(big.Float).Neg(x).Cmp(limit) > 0 {
		return nil, -1
	}
	bigConsts()
	// x = n·ln2 + r with |r| <= ln2/2, then e^r by Taylor on r/2^10.
	q := new(big.Float).SetPrec(bigPrec).Quo(x, ln2Big)
	n, _ := q.Int64()
	rem := new(big.Float).SetPrec(bigPrec).Sub(x, new(big.Float).SetPrec(bigPrec).Mul(ln2Big, new(big.Float).SetInt64(n)))
	const halvings = 10
	rem.SetMantExp(rem, -halvings)
	one := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	sum := new(big.Float).SetPrec(bigPrec).Set(one)
	term := new(big.Float).SetPrec(bigPrec).Set(one)
	eps := new(big.Float).SetPrec(bigPrec).SetMantExp(one, -bigPrec-8)
	for k := int64(1); k < 400; k++ {
		term.Mul(term, rem)
		term.Quo(term, new(big.Float).SetInt64(k))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for i := 0; i < halvings; i++ {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(n)), 0
}

// decExp is e^d for a decimal d.
func decExp(d dec) dec {
	switch {
	case d.form == decNaN:
		return d
	case d.form == decInf:
		if d.neg {
			return dec{coef: new(big.Int)}
		}
		return d
	case d.isZero():
		return decFromInt(1)
	}
	r, over := bigExp(bigOf(d))
	switch {
	case over > 0:
		return decInfv(false)
	case over < 0:
		return dec{coef: new(big.Int), exp: decMinExp}
	}
	return round34(decOfBig(r))
}

// powerOf10 reports whether the positive finite d is 10^k and returns k.
func powerOf10(d dec) (int, bool) {
	c := new(big.Int).Set(d.coef)
	k := d.exp
	m := new(big.Int)
	for c.Cmp(bigTen) >= 0 {
		q, r := new(big.Int).QuoRem(c, bigTen, m)
		if r.Sign() != 0 {
			return 0, false
		}
		c = q
		k++
	}
	return k, c.Cmp(big.NewInt(1)) == 0
}

// decLn is the natural logarithm of a positive decimal (infinity and NaN
// pass through).
func decLn(d dec) dec {
	if d.form != decFinite {
		return d
	}
	if d.coef.Cmp(big.NewInt(1)) == 0 && d.exp == 0 || decSub(d, decFromInt(1)).isZero() {
		return decFromInt(0)
	}
	return round34(decOfBig(bigLn(bigOf(d))))
}

// decLog10 is the base-10 logarithm of a positive decimal; powers of ten
// give exact integers.
func decLog10(d dec) dec {
	if d.form != decFinite {
		return d
	}
	if k, ok := powerOf10(d); ok {
		return decFromInt(int64(k))
	}
	bigConsts()
	r := bigLn(bigOf(d))
	return round34(decOfBig(r.Quo(r, ln10Big)))
}

// decLog2 is the base-2 logarithm of a positive decimal; powers of two
// give exact integers.
func decLog2(d dec) dec {
	if d.form != decFinite {
		return d
	}
	if d.exp >= 0 {
		c := new(big.Int).Mul(d.coef, pow10(min(d.exp, 400)))
		if d.exp <= 400 && c.BitLen() > 0 && new(big.Int).And(c, new(big.Int).Sub(c, big.NewInt(1))).Sign() == 0 {
			return decFromInt(int64(c.BitLen() - 1))
		}
	}
	bigConsts()
	r := bigLn(bigOf(d))
	return round34(decOfBig(r.Quo(r, ln2Big)))
}

// decLog is Decimal128::logarithm(base): log10 or log2 for those bases,
// else ln x / ln base, each rounded to 34 digits as mongod divides them.
func decLog(x, base dec) dec {
	switch {
	case decSub(base, decFromInt(10)).isZero():
		return decLog10(x)
	case decSub(base, decFromInt(2)).isZero():
		return decLog2(x)
	}
	return round34(decQuo(decLn(x), decLn(base)))
}

// decPowReal is base^exp for a decimal exponent that is not a small
// integer: e^(exp · ln base), NaN for a negative base.
func decPowReal(b, e dec) dec {
	switch {
	case b.form == decNaN || e.form == decNaN:
		return decNaNv()
	case b.form != decFinite || e.form != decFinite:
		return decFromFloat(math.Pow(b.float(), e.float()), 34)
	case b.isZero():
		if e.neg {
			return decInfv(false)
		}
		return dec{coef: new(big.Int)}
	case b.neg:
		return decNaNv()
	}
	l := bigLn(bigOf(b))
	r, over := bigExp(l.Mul(l, bigOf(e)))
	switch {
	case over > 0:
		return decInfv(false)
	case over < 0:
		return dec{coef: new(big.Int), exp: decMinExp}
	}
	return round34(decOfBig(r))
}

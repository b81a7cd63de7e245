package expr

import (
	"math"
	"math/big"
	"sync"
)

// Decimal trigonometry in high precision (see num_big.go), rounded to 34
// digits. Arguments too large to reduce precisely (|x| >= 1e30 for the
// circular functions) fall back to double precision.

var (
	piOnce sync.Once
	piBig  *big.Float
)

func bf() *big.Float { return new(big.Float).SetPrec(bigPrec) }

func bigInt(n int64) *big.Float { return bf().SetInt64(n) }

// atanSeries is Σ (-1)^k x^(2k+1) / (2k+1) for small |x|.
func atanSeries(x *big.Float) *big.Float {
	x2 := bf().Mul(x, x)
	term := bf().Set(x)
	sum := bf().Set(x)
	eps := bf().SetMantExp(bigInt(1), -bigPrec-8)
	for k := int64(1); k < 5000; k++ {
		term.Mul(term, x2)
		term.Neg(term)
		t := bf().Quo(term, bigInt(2*k+1))
		sum.Add(sum, t)
		if t.Abs(t).Cmp(eps) < 0 {
			break
		}
	}
	return sum
}

// bigPi returns π (Machin's formula).
func bigPi() *big.Float {
	piOnce.Do(func() {
		a := atanSeries(bf().Quo(bigInt(1), bigInt(5)))
		b := atanSeries(bf().Quo(bigInt(1), bigInt(239)))
		piBig = bf().Sub(a.Mul(a, bigInt(16)), b.Mul(b, bigInt(4)))
	})
	return bf().Set(piBig)
}

// bigAtan returns atan x.
func bigAtan(x *big.Float) *big.Float {
	neg := x.Sign() < 0
	a := bf().Abs(x)
	inv := a.Cmp(bigInt(1)) > 0
	if inv {
		a.Quo(bigInt(1), a)
	}
	// Two angle halvings: t -> t / (1 + sqrt(1 + t²)).
	for i := 0; i < 2; i++ {
		s := bf().Mul(a, a)
		s.Add(s, bigInt(1))
		s.Sqrt(s)
		s.Add(s, bigInt(1))
		a.Quo(a, s)
	}
	r := atanSeries(a)
	r.Mul(r, bigInt(4))
	if inv {
		half := bigPi()
		half.Quo(half, bigInt(2))
		r = half.Sub(half, r)
	}
	if neg {
		r.Neg(r)
	}
	return r
}

// bigSinCos returns sin x and cos x for |x| < 1e30.
func bigSinCos(x *big.Float) (*big.Float, *big.Float) {
	halfPi := bigPi()
	halfPi.Quo(halfPi, bigInt(2))
	q := bf().Quo(x, halfPi)
	qi, _ := q.Int(nil)
	// Round to the nearest quadrant.
	frac := bf().Sub(q, bf().SetInt(qi))
	if frac.Cmp(bf().SetFloat64(0.5)) > 0 {
		qi.Add(qi, big.NewInt(1))
	} else if frac.Cmp(bf().SetFloat64(-0.5)) < 0 {
		qi.Sub(qi, big.NewInt(1))
	}
	r := bf().Sub(x, bf().Mul(halfPi, bf().SetInt(qi)))
	r2 := bf().Mul(r, r)
	eps := bf().SetMantExp(bigInt(1), -bigPrec-8)
	sin, cos := bf().Set(r), bigInt(1)
	st, ct := bf().Set(r), bigInt(1)
	for k := int64(1); k < 500; k++ {
		st.Mul(st, r2)
		st.Quo(st, bigInt((2*k)*(2*k+1)))
		st.Neg(st)
		sin.Add(sin, st)
		ct.Mul(ct, r2)
		ct.Quo(ct, bigInt((2*k-1)*(2*k)))
		ct.Neg(ct)
		cos.Add(cos, ct)
		if bf().Abs(st).Cmp(eps) < 0 && bf().Abs(ct).Cmp(eps) < 0 {
			break
		}
	}
	switch new(big.Int).Mod(qi, big.NewInt(4)).Int64() {
	case 1:
		sin, cos = cos, sin.Neg(sin)
	case 2:
		sin, cos = sin.Neg(sin), cos.Neg(cos)
	case 3:
		sin, cos = cos.Neg(cos), sin
	}
	return sin, cos
}

// decTrig computes a trigonometric function of a finite decimal (the
// caller checks the domain); it returns false when the double fallback
// should be used.
func decTrig(name string, d dec) (dec, bool) {
	if d.form != decFinite {
		return dec{}, false
	}
	x := bigOf(d)
	ax, _ := bf().Abs(x).Float64()
	if ax < 1e-40 && (name == "$sinh" || name == "$tanh" || name == "$asinh" || name == "$atanh") {
		// f(x) = x (1 + O(x²)): x itself to 34 digits, where the formulas
		// through e^x or ln(1 + x) would lose it.
		return round34(d), true
	}
	var r *big.Float
	switch name {
	case "$sin", "$cos", "$tan":
		if ax >= 1e30 {
			return dec{}, false
		}
		s, c := bigSinCos(x)
		switch name {
		case "$sin":
			r = s
		case "$cos":
			r = c
		default:
			r = s.Quo(s, c)
		}
	case "$atan":
		r = bigAtan(x)
	case "$asin", "$acos":
		one := bigInt(1)
		if ax == 1 {
			r = bigPi()
			r.Quo(r, bigInt(2))
			if x.Sign() < 0 {
				r.Neg(r)
			}
		} else {
			den := bf().Sub(one, bf().Mul(x, x))
			den.Sqrt(den)
			r = bigAtan(bf().Quo(x, den))
		}
		if name == "$acos" {
			h := bigPi()
			h.Quo(h, bigInt(2))
			r = h.Sub(h, r)
		}
	case "$sinh", "$cosh", "$tanh":
		if ax > 14000 {
			return dec{}, false
		}
		ep, _ := bigExp(x)
		em, _ := bigExp(bf().Neg(x))
		s := bf().Sub(ep, em)
		c := bf().Add(ep, em)
		switch name {
		case "$sinh":
			r = s.Quo(s, bigInt(2))
		case "$cosh":
			r = c.Quo(c, bigInt(2))
		default:
			r = s.Quo(s, c)
		}
	case "$asinh", "$acosh":
		if ax > 1e300 {
			return dec{}, false
		}
		t := bf().Mul(x, x)
		if name == "$asinh" {
			t.Add(t, bigInt(1))
		} else {
			t.Sub(t, bigInt(1))
		}
		t.Sqrt(t)
		t.Add(t, bf().Abs(x))
		r = bigLn(t)
		if name == "$asinh" && x.Sign() < 0 {
			r.Neg(r)
		}
	case "$atanh":
		if ax == 1 {
			return decInfv(x.Sign() < 0), true
		}
		num := bf().Add(bigInt(1), x)
		den := bf().Sub(bigInt(1), x)
		r = bigLn(num.Quo(num, den))
		r.Quo(r, bigInt(2))
	default:
		return dec{}, false
	}
	if r.IsInf() {
		return dec{}, false
	}
	if f, _ := r.Float64(); math.IsNaN(f) {
		return dec{}, false
	}
	return round34(decOfBig(r)), true
}

// decAtan2 is atan2(y, x) for finite decimals that are not both zero; it
// returns false for the cases left to double precision (zeros, infinities).
func decAtan2(y, x dec) (dec, bool) {
	if y.form != decFinite || x.form != decFinite || x.isZero() || y.isZero() {
		return dec{}, false
	}
	yb, xb := bigOf(y), bigOf(x)
	r := bigAtan(bf().Quo(yb, xb))
	if xb.Sign() < 0 {
		if yb.Sign() < 0 {
			r.Sub(r, bigPi())
		} else {
			r.Add(r, bigPi())
		}
	}
	return round34(decOfBig(r)), true
}

package keystring

import (
	"math"
	"math/bits"
	"strconv"
)

// Numbers of every BSON type share one encoding of their exact value (I7):
//
//	NaN        tagNaN
//	-Inf       tagNegInf
//	x < 0      tagNeg  ^(magnitude(-x))
//	±0         tagZero
//	x > 0      tagPos  magnitude(x)
//	+Inf       tagPosInf
//
// where magnitude(x), for x = 0.d1d2…dn × 10^E with d1 ≠ 0 and dn ≠ 0, is
// uint16(E+expBias) big-endian, then the digits in pairs (d1d2, d3d4, …; a
// last odd digit is padded with 0) each as one byte pair+1, then 0x00. Larger
// E means a larger magnitude; with equal E the digit pairs compare as the
// digits do, and the 0x00 terminator makes a shorter digit string (which is
// the smaller magnitude, since trailing digits are never 0) sort first. The
// bytes of a negative magnitude are inverted, reversing the order; its
// terminator becomes 0xFF, which no inverted digit byte equals.
//
// Doubles are expanded to their exact decimal value (up to 767 significant
// digits for subnormals), so that decimal128 0.1 sorts below double 0.1 as
// MongoDB compares them.
const expBias = 0x8000

// maxDigits is the longest digit string a number can have: the exact
// expansion of the smallest subnormal double has 751 significant digits and
// no finite double needs more than 767.
const maxDigits = 800

func appendInt64(dst []byte, v int64) []byte {
	if v == 0 {
		return append(dst, tagZero)
	}
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	var buf [24]byte
	d := strconv.AppendUint(buf[:0], u, 10)
	return appendDigits(dst, neg, d, len(d))
}

func appendDouble(dst []byte, f float64) []byte {
	switch {
	case f != f:
		return append(dst, tagNaN)
	case f == 0:
		return append(dst, tagZero)
	case math.IsInf(f, 1):
		return append(dst, tagPosInf)
	case math.IsInf(f, -1):
		return append(dst, tagNegInf)
	}
	var buf [32]byte
	neg, d, e := doubleDigits(buf[:0], f)
	return appendDigits(dst, neg, d, e)
}

// doubleDigits returns the sign, the exact significant decimal digits and
// the exponent E of a finite nonzero f = ±0.digits × 10^E. The digits are
// appended to buf and may have trailing zeros.
func doubleDigits(buf []byte, f float64) (neg bool, digits []byte, e int) {
	neg = f < 0
	a := math.Abs(f)
	if a < 1<<63 && a == math.Trunc(a) {
		d := strconv.AppendUint(buf, uint64(a), 10)
		return neg, d, len(d)
	}
	// a = m × 2^e2 with m odd.
	fb := math.Float64bits(a)
	m := fb & (1<<52 - 1)
	e2 := int(fb>>52) - 1075
	if fb>>52 == 0 {
		e2 = -1074
	} else {
		m |= 1 << 52
	}
	tz := bits.TrailingZeros64(m)
	m >>= uint(tz)
	e2 += tz
	if e2 < 0 && -e2 <= 27 {
		// a = m × 5^k / 10^k: exact in uint64 when the product fits.
		k := -e2
		hi, lo := bits.Mul64(m, pow5[k])
		if hi == 0 {
			d := strconv.AppendUint(buf, lo, 10)
			return neg, d, len(d) - k
		}
	}
	// Slow path: strconv formats with enough precision to be exact, using
	// a multiprecision decimal. Estimate the significant digit count from
	// the bit length of m × 5^k or m × 2^e2.
	var est int
	if e2 < 0 {
		est = int(float64(bits.Len64(m))*0.30103+float64(-e2)*0.69898) + 2
	} else {
		est = int(float64(bits.Len64(m)+e2)*0.30103) + 2
	}
	s := strconv.AppendFloat(buf, a, 'e', est, 64)
	// s is "d.ddddde±xx".
	i := indexByte(s, 'e')
	x, _ := strconv.Atoi(string(s[i+1:]))
	copy(s[1:], s[2:i])
	return neg, s[:i-1], x + 1
}

var pow5 = func() (p [28]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 5
	}
	return p
}()

// pow10_34 is 10^34, one above the largest decimal128 coefficient.
var pow10_34hi, pow10_34lo = bits.Mul64(1e17, 1e17)

// decimalParts decodes an IEEE 754-2008 BID decimal128 (high, low words).
// kind is 0 for finite, 1 for infinity, 2 for NaN. For finite values the
// coefficient is (chi, clo) and the value is ±coef × 10^exp; non-canonical
// coefficients (≥ 10^34) read as zero, as the standard requires.
func decimalParts(hi, lo uint64) (neg bool, kind int, chi, clo uint64, exp int) {
	neg = hi>>63 == 1
	switch hi >> 58 & 0x1F {
	case 0x1F:
		return neg, 2, 0, 0, 0
	case 0x1E:
		return neg, 1, 0, 0, 0
	}
	if hi>>61&3 == 3 {
		// The 11-prefixed form's coefficient is always ≥ 2^113 > 10^34.
		return neg, 0, 0, 0, int(hi>>47&0x3FFF) - 6176
	}
	exp = int(hi>>49&0x3FFF) - 6176
	chi = hi & (1<<49 - 1)
	clo = lo
	if chi > pow10_34hi || chi == pow10_34hi && clo >= pow10_34lo {
		chi, clo = 0, 0
	}
	return neg, 0, chi, clo, exp
}

func appendDecimal128(dst []byte, hi, lo uint64) []byte {
	neg, kind, chi, clo, exp := decimalParts(hi, lo)
	switch {
	case kind == 2:
		return append(dst, tagNaN)
	case kind == 1 && neg:
		return append(dst, tagNegInf)
	case kind == 1:
		return append(dst, tagPosInf)
	case chi == 0 && clo == 0:
		return append(dst, tagZero)
	}
	var buf [40]byte
	d := appendUint128(buf[:0], chi, clo)
	return appendDigits(dst, neg, d, len(d)+exp)
}

// appendUint128 appends the decimal digits of the 128-bit value (hi, lo).
func appendUint128(dst []byte, hi, lo uint64) []byte {
	if hi == 0 {
		return strconv.AppendUint(dst, lo, 10)
	}
	const base = 1e19
	// (hi, lo) = q × 10^19 + r, q fits in 128 bits with qhi < 10^19.
	qhi := hi / base
	qlo, r := bits.Div64(hi%base, lo, base)
	if qhi == 0 {
		dst = strconv.AppendUint(dst, qlo, 10)
	} else {
		q2, r2 := bits.Div64(qhi, qlo, base) // qhi < base, so no overflow
		dst = strconv.AppendUint(dst, q2, 10)
		dst = appendPadded19(dst, r2)
	}
	return appendPadded19(dst, r)
}

func appendPadded19(dst []byte, v uint64) []byte {
	var buf [20]byte
	s := strconv.AppendUint(buf[:0], v, 10)
	for i := len(s); i < 19; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendDigits appends the number ±0.d × 10^e, where d is a string of ASCII
// digits whose first digit is not '0'; trailing zeros are dropped here.
func appendDigits(dst []byte, neg bool, d []byte, e int) []byte {
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	if len(d) == 0 {
		return append(dst, tagZero)
	}
	tag := tagPos
	if neg {
		tag = tagNeg
	}
	dst = append(dst, tag)
	start := len(dst)
	dst = append(dst, byte(uint16(e+expBias)>>8), byte(e+expBias))
	for i := 0; i < len(d); i += 2 {
		p := (d[i] - '0') * 10
		if i+1 < len(d) {
			p += d[i+1] - '0'
		}
		dst = append(dst, p+1)
	}
	dst = append(dst, 0x00)
	if neg {
		invert(dst[start:])
	}
	return dst
}

func bits64Mul10Add(u, digit uint64) (overflow bool, v uint64) {
	hi, lo := bits.Mul64(u, 10)
	lo, carry := bits.Add64(lo, digit, 0)
	return hi != 0 || carry != 0, lo
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func add64(a, b uint64) (sum, carry uint64) { return bits.Add64(a, b, 0) }

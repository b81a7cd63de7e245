package expr

import (
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Arithmetic operators: $add $subtract $multiply $divide $mod and the
// single-number functions. Results take the narrowest type that holds them
// as mongod's do: int widens to long on overflow, long to double, and any
// decimal operand makes the result decimal.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#arithmetic-expression-operators
func init() {
	register("$add", opNary(evalAdd))
	register("$subtract", opValues(2, func(v []bson.RawValue) (bson.RawValue, error) { return subtract(v[0], v[1]) }))
	register("$multiply", opNary(evalMultiply))
	register("$divide", opValues(2, func(v []bson.RawValue) (bson.RawValue, error) { return divide(v[0], v[1]) }))
	register("$mod", opValues(2, func(v []bson.RawValue) (bson.RawValue, error) { return mod(v[0], v[1]) }))
	register("$abs", opNumeric(absNum))
	register("$ceil", opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		return roundInteger(v, math.Ceil, roundCeil), nil
	}))
	register("$floor", opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		return roundInteger(v, math.Floor, roundFloor), nil
	}))
	register("$exp", opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		if v.Type == bson.TypeDecimal128 {
			return decExp(decOf(v)).toRaw(), nil
		}
		return Double(math.Exp(numFloat(v))), nil
	}))
	register("$ln", opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		return logOf(v, "$ln", 28766, math.Log, decLn)
	}))
	register("$log10", opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		return logOf(v, "$log10", 28761, math.Log10, decLog10)
	}))
	register("$sqrt", opNumeric(sqrtNum))
	register("$log", opValues(2, logBase))
	register("$pow", opValues(2, pow))
	register("$round", opRanged(1, 2, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		return roundOrTrunc(c, args, "$round", roundHalfEven)
	}))
	register("$trunc", opRanged(1, 2, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		return roundOrTrunc(c, args, "$trunc", roundDown)
	}))
}

// opNumeric parses an operator of one numeric operand: null and missing
// give null, anything else but a number fails with 28765.
func opNumeric(fn func(name string, v bson.RawValue) (bson.RawValue, error)) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Exactly(name, arg, 1)
		if err != nil {
			return nil, err
		}
		return p.fold(&fnExpr{args: args, fn: func(c *Ctx, args []Expr) (bson.RawValue, error) {
			v, err := args[0].Eval(c)
			if err != nil {
				return bson.RawValue{}, err
			}
			if IsNullish(v) {
				return Null(), nil
			}
			if !isNum(v) {
				return bson.RawValue{}, exprErr(28765, "%s only supports numeric types, not %s", name, typeName(v))
			}
			return fn(name, v)
		}})
	}
}

// addState sums as mongod's ExpressionAdd: a long total that moves to a
// double on overflow, a double total, a decimal total, and at most one date.
type addState struct {
	width  int
	long   int64
	double float64
	dec    dec
	isDate bool
}

// add adds one number or date to the sum.
func (s *addState) add(v bson.RawValue) error {
	old := s.width
	var asLong int64
	var asDouble float64
	if v.Type == bson.TypeDateTime {
		if s.isDate {
			return exprErr(16612, "only one date allowed in an $add expression")
		}
		s.isDate = true
		asLong = v.DateTime()
		asDouble = float64(asLong)
	} else {
		s.width = max(s.width, numWidth(v.Type))
		asLong, asDouble = numLong(v), numFloat(v)
	}
	if old != s.width {
		switch s.width {
		case wDouble:
			s.double = float64(s.long)
		case wDecimal:
			if old == wDouble {
				s.dec = decFromFloat(s.double, 34)
			} else {
				s.dec = decFromInt(s.long)
			}
		}
	}
	switch s.width {
	case wInt, wLong:
		sum := s.long + asLong
		if (asLong > 0 && sum < s.long) || (asLong < 0 && sum > s.long) {
			s.width = wDouble
			s.double = float64(s.long) + asDouble
		} else {
			s.long = sum
		}
	case wDouble:
		s.double += asDouble
	case wDecimal:
		d := decFromInt(asLong)
		if v.Type != bson.TypeDateTime {
			d = decOf(v)
		}
		s.dec = round34(decAdd(s.dec, d))
	}
	return nil
}

// value returns the sum in its final type.
func (s *addState) value() (bson.RawValue, error) {
	if s.isDate {
		switch s.width {
		case wInt, wLong:
			return Date(s.long), nil
		case wDouble:
			if !(s.double >= -9223372036854775808.0 && s.double < 9223372036854775808.0) {
				return bson.RawValue{}, mongoerr.New(mongoerr.Overflow, "date overflow in $add")
			}
			return Date(int64(math.Round(s.double))), nil
		default:
			ms, ok := s.dec.int64(roundHalfEven)
			if !ok {
				ms = math.MinInt64
			}
			return Date(ms), nil
		}
	}
	switch s.width {
	case wInt:
		return IntOrLong(s.long), nil
	case wLong:
		return Int64(s.long), nil
	case wDouble:
		return Double(s.double), nil
	}
	return s.dec.toRaw(), nil
}

// evalAdd adds numbers and at most one date; the first null or missing
// operand makes the result null.
func evalAdd(c *Ctx, args []Expr) (bson.RawValue, error) {
	var s addState
	for _, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if !isNum(v) && v.Type != bson.TypeDateTime {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.TypeMismatch, "$add only supports numeric or date types, not %s", typeName(v))
		}
		if err := s.add(v); err != nil {
			return bson.RawValue{}, err
		}
	}
	return s.value()
}

// subtract is $subtract: numbers, a date minus a number (a date), or a
// date minus a date (milliseconds as a long).
func subtract(l, r bson.RawValue) (bson.RawValue, error) {
	if isNum(l) && isNum(r) {
		switch max(numWidth(l.Type), numWidth(r.Type)) {
		case wDecimal:
			return decSub(decOf(l), decOf(r)).toRaw(), nil
		case wDouble:
			return Double(numFloat(l) - numFloat(r)), nil
		case wLong:
			a, b := numLong(l), numLong(r)
			d := a - b
			if (b > 0 && d > a) || (b < 0 && d < a) {
				return Double(numFloat(l) - numFloat(r)), nil
			}
			return Int64(d), nil
		default:
			return IntOrLong(numLong(l) - numLong(r)), nil
		}
	}
	if IsNullish(l) || IsNullish(r) {
		return Null(), nil
	}
	if l.Type == bson.TypeDateTime {
		switch {
		case r.Type == bson.TypeDateTime:
			return Int64(l.DateTime() - r.DateTime()), nil
		case isNum(r):
			return Date(l.DateTime() - numLong(r)), nil
		}
		return bson.RawValue{}, mongoerr.Newf(mongoerr.TypeMismatch, "can't $subtract %s from Date", typeName(r))
	}
	return bson.RawValue{}, mongoerr.Newf(mongoerr.TypeMismatch, "can't $subtract %s from %s", typeName(r), typeName(l))
}

// multiplyState multiplies as mongod's ExpressionMultiply: a double product
// and a long product in parallel, switching to decimal at the first one.
type multiplyState struct {
	width  int
	double float64
	long   int64
	dec    dec
}

// mul multiplies the product by one number.
func (s *multiplyState) mul(v bson.RawValue) {
	old := s.width
	s.width = max(s.width, numWidth(v.Type))
	if s.width == wDecimal {
		if old != wDecimal {
			if old == wDouble {
				s.dec = decFromFloat(s.double, 15)
			} else {
				s.dec = decFromInt(s.long)
			}
		}
		s.dec = round34(decMul(s.dec, decOf(v)))
		return
	}
	f := numFloat(v)
	s.double *= f
	if s.width != wDouble {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			s.width = wDouble
			return
		}
		p := new(big.Int).Mul(big.NewInt(s.long), big.NewInt(numLong(v)))
		if !p.IsInt64() {
			s.width = wDouble
			return
		}
		s.long = p.Int64()
	}
}

// evalMultiply multiplies numbers; the first null or missing operand makes
// the result null.
func evalMultiply(c *Ctx, args []Expr) (bson.RawValue, error) {
	s := multiplyState{double: 1, long: 1}
	for _, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if !isNum(v) {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.TypeMismatch, "$multiply only supports numeric types, not %s", typeName(v))
		}
		s.mul(v)
	}
	switch s.width {
	case wDouble:
		return Double(s.double), nil
	case wLong:
		return Int64(s.long), nil
	case wInt:
		return IntOrLong(s.long), nil
	}
	return s.dec.toRaw(), nil
}

// divide is $divide: a double, or a decimal when either operand is one.
func divide(l, r bson.RawValue) (bson.RawValue, error) {
	if isNum(l) && isNum(r) {
		if l.Type == bson.TypeDecimal128 || r.Type == bson.TypeDecimal128 {
			den := decOf(r)
			if den.isZero() {
				return bson.RawValue{}, mongoerr.New(mongoerr.BadValue, "can't $divide by zero")
			}
			return decQuo(decOf(l), den).toRaw(), nil
		}
		den := numFloat(r)
		if den == 0 {
			return bson.RawValue{}, mongoerr.New(mongoerr.BadValue, "can't $divide by zero")
		}
		return Double(numFloat(l) / den), nil
	}
	if IsNullish(l) || IsNullish(r) {
		return Null(), nil
	}
	return bson.RawValue{}, mongoerr.Newf(mongoerr.TypeMismatch, "$divide only supports numeric types, not %s and %s", typeName(l), typeName(r))
}

// mod is $mod: the remainder with the dividend's sign. Integral divisors
// keep integer results: int with int (or an integral double) gives an
// int, a long gives a long.
func mod(l, r bson.RawValue) (bson.RawValue, error) {
	if isNum(l) && isNum(r) {
		if l.Type == bson.TypeDecimal128 || r.Type == bson.TypeDecimal128 {
			den := decOf(r)
			if den.isZero() {
				return bson.RawValue{}, exprErr(5733415, "can't $mod by zero")
			}
			return decMod(decOf(l), den).toRaw(), nil
		}
		den := numFloat(r)
		if den == 0 {
			return bson.RawValue{}, exprErr(16610, "can't $mod by zero")
		}
		_, integral := numInt32(r)
		if l.Type == bson.TypeDouble || (r.Type == bson.TypeDouble && !integral) {
			return Double(math.Mod(numFloat(l), den)), nil
		}
		if l.Type == bson.TypeInt64 || r.Type == bson.TypeInt64 {
			a, b := numLong(l), numLong(r)
			if b == -1 {
				return Int64(0), nil
			}
			return Int64(a % b), nil
		}
		a, b := int32(numLong(l)), int32(numLong(r))
		if b == -1 {
			return Int32(0), nil
		}
		return Int32(a % b), nil
	}
	if IsNullish(l) || IsNullish(r) {
		return Null(), nil
	}
	return bson.RawValue{}, exprErr(16611, "$mod only supports numeric types, not %s and %s", typeName(l), typeName(r))
}

// absNum is $abs; an int's absolute value may need a long.
func absNum(_ string, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeDouble:
		return Double(math.Abs(v.Double())), nil
	case bson.TypeDecimal128:
		return decAbs(decOf(v)).toRaw(), nil
	}
	n := numLong(v)
	if n == math.MinInt64 {
		return bson.RawValue{}, exprErr(28680, "can't take $abs of long long min")
	}
	if n < 0 {
		n = -n
	}
	if v.Type == bson.TypeInt64 {
		return Int64(n), nil
	}
	return IntOrLong(n), nil
}

// roundInteger is $ceil and $floor: integers are unchanged.
func roundInteger(v bson.RawValue, f func(float64) float64, mode int) bson.RawValue {
	switch v.Type {
	case bson.TypeDouble:
		return Double(f(v.Double()))
	case bson.TypeDecimal128:
		d := decOf(v)
		if d.form != decFinite {
			return v
		}
		return decQuantize(d, 0, mode).toRaw()
	}
	return v
}

// logOf is $ln and $log10: a positive argument (or NaN) is required.
func logOf(v bson.RawValue, name string, code int32, f func(float64) float64, df func(dec) dec) (bson.RawValue, error) {
	if v.Type == bson.TypeDecimal128 {
		d := decOf(v)
		if d.form != decNaN && !d.neg && !d.isZero() {
			return df(d).toRaw(), nil
		}
	}
	x := numFloat(v)
	if !(x > 0 || math.IsNaN(x)) {
		return bson.RawValue{}, exprErr(code, "%s's argument must be a positive number, but is %s", name, fmtDouble(x))
	}
	return Double(f(x)), nil
}

// logBase is $log: the logarithm of a positive number in a positive base
// other than 1.
func logBase(v []bson.RawValue) (bson.RawValue, error) {
	arg, base := v[0], v[1]
	if IsNullish(arg) || IsNullish(base) {
		return Null(), nil
	}
	if !isNum(arg) {
		return bson.RawValue{}, exprErr(28756, "$log's argument must be numeric, not %s", typeName(arg))
	}
	if !isNum(base) {
		return bson.RawValue{}, exprErr(28757, "$log's base must be numeric, not %s", typeName(base))
	}
	if arg.Type == bson.TypeDecimal128 || base.Type == bson.TypeDecimal128 {
		a, b := decOf(arg), decOf(base)
		one := decFromInt(1)
		positive := func(d dec) bool { return d.form != decNaN && !d.neg && !d.isZero() }
		if positive(a) && positive(b) && !(b.form == decFinite && decSub(b, one).isZero()) {
			return decLog(a, b).toRaw(), nil
		}
	}
	x, b := numFloat(arg), numFloat(base)
	if !(x > 0 || math.IsNaN(x)) {
		return bson.RawValue{}, exprErr(28758, "$log's argument must be a positive number, but is %s", fmtDouble(x))
	}
	if !((b > 0 && b != 1) || math.IsNaN(b)) {
		return bson.RawValue{}, exprErr(28759, "$log's base must be a positive number not equal to 1, but is %s", fmtDouble(b))
	}
	return Double(math.Log(x) / math.Log(b)), nil
}

// sqrtNum is $sqrt of a non-negative number (NaN passes through).
func sqrtNum(_ string, v bson.RawValue) (bson.RawValue, error) {
	if v.Type == bson.TypeDecimal128 {
		d := decOf(v)
		if d.form != decNaN && d.neg && !d.isZero() {
			return bson.RawValue{}, exprErr(28714, "$sqrt's argument must be greater than or equal to 0")
		}
		return decSqrt(d).toRaw(), nil
	}
	x := numFloat(v)
	if x < 0 {
		return bson.RawValue{}, exprErr(28714, "$sqrt's argument must be greater than or equal to 0")
	}
	return Double(math.Sqrt(x)), nil
}

// pow is $pow. Integer powers stay integers while they fit in a long
// (an int when both operands are ints and the result fits), else a double.
func pow(v []bson.RawValue) (bson.RawValue, error) {
	base, exp := v[0], v[1]
	if IsNullish(base) || IsNullish(exp) {
		return Null(), nil
	}
	if !isNum(base) {
		return bson.RawValue{}, exprErr(28762, "$pow's base must be numeric, not %s", typeName(base))
	}
	if !isNum(exp) {
		return bson.RawValue{}, exprErr(28763, "$pow's exponent must be numeric, not %s", typeName(exp))
	}
	zeroNeg := func() error { return exprErr(28764, "$pow cannot take a base of 0 and a negative exponent") }
	if base.Type == bson.TypeDecimal128 || exp.Type == bson.TypeDecimal128 {
		b, e := decOf(base), decOf(exp)
		if b.isZero() && e.neg && !e.isZero() && e.form != decNaN {
			return bson.RawValue{}, zeroNeg()
		}
		// mongod's Decimal128::power normalizes its result to 34 digits.
		if n, ok := e.int64(roundDown); ok && e.form == decFinite && decSub(decFromInt(n), e).isZero() {
			if r, ok := decPowInt(b, abs64(n)); ok {
				if n < 0 {
					if r.isZero() {
						return decInfv(false).toRaw(), nil
					}
					r = decQuo(decFromInt(1), r)
				}
				return decNormalize(r).toRaw(), nil
			}
		}
		return decNormalize(decPowReal(b, e)).toRaw(), nil
	}
	bf, ef := numFloat(base), numFloat(exp)
	if bf == 0 && ef < 0 {
		return bson.RawValue{}, zeroNeg()
	}
	if base.Type == bson.TypeDouble || exp.Type == bson.TypeDouble {
		return Double(math.Pow(bf, ef)), nil
	}
	format := func(r int64) bson.RawValue {
		if base.Type == bson.TypeInt64 || exp.Type == bson.TypeInt64 {
			return Int64(r)
		}
		return IntOrLong(r)
	}
	b, e := numLong(base), numLong(exp)
	switch {
	case b == 0:
		if e == 0 {
			return format(1), nil
		}
		return format(0), nil
	case b == 1:
		return format(1), nil
	case b == -1:
		if e%2 == 0 {
			return format(1), nil
		}
		return format(-1), nil
	case e > 63 || e < 0:
		return Double(math.Pow(float64(b), float64(e))), nil
	}
	r := new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil)
	if !r.IsInt64() {
		return Double(math.Pow(float64(b), float64(e))), nil
	}
	return format(r.Int64()), nil
}

// abs64 returns |n|.
func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// roundOrTrunc is $round (ties to even) and $trunc with an optional place
// in [-20, 100]. Doubles round through a 34-digit decimal; ints and longs
// only change for a negative place.
func roundOrTrunc(c *Ctx, args []Expr, name string, mode int) (bson.RawValue, error) {
	num, err := args[0].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(num) {
		return Null(), nil
	}
	if !isNum(num) {
		return bson.RawValue{}, exprErr(51081, "%s only supports numeric types, not %s", name, typeName(num))
	}
	var place int64
	if len(args) > 1 {
		pv, err := args[1].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(pv) {
			return Null(), nil
		}
		if !isNum(pv) {
			return bson.RawValue{}, exprErr(16004, "can't convert from BSON type %s to long", typeName(pv))
		}
		place = numLong(pv)
		if _, ok := numInt32(pv); !ok {
			return bson.RawValue{}, exprErr(51082, "precision argument to  %s must be a integral value", name)
		}
		if place < -20 || place > 100 {
			return bson.RawValue{}, exprErr(51083, "cannot apply %s with precision value %d value must be in [-20, 100]", name, place)
		}
	}
	exp := int(-place)
	switch num.Type {
	case bson.TypeDecimal128:
		d := decOf(num)
		if d.form == decInf {
			return num, nil
		}
		return decRoundTo(d, exp, mode).toRaw(), nil
	case bson.TypeDouble:
		d := decFromFloat(num.Double(), 34)
		if d.form == decInf {
			return num, nil
		}
		return Double(decRoundTo(d, exp, mode).float()), nil
	}
	if place >= 0 {
		return num, nil
	}
	n := numLong(num)
	out, ok := decRoundTo(decFromInt(n), exp, mode).int64(roundHalfEven)
	if !ok {
		return bson.RawValue{}, exprErr(51080, "invalid conversion from Decimal128 result in %s resulting from arguments: [%d, %d]", name, n, place)
	}
	if num.Type == bson.TypeInt64 || out > math.MaxInt32 || out < math.MinInt32 {
		return Int64(out), nil
	}
	return Int32(int32(out)), nil
}

// Pow evaluates $pow(base, exp) on two values, as $bucketAuto's POWERSOF2
// granularity does.
func Pow(base, exp bson.RawValue) (bson.RawValue, error) {
	return pow([]bson.RawValue{base, exp})
}

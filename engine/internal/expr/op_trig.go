package expr

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Trigonometry operators. Ints and longs compute in double; decimals give
// decimals (see decViaFloat for the precision). Arguments outside a
// function's domain fail with 50989; NaN passes through.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#trigonometry-expression-operators
func init() {
	inf := math.Inf(1)
	register("$sin", opTrig(math.Sin, -inf, inf, false))
	register("$cos", opTrig(math.Cos, -inf, inf, false))
	register("$tan", opTrig(math.Tan, -inf, inf, false))
	register("$asin", opTrig(math.Asin, -1, 1, true))
	register("$acos", opTrig(math.Acos, -1, 1, true))
	register("$atan", opTrig(math.Atan, 0, 0, false))
	register("$sinh", opTrig(math.Sinh, 0, 0, false))
	register("$cosh", opTrig(math.Cosh, 0, 0, false))
	register("$tanh", opTrig(math.Tanh, 0, 0, false))
	register("$asinh", opTrig(math.Asinh, 0, 0, false))
	register("$acosh", opTrig(math.Acosh, 1, inf, true))
	register("$atanh", opTrig(math.Atanh, -1, 1, true))
	register("$degreesToRadians", opAngle(false))
	register("$radiansToDegrees", opAngle(true))
	register("$atan2", opValues(2, atan2))
}

// opTrig parses a one-argument trigonometric function. When lo < hi the
// argument must lie in [lo, hi] (closed) or (lo, hi) (open); lo == hi means
// no bounds.
func opTrig(f func(float64) float64, lo, hi float64, closed bool) parseFunc {
	inBounds := func(x float64) bool {
		if lo == hi || math.IsNaN(x) {
			return true
		}
		if closed {
			return x >= lo && x <= hi
		}
		return x > lo && x < hi
	}
	bounds := func() string {
		l, r := "(", ")"
		if closed {
			l, r = "[", "]"
		}
		return l + fmtDouble(lo) + "," + fmtDouble(hi) + r
	}
	return opNumeric(func(name string, v bson.RawValue) (bson.RawValue, error) {
		if v.Type == bson.TypeDecimal128 {
			d := decOf(v)
			if d.form == decNaN {
				return v, nil
			}
			x := d.float()
			// A finite decimal past double's range is still inside (-inf, inf).
			if !inBounds(x) && !(lo < hi && math.IsInf(lo, -1) && math.IsInf(hi, 1) && d.form == decFinite) {
				return bson.RawValue{}, exprErr(50989, "cannot apply %s to %s, value must be in %s", name, d.String(), bounds())
			}
			if d.isZero() || d.form == decInf {
				return round34(decViaFloat(d, f)).toRaw(), nil
			}
			if r, ok := decTrig(name, d); ok {
				return r.toRaw(), nil
			}
			return round34(decViaFloat(d, f)).toRaw(), nil
		}
		x := numFloat(v)
		if !inBounds(x) {
			return bson.RawValue{}, exprErr(50989, "cannot apply %s to %s, value must be in %s", name, fmtDouble(x), bounds())
		}
		return Double(f(x)), nil
	})
}

// piVar is π as a double variable, so that the conversion factors below
// round like mongod's M_PI / 180 and 180 / M_PI.
var piVar = math.Pi

// decPi is mongod's Decimal128 π: its 50-digit literal rounded to 34
// digits.
var decPi = func() dec {
	d, _ := bson.ParseDecimal128("3.141592653589793238462643383279503")
	return decFrom128(d)
}()

// opAngle parses $degreesToRadians (toDegrees false) or
// $radiansToDegrees: a multiplication by π/180 or 180/π, computed for
// decimals with mongod's 34-digit constants.
func opAngle(toDegrees bool) parseFunc {
	dfactor := piVar / 180
	decFactor := round34(decQuo(decPi, decFromInt(180)))
	if toDegrees {
		dfactor = 180 / piVar
		decFactor = round34(decQuo(decFromInt(180), decPi))
	}
	return opNumeric(func(_ string, v bson.RawValue) (bson.RawValue, error) {
		if v.Type == bson.TypeDecimal128 {
			return decMul(decOf(v), decFactor).toRaw(), nil
		}
		return Double(numFloat(v) * dfactor), nil
	})
}

// atan2 is $atan2(y, x).
func atan2(v []bson.RawValue) (bson.RawValue, error) {
	y, x := v[0], v[1]
	if IsNullish(y) || IsNullish(x) {
		return Null(), nil
	}
	if !isNum(y) {
		return bson.RawValue{}, exprErr(51044, "$atan2 only supports numeric types, not %s", typeName(y))
	}
	if !isNum(x) {
		return bson.RawValue{}, exprErr(51045, "$atan2 only supports numeric types, not %s", typeName(x))
	}
	if y.Type == bson.TypeDecimal128 || x.Type == bson.TypeDecimal128 {
		if r, ok := decAtan2(decOf(y), decOf(x)); ok {
			return r.toRaw(), nil
		}
		return round34(decFromFloat(math.Atan2(decOf(y).float(), decOf(x).float()), 34)).toRaw(), nil
	}
	return Double(math.Atan2(numFloat(y), numFloat(x))), nil
}

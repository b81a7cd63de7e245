package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerUnary("$stdDevPop", func() valueState { return &groupStdDev{} })
	registerUnary("$stdDevSamp", func() valueState { return &groupStdDev{samp: true} })
}

// groupStdDev is $stdDevPop and $stdDevSamp over the numeric values
// (others ignored), computed in doubles with Welford's method: null when
// there are no values (or fewer than two for the sample form).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/stdDevPop/
type groupStdDev struct {
	samp     bool
	n        int64
	mean, m2 float64
}

func (a *groupStdDev) add(v bson.RawValue) error {
	if !isNumeric(v) {
		return nil
	}
	x, _ := decimalToFloat(v)
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
	return nil
}

func (a *groupStdDev) result() (bson.RawValue, error) {
	switch {
	case a.n == 0, a.samp && a.n < 2:
		return expr.Null(), nil
	case a.samp:
		return expr.Double(math.Sqrt(a.m2 / float64(a.n-1))), nil
	}
	return expr.Double(math.Sqrt(a.m2 / float64(a.n))), nil
}

func (a *groupStdDev) partial() (bson.RawValue, error) {
	return expr.Array([]bson.RawValue{expr.Int64(a.n), expr.Double(a.mean), expr.Double(a.m2)}), nil
}

// merge combines two Welford states (Chan et al.).
func (a *groupStdDev) merge(p bson.RawValue) error {
	vals := expr.Values(p)
	if len(vals) != 3 {
		return mongoerr.New(mongoerr.InternalError, "bad partial stdDev")
	}
	n, mean, m2 := vals[0].Int64(), vals[1].Double(), vals[2].Double()
	if n == 0 {
		return nil
	}
	tot := a.n + n
	d := mean - a.mean
	a.m2 += m2 + d*d*float64(a.n)*float64(n)/float64(tot)
	a.mean += d * float64(n) / float64(tot)
	a.n = tot
	return nil
}

func (a *groupStdDev) memory() int64 { return 48 }

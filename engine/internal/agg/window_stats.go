package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerWin("$stdDevPop", parseAccFunc(func(rem bool) winState { return &winStdDevState{removable: rem} }))
	registerWin("$stdDevSamp", parseAccFunc(func(rem bool) winState { return &winStdDevState{samp: true, removable: rem} }))
	registerWin("$covariancePop", parseAccFunc(func(bool) winState { return &winCovState{} }))
	registerWin("$covarianceSamp", parseAccFunc(func(bool) winState { return &winCovState{samp: true} }))
}

// winStdDevState is $stdDevPop and $stdDevSamp. Over a left-unbounded
// window it runs Welford's method, as mongod's accumulator does; over a
// sliding window it keeps the sum and the sum of squared deviations with
// the Youngs–Cramer update, which also removes values, as mongod's
// removable function does. Non-numeric values are ignored; too few values
// give null.
type winStdDevState struct {
	samp, removable bool
	n               int64
	mean, m, sum    float64
}

// update adds (q = 1) or removes (q = -1) x by Youngs–Cramer.
func (s *winStdDevState) update(x float64, q int64) {
	if s.n+q <= 0 {
		*s = winStdDevState{samp: s.samp, removable: s.removable}
		return
	}
	if s.n == 0 {
		s.n, s.sum, s.m = 1, x, 0
		return
	}
	d := float64(s.n)*x - s.sum
	s.n += q
	s.m += float64(q) * d * d / (float64(s.n) * float64(s.n-q))
	s.sum += float64(q) * x
}

func (s *winStdDevState) add(v bson.RawValue) error {
	x, ok := numFloat(v)
	if !ok {
		return nil
	}
	if s.removable {
		s.update(x, 1)
		return nil
	}
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m += d * (x - s.mean)
	return nil
}

func (s *winStdDevState) remove(v bson.RawValue) error {
	x, ok := numFloat(v)
	if !ok {
		return nil
	}
	if s.removable {
		s.update(x, -1)
		return nil
	}
	if s.n <= 1 {
		*s = winStdDevState{samp: s.samp}
		return nil
	}
	old := (float64(s.n)*s.mean - x) / float64(s.n-1)
	s.m -= (x - s.mean) * (x - old)
	s.mean = old
	s.n--
	return nil
}

func (s *winStdDevState) value() (bson.RawValue, error) {
	d := s.n
	if s.samp {
		d--
	}
	if d <= 0 {
		return expr.Null(), nil
	}
	return expr.Double(math.Sqrt(math.Max(s.m, 0) / float64(d))), nil
}

func (s *winStdDevState) reset()       { *s = winStdDevState{samp: s.samp, removable: s.removable} }
func (s *winStdDevState) bytes() int64 { return 48 }

// numFloat returns a numeric value as a double; ok is false for other
// types.
func numFloat(v bson.RawValue) (float64, bool) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, false
	}
	return bsonkit.Float64(v)
}

// winCovState is $covariancePop and $covarianceSamp over [x, y] pairs; a
// value that is not an array of two numbers is ignored.
type winCovState struct {
	samp      bool
	n         int64
	mx, my, c float64
}

// pairOf returns the numbers of a [x, y] covariance input.
func pairOf(v bson.RawValue) (float64, float64, bool) {
	if v.Type != bson.TypeArray {
		return 0, 0, false
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) != 2 {
		return 0, 0, false
	}
	x, okx := numFloat(vals[0])
	y, oky := numFloat(vals[1])
	return x, y, okx && oky
}

func (s *winCovState) add(v bson.RawValue) error {
	x, y, ok := pairOf(v)
	if !ok {
		return nil
	}
	s.n++
	dx := x - s.mx
	s.mx += dx / float64(s.n)
	s.my += (y - s.my) / float64(s.n)
	s.c += dx * (y - s.my)
	return nil
}

func (s *winCovState) remove(v bson.RawValue) error {
	x, y, ok := pairOf(v)
	if !ok {
		return nil
	}
	if s.n <= 1 {
		*s = winCovState{samp: s.samp}
		return nil
	}
	n := float64(s.n)
	mxo := (n*s.mx - x) / (n - 1)
	myo := (n*s.my - y) / (n - 1)
	s.c -= (x - mxo) * (y - s.my)
	s.mx, s.my = mxo, myo
	s.n--
	return nil
}

func (s *winCovState) value() (bson.RawValue, error) {
	d := s.n
	if s.samp {
		d--
	}
	if d <= 0 {
		return expr.Null(), nil
	}
	return expr.Double(s.c / float64(d)), nil
}

func (s *winCovState) reset()       { *s = winCovState{samp: s.samp} }
func (s *winCovState) bytes() int64 { return 56 }

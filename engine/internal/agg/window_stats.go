package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerWin("$stdDevPop", parseAccFunc(func(bool) winState { return &stdDevState{} }))
	registerWin("$stdDevSamp", parseAccFunc(func(bool) winState { return &stdDevState{samp: true} }))
	registerWin("$covariancePop", parseAccFunc(func(bool) winState { return &covState{} }))
	registerWin("$covarianceSamp", parseAccFunc(func(bool) winState { return &covState{samp: true} }))
}

// stdDevState is $stdDevPop and $stdDevSamp by Welford's method, which
// also runs backwards to remove a value. Non-numeric values are ignored;
// too few values give null.
type stdDevState struct {
	samp    bool
	n       int64
	mean, m float64
}

func (s *stdDevState) add(v bson.RawValue) error {
	x, ok := numFloat(v)
	if !ok {
		return nil
	}
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m += d * (x - s.mean)
	return nil
}

func (s *stdDevState) remove(v bson.RawValue) error {
	x, ok := numFloat(v)
	if !ok {
		return nil
	}
	if s.n <= 1 {
		*s = stdDevState{samp: s.samp}
		return nil
	}
	old := (float64(s.n)*s.mean - x) / float64(s.n-1)
	s.m -= (x - s.mean) * (x - old)
	s.mean = old
	s.n--
	return nil
}

func (s *stdDevState) value() (bson.RawValue, error) {
	d := s.n
	if s.samp {
		d--
	}
	if d <= 0 {
		return expr.Null(), nil
	}
	return expr.Double(math.Sqrt(math.Max(s.m, 0) / float64(d))), nil
}

func (s *stdDevState) reset()       { *s = stdDevState{samp: s.samp} }
func (s *stdDevState) bytes() int64 { return 48 }

// numFloat returns a numeric value as a double; ok is false for other
// types.
func numFloat(v bson.RawValue) (float64, bool) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, false
	}
	return bsonkit.Float64(v)
}

// covState is $covariancePop and $covarianceSamp over [x, y] pairs; a
// value that is not an array of two numbers is ignored.
type covState struct {
	samp      bool
	n         int64
	mx, my, c float64
}

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

func (s *covState) add(v bson.RawValue) error {
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

func (s *covState) remove(v bson.RawValue) error {
	x, y, ok := pairOf(v)
	if !ok {
		return nil
	}
	if s.n <= 1 {
		*s = covState{samp: s.samp}
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

func (s *covState) value() (bson.RawValue, error) {
	d := s.n
	if s.samp {
		d--
	}
	if d <= 0 {
		return expr.Null(), nil
	}
	return expr.Double(s.c / float64(d)), nil
}

func (s *covState) reset()       { *s = covState{samp: s.samp} }
func (s *covState) bytes() int64 { return 56 }

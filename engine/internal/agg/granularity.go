package agg

import (
	"math"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// preferredSeries are the preferred-number series $bucketAuto's
// granularity rounds to, one decade each, scaled by powers of ten.
var preferredSeries = map[string][]float64{
	"R5":  {1.0, 1.6, 2.5, 4.0, 6.3},
	"R10": {1.00, 1.25, 1.60, 2.00, 2.50, 3.15, 4.00, 5.00, 6.30, 8.00},
	"R20": {1.00, 1.12, 1.25, 1.40, 1.60, 1.80, 2.00, 2.24, 2.50, 2.80, 3.15, 3.55, 4.00, 4.50, 5.00, 5.60, 6.30, 7.10, 8.00, 9.00},
	"R40": {1.00, 1.06, 1.12, 1.18, 1.25, 1.32, 1.40, 1.50, 1.60, 1.70, 1.80, 1.90, 2.00, 2.12, 2.24, 2.36, 2.50, 2.65, 2.80, 3.00,
		3.15, 3.35, 3.55, 3.75, 4.00, 4.25, 4.50, 4.75, 5.00, 5.30, 5.60, 6.00, 6.30, 6.70, 7.10, 7.50, 8.00, 8.50, 9.00, 9.50},
	"R80": {1.00, 1.03, 1.06, 1.09, 1.12, 1.15, 1.18, 1.22, 1.25, 1.28, 1.32, 1.36, 1.40, 1.45, 1.50, 1.55, 1.60, 1.65, 1.70, 1.75,
		1.80, 1.85, 1.90, 1.95, 2.00, 2.06, 2.12, 2.18, 2.24, 2.30, 2.36, 2.43, 2.50, 2.58, 2.65, 2.72, 2.80, 2.90, 3.00, 3.07,
		3.15, 3.25, 3.35, 3.45, 3.55, 3.65, 3.75, 3.87, 4.00, 4.12, 4.25, 4.37, 4.50, 4.62, 4.75, 4.87, 5.00, 5.15, 5.30, 5.45,
		5.60, 5.80, 6.00, 6.15, 6.30, 6.50, 6.70, 6.90, 7.10, 7.30, 7.50, 7.75, 8.00, 8.25, 8.50, 8.75, 9.00, 9.25, 9.50, 9.75},
	"1-2-5": {1, 2, 5},
	"E6":    {1.0, 1.5, 2.2, 3.3, 4.7, 6.8},
	"E12":   {1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2},
	"E24": {1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0, 3.3, 3.6, 3.9, 4.3, 4.7, 5.1, 5.6, 6.2,
		6.8, 7.5, 8.2, 9.1},
	"E48": {1.00, 1.05, 1.10, 1.15, 1.21, 1.27, 1.33, 1.40, 1.47, 1.54, 1.62, 1.69, 1.78, 1.87, 1.96, 2.05, 2.15, 2.26, 2.37, 2.49,
		2.61, 2.74, 2.87, 3.01, 3.16, 3.32, 3.48, 3.65, 3.83, 4.02, 4.22, 4.42, 4.64, 4.87, 5.11, 5.36, 5.62, 5.90, 6.19, 6.49,
		6.81, 7.15, 7.50, 7.87, 8.25, 8.66, 9.09, 9.53},
	"E96": {1.00, 1.02, 1.05, 1.07, 1.10, 1.13, 1.15, 1.18, 1.21, 1.24, 1.27, 1.30, 1.33, 1.37, 1.40, 1.43, 1.47, 1.50, 1.54, 1.58,
		1.62, 1.65, 1.69, 1.74, 1.78, 1.82, 1.87, 1.91, 1.96, 2.00, 2.05, 2.10, 2.15, 2.21, 2.26, 2.32, 2.37, 2.43, 2.49, 2.55,
		2.61, 2.67, 2.74, 2.80, 2.87, 2.94, 3.01, 3.09, 3.16, 3.24, 3.32, 3.40, 3.48, 3.57, 3.65, 3.74, 3.83, 3.92, 4.02, 4.12,
		4.22, 4.32, 4.42, 4.53, 4.64, 4.75, 4.87, 4.99, 5.11, 5.23, 5.36, 5.49, 5.62, 5.76, 5.90, 6.04, 6.19, 6.34, 6.49, 6.65,
		6.81, 6.98, 7.15, 7.32, 7.50, 7.68, 7.87, 8.06, 8.25, 8.45, 8.66, 8.87, 9.09, 9.31, 9.53, 9.76},
}

// rounder rounds $bucketAuto boundaries to a granularity.
type rounder struct {
	name   string
	series []float64 // nil for POWERSOF2
}

// newRounder returns the rounder of a granularity name; 40257 for an
// unknown one.
//
// Divergence: E192 answers NotImplemented; its table is not included.
func newRounder(name string) (*rounder, error) {
	if name == "POWERSOF2" {
		return &rounder{name: name}, nil
	}
	if name == "E192" {
		return nil, mongoerr.New(mongoerr.NotImplemented, "granularity E192 is not supported")
	}
	s, ok := preferredSeries[name]
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(40257), "Rounding granularity not recognized: %s", name)
	}
	return &rounder{name: name, series: s}, nil
}

// check validates a value to round: numeric, not NaN, not negative
// (40262/40263/40268 for the preferred series, 40265/40266/40267 for
// POWERSOF2).
func (r *rounder) check(v bson.RawValue) (float64, error) {
	codes := [3]int{40262, 40263, 40268}
	if r.series == nil {
		codes = [3]int{40265, 40266, 40267}
	}
	if !isNumeric(v) {
		return 0, mongoerr.Newf(mongoerr.Code(codes[0]), "A granularity rounder can only round numeric values, but found type: %s", typeName(v))
	}
	f, _ := decimalToFloat(v)
	if math.IsNaN(f) {
		return 0, mongoerr.New(mongoerr.Code(codes[1]), "A granularity rounder cannot round NaN")
	}
	if f < 0 {
		return 0, mongoerr.New(mongoerr.Code(codes[2]), "A granularity rounder can only round non-negative numbers")
	}
	return f, nil
}

// roundUp returns the smallest series value greater than v (zero stays
// as it is). POWERSOF2 answers an integer (2 to an integer power, as
// $pow computes it); the preferred series a double.
//
// Divergence: for a decimal input mongod rounds in decimal and answers a
// decimal (the preferred series converted with 15 significant digits,
// 2.50000000000000; POWERSOF2 as $pow(2, decimal exponent)); here the
// answer is the same number as a double or integer
// (testdata/agg/manual_group.txt, "decimal input").
func (r *rounder) roundUp(v bson.RawValue) (bson.RawValue, error) {
	f, err := r.check(v)
	if err != nil || f == 0 {
		return v, err
	}
	if r.series == nil {
		return pow2(int(math.Floor(math.Log2(f))) + 1), nil
	}
	exp := math.Floor(math.Log10(f))
	scale := math.Pow(10, exp)
	m := f / scale
	i := sort.Search(len(r.series), func(i int) bool { return r.series[i] > m+1e-12 })
	if i == len(r.series) {
		return expr.Double(r.series[0] * scale * 10), nil
	}
	return expr.Double(r.series[i] * scale), nil
}

// roundDown returns the largest series value less than v (zero stays).
func (r *rounder) roundDown(v bson.RawValue) (bson.RawValue, error) {
	f, err := r.check(v)
	if err != nil || f == 0 {
		return v, err
	}
	if r.series == nil {
		return pow2(int(math.Ceil(math.Log2(f))) - 1), nil
	}
	exp := math.Floor(math.Log10(f))
	scale := math.Pow(10, exp)
	m := f / scale
	i := sort.Search(len(r.series), func(i int) bool { return r.series[i] >= m-1e-12 })
	if i == 0 {
		return expr.Double(r.series[len(r.series)-1] * scale / 10), nil
	}
	return expr.Double(r.series[i-1] * scale), nil
}

// pow2 returns 2^e as $pow(2, e) types it: an int or long for e >= 0, a
// double for negative e.
func pow2(e int) bson.RawValue {
	switch {
	case e < 0:
		return expr.Double(math.Pow(2, float64(e)))
	case e < 63:
		return expr.IntOrLong(int64(1) << e)
	}
	return expr.Double(math.Pow(2, float64(e)))
}

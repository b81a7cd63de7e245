package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// preferredSeries are the preferred-number series $bucketAuto's
// granularity rounds to, as mongod 7.0 tabulates them: one decade each,
// as integers (10..99 or 100..999), scaled by powers of ten while
// rounding. The R40 and R80 tables are mongod's (R80 holds 40 values
// from 103), not the full Renard series; E192 is IEC 60063's.
var preferredSeries = map[string][]float64{
	"R5":  {10, 16, 25, 40, 63},
	"R10": {100, 125, 160, 200, 250, 315, 400, 500, 630, 800},
	"R20": {100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800, 900},
	"R40": {100, 106, 112, 118, 125, 132, 140, 150, 160, 170, 180, 190, 200, 212, 224, 236, 250, 265, 280, 300,
		315, 355, 375, 400, 425, 450, 475, 500, 530, 560, 600, 630, 670, 710, 750, 800, 850, 900, 950},
	"R80": {103, 109, 115, 122, 128, 136, 145, 155, 165, 175, 185, 195, 206, 218, 230, 243, 258, 272, 290, 307,
		325, 345, 365, 387, 412, 437, 462, 487, 515, 545, 575, 615, 650, 690, 730, 775, 825, 875, 925, 975},
	"1-2-5": {10, 20, 50},
	"E6":    {10, 15, 22, 33, 47, 68},
	"E12":   {10, 12, 15, 18, 22, 27, 33, 39, 47, 56, 68, 82},
	"E24":   {10, 11, 12, 13, 15, 16, 18, 20, 22, 24, 27, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91},
	"E48": {100, 105, 110, 115, 121, 127, 133, 140, 147, 154, 162, 169, 178, 187, 196, 205, 215, 226, 237, 249,
		261, 274, 287, 301, 316, 332, 348, 365, 383, 402, 422, 442, 464, 487, 511, 536, 562, 590, 619, 649,
		681, 715, 750, 787, 825, 866, 909, 953},
	"E96": {100, 102, 105, 107, 110, 113, 115, 118, 121, 124, 127, 130, 133, 137, 140, 143, 147, 150, 154, 158,
		162, 165, 169, 174, 178, 182, 187, 191, 196, 200, 205, 210, 215, 221, 226, 232, 237, 243, 249, 255,
		261, 267, 274, 280, 287, 294, 301, 309, 316, 324, 332, 340, 348, 357, 365, 374, 383, 392, 402, 412,
		422, 432, 442, 453, 464, 475, 487, 499, 511, 523, 536, 549, 562, 576, 590, 604, 619, 634, 649, 665,
		681, 698, 715, 732, 750, 768, 787, 806, 825, 845, 866, 887, 909, 931, 953, 976},
	"E192": {100, 101, 102, 104, 105, 106, 107, 109, 110, 111, 113, 114, 115, 117, 118, 120, 121, 123, 124, 126,
		127, 129, 130, 132, 133, 135, 137, 138, 140, 142, 143, 145, 147, 149, 150, 152, 154, 156, 158, 160,
		162, 164, 165, 167, 169, 172, 174, 176, 178, 180, 182, 184, 187, 189, 191, 193, 196, 198, 200, 203,
		205, 208, 210, 213, 215, 218, 221, 223, 226, 229, 232, 234, 237, 240, 243, 246, 249, 252, 255, 258,
		261, 264, 267, 271, 274, 277, 280, 284, 287, 291, 294, 298, 301, 305, 309, 312, 316, 320, 324, 328,
		332, 336, 340, 344, 348, 352, 357, 361, 365, 370, 374, 379, 383, 388, 392, 397, 402, 407, 412, 417,
		422, 427, 432, 437, 442, 448, 453, 459, 464, 470, 475, 481, 487, 493, 499, 505, 511, 517, 523, 530,
		536, 542, 549, 556, 562, 569, 576, 583, 590, 597, 604, 612, 619, 626, 634, 642, 649, 657, 665, 673,
		681, 690, 698, 706, 715, 723, 732, 741, 750, 759, 768, 777, 787, 796, 806, 816, 825, 835, 845, 856,
		866, 876, 887, 898, 909, 920, 931, 942, 953, 965, 976, 988},
}

// maxScaleSteps bounds the decade-scaling loops: more steps than any
// finite double or decimal needs (an infinity would scale forever).
const maxScaleSteps = 14000

// rounder rounds $bucketAuto boundaries to a granularity.
type rounder struct {
	name   string
	series []float64 // nil for POWERSOF2
}

// newRounder returns the rounder of a granularity name; 40257 for an
// unknown one.
func newRounder(name string) (*rounder, error) {
	if name == "POWERSOF2" {
		return &rounder{name: name}, nil
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

// roundUp returns the smallest series value greater than v (a value
// equal to zero as a double stays as it is). POWERSOF2 answers
// $pow(2, e); the preferred series a double, or for a decimal input a
// decimal computed in decimal (series values with 15 significant digits,
// as mongod converts them).
func (r *rounder) roundUp(v bson.RawValue) (bson.RawValue, error) {
	f, err := r.check(v)
	if err != nil || f == 0 {
		return v, err
	}
	if r.series == nil {
		return r.pow2Up(v, f)
	}
	if v.Type == bson.TypeDecimal128 {
		return r.decUp(v), nil
	}
	s := r.series
	front, back := s[0], s[len(s)-1]
	mult, steps := 1.0, 0
	for ; f >= back*mult && steps < maxScaleSteps; steps++ {
		mult *= 10
	}
	for ; f < front*mult && steps < maxScaleSteps; steps++ {
		prevMin := front * mult
		mult /= 10
		if f >= back*mult {
			return expr.Double(prevMin), nil
		}
	}
	if steps >= maxScaleSteps {
		return v, nil
	}
	for _, x := range s {
		if f < x*mult {
			return expr.Double(x * mult), nil
		}
	}
	return v, nil
}

// roundDown returns the largest series value less than v (a value equal
// to zero as a double stays), typed as roundUp types it.
func (r *rounder) roundDown(v bson.RawValue) (bson.RawValue, error) {
	f, err := r.check(v)
	if err != nil || f == 0 {
		return v, err
	}
	if r.series == nil {
		return r.pow2Down(v, f)
	}
	if v.Type == bson.TypeDecimal128 {
		return r.decDown(v), nil
	}
	s := r.series
	front, back := s[0], s[len(s)-1]
	mult, steps := 1.0, 0
	for ; f <= front*mult && steps < maxScaleSteps; steps++ {
		mult /= 10
	}
	for ; f > back*mult && steps < maxScaleSteps; steps++ {
		prevMax := back * mult
		mult *= 10
		if f <= front*mult {
			return expr.Double(prevMax), nil
		}
	}
	if steps >= maxScaleSteps {
		return v, nil
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]*mult < f {
			return expr.Double(s[i] * mult), nil
		}
	}
	return v, nil
}

// pow2Up is POWERSOF2's roundUp: $pow(2, floor(log2 v)+1), the exponent
// a decimal for a decimal input, else an int.
func (r *rounder) pow2Up(v bson.RawValue, f float64) (bson.RawValue, error) {
	e := int(math.Floor(math.Log2(f))) + 1
	if v.Type == bson.TypeDecimal128 {
		return expr.Pow(expr.Int32(2), decimalInt(e))
	}
	return pow2(e), nil
}

// pow2Down is POWERSOF2's roundDown: $pow(2, ceil(log2 v)-1).
func (r *rounder) pow2Down(v bson.RawValue, f float64) (bson.RawValue, error) {
	e := int(math.Ceil(math.Log2(f))) - 1
	if v.Type == bson.TypeDecimal128 {
		return expr.Pow(expr.Int32(2), decimalInt(e))
	}
	return pow2(e), nil
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

package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerWin("$derivative", parseCalculus)
	registerWin("$integral", parseCalculus)
}

// parseCalculus parses {$derivative: {input: <expr>, unit: <unit>},
// window: {...}} and the same for $integral, as ExpressionDerivative and
// ExpressionIntegral do: a single ascending-or-not field sortBy is
// required, the unit is week or smaller (5490710), and $derivative needs
// an explicit window.
func parseCalculus(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	switch {
	case env.sortBy == nil:
		return nil, failedToParse("%s requires a sortBy", name)
	case len(env.sortBy.paths) != 1:
		return nil, failedToParse("%s requires a non-compound sortBy", name)
	}
	var window *winBounds
	var args bson.RawValue
	elems, _ := spec.Elements()
	for _, el := range elems {
		switch el.Key() {
		case "window":
			if window != nil && name == "$integral" {
				return nil, failedToParse("There can be only one 'window' field for $integral")
			}
			w, err := parseWindow(el.Value(), env.sortBy)
			if err != nil {
				return nil, err
			}
			window = &w
		case name:
			args = el.Value()
		default:
			return nil, failedToParse("%s got unexpected argument: %s", name, el.Key())
		}
	}
	if args.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("%s expects an object, but got a %s: %s: %s", name, typeNameOf(args), name, showElem(args))
	}
	var input expr.Expr
	unitMs := int64(0)
	haveUnit := false
	aelems, _ := args.Document().Elements()
	for _, el := range aelems {
		switch el.Key() {
		case "input":
			in, err := env.parseInput(el.Value())
			if err != nil {
				return nil, err
			}
			input = in
		case "unit":
			if haveUnit && name == "$integral" {
				return nil, failedToParse("There can be only one 'unit' field for $integral")
			}
			u := el.Value()
			if u.Type != bson.TypeString {
				return nil, failedToParse("unit' must be a string, but got %s", typeNameOf(u))
			}
			ms, err := timeUnitMillis(u.StringValue())
			if err != nil {
				return nil, err
			}
			switch u.StringValue() {
			case "year", "quarter", "month":
				return nil, mongoerr.New(mongoerr.Code(5490710), "unit must be 'week' or smaller")
			}
			unitMs, haveUnit = ms, true
		default:
			return nil, failedToParse("%s got unexpected argument: %s", name, el.Key())
		}
	}
	if input == nil {
		return nil, failedToParse("%s requires an 'input' expression", name)
	}
	if name == "$derivative" {
		if window == nil {
			return nil, failedToParse("$derivative requires explicit window bounds")
		}
		return &derivFunc{input: input, win: *window, unitMs: unitMs}, nil
	}
	w := wholePartition
	if window != nil {
		w = *window
	}
	return &integralFunc{input: input, win: w, unitMs: unitMs}, nil
}

// derivFunc is $derivative: (y(last) − y(first)) / (t(last) − t(first))
// over the window, per unit when one is given; null for an empty window
// or a zero run.
type derivFunc struct {
	input  expr.Expr
	win    winBounds
	unitMs int64
}

func (f *derivFunc) start(p *winPartition) (winCursor, error) { return eagerStart(f, p) }

func (f *derivFunc) compute(p *winPartition, out []bson.RawValue) error {
	ts, err := p.sortValues()
	if err != nil {
		return err
	}
	for i := range out {
		lo, hi, ok, err := p.endpoints(f.win, i)
		if err != nil {
			return err
		}
		if !ok {
			out[i] = expr.Null()
			continue
		}
		lt, rt := ts[lo], ts[hi]
		if f.unitMs != 0 {
			if lt.Type != bson.TypeDateTime || rt.Type != bson.TypeDateTime {
				return mongoerr.New(mongoerr.Code(5624900), "$derivative with 'unit' expects the sortBy field to be a Date")
			}
		} else {
			if lt.Type == bson.TypeDateTime || rt.Type == bson.TypeDateTime {
				return mongoerr.New(mongoerr.Code(5624901), "$derivative where the sortBy is a Date requires an 'unit'")
			}
			if !bsonkit.IsNumber(lt.Type) || !bsonkit.IsNumber(rt.Type) {
				return mongoerr.New(mongoerr.Code(5624902), "$derivative (with no 'unit') expects the sortBy field to be numeric")
			}
		}
		run, _ := axisFloat(rt)
		l, _ := axisFloat(lt)
		run -= l
		ly, err := p.eval(f.input, lo)
		if err != nil {
			return err
		}
		ry, err := p.eval(f.input, hi)
		if err != nil {
			return err
		}
		if expr.IsNullish(ly) || expr.IsNullish(ry) {
			return mongoerr.New(mongoerr.Code(5624903), "$derivative input must not be null or missing")
		}
		y1, ok1 := numFloat(ly)
		y2, ok2 := numFloat(ry)
		if !ok1 || !ok2 {
			return mongoerr.Newf(mongoerr.Code(16556), "cant $subtract a %s from a %s", typeNameOf(ly), typeNameOf(ry))
		}
		if run == 0 {
			out[i] = expr.Null()
			continue
		}
		r := (y2 - y1) / run
		if f.unitMs != 0 {
			r *= float64(f.unitMs)
		}
		if ly.Type == bson.TypeDecimal128 || ry.Type == bson.TypeDecimal128 {
			out[i] = decimalOf(r)
		} else {
			out[i] = expr.Double(r)
		}
	}
	return nil
}

// integralFunc is $integral by the trapezoidal rule over [sortBy, input]
// points, computed by winIntegralState over the window.
type integralFunc struct {
	input  expr.Expr
	win    winBounds
	unitMs int64
}

func (f *integralFunc) start(p *winPartition) (winCursor, error) {
	ts, err := p.sortValues()
	if err != nil {
		return nil, err
	}
	inputs := func(p *winPartition) ([]bson.RawValue, error) {
		in, err := p.evalAll(f.input)
		if err != nil {
			return nil, err
		}
		for i, v := range in {
			in[i] = expr.Array([]bson.RawValue{ts[i], v})
		}
		return in, nil
	}
	a := &winAccFunc{inputs: inputs, win: f.win, newState: func(bool) winState { return &winIntegralState{unitMs: f.unitMs} }}
	return a.start(p)
}

// winIntegralState sums trapezoids between consecutive points of the window.
type winIntegralState struct {
	unitMs int64
	pts    [][2]bson.RawValue
	head   int
	nan    int64
	t      winNumTotal
}

func (s *winIntegralState) check(v bson.RawValue) ([2]bson.RawValue, error) {
	var pt [2]bson.RawValue
	vals := bsonkit.Values(v.Value)
	if v.Type != bson.TypeArray || len(vals) != 2 || !bsonkit.IsNumber(vals[1].Type) ||
		!(bsonkit.IsNumber(vals[0].Type) || vals[0].Type == bson.TypeDateTime) {
		return pt, mongoerr.New(mongoerr.Code(5423900), "The input value of $integral window function must be a vector of 2 value, the first value must be numeric or date type and the second must be numeric.")
	}
	if s.unitMs != 0 && vals[0].Type != bson.TypeDateTime {
		return pt, mongoerr.New(mongoerr.Code(5423901), "$integral with 'outputUnit' expects the sortBy field to be a Date")
	}
	if s.unitMs == 0 && !bsonkit.IsNumber(vals[0].Type) {
		return pt, mongoerr.New(mongoerr.Code(5423902), "$integral (with no 'outputUnit') expects the sortBy field to be numeric")
	}
	pt[0], pt[1] = vals[0], vals[1]
	return pt, nil
}

// trapezoid is the area between two points by the trapezoidal rule; a
// NaN makes it 0 (the NaN is counted apart).
func trapezoid(a, b [2]bson.RawValue) bson.RawValue {
	if bsonkit.IsNaN(a[0]) || bsonkit.IsNaN(a[1]) || bsonkit.IsNaN(b[0]) || bsonkit.IsNaN(b[1]) {
		return expr.Int32(0)
	}
	t1, _ := axisFloat(a[0])
	t2, _ := axisFloat(b[0])
	y1, _ := numFloat(a[1])
	y2, _ := numFloat(b[1])
	r := (y1 + y2) * (t2 - t1) / 2
	if a[1].Type == bson.TypeDecimal128 || b[1].Type == bson.TypeDecimal128 {
		return decimalOf(r)
	}
	return expr.Double(r)
}

// hasNaN reports whether a point has a NaN coordinate.
func hasNaN(pt [2]bson.RawValue) bool { return bsonkit.IsNaN(pt[0]) || bsonkit.IsNaN(pt[1]) }

func (s *winIntegralState) add(v bson.RawValue) error {
	pt, err := s.check(v)
	if err != nil {
		return err
	}
	if hasNaN(pt) {
		s.nan++
	}
	if len(s.pts) > s.head {
		s.t.addNum(trapezoid(s.pts[len(s.pts)-1], pt), 1)
	}
	s.pts = append(s.pts, pt)
	return nil
}

func (s *winIntegralState) remove(bson.RawValue) error {
	if s.head >= len(s.pts) {
		return nil
	}
	pt := s.pts[s.head]
	s.head++
	if hasNaN(pt) {
		s.nan--
	}
	if s.head < len(s.pts) {
		s.t.addNum(trapezoid(pt, s.pts[s.head]), -1)
	}
	if s.head > 64 && s.head*2 > len(s.pts) {
		s.pts = append(s.pts[:0], s.pts[s.head:]...)
		s.head = 0
	}
	return nil
}

func (s *winIntegralState) value() (bson.RawValue, error) {
	if s.head >= len(s.pts) {
		return expr.Null(), nil
	}
	if s.nan > 0 {
		return expr.Double(math.NaN()), nil
	}
	v := s.t.sum(true)
	if s.unitMs == 0 {
		return v, nil
	}
	f, _ := numFloat(v)
	if v.Type == bson.TypeDecimal128 {
		return decimalOf(f / float64(s.unitMs)), nil
	}
	return expr.Double(f / float64(s.unitMs)), nil
}

func (s *winIntegralState) reset()       { *s = winIntegralState{unitMs: s.unitMs} }
func (s *winIntegralState) bytes() int64 { return int64(len(s.pts)-s.head) * 64 }

package agg

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// $percentile and $median (7.0), as $group accumulators and as window
// functions.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/percentile/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/median/
func init() {
	for _, name := range []string{"$percentile", "$median"} {
		registerAccum(name, parsePercentileAccum)
		registerWin(name, parsePercentileWin)
	}
}

// percentileSpec is a parsed {input, p, method}.
type percentileSpec struct {
	input expr.Expr
	ps    []float64 // [0.5] for $median
	// median answers a scalar instead of an array.
	median bool
}

// parsePercentileSpec parses the argument document as mongod's IDL does:
// 40415 for an unknown field, 40414 for a missing one, 14 for a method that
// is not a string, BadValue for a method other than 'approximate' (the only
// one 7.0 accepts), and 7750300-7750303 for a bad p. notObject is the code
// of a non-document argument.
func parsePercentileSpec(pc *parseCtx, scope *expr.Scope, name string, arg bson.RawValue, notObject int, d *expr.Deps) (*percentileSpec, error) {
	doc, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(notObject), "specification must be an object; found %s: %s", name, showValue(arg))
	}
	s := &percentileSpec{median: name == "$median"}
	var input, p, method *bson.RawValue
	for _, el := range mustElems(doc) {
		v := el.Value()
		switch {
		case el.Key() == "input":
			input = &v
		case el.Key() == "p" && !s.median:
			p = &v
		case el.Key() == "method":
			method = &v
		default:
			return nil, mongoerr.Newf(mongoerr.Code(40415), "BSON field '%s.%s' is an unknown field.", name, el.Key())
		}
	}
	required := []struct {
		field string
		v     *bson.RawValue
	}{{"input", input}, {"p", p}, {"method", method}}
	for _, r := range required {
		if r.v == nil && (r.field != "p" || !s.median) {
			return nil, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", name, r.field)
		}
	}
	if method.Type != bson.TypeString {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.method' is the wrong type '%s', expected type 'string'", name, typeName(*method))
	}
	if method.StringValue() != "approximate" {
		return nil, mongoerr.New(mongoerr.BadValue, "Currently only 'approximate' can be used as percentile 'method'.")
	}
	var err error
	if s.median {
		s.ps = []float64{0.5}
	} else if s.ps, err = parsePercentiles(scope, *p); err != nil {
		return nil, err
	}
	if pc != nil {
		s.input, err = pc.parseExpr(*input, d)
	} else {
		s.input, err = expr.Parse(*input, scope)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// parsePercentiles parses p: a constant array of numbers in [0, 1].
func parsePercentiles(scope *expr.Scope, p bson.RawValue) ([]float64, error) {
	e, err := expr.Parse(p, scope)
	if err != nil {
		return nil, err
	}
	v, ok := expr.IsConst(e)
	if !ok && !readsInput(p, 0) {
		// An expression of constants, such as an array literal.
		if v, err = e.Eval(expr.NewCtx(scope)); err != nil {
			return nil, err
		}
		ok = true
	}
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(7750300), "The $percentile 'p' field must be an array of constant values, but found value: %s.", showValue(p))
	}
	const msg = "The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: "
	if v.Type != bson.TypeArray || len(expr.Values(v)) == 0 {
		return nil, mongoerr.New(mongoerr.Code(7750301), msg+showPlain(v))
	}
	var ps []float64
	for _, x := range expr.Values(v) {
		f, ok := bsonkit.Float64(x)
		if !ok {
			return nil, mongoerr.New(mongoerr.Code(7750302), msg+showPlain(x))
		}
		if f < 0 || f > 1 || math.IsNaN(f) {
			return nil, mongoerr.New(mongoerr.Code(7750303), msg+strconv.FormatFloat(f, 'g', -1, 64))
		}
		ps = append(ps, f)
	}
	return ps, nil
}

// readsInput reports whether the expression v may read anything but
// constants: a field path or a variable anywhere in it.
func readsInput(v bson.RawValue, depth int) bool {
	if depth > expr.MaxDepth {
		return true
	}
	switch v.Type {
	case bson.TypeString:
		return strings.HasPrefix(v.StringValue(), "$")
	case bson.TypeArray, bson.TypeEmbeddedDocument:
		for _, x := range expr.Values(v) {
			if readsInput(x, depth+1) {
				return true
			}
		}
		if v.Type == bson.TypeEmbeddedDocument {
			for _, el := range mustElems(v.Document()) {
				if k := el.Key(); k == "$rand" || k == "$function" || k == "$accumulator" {
					return true
				}
			}
		}
	}
	return false
}

// showPlain prints a value as mongod's Value::toString does for the p
// errors: numbers bare, arrays bracketed.
func showPlain(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeArray:
		var parts []string
		for _, x := range expr.Values(v) {
			parts = append(parts, showPlain(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case bson.TypeInt32, bson.TypeInt64:
		return strconv.FormatInt(v.AsInt64(), 10)
	case bson.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case bson.TypeString:
		return `"` + v.StringValue() + `"`
	}
	return showValue(v)
}

// parsePercentileAccum parses the $group accumulator (7429703/7436100 for
// a non-document argument).
func parsePercentileAccum(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error) {
	code := 7429703
	if name == "$median" {
		code = 7436100
	}
	s, err := parsePercentileSpec(pc, pc.scope, name, arg, code, d)
	if err != nil {
		return nil, err
	}
	return func(*expr.Ctx) (accumulator, error) {
		return &simpleAccum{e: s.input, state: &percentileState{spec: s}}, nil
	}, nil
}

// percentileState holds the numeric inputs as doubles (non-numeric ones
// are ignored).
//
// The percentiles are the discrete ones: for p, the value of rank
// ceil(p·n) (the least value for p = 0) in ascending order, as mongod
// answers 'approximate' for inputs its t-digest keeps exact (every value
// its own centroid, which holds for inputs of up to a few hundred values).
//
// Divergence: on larger inputs mongod's t-digest merges values into
// centroids and may answer an interpolated value near the exact one; here
// the answer stays exact.
type percentileState struct {
	spec   *percentileSpec
	vals   []float64
	sorted bool
}

func (s *percentileState) add(v bson.RawValue) error {
	if !bsonkit.IsNumber(v.Type) {
		return nil
	}
	f, _ := bsonkit.Float64(v)
	s.vals = append(s.vals, f)
	s.sorted = false
	return nil
}

func (s *percentileState) result() (bson.RawValue, error) {
	return percentileResult(s.spec, s.sortedVals()), nil
}

// sortedVals sorts the values in place once.
func (s *percentileState) sortedVals() []float64 {
	if !s.sorted {
		slices.SortFunc(s.vals, compareFloat)
		s.sorted = true
	}
	return s.vals
}

// compareFloat orders doubles with NaN first, as BSON comparison does.
func compareFloat(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return -1
	case math.IsNaN(b):
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// percentileResult computes the answer from sorted values: null (or an
// array of nulls) when there are none.
func percentileResult(spec *percentileSpec, sorted []float64) bson.RawValue {
	at := func(p float64) bson.RawValue {
		if len(sorted) == 0 {
			return expr.Null()
		}
		i := int(math.Ceil(p*float64(len(sorted)))) - 1
		i = max(0, min(i, len(sorted)-1))
		return expr.Double(sorted[i])
	}
	if spec.median {
		return at(0.5)
	}
	b := expr.NewArrayBuilder(len(spec.ps))
	for _, p := range spec.ps {
		b.Append(at(p))
	}
	return b.Value()
}

func (s *percentileState) partial() (bson.RawValue, error) {
	b := expr.NewArrayBuilder(len(s.vals))
	for _, f := range s.vals {
		b.Append(expr.Double(f))
	}
	return b.Value(), nil
}

func (s *percentileState) merge(p bson.RawValue) error {
	for _, x := range expr.Values(p) {
		if err := s.add(x); err != nil {
			return err
		}
	}
	return nil
}

func (s *percentileState) memory() int64 { return 64 + 8*int64(cap(s.vals)) }

// parsePercentileWin parses {$percentile: {...}, window: {...}}.
func parsePercentileWin(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	arg, window, err := winArgs(spec, name)
	if err != nil {
		return nil, err
	}
	code := 7429703
	if name == "$median" {
		code = 7436100
	}
	s, err := parsePercentileSpec(nil, env.scope, name, arg, code, nil)
	if err != nil {
		return nil, err
	}
	w, err := env.parseBounds(window)
	if err != nil {
		return nil, err
	}
	return &winAccFunc{input: s.input, win: w, newState: func(bool) winState { return &winPercentileState{spec: s} }}, nil
}

// winPercentileState is the window form: the window's numeric values in
// arrival order, so that the oldest can be removed; each result sorts a
// copy.
type winPercentileState struct {
	spec *percentileSpec
	vals []float64
	head int
	buf  []float64
}

func (s *winPercentileState) add(v bson.RawValue) error {
	if !bsonkit.IsNumber(v.Type) {
		return nil
	}
	f, _ := bsonkit.Float64(v)
	s.vals = append(s.vals, f)
	return nil
}

func (s *winPercentileState) remove(v bson.RawValue) error {
	if !bsonkit.IsNumber(v.Type) || s.head >= len(s.vals) {
		return nil
	}
	s.head++
	if s.head > 64 && s.head*2 > len(s.vals) {
		s.vals = append(s.vals[:0], s.vals[s.head:]...)
		s.head = 0
	}
	return nil
}

func (s *winPercentileState) value() (bson.RawValue, error) {
	s.buf = append(s.buf[:0], s.vals[s.head:]...)
	slices.SortFunc(s.buf, compareFloat)
	return percentileResult(s.spec, s.buf), nil
}

func (s *winPercentileState) reset() { s.vals, s.head = s.vals[:0], 0 }

func (s *winPercentileState) bytes() int64 { return 64 + 8*int64(cap(s.vals)+cap(s.buf)) }

package agg

import (
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerWin("$rank", parseRank)
	registerWin("$denseRank", parseRank)
	registerWin("$documentNumber", parseRank)
	registerWin("$locf", parseLeftUnbounded)
	registerWin("$linearFill", parseLeftUnbounded)
	registerWin("$expMovingAvg", parseExpMovingAvg)
}

// rankFunc is $rank, $denseRank and $documentNumber over the single sortBy
// field.
type rankFunc struct {
	name string
}

// parseRank parses {$rank: {}} as ExpressionFromRankAccumulator::parse
// does (5371601, 5371603, 5371602).
func parseRank(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	if bsonkit.Len(spec) != 1 {
		return nil, mongoerr.New(mongoerr.Code(5371601), "Rank style window functions take no other arguments")
	}
	arg := spec.Index(0).Value()
	if arg.Type != bson.TypeEmbeddedDocument || bsonkit.Len(arg.Value) != 0 {
		return nil, mongoerr.Newf(mongoerr.Code(5371603), "%s must be specified with '{}' as the value", name)
	}
	if env.sortBy == nil || len(env.sortBy.paths) != 1 {
		return nil, mongoerr.Newf(mongoerr.Code(5371602), "%s must be specified with a top level sortBy expression with exactly one element", name)
	}
	return &rankFunc{name: name}, nil
}

// start streams the ranks: each needs only the previous document's
// sortBy value.
func (f *rankFunc) start(p *winPartition) (winCursor, error) {
	if f.name == "$documentNumber" {
		return func(i int) (bson.RawValue, error) { return expr.IntOrLong(int64(i) + 1), nil }, nil
	}
	var prev bson.RawValue
	rank, same := int64(0), int64(1)
	return func(i int) (bson.RawValue, error) {
		v, err := p.eval(p.sort.first, i)
		if err != nil {
			return bson.RawValue{}, err
		}
		switch {
		case i > 0 && sameRankValue(prev, v, p.sort.dirs[0], p.ctx.Collation):
			same++
		case f.name == "$rank":
			rank += same
			same = 1
		default:
			rank++
		}
		prev = cloneValue(v)
		return expr.IntOrLong(rank), nil
	}, nil
}

// sameRankValue reports whether two sortBy values tie: nullish values all
// tie, arrays compare by their sort key (least element ascending, greatest
// descending), anything else by value; strings compare under coll.
func sameRankValue(a, b bson.RawValue, dir int, coll *collation.Collator) bool {
	if expr.IsNullish(a) && expr.IsNullish(b) {
		return true
	}
	if a.Type == bson.TypeArray || b.Type == bson.TypeArray {
		return bsonkit.CompareWith(arraySortKey(a, dir, coll), arraySortKey(b, dir, coll), coll) == 0
	}
	return bsonkit.CompareWith(a, b, coll) == 0
}

// arraySortKey is the value a sort by dir uses for v: an array's least
// (or greatest) element, undefined for an empty array.
func arraySortKey(v bson.RawValue, dir int, coll *collation.Collator) bson.RawValue {
	if v.Type != bson.TypeArray {
		return v
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) == 0 {
		return bson.RawValue{Type: bson.TypeUndefined}
	}
	best := vals[0]
	for _, x := range vals[1:] {
		if c := bsonkit.CompareWith(x, best, coll); c*dir < 0 {
			best = x
		}
	}
	return best
}

// runningFunc is $locf and $linearFill, which read the documents around
// the current one and take no window.
type runningFunc struct {
	name  string
	input expr.Expr
}

// parseLeftUnbounded parses {$locf: <expr>} and {$linearFill: <expr>}
// (a window field is refused; $linearFill needs a one-field sortBy,
// 605001).
func parseLeftUnbounded(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	var input expr.Expr
	found, window := false, false
	elems, _ := spec.Elements()
	for _, el := range elems {
		k := el.Key()
		switch {
		case k == "window":
			window = true
		case isWinFunc(k):
			if found {
				return nil, failedToParse("Cannot specify two functions in window function spec")
			}
			found = true
			var err error
			if input, err = env.parseInput(el.Value()); err != nil {
				return nil, err
			}
		default:
			return nil, failedToParse("Window function found an unknown argument: %s", k)
		}
	}
	if !found {
		return nil, failedToParse("Must specify a window function in output field")
	}
	if window {
		return nil, failedToParse("'window' field is not allowed in %s", name)
	}
	if name == "$linearFill" && (env.sortBy == nil || len(env.sortBy.paths) != 1) {
		return nil, mongoerr.Newf(mongoerr.Code(605001), "%s must be specified with a top level sortBy expression with exactly one element", name)
	}
	return &runningFunc{name: name, input: input}, nil
}

// start streams $locf, which needs only the last non-null value;
// $linearFill looks ahead and computes the partition at once.
func (f *runningFunc) start(p *winPartition) (winCursor, error) {
	if f.name != "$locf" {
		return eagerStart(f, p)
	}
	last := expr.Null()
	return func(i int) (bson.RawValue, error) {
		v, err := p.eval(f.input, i)
		if err != nil {
			return bson.RawValue{}, err
		}
		if !expr.IsNullish(v) {
			last = v
		}
		return last, nil
	}, nil
}

func (f *runningFunc) compute(p *winPartition, out []bson.RawValue) error {
	in, err := p.evalAll(f.input)
	if err != nil {
		return err
	}
	return linearFill(p, in, out)
}

// linearFill interpolates null and missing values between the nearest
// non-null neighbours by the sortBy value, as WindowFunctionExecLinearFill
// does: values must be numeric or nullish and sortBy values numbers or
// dates of one kind (TypeMismatch), never repeated (6050106); a gap
// without a neighbour on both sides stays null.
func linearFill(p *winPartition, in, out []bson.RawValue) error {
	xs, err := p.sortValues()
	if err != nil {
		return err
	}
	for i, v := range in {
		if !bsonkit.IsNumber(v.Type) && !expr.IsNullish(v) {
			return mongoerr.Newf(mongoerr.TypeMismatch, "Value to be filled must be numeric or nullish, but found %s", typeNameOf(v))
		}
		x := xs[i]
		if !bsonkit.IsNumber(x.Type) && x.Type != bson.TypeDateTime {
			return mongoerr.Newf(mongoerr.TypeMismatch, "Value of the sortBy field must be numeric or a date, but found %s", typeNameOf(x))
		}
		if i > 0 {
			if bsonkit.Compare(x, xs[i-1]) == 0 {
				return mongoerr.New(mongoerr.Code(6050106), "There can be no repeated values in the sort field")
			}
			if (x.Type == bson.TypeDateTime) != (xs[i-1].Type == bson.TypeDateTime) {
				return mongoerr.Newf(mongoerr.TypeMismatch, "Conflicting sort value types, previously received type %s, but found %s", typeNameOf(xs[i-1]), typeNameOf(x))
			}
		}
	}
	prev := -1
	next := -1
	for i, v := range in {
		if !expr.IsNullish(v) {
			out[i] = v
			prev = i
			continue
		}
		if next <= i {
			next = -1
			for j := i + 1; j < len(in); j++ {
				if !expr.IsNullish(in[j]) {
					next = j
					break
				}
			}
		}
		if prev < 0 || next < 0 {
			out[i] = expr.Null()
			continue
		}
		x1, _ := axisFloat(xs[prev])
		x2, _ := axisFloat(xs[next])
		x, _ := axisFloat(xs[i])
		y1, _ := numFloat(in[prev])
		y2, _ := numFloat(in[next])
		r := y1 + (x-x1)*((y2-y1)/(x2-x1))
		if in[prev].Type == bson.TypeDecimal128 || in[next].Type == bson.TypeDecimal128 {
			out[i] = decimalOf(r)
		} else {
			out[i] = expr.Double(r)
		}
	}
	return nil
}

// axisFloat returns a number or a date (as milliseconds) as a double.
func axisFloat(v bson.RawValue) (float64, bool) {
	if v.Type == bson.TypeDateTime {
		return float64(v.DateTime()), true
	}
	return numFloat(v)
}

// emaFunc is $expMovingAvg over the documents up to the current one:
// result = input·alpha + previous·(1 − alpha), non-numeric inputs ignored.
// mongod computes in decimal128; this computes with 200-bit floats, which
// round to the same double.
type emaFunc struct {
	input expr.Expr
	alpha *big.Float
}

// emaPrec is the precision of $expMovingAvg's arithmetic, in bits.
const emaPrec = 200

// parseExpMovingAvg parses {$expMovingAvg: {input: <expr>, N: <int>}} or
// with alpha, as ExpressionExpMovingAvg::parse does.
func parseExpMovingAvg(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	arg, err := spec.LookupErr(name)
	if bsonkit.Len(spec) != 1 || err != nil || arg.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("$expMovingAvg must have exactly one argument that is an object")
	}
	sub := arg.Document()
	input, inErr := sub.LookupErr("input")
	const shape = "$expMovingAvg sub object must have exactly two fields: An 'input' field, and either an 'N' field or an 'alpha' field"
	if bsonkit.Len(sub) != 2 || inErr != nil {
		return nil, failedToParse(shape)
	}
	if env.sortBy == nil {
		return nil, failedToParse("$expMovingAvg requires an explicit 'sortBy'")
	}
	in, err := env.parseInput(input)
	if err != nil {
		return nil, err
	}
	f := &emaFunc{input: in}
	if nv, err := sub.LookupErr("N"); err == nil {
		if !bsonkit.IsNumber(nv.Type) {
			return nil, failedToParse("'N' field must be an integer, but found type %s", bsonkit.TypeName(nv.Type))
		}
		fl, _ := bsonkit.Float64(nv)
		if fl != float64(int64(fl)) {
			return nil, failedToParse("'N' field must be an integer, but found  N: %s. To use a non-integer, use the 'alpha' argument instead", showElem(nv))
		}
		n, _ := bsonkit.TruncInt64(nv)
		if n <= 0 {
			return nil, failedToParse("'N' must be greater than zero. Got %d", n)
		}
		f.alpha = new(big.Float).SetPrec(emaPrec).Quo(big.NewFloat(2).SetPrec(emaPrec), new(big.Float).SetPrec(emaPrec).SetInt64(n+1))
		return f, nil
	}
	if av, err := sub.LookupErr("alpha"); err == nil {
		if !bsonkit.IsNumber(av.Type) {
			return nil, failedToParse("'alpha' must be a number")
		}
		a, _ := bsonkit.Float64(av)
		if !(a > 0 && a < 1) {
			return nil, failedToParse("'alpha' must be between 0 and 1 (exclusive), found alpha: %s", showElem(av))
		}
		f.alpha = exactFloat(av)
		return f, nil
	}
	return nil, failedToParse("Got unrecognized field in $expMovingAvg" + shape)
}

// exactFloat converts a number to a 200-bit float (decimals through their
// digits).
func exactFloat(v bson.RawValue) *big.Float {
	z := new(big.Float).SetPrec(emaPrec)
	switch v.Type {
	case bson.TypeInt32:
		return z.SetInt64(int64(v.Int32()))
	case bson.TypeInt64:
		return z.SetInt64(v.Int64())
	case bson.TypeDecimal128:
		if _, ok := z.SetString(v.Decimal128().String()); ok {
			return z
		}
	}
	f, _ := bsonkit.Float64(v)
	return z.SetFloat64(f)
}

func (f *emaFunc) start(p *winPartition) (winCursor, error) { return eagerStart(f, p) }

func (f *emaFunc) compute(p *winPartition, out []bson.RawValue) error {
	var cur *big.Float
	dec := false
	one := big.NewFloat(1).SetPrec(emaPrec)
	rest := new(big.Float).SetPrec(emaPrec).Sub(one, f.alpha)
	for i := range out {
		v, err := p.eval(f.input, i)
		if err != nil {
			return err
		}
		if bsonkit.IsNumber(v.Type) {
			x := exactFloat(v)
			if v.Type == bson.TypeDecimal128 {
				dec = true
			}
			if cur == nil {
				cur = x
			} else {
				a := new(big.Float).SetPrec(emaPrec).Mul(x, f.alpha)
				b := new(big.Float).SetPrec(emaPrec).Mul(cur, rest)
				cur = a.Add(a, b)
			}
		}
		switch {
		case cur == nil:
			out[i] = expr.Null()
		case dec:
			fl, _ := cur.Float64()
			out[i] = decimalOf(fl)
		default:
			fl, _ := cur.Float64()
			out[i] = expr.Double(fl)
		}
	}
	return nil
}

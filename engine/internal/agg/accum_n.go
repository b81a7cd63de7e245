package agg

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	for _, n := range []string{"$firstN", "$lastN", "$minN", "$maxN"} {
		registerAccum(n, parseNAccum)
	}
}

// maxNBytes is the memory one N accumulator may hold
// (internalQueryTopNAccumulatorBytes, 100 MB); past it 146
// ExceededMemoryLimit.
const maxNBytes = 100 * 1024 * 1024

// evalN evaluates and validates 'n' as mongod's AccumulatorN::validateN:
// 5787902 non-numeric, 5787903 non-integral, 5787908 not positive.
func evalN(c *expr.Ctx, e expr.Expr) (int64, error) {
	v, err := e.Eval(c)
	if err != nil {
		return 0, err
	}
	if !isNumeric(v) {
		return 0, mongoerr.Newf(mongoerr.Code(5787902), "Value for 'n' must be of integral type, but found %s", showValue(v))
	}
	f, _ := decimalToFloat(v)
	n, ok := bsonkit.TruncInt64(v)
	if !ok || float64(n) != f {
		return 0, mongoerr.Newf(mongoerr.Code(5787903), "Value for 'n' must be of integral type, but found %s", showValue(v))
	}
	if n <= 0 {
		return 0, mongoerr.Newf(mongoerr.Code(5787908), "'n' must be greater than 0, found %d", n)
	}
	return n, nil
}

// parseNAccum parses {$firstN|$lastN|$minN|$maxN: {input, n}}: 5787801
// (first/last) or 5787900 (min/max) for a non-document, 5787901 an
// unknown field, 5787906 no n, 5787907 no input.
func parseNAccum(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error) {
	doc, ok := arg.DocumentOK()
	if !ok {
		code := 5787801
		if name == "$minN" || name == "$maxN" {
			code = 5787900
		}
		return nil, mongoerr.Newf(mongoerr.Code(code), "specification must be an object; found %s", showValue(arg))
	}
	var nE, inE expr.Expr
	for _, el := range mustElems(doc) {
		var err error
		switch el.Key() {
		case "n":
			nE, err = pc.parseExpr(el.Value(), nil)
		case "input":
			inE, err = pc.parseExpr(el.Value(), d)
		default:
			return nil, mongoerr.Newf(mongoerr.Code(5787901), "Unknown argument for 'n' operator: %s", el.Key())
		}
		if err != nil {
			return nil, err
		}
	}
	if nE == nil {
		return nil, mongoerr.New(mongoerr.Code(5787906), "Missing value for 'n'")
	}
	if inE == nil {
		return nil, mongoerr.New(mongoerr.Code(5787907), "Missing value for 'input'")
	}
	return func(c *expr.Ctx) (accumulator, error) {
		n, err := evalN(c, nE)
		if err != nil {
			return nil, err
		}
		st := &groupN{name: name, n: n}
		if c != nil {
			st.coll = c.Collation
		}
		return &simpleAccum{e: inE, state: st}, nil
	}, nil
}

// groupN is $firstN, $lastN, $minN and $maxN.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/firstN/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/minN/
type groupN struct {
	coll  *collation.Collator // $minN, $maxN compare strings under it
	name  string
	n     int64
	vals  []bson.RawValue
	bytes int64
}

func (a *groupN) add(v bson.RawValue) error {
	switch a.name {
	case "$firstN":
		if int64(len(a.vals)) >= a.n {
			return nil
		}
		if v.Type == 0 {
			v = expr.Null()
		}
		a.vals = append(a.vals, v)
	case "$lastN":
		if v.Type == 0 {
			v = expr.Null()
		}
		a.vals = append(a.vals, v)
		if int64(len(a.vals)) > a.n {
			a.bytes -= valueSize(a.vals[0])
			a.vals = a.vals[1:]
		}
	default:
		if expr.IsNullish(v) {
			return nil
		}
		sign := 1
		if a.name == "$maxN" {
			sign = -1
		}
		i := sort.Search(len(a.vals), func(i int) bool { return bsonkit.CompareWith(a.vals[i], v, a.coll)*sign > 0 })
		if int64(i) >= a.n {
			return nil
		}
		a.vals = append(a.vals, bson.RawValue{})
		copy(a.vals[i+1:], a.vals[i:])
		a.vals[i] = v
		if int64(len(a.vals)) > a.n {
			a.bytes -= valueSize(a.vals[len(a.vals)-1])
			a.vals = a.vals[:len(a.vals)-1]
		}
	}
	a.bytes += valueSize(v)
	if a.bytes > maxNBytes {
		return mongoerr.Newf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", a.name, maxNBytes)
	}
	return nil
}

func (a *groupN) result() (bson.RawValue, error)  { return expr.Array(a.vals), nil }
func (a *groupN) partial() (bson.RawValue, error) { return expr.Array(a.vals), nil }

func (a *groupN) merge(p bson.RawValue) error {
	for _, v := range expr.Values(p) {
		if err := a.add(v); err != nil {
			return err
		}
	}
	return nil
}

func (a *groupN) memory() int64 { return a.bytes }

package expr

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
)

// Array operators that reorder or reshape arrays: $sortArray, $zip and
// the n-element operators $firstN, $lastN, $maxN and $minN.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#array-expression-operators
func init() {
	register("$sortArray", parseSortArray)
	register("$zip", parseZip)
	register("$firstN", parseNOp(5787801, pickFirst))
	register("$lastN", parseNOp(5787801, pickLast))
	register("$maxN", parseNOp(5787900, pickMax))
	register("$minN", parseNOp(5787900, pickMin))
}

// sortKey is one field of a $sortArray pattern.
type sortKey struct {
	path []string
	dir  int
}

// sortArrayExpr sorts its input by whole values (sortBy: 1 or -1) or by
// fields of document elements (sortBy: {a: 1, …}).
type sortArrayExpr struct {
	input Expr
	keys  []sortKey // one key with a nil path: whole values
}

// compare orders two elements by the sort pattern, strings under coll.
func (e *sortArrayExpr) compare(a, b bson.RawValue, coll *collation.Collator) int {
	if e.keys[0].path == nil {
		return e.keys[0].dir * bsonkit.CompareWith(a, b, coll)
	}
	for _, k := range e.keys {
		if c := bsonkit.CompareWith(sortKeyOf(a, k.path), sortKeyOf(b, k.path), coll); c != 0 {
			return k.dir * c
		}
	}
	return 0
}

// sortKeyOf extracts the value at a dotted path as mongod's
// extractElementsBasedOnTemplate does for $sortArray: through documents
// (and array positions), null when the path is missing or v is not a
// document.
func sortKeyOf(v bson.RawValue, path []string) bson.RawValue {
	for _, part := range path {
		var ok bool
		switch v.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			if v.Type == bson.TypeArray && !bsonkit.AllDigits(part) {
				return Null()
			}
			v, ok = bsonkit.Field(v.Value, part)
		}
		if !ok {
			return Null()
		}
	}
	return v
}

func (e *sortArrayExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(2942504, "The input argument to $sortArray must be an array, but was of type: %s", typeName(in))
	}
	vals := Values(in)
	if len(vals) < 2 {
		return in, nil
	}
	slices.SortStableFunc(vals, func(a, b bson.RawValue) int { return e.compare(a, b, c.Collation) })
	return Array(vals), nil
}

// sortDir reads a sort direction: the number 1 or -1.
func sortDir(v bson.RawValue) (int, bool) {
	if !isNum(v) {
		return 0, false
	}
	switch numFloat(v) {
	case 1:
		return 1, true
	case -1:
		return -1, true
	}
	return 0, false
}

// parseSortArray parses {input, sortBy}.
func parseSortArray(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 2942500, "$sortArray requires an object as an argument, found: "+typeName(arg))
	if err != nil {
		return nil, err
	}
	e := &sortArrayExpr{}
	for _, el := range elems {
		switch el.Key() {
		case "input":
			if e.input, err = p.Parse(el.Value()); err != nil {
				return nil, err
			}
		case "sortBy":
			if e.keys, err = parseSortBy(el.Value()); err != nil {
				return nil, err
			}
		default:
			return nil, exprErr(2942501, "$sortArray found an unknown argument: %s", el.Key())
		}
	}
	if e.input == nil {
		return nil, exprErr(2942502, "$sortArray requires 'input' to be specified")
	}
	if e.keys == nil {
		return nil, exprErr(2942503, "$sortArray requires 'sortBy' to be specified")
	}
	return e, nil
}

// parseSortBy reads 1, -1 or a {path: 1|-1, …} pattern.
func parseSortBy(v bson.RawValue) ([]sortKey, error) {
	switch {
	case v.Type == bson.TypeEmbeddedDocument:
		var keys []sortKey
		var bad error
		bsonkit.ForEach(v.Value, func(k string, dv bson.RawValue) bool {
			d, ok := sortDir(dv)
			if !ok {
				bad = exprErr(2942505, "BadValue: $sort key ordering must be 1 (for ascending) or -1 (for descending)")
				return false
			}
			if k == "" || strings.HasPrefix(k, "$") {
				bad = exprErr(2942505, "BadValue: $sort key must not be empty or start with '$'")
				return false
			}
			keys = append(keys, sortKey{path: strings.Split(k, "."), dir: d})
			return true
		})
		if bad != nil {
			return nil, bad
		}
		if len(keys) == 0 {
			return nil, exprErr(2942505, "BadValue: The $sort pattern is empty when it should be a set of fields.")
		}
		return keys, nil
	case isNum(v):
		d, ok := sortDir(v)
		if !ok {
			return nil, exprErr(2942506, "The $sort element value must be either 1 or -1")
		}
		return []sortKey{{dir: d}}, nil
	}
	return nil, exprErr(2942507, "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
}

// zipExpr transposes its input arrays.
type zipExpr struct {
	inputs, defaults []Expr
	longest          bool
}

func (e *zipExpr) Eval(c *Ctx) (bson.RawValue, error) {
	cols := make([][]bson.RawValue, len(e.inputs))
	minLen, maxLen := 0, 0
	for i, in := range e.inputs {
		v, err := in.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if v.Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(34468, "$zip found a non-array expression in input: %s", valueString(v))
		}
		cols[i] = Values(v)
		if i == 0 {
			minLen, maxLen = len(cols[i]), len(cols[i])
		} else {
			minLen, maxLen = min(minLen, len(cols[i])), max(maxLen, len(cols[i]))
		}
	}
	defs := make([]bson.RawValue, len(e.inputs))
	for i := range defs {
		defs[i] = Null()
	}
	if minLen != maxLen {
		for i, d := range e.defaults {
			v, err := d.Eval(c)
			if err != nil {
				return bson.RawValue{}, err
			}
			defs[i] = v
		}
	}
	n := minLen
	if e.longest {
		n = maxLen
	}
	out := NewArrayBuilder(n)
	row := make([]bson.RawValue, len(cols))
	for r := 0; r < n; r++ {
		for i, col := range cols {
			if r < len(col) {
				row[i] = col[r]
			} else {
				row[i] = defs[i]
			}
		}
		out.Append(Array(row))
		if out.Size() > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return out.Value(), nil
}

// parseZip parses {inputs, useLongestLength, defaults}.
func parseZip(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 34460, "$zip only supports an object as an argument, found "+typeName(arg))
	if err != nil {
		return nil, err
	}
	e := &zipExpr{}
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "inputs":
			if v.Type != bson.TypeArray {
				return nil, exprErr(34461, "inputs must be an array of expressions, found %s", typeName(v))
			}
			for _, x := range Values(v) {
				ex, err := p.Parse(x)
				if err != nil {
					return nil, err
				}
				e.inputs = append(e.inputs, ex)
			}
		case "defaults":
			if v.Type != bson.TypeArray {
				return nil, exprErr(34462, "defaults must be an array of expressions, found %s", typeName(v))
			}
			for _, x := range Values(v) {
				ex, err := p.Parse(x)
				if err != nil {
					return nil, err
				}
				e.defaults = append(e.defaults, ex)
			}
		case "useLongestLength":
			if v.Type != bson.TypeBoolean {
				return nil, exprErr(34463, "useLongestLength must be a bool, found %s", typeName(arg))
			}
			e.longest = v.Boolean()
		default:
			return nil, exprErr(34464, "$zip found an unknown argument: %s", el.Key())
		}
	}
	switch {
	case len(e.inputs) == 0:
		return nil, exprErr(34465, "$zip requires at least one input array")
	case !e.longest && len(e.defaults) > 0:
		return nil, exprErr(34466, "cannot specify defaults unless useLongestLength is true")
	case len(e.defaults) > 0 && len(e.defaults) != len(e.inputs):
		return nil, exprErr(34467, "defaults and inputs must have the same length")
	}
	return e, nil
}

// nExpr is $firstN, $lastN, $maxN or $minN over an array.
type nExpr struct {
	n, input Expr
	pick     func(vals []bson.RawValue, n int64, coll *collation.Collator) []bson.RawValue
}

func (e *nExpr) Eval(c *Ctx) (bson.RawValue, error) {
	nv, err := e.n.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if !isNum(nv) {
		return bson.RawValue{}, exprErr(5787902, "Value for 'n' must be of integral type, but found %s", valueString(nv))
	}
	n := numLong(nv)
	if float64(n) != numFloat(nv) {
		return bson.RawValue{}, exprErr(5787903, "Value for 'n' must be of integral type, but found %s", valueString(nv))
	}
	if n <= 0 {
		return bson.RawValue{}, exprErr(5787908, "'n' must be greater than 0, found %d", n)
	}
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(5788200, "Input must be an array")
	}
	return Array(e.pick(Values(in), n, c.Collation)), nil
}

// parseNOp parses {n: <expr>, input: <expr>}; code is the error for a
// non-object argument.
func parseNOp(code int32, pick func([]bson.RawValue, int64, *collation.Collator) []bson.RawValue) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		elems, err := objectArgs(arg, code, "specification must be an object; found "+arg.String())
		if err != nil {
			return nil, err
		}
		e := &nExpr{pick: pick}
		for _, el := range elems {
			switch el.Key() {
			case "n":
				e.n, err = p.Parse(el.Value())
			case "input":
				e.input, err = p.Parse(el.Value())
			default:
				return nil, exprErr(5787901, "Unknown argument for 'n' operator: %s", el.Key())
			}
			if err != nil {
				return nil, err
			}
		}
		if e.n == nil {
			return nil, exprErr(5787906, "Missing value for 'n'")
		}
		if e.input == nil {
			return nil, exprErr(5787907, "Missing value for 'input'")
		}
		return e, nil
	}
}

// pickFirst returns the first n elements.
func pickFirst(vals []bson.RawValue, n int64, _ *collation.Collator) []bson.RawValue {
	return vals[:min(int64(len(vals)), n)]
}

// pickLast returns the last n elements.
func pickLast(vals []bson.RawValue, n int64, _ *collation.Collator) []bson.RawValue {
	return vals[max(0, int64(len(vals))-n):]
}

// pickMin returns the n smallest non-null elements in ascending order,
// strings compared under coll.
func pickMin(vals []bson.RawValue, n int64, coll *collation.Collator) []bson.RawValue {
	s := slices.DeleteFunc(slices.Clone(vals), IsNullish)
	slices.SortStableFunc(s, collCompare(coll))
	return s[:min(int64(len(s)), n)]
}

// pickMax returns the n largest non-null elements in descending order;
// among equal elements the later one comes first, as in mongod's multiset.
func pickMax(vals []bson.RawValue, n int64, coll *collation.Collator) []bson.RawValue {
	s := slices.DeleteFunc(slices.Clone(vals), IsNullish)
	cmp := collCompare(coll)
	slices.SortStableFunc(s, func(a, b bson.RawValue) int { return cmp(b, a) })
	s = s[:min(int64(len(s)), n)]
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && cmp(s[i], s[j]) == 0 {
			j++
		}
		slices.Reverse(s[i:j])
		i = j
	}
	return s
}

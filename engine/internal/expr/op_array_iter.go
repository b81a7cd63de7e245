package expr

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Array operators that run a sub-expression per element ($filter, $map,
// $reduce), sort ($sortArray), transpose ($zip) or pick n elements
// ($firstN, $lastN, $maxN, $minN).
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#array-expression-operators
func init() {
	register("$filter", parseFilter)
	register("$map", parseMap)
	register("$reduce", parseReduce)
	register("$sortArray", parseSortArray)
	register("$zip", parseZip)
	register("$firstN", parseNOp(5787801, pickFirst))
	register("$lastN", parseNOp(5787801, pickLast))
	register("$maxN", parseNOp(5787900, pickMax))
	register("$minN", parseNOp(5787900, pickMin))
}

// defineVar checks the name a $filter or $map binds (the 'as' field, "this"
// when absent; a non-string is an empty name) and defines it in sc.
func defineVar(sc *Scope, as bson.RawValue) (int, error) {
	name := "this"
	if as.Type != 0 {
		name, _ = as.StringValueOK()
	}
	if err := validateUserVar(name); err != nil {
		return 0, err
	}
	return sc.Define(name), nil
}

// restoreCurrent returns a function that puts $$CURRENT back when slot,
// which an operator is about to bind, is CURRENT's ("as": "CURRENT").
func restoreCurrent(c *Ctx, slot int) func() {
	if slot != SlotCurrent {
		return func() {}
	}
	saved := c.Get(SlotCurrent)
	return func() { c.Set(SlotCurrent, saved) }
}

// filterExpr keeps the elements for which cond is truthy, up to limit.
type filterExpr struct {
	input, cond, limit Expr // limit may be nil
	slot               int
}

func (e *filterExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(28651, "input to $filter must be an array not %s", typeName(in))
	}
	vals := Values(in)
	if len(vals) == 0 {
		return in, nil
	}
	limit := -1
	if e.limit != nil {
		lv, err := e.limit.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if !IsNullish(lv) {
			n, ok := numInt32(lv)
			if !ok {
				return bson.RawValue{}, exprErr(327391, "$filter: limit must be represented as a 32-bit integral value: %s", lv.String())
			}
			if n <= 0 {
				return bson.RawValue{}, exprErr(327392, "$filter: limit must be greater than 0: %s", lv.String())
			}
			limit = int(n)
		}
	}
	defer restoreCurrent(c, e.slot)()
	b := NewArrayBuilder(len(vals))
	for _, x := range vals {
		c.Set(e.slot, x)
		ok, err := e.cond.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if Truthy(ok) {
			b.Append(x)
			if b.Len() == limit {
				break
			}
		}
	}
	return b.Value(), nil
}

func parseFilter(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 28646, "$filter only supports an object as its argument")
	if err != nil {
		return nil, err
	}
	var input, as, cond, limit bson.RawValue
	for _, el := range elems {
		switch el.Key() {
		case "input":
			input = el.Value()
		case "as":
			as = el.Value()
		case "cond":
			cond = el.Value()
		case "limit":
			limit = el.Value()
		default:
			return nil, exprErr(28647, "Unrecognized parameter to $filter: %s", el.Key())
		}
	}
	if input.Type == 0 {
		return nil, exprErr(28648, "Missing 'input' parameter to $filter")
	}
	if cond.Type == 0 {
		return nil, exprErr(28650, "Missing 'cond' parameter to $filter")
	}
	e := &filterExpr{}
	if e.input, err = p.Parse(input); err != nil {
		return nil, err
	}
	sc := p.sc.Child()
	if e.slot, err = defineVar(sc, as); err != nil {
		return nil, err
	}
	if err := p.withScope(sc, func() (err error) { e.cond, err = p.Parse(cond); return }); err != nil {
		return nil, err
	}
	if limit.Type != 0 {
		if e.limit, err = p.Parse(limit); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// mapExpr applies in to each element; a missing result becomes null.
type mapExpr struct {
	input, in Expr
	slot      int
}

func (e *mapExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(16883, "input to $map must be an array not %s", typeName(in))
	}
	vals := Values(in)
	if len(vals) == 0 {
		return in, nil
	}
	defer restoreCurrent(c, e.slot)()
	b := NewArrayBuilder(len(vals))
	for _, x := range vals {
		c.Set(e.slot, x)
		v, err := e.in.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if v.Type == 0 {
			v = Null()
		}
		b.Append(v)
		if b.Size() > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return b.Value(), nil
}

func parseMap(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 16878, "$map only supports an object as its argument")
	if err != nil {
		return nil, err
	}
	var input, as, in bson.RawValue
	for _, el := range elems {
		switch el.Key() {
		case "input":
			input = el.Value()
		case "as":
			as = el.Value()
		case "in":
			in = el.Value()
		default:
			return nil, exprErr(16879, "Unrecognized parameter to $map: %s", el.Key())
		}
	}
	if input.Type == 0 {
		return nil, exprErr(16880, "Missing 'input' parameter to $map")
	}
	if in.Type == 0 {
		return nil, exprErr(16882, "Missing 'in' parameter to $map")
	}
	e := &mapExpr{}
	if e.input, err = p.Parse(input); err != nil {
		return nil, err
	}
	sc := p.sc.Child()
	if e.slot, err = defineVar(sc, as); err != nil {
		return nil, err
	}
	if err := p.withScope(sc, func() (err error) { e.in, err = p.Parse(in); return }); err != nil {
		return nil, err
	}
	return e, nil
}

// reduceExpr folds in over the input with $$value and $$this.
type reduceExpr struct {
	input, initial, in  Expr
	thisSlot, valueSlot int
}

func (e *reduceExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(40080, "$reduce requires that 'input' be an array, found: %s", in.String())
	}
	acc, err := e.initial.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	for _, x := range Values(in) {
		c.Set(e.thisSlot, x)
		c.Set(e.valueSlot, acc)
		if acc, err = e.in.Eval(c); err != nil {
			return bson.RawValue{}, err
		}
		if len(acc.Value) > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return acc, nil
}

func parseReduce(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 40075, "$reduce requires an object as an argument, found: "+typeName(arg))
	if err != nil {
		return nil, err
	}
	e := &reduceExpr{}
	sc := p.sc.Child()
	e.thisSlot = sc.Define("this")
	e.valueSlot = sc.Define("value")
	for _, el := range elems {
		switch el.Key() {
		case "input":
			e.input, err = p.Parse(el.Value())
		case "initialValue":
			e.initial, err = p.Parse(el.Value())
		case "in":
			err = p.withScope(sc, func() (err error) { e.in, err = p.Parse(el.Value()); return })
		default:
			return nil, exprErr(40076, "$reduce found an unknown argument: %s", el.Key())
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case e.input == nil:
		return nil, exprErr(40077, "$reduce requires 'input' to be specified")
	case e.initial == nil:
		return nil, exprErr(40078, "$reduce requires 'initialValue' to be specified")
	case e.in == nil:
		return nil, exprErr(40079, "$reduce requires 'in' to be specified")
	}
	return e, nil
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

func (e *sortArrayExpr) compare(a, b bson.RawValue) int {
	whole := e.keys[0].path == nil
	if whole || a.Type != bson.TypeEmbeddedDocument || b.Type != bson.TypeEmbeddedDocument {
		return e.keys[0].dir * compareValues(a, b)
	}
	for _, k := range e.keys {
		av, _ := bsonkit.Lookup(a, k.path)
		bv, _ := bsonkit.Lookup(b, k.path)
		if c := compareValues(av, bv); c != 0 {
			return k.dir * c
		}
	}
	return 0
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
	slices.SortStableFunc(vals, e.compare)
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
			return bson.RawValue{}, exprErr(34468, "$zip found a non-array expression in input: %s", v.String())
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
	pick     func(vals []bson.RawValue, n int64) []bson.RawValue
}

func (e *nExpr) Eval(c *Ctx) (bson.RawValue, error) {
	nv, err := e.n.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if !isNum(nv) {
		return bson.RawValue{}, exprErr(5787902, "Value for 'n' must be of integral type, but found %s", nv.String())
	}
	n := numLong(nv)
	if float64(n) != numFloat(nv) {
		return bson.RawValue{}, exprErr(5787903, "Value for 'n' must be of integral type, but found %s", nv.String())
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
	return Array(e.pick(Values(in), n)), nil
}

// parseNOp parses {n: <expr>, input: <expr>}; code is the error for a
// non-object argument.
func parseNOp(code int32, pick func([]bson.RawValue, int64) []bson.RawValue) parseFunc {
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

func pickFirst(vals []bson.RawValue, n int64) []bson.RawValue {
	return vals[:min(int64(len(vals)), n)]
}

func pickLast(vals []bson.RawValue, n int64) []bson.RawValue {
	return vals[max(0, int64(len(vals))-n):]
}

// pickMin returns the n smallest non-null elements in ascending order.
func pickMin(vals []bson.RawValue, n int64) []bson.RawValue {
	s := slices.DeleteFunc(slices.Clone(vals), IsNullish)
	slices.SortStableFunc(s, compareValues)
	return s[:min(int64(len(s)), n)]
}

// pickMax returns the n largest non-null elements in descending order;
// among equal elements the later one comes first, as in mongod's multiset.
func pickMax(vals []bson.RawValue, n int64) []bson.RawValue {
	s := slices.DeleteFunc(slices.Clone(vals), IsNullish)
	slices.SortStableFunc(s, func(a, b bson.RawValue) int { return compareValues(b, a) })
	s = s[:min(int64(len(s)), n)]
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && compareValues(s[i], s[j]) == 0 {
			j++
		}
		slices.Reverse(s[i:j])
		i = j
	}
	return s
}

package expr

import (
	"slices"
	"sort"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Set operators treat arrays as sets: duplicates count once and elements
// compare in BSON order (1 and 1.0 are the same element). $setUnion and
// $setIntersection return their elements sorted, as mongod's ordered sets
// do; $setDifference keeps the first array's order.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#set-expression-operators
func init() {
	register("$setEquals", parseSetEquals)
	register("$setIntersection", opNary(setIntersection))
	register("$setUnion", opNary(setUnion))
	register("$setDifference", opFixed(2, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		vals, err := EvalAll(c, args)
		if err != nil {
			return bson.RawValue{}, err
		}
		return setDifference(vals, c.Collation)
	}))
	register("$setIsSubset", parseSetIsSubset)
	register("$anyElementTrue", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return anyAll(v[0], "$anyElementTrue", 17041, true) }))
	register("$allElementsTrue", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return anyAll(v[0], "$allElementsTrue", 17040, false) }))
}

// foldConst returns the value of an expression that is constant at parse
// time: a literal, or an array or object literal of constants. mongod's
// optimizer folds these before some operators check their arguments.
func foldConst(e Expr) (bson.RawValue, bool) {
	switch x := e.(type) {
	case *constExpr:
		return x.v, true
	case *arrayExpr, *objectExpr:
		var kids []Expr
		if a, ok := x.(*arrayExpr); ok {
			kids = a.elems
		} else {
			kids = x.(*objectExpr).vals
		}
		for _, k := range kids {
			if _, ok := foldConst(k); !ok {
				return bson.RawValue{}, false
			}
		}
		v, err := e.Eval(&Ctx{})
		return v, err == nil
	}
	return bson.RawValue{}, false
}

// uniqueSorted returns the distinct elements of vals in BSON order, each
// represented by its first occurrence.
// Strings compare under coll (nil: simple), as mongod's set operators use
// the expression context's collator.
func uniqueSorted(vals []bson.RawValue, coll *collation.Collator) []bson.RawValue {
	s := slices.Clone(vals)
	cmp := collCompare(coll)
	slices.SortStableFunc(s, cmp)
	return slices.CompactFunc(s, func(a, b bson.RawValue) bool { return cmp(a, b) == 0 })
}

// collCompare returns the BSON comparison under coll (nil: simple).
func collCompare(coll *collation.Collator) func(a, b bson.RawValue) int {
	return func(a, b bson.RawValue) int { return bsonkit.CompareWith(a, b, coll) }
}

// setContains reports whether the set, sorted under coll, holds v.
func setContains(set []bson.RawValue, v bson.RawValue, coll *collation.Collator) bool {
	_, ok := slices.BinarySearchFunc(set, v, collCompare(coll))
	return ok
}

// parseSetEquals parses two or more operands; constant non-arrays fail
// while parsing (5887502), as mongod's optimizer checks them.
func parseSetEquals(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	ops, err := p.Operands(arg)
	if err != nil {
		return nil, err
	}
	if len(ops) < 2 {
		return nil, exprErr(17045, "$setEquals needs at least two arguments had: %d", len(ops))
	}
	for i, o := range ops {
		if v, ok := foldConst(o); ok && v.Type != bson.TypeArray {
			return nil, exprErr(5887502, "All operands of $setEquals must be arrays. %d-th argument is of type: %s", i+1, typeName(v))
		}
	}
	return &fnExpr{args: ops, fn: func(c *Ctx, args []Expr) (bson.RawValue, error) {
		var first []bson.RawValue
		for i, a := range args {
			v, err := a.Eval(c)
			if err != nil {
				return bson.RawValue{}, err
			}
			if v.Type != bson.TypeArray {
				return bson.RawValue{}, exprErr(17044, "All operands of $setEquals must be arrays. %d-th argument is of type: %s", i+1, typeName(v))
			}
			set := uniqueSorted(Values(v), c.Collation)
			if i == 0 {
				first = set
				continue
			}
			if len(set) != len(first) || !slices.EqualFunc(set, first, func(a, b bson.RawValue) bool { return bsonkit.CompareWith(a, b, c.Collation) == 0 }) {
				return Bool(false), nil
			}
		}
		return Bool(true), nil
	}}, nil
}

// setIntersection returns null at the first null or missing operand.
func setIntersection(c *Ctx, args []Expr) (bson.RawValue, error) {
	var cur []bson.RawValue
	for i, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if v.Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(17047, "All operands of $setIntersection must be arrays. One argument is of type: %s", typeName(v))
		}
		if i == 0 {
			cur = uniqueSorted(Values(v), c.Collation)
			continue
		}
		if len(cur) == 0 {
			continue
		}
		next := uniqueSorted(Values(v), c.Collation)
		if len(cur) > len(next) {
			cur, next = next, cur
		}
		cur = slices.DeleteFunc(cur, func(x bson.RawValue) bool { return !setContains(next, x, c.Collation) })
	}
	return Array(cur), nil
}

// setUnion returns null at the first null or missing operand.
func setUnion(c *Ctx, args []Expr) (bson.RawValue, error) {
	var all []bson.RawValue
	size := 0
	for _, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if v.Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(17043, "All operands of $setUnion must be arrays. One argument is of type: %s", typeName(v))
		}
		if size += len(v.Value); size > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
		all = append(all, Values(v)...)
	}
	return Array(uniqueSorted(all, c.Collation)), nil
}

// setDifference returns the distinct elements of the first array that the
// second lacks, in the first array's order; strings compare under coll.
func setDifference(v []bson.RawValue, coll *collation.Collator) (bson.RawValue, error) {
	l, r := v[0], v[1]
	if IsNullish(l) || IsNullish(r) {
		return Null(), nil
	}
	if l.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(17048, "both operands of $setDifference must be arrays. First argument is of type: %s", typeName(l))
	}
	if r.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(17049, "both operands of $setDifference must be arrays. Second argument is of type: %s", typeName(r))
	}
	rset := uniqueSorted(Values(r), coll)
	cmp := collCompare(coll)
	lv := Values(l)
	// Mark the first occurrence of each distinct left element.
	idx := make([]int, len(lv))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return cmp(lv[idx[a]], lv[idx[b]]) < 0 })
	keep := make([]bool, len(lv))
	for k, i := range idx {
		if k > 0 && cmp(lv[idx[k-1]], lv[i]) == 0 {
			continue
		}
		keep[i] = !setContains(rset, lv[i], coll)
	}
	b := NewArrayBuilder(len(lv))
	for i, x := range lv {
		if keep[i] {
			b.Append(x)
		}
	}
	return b.Value(), nil
}

// parseSetIsSubset parses [subset, set].
func parseSetIsSubset(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	ops, err := p.Exactly(name, arg, 2)
	if err != nil {
		return nil, err
	}
	lcode, rcode := int32(17046), int32(17042)
	_, lconst := foldConst(ops[0])
	if rv, ok := foldConst(ops[1]); ok && !lconst {
		// mongod's optimizer builds the right-hand set once and checks it
		// while parsing.
		if rv.Type != bson.TypeArray {
			return nil, exprErr(17311, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(rv))
		}
		lcode = 17310
	}
	return p.fold(&fnExpr{args: ops, fn: func(c *Ctx, args []Expr) (bson.RawValue, error) {
		vals, err := EvalAll(c, args)
		if err != nil {
			return bson.RawValue{}, err
		}
		if vals[0].Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(lcode, "both operands of $setIsSubset must be arrays. First argument is of type: %s", typeName(vals[0]))
		}
		if vals[1].Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(rcode, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(vals[1]))
		}
		rset := uniqueSorted(Values(vals[1]), c.Collation)
		for _, x := range Values(vals[0]) {
			if !setContains(rset, x, c.Collation) {
				return Bool(false), nil
			}
		}
		return Bool(true), nil
	}})
}

// anyAll is $anyElementTrue (stop true) and $allElementsTrue (stop false).
func anyAll(arr bson.RawValue, name string, code int32, stop bool) (bson.RawValue, error) {
	if arr.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(code, "%s's argument must be an array, but is %s", name, typeName(arr))
	}
	for _, x := range Values(arr) {
		if Truthy(x) == stop {
			return Bool(stop), nil
		}
	}
	return Bool(!stop), nil
}

package expr

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Array operators that index, search and reshape arrays. $filter, $map,
// $reduce, $sortArray, $zip and the n-element operators are in
// op_array_iter.go.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#array-expression-operators
func init() {
	register("$size", opValues(1, arraySize))
	register("$arrayElemAt", opValues(2, func(v []bson.RawValue) (bson.RawValue, error) { return arrayElemAt("$arrayElemAt", 2, v[0], v[1]) }))
	register("$first", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return arrayElemAt("$first", 1, v[0], Int32(0)) }))
	register("$last", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return arrayElemAt("$last", 1, v[0], Int32(-1)) }))
	register("$in", opFixed(2, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		v, err := EvalAll(c, args)
		if err != nil {
			return bson.RawValue{}, err
		}
		return inArray(v, c)
	}))
	register("$slice", opRanged(2, 3, slice))
	register("$concatArrays", opNary(concatArrays))
	register("$reverseArray", opValues(1, reverseArray))
	register("$indexOfArray", parseIndexOfArray)
	register("$range", opRanged(2, 3, rangeArray))
	register("$isArray", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) { return Bool(v[0].Type == bson.TypeArray), nil }))
}

// arraySize is $size: the number of elements of an array.
func arraySize(v []bson.RawValue) (bson.RawValue, error) {
	if v[0].Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(17124, "The argument to $size must be an array, but was of type: %s", typeName(v[0]))
	}
	return Int32(int32(len(Values(v[0])))), nil
}

// arrayElemAt returns the element at idx (negative from the end), missing
// when out of range, null for a null or missing argument.
func arrayElemAt(name string, arity int, arr, idx bson.RawValue) (bson.RawValue, error) {
	if IsNullish(arr) || IsNullish(idx) {
		return Null(), nil
	}
	if arr.Type != bson.TypeArray {
		which := "first argument"
		if arity == 1 {
			which = "argument"
		}
		return bson.RawValue{}, exprErr(28689, "%s's %s must be an array, but is %s", name, which, typeName(arr))
	}
	if !isNum(idx) {
		return bson.RawValue{}, exprErr(28690, "%s's second argument must be a numeric value, but is %s", name, typeName(idx))
	}
	i, ok := numInt32(idx)
	if !ok {
		return bson.RawValue{}, exprErr(28691, "%s's second argument must be representable as a 32-bit integer: %s", name, fmtDouble(numFloat(idx)))
	}
	vals := Values(arr)
	n := int(i)
	if n < 0 {
		n += len(vals)
	}
	if n < 0 || n >= len(vals) {
		return bson.RawValue{}, nil
	}
	return vals[n], nil
}

// inArray is $in: whether the array holds the value (BSON equality).
func inArray(v []bson.RawValue, c *Ctx) (bson.RawValue, error) {
	if v[1].Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(40081, "$in requires an array as a second argument, found: %s", typeName(v[1]))
	}
	for _, x := range Values(v[1]) {
		if bsonkit.CompareWith(v[0], x, c.Collation) == 0 {
			return Bool(true), nil
		}
	}
	return Bool(false), nil
}

// slice is $slice [array, n] or [array, position, n].
func slice(c *Ctx, args []Expr) (bson.RawValue, error) {
	arr, err := args[0].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	arg2, err := args[1].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(arr) || IsNullish(arg2) {
		return Null(), nil
	}
	if arr.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(28724, "First argument to $slice must be an array, but is of type: %s", typeName(arr))
	}
	if !isNum(arg2) {
		return bson.RawValue{}, exprErr(28725, "Second argument to $slice must be a numeric value, but is of type: %s", typeName(arg2))
	}
	n2, ok := numInt32(arg2)
	if !ok {
		return bson.RawValue{}, exprErr(28726, "Second argument to $slice can't be represented as a 32-bit integer: %s", fmtDouble(numFloat(arg2)))
	}
	vals := Values(arr)
	size := len(vals)
	var start, end int
	if len(args) == 2 {
		end = size
		if n2 >= 0 {
			end = min(size, int(n2))
		} else {
			start = max(0, size+int(n2))
		}
	} else {
		if n2 < 0 {
			start = max(0, size+int(n2))
		} else {
			start = min(size, int(n2))
		}
		cv, err := args[2].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(cv) {
			return Null(), nil
		}
		if !isNum(cv) {
			return bson.RawValue{}, exprErr(28727, "Third argument to $slice must be numeric, but is of type: %s", typeName(cv))
		}
		cnt, ok := numInt32(cv)
		if !ok {
			return bson.RawValue{}, exprErr(28728, "Third argument to $slice can't be represented as a 32-bit integer: %s", fmtDouble(numFloat(cv)))
		}
		if cnt <= 0 {
			return bson.RawValue{}, exprErr(28729, "Third argument to $slice must be positive: %d", cnt)
		}
		end = min(start+int(cnt), size)
	}
	return Array(vals[start:end]), nil
}

// concatArrays returns null at the first null or missing operand.
func concatArrays(c *Ctx, args []Expr) (bson.RawValue, error) {
	b := NewArrayBuilder(8)
	for _, a := range args {
		v, err := a.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(v) {
			return Null(), nil
		}
		if v.Type != bson.TypeArray {
			return bson.RawValue{}, exprErr(28664, "$concatArrays only supports arrays, not %s", typeName(v))
		}
		if b.Size()+len(v.Value) > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
		for _, x := range Values(v) {
			b.Append(x)
		}
	}
	return b.Value(), nil
}

// reverseArray is $reverseArray; null and missing give null.
func reverseArray(v []bson.RawValue) (bson.RawValue, error) {
	in := v[0]
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(34435, "The argument to $reverseArray must be an array, but was of type: %s", typeName(in))
	}
	vals := Values(in)
	if len(vals) < 2 {
		return in, nil
	}
	slices.Reverse(vals)
	return Array(vals), nil
}

// indexArgOf checks $indexOfArray's start or end index: an integral,
// non-negative 32-bit number.
func indexArgOf(v bson.RawValue, what string) (int, error) {
	i, ok := numInt32(v)
	if !ok {
		return 0, exprErr(40096, "$indexOfArrayrequires an integral %s, found a value of type: %s, with value: %s", what, typeName(v), valueString(v))
	}
	if i < 0 {
		return 0, exprErr(40097, "$indexOfArray requires a nonnegative %s, found: %d", what, i)
	}
	return int(i), nil
}

// parseIndexOfArray parses [array, value, start, end]. As in mongod's
// optimizer, a constant array that is null makes the whole expression
// null, and one that is not an array fails the parse (50809).
func parseIndexOfArray(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	e, err := opRanged(2, 4, indexOfArray)(p, name, arg)
	if err != nil {
		return nil, err
	}
	if fe, ok := e.(*fnExpr); ok {
		if v, ok := foldConst(fe.args[0]); ok {
			if IsNullish(v) {
				return Const(Null()), nil
			}
			if v.Type != bson.TypeArray {
				return nil, exprErr(50809, "First operand of $indexOfArray must be an array. First argument is of type: %s", typeName(v))
			}
		}
	}
	return e, nil
}

// indexOfArray is $indexOfArray [array, value, start, end].
func indexOfArray(c *Ctx, args []Expr) (bson.RawValue, error) {
	arr, err := args[0].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(arr) {
		return Null(), nil
	}
	if arr.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(40090, "$indexOfArray requires an array as a first argument, found: %s", typeName(arr))
	}
	vals := Values(arr)
	start, end := 0, len(vals)
	if len(args) > 2 {
		v, err := args[2].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if start, err = indexArgOf(v, "starting index"); err != nil {
			return bson.RawValue{}, err
		}
	}
	if len(args) > 3 {
		v, err := args[3].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		e, err := indexArgOf(v, "ending index")
		if err != nil {
			return bson.RawValue{}, err
		}
		end = min(end, e)
	}
	target, err := args[1].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	for i := start; i < end; i++ {
		if bsonkit.CompareWith(vals[i], target, c.Collation) == 0 {
			return Int32(int32(i)), nil
		}
	}
	return Int32(-1), nil
}

// maxRangeBytes is mongod's internalQueryMaxRangeBytes default: $range
// refuses arrays whose in-memory size would pass it.
const maxRangeBytes = 64 * 1024 * 1024

// rangeArray is $range [start, end, step] of 32-bit integers.
func rangeArray(c *Ctx, args []Expr) (bson.RawValue, error) {
	vals, err := EvalAll(c, args[:2])
	if err != nil {
		return bson.RawValue{}, err
	}
	sv, ev := vals[0], vals[1]
	if !isNum(sv) {
		return bson.RawValue{}, exprErr(34443, "$range requires a numeric starting value, found value of type: %s", typeName(sv))
	}
	start, ok := numInt32(sv)
	if !ok {
		return bson.RawValue{}, exprErr(34444, "$range requires a starting value that can be represented as a 32-bit integer, found value: %s", valueString(sv))
	}
	if !isNum(ev) {
		return bson.RawValue{}, exprErr(34445, "$range requires a numeric ending value, found value of type: %s", typeName(ev))
	}
	end, ok := numInt32(ev)
	if !ok {
		return bson.RawValue{}, exprErr(34446, "$range requires an ending value that can be represented as a 32-bit integer, found value: %s", valueString(ev))
	}
	step := int64(1)
	if len(args) == 3 {
		stv, err := args[2].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if !isNum(stv) {
			return bson.RawValue{}, exprErr(34447, "$range requires a numeric step value, found value of type:%s", typeName(stv))
		}
		s, ok := numInt32(stv)
		if !ok {
			return bson.RawValue{}, exprErr(34448, "$range requires a step value that can be represented as a 32-bit integer, found value: %s", valueString(stv))
		}
		if s == 0 {
			return bson.RawValue{}, exprErr(34449, "$range requires a non-zero step value")
		}
		step = int64(s)
	}
	cur, last := int64(start), int64(end)
	steps := (last - cur) / step
	length := int64(0)
	if steps >= 0 {
		length = steps + 1
	}
	if mem := 24 + length*16; mem >= maxRangeBytes {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.ExceededMemoryLimit, "$range would use too much memory (%d bytes) and cannot spill to disk. Memory limit: %d bytes", mem, maxRangeBytes)
	}
	b := NewArrayBuilder(int(min(length, 1024)))
	for ; (step > 0 && cur < last) || (step < 0 && cur > last); cur += step {
		b.Append(Int32(int32(cur)))
		if b.Size() > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return b.Value(), nil
}

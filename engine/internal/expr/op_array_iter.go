package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Array operators that run a sub-expression per element: $filter, $map
// and $reduce.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#array-expression-operators
func init() {
	register("$filter", parseFilter)
	register("$map", parseMap)
	register("$reduce", parseReduce)
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
				return bson.RawValue{}, exprErr(327391, "$filter: limit must be represented as a 32-bit integral value: %s", valueString(lv))
			}
			if n <= 0 {
				return bson.RawValue{}, exprErr(327392, "$filter: limit must be greater than 0: %s", valueString(lv))
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

// parseFilter parses {input, as, cond, limit}.
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

// parseMap parses {input, as, in}.
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
		return bson.RawValue{}, exprErr(40080, "$reduce requires that 'input' be an array, found: %s", valueString(in))
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

// parseReduce parses {input, initialValue, in}; in sees $$this and
// $$value.
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

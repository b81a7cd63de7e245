package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Variable operators: $let binds variables for a sub-expression; $literal
// (and its older name $const) takes its argument as a value without
// parsing it.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/let/
func init() {
	register("$let", parseLet)
	register("$literal", parseLiteral)
	register("$const", parseLiteral) // mongod's own name; $literal is its alias
}

// parseLiteral takes the argument as it is.
func parseLiteral(_ *Parser, _ string, arg bson.RawValue) (Expr, error) { return Const(arg), nil }

// validateUserVar checks a variable name a user binds; CURRENT is the one
// system variable a user may rebind.
func validateUserVar(name string) error {
	if name == "CURRENT" {
		return nil
	}
	return ValidateVarName(name)
}

// withScope parses with sc as the parser's scope.
func (p *Parser) withScope(sc *Scope, fn func() error) error {
	old := p.sc
	p.sc = sc
	defer func() { p.sc = old }()
	return fn()
}

// letExpr evaluates each variable's expression in the outer scope, binds
// it, and evaluates in.
type letExpr struct {
	slots []int
	vals  []Expr
	in    Expr
}

func (e *letExpr) Eval(c *Ctx) (bson.RawValue, error) {
	var saved bson.RawValue
	rebinds := false
	for i, slot := range e.slots {
		v, err := e.vals[i].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if slot == SlotCurrent && !rebinds {
			rebinds, saved = true, c.Get(SlotCurrent)
		}
		c.Set(slot, v)
	}
	out, err := e.in.Eval(c)
	if rebinds {
		c.Set(SlotCurrent, saved)
	}
	return out, err
}

// parseLet parses {vars: {…}, in}: vars in the outer scope, in in a child
// scope that sees them.
func parseLet(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 16874, "$let only supports an object as its argument")
	if err != nil {
		return nil, err
	}
	var vars, in bson.RawValue
	for _, el := range elems {
		switch el.Key() {
		case "vars":
			vars = el.Value()
		case "in":
			in = el.Value()
		default:
			return nil, exprErr(16875, "Unrecognized parameter to $let: %s", el.Key())
		}
	}
	if vars.Type == 0 {
		return nil, exprErr(16876, "Missing 'vars' parameter to $let")
	}
	if in.Type == 0 {
		return nil, exprErr(16877, "Missing 'in' parameter to $let")
	}
	if vars.Type != bson.TypeEmbeddedDocument {
		return nil, exprErr(10065, "invalid parameter: expected an object (vars)")
	}
	varElems, err := vars.Document().Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	e := &letExpr{}
	for _, el := range varElems {
		v, err := p.Parse(el.Value())
		if err != nil {
			return nil, err
		}
		e.vals = append(e.vals, v)
	}
	sc := p.sc.Child()
	for _, el := range varElems {
		if err := validateUserVar(el.Key()); err != nil {
			return nil, err
		}
		e.slots = append(e.slots, sc.Define(el.Key()))
	}
	err = p.withScope(sc, func() error {
		var err error
		e.in, err = p.Parse(in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

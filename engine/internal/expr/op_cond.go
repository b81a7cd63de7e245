package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Conditional operators: $cond, $ifNull and $switch.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#conditional-expression-operators
func init() {
	register("$cond", parseCond)
	register("$ifNull", parseIfNull)
	register("$switch", parseSwitch)
}

// condExpr is $cond: then when if is truthy, else otherwise.
type condExpr struct{ ifE, thenE, elseE Expr }

func (e *condExpr) Eval(c *Ctx) (bson.RawValue, error) {
	v, err := e.ifE.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if Truthy(v) {
		return e.thenE.Eval(c)
	}
	return e.elseE.Eval(c)
}

// parseCond takes [if, then, else] or {if, then, else}.
func parseCond(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		ops, err := p.Exactly(name, arg, 3)
		if err != nil {
			return nil, err
		}
		return foldCond(&condExpr{ops[0], ops[1], ops[2]}), nil
	}
	elems, err := objectArgs(arg, 0, "")
	if err != nil {
		return nil, err
	}
	e := &condExpr{}
	for _, el := range elems {
		var dst *Expr
		switch el.Key() {
		case "if":
			dst = &e.ifE
		case "then":
			dst = &e.thenE
		case "else":
			dst = &e.elseE
		default:
			return nil, exprErr(17083, "Unrecognized parameter to $cond: %s", el.Key())
		}
		if *dst, err = p.Parse(el.Value()); err != nil {
			return nil, err
		}
	}
	switch {
	case e.ifE == nil:
		return nil, exprErr(17080, "Missing 'if' parameter to $cond")
	case e.thenE == nil:
		return nil, exprErr(17081, "Missing 'then' parameter to $cond")
	case e.elseE == nil:
		return nil, exprErr(17082, "Missing 'else' parameter to $cond")
	}
	return foldCond(e), nil
}

// foldCond picks the branch of a $cond whose if is a constant, as mongod's
// optimizer does.
func foldCond(e *condExpr) Expr {
	if v, ok := foldConst(e.ifE); ok {
		if Truthy(v) {
			return e.thenE
		}
		return e.elseE
	}
	return e
}

// parseIfNull takes two or more operands and returns the first that is
// not null, undefined or missing, else the last one's value as it is.
func parseIfNull(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	ops, err := p.Operands(arg)
	if err != nil {
		return nil, err
	}
	if len(ops) < 2 {
		return nil, exprErr(1257300, "$ifNull needs at least two arguments, had: %d", len(ops))
	}
	return p.fold(&fnExpr{args: ops, fn: func(c *Ctx, args []Expr) (bson.RawValue, error) {
		for i, a := range args {
			v, err := a.Eval(c)
			if err != nil {
				return bson.RawValue{}, err
			}
			if !IsNullish(v) || i == len(args)-1 {
				return v, nil
			}
		}
		return bson.RawValue{}, nil
	}})
}

// switchExpr is $switch: the then of the first truthy case, else default.
type switchExpr struct {
	cases, thens []Expr
	def          Expr // nil: no default
}

func (e *switchExpr) Eval(c *Ctx) (bson.RawValue, error) {
	for i, ce := range e.cases {
		v, err := ce.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if Truthy(v) {
			return e.thens[i].Eval(c)
		}
	}
	if e.def == nil {
		return bson.RawValue{}, exprErr(40066, "$switch could not find a matching branch for an input, and no default was specified.")
	}
	return e.def.Eval(c)
}

// parseSwitch parses {branches: [{case, then}, …], default}.
func parseSwitch(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	elems, err := objectArgs(arg, 40060, "$switch requires an object as an argument, found: "+typeName(arg))
	if err != nil {
		return nil, err
	}
	e := &switchExpr{}
	for _, el := range elems {
		switch el.Key() {
		case "branches":
			v := el.Value()
			if v.Type != bson.TypeArray {
				return nil, exprErr(40061, "$switch expected an array for 'branches', found: %s", typeName(v))
			}
			for _, br := range bsonkit.Values(v.Value) {
				if err := e.parseBranch(p, br); err != nil {
					return nil, err
				}
			}
		case "default":
			if e.def, err = p.Parse(el.Value()); err != nil {
				return nil, err
			}
		default:
			return nil, exprErr(40067, "$switch found an unknown argument: %s", el.Key())
		}
	}
	if len(e.cases) == 0 {
		return nil, exprErr(40068, "$switch requires at least one branch.")
	}
	return e.optimize()
}

// optimize drops branches whose case is a constant as mongod's optimizer
// does: a false one goes, a true one becomes the default and ends the
// list. A switch left without branches is its default, or fails with
// 40069 when it has none.
func (e *switchExpr) optimize() (Expr, error) {
	out := &switchExpr{def: e.def}
	for i, ce := range e.cases {
		if v, ok := foldConst(ce); ok {
			if Truthy(v) {
				out.def = e.thens[i]
				break
			}
			continue
		}
		out.cases = append(out.cases, ce)
		out.thens = append(out.thens, e.thens[i])
	}
	if len(out.cases) == 0 {
		if out.def == nil {
			return nil, exprErr(40069, "One cannot execute a switch statement where all the cases evaluate to false without a default.")
		}
		return out.def, nil
	}
	return out, nil
}

// parseBranch parses one {case, then} branch.
func (e *switchExpr) parseBranch(p *Parser, br bson.RawValue) error {
	if br.Type != bson.TypeEmbeddedDocument {
		return exprErr(40062, "$switch expected each branch to be an object, found: %s", typeName(br))
	}
	elems, err := objectArgs(br, 0, "")
	if err != nil {
		return err
	}
	var caseE, thenE Expr
	for _, el := range elems {
		switch el.Key() {
		case "case":
			caseE, err = p.Parse(el.Value())
		case "then":
			thenE, err = p.Parse(el.Value())
		default:
			return exprErr(40063, "$switch found an unknown argument to a branch: %s", el.Key())
		}
		if err != nil {
			return err
		}
	}
	if caseE == nil {
		return exprErr(40064, "$switch requires each branch have a 'case' expression")
	}
	if thenE == nil {
		return exprErr(40065, "$switch requires each branch have a 'then' expression.")
	}
	e.cases = append(e.cases, caseE)
	e.thens = append(e.thens, thenE)
	return nil
}

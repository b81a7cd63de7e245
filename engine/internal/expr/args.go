package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Operands parses an operator's argument as MongoDB does for operators
// that take a list: an array is the list of operands, anything else is
// one operand.
func (p *Parser) Operands(arg bson.RawValue) ([]Expr, error) {
	if arg.Type != bson.TypeArray {
		e, err := p.Parse(arg)
		if err != nil {
			return nil, err
		}
		return []Expr{e}, nil
	}
	vals, err := arg.Array().Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	out := make([]Expr, len(vals))
	for i, v := range vals {
		if out[i], err = p.Parse(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Exactly parses the operands and checks there are n of them (16020).
func (p *Parser) Exactly(name string, arg bson.RawValue, n int) ([]Expr, error) {
	ops, err := p.Operands(arg)
	if err != nil {
		return nil, err
	}
	if len(ops) != n {
		return nil, mongoerr.Newf(mongoerr.Code(16020), "Expression %s takes exactly %d arguments. %d were passed in.", name, n, len(ops))
	}
	return ops, nil
}

// Between parses the operands and checks there are from min to max of
// them (28667, as MongoDB's ExpressionRangedArity; max < 0 for no upper
// bound).
func (p *Parser) Between(name string, arg bson.RawValue, min, max int) ([]Expr, error) {
	ops, err := p.Operands(arg)
	if err != nil {
		return nil, err
	}
	switch {
	case len(ops) < min && max < 0:
		return nil, mongoerr.Newf(mongoerr.Code(28667), "Expression %s takes at least %d arguments. %d were passed in.", name, min, len(ops))
	case len(ops) < min || max >= 0 && len(ops) > max:
		return nil, mongoerr.Newf(mongoerr.Code(28667), "Expression %s takes at least %d arguments, and at most %d. %d were passed in.", name, min, max, len(ops))
	}
	return ops, nil
}

// EvalAll evaluates each expression in order.
func EvalAll(c *Ctx, es []Expr) ([]bson.RawValue, error) {
	out := make([]bson.RawValue, len(es))
	for i, e := range es {
		v, err := e.Eval(c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

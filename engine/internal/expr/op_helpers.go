package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// exprErr returns a *mongoerr.Error with MongoDB's code and a formatted
// message.
func exprErr(code int32, format string, args ...any) error {
	return mongoerr.Newf(mongoerr.Code(code), format, args...)
}

// typeName is MongoDB's alias for v's type ("missing" for missing).
func typeName(v bson.RawValue) string { return bsonkit.TypeName(v.Type) }

// evalFn evaluates an operator on its operand expressions. It evaluates
// them itself, so it can stop early as mongod does.
type evalFn func(c *Ctx, args []Expr) (bson.RawValue, error)

// fnExpr is an operator applied to a list of operands.
type fnExpr struct {
	args []Expr
	fn   evalFn
}

func (e *fnExpr) Eval(c *Ctx) (bson.RawValue, error) { return e.fn(c, e.args) }

// fold evaluates an operator whose operands are all constants once, at
// parse time, as mongod's optimizer does before running a pipeline: the
// result becomes a constant, and an error (a division by zero, a wrong
// type) fails the parse even where evaluation would never reach it.
func (p *Parser) fold(e *fnExpr) (Expr, error) {
	for _, a := range e.args {
		if _, ok := foldConst(a); !ok {
			return e, nil
		}
	}
	v, err := e.Eval(&Ctx{Vars: make([]bson.RawValue, 2), Collation: p.sc.Collation()})
	if err != nil {
		return nil, err
	}
	return Const(v), nil
}

// opNary parses any number of operands.
func opNary(fn evalFn) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Operands(arg)
		if err != nil {
			return nil, err
		}
		return p.fold(&fnExpr{args: args, fn: fn})
	}
}

// opFixed parses exactly n operands (16020).
func opFixed(n int, fn evalFn) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Exactly(name, arg, n)
		if err != nil {
			return nil, err
		}
		return p.fold(&fnExpr{args: args, fn: fn})
	}
}

// opRanged parses from lo to hi operands (28667).
func opRanged(lo, hi int, fn evalFn) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Between(name, arg, lo, hi)
		if err != nil {
			return nil, err
		}
		return p.fold(&fnExpr{args: args, fn: fn})
	}
}

// opValues parses exactly n operands and hands fn their values, all
// evaluated first.
func opValues(n int, fn func(vals []bson.RawValue) (bson.RawValue, error)) parseFunc {
	return opFixed(n, func(c *Ctx, args []Expr) (bson.RawValue, error) {
		vals, err := EvalAll(c, args)
		if err != nil {
			return bson.RawValue{}, err
		}
		return fn(vals)
	})
}

// objectArgs splits an operator's object argument into its fields, in
// order; a non-object argument is an error with code and message.
func objectArgs(arg bson.RawValue, code int32, msg string) ([]bson.RawElement, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, exprErr(code, "%s", msg)
	}
	elems, err := arg.Document().Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	return elems, nil
}

package expr

import "go.mongodb.org/mongo-driver/v2/bson"

// foldStatic evaluates e once at parse time when every operand in ops is
// a constant (a nil operand is an absent option), as mongod's optimizer
// does for the string, date and type operators: the result becomes a
// constant, and an evaluation error fails the parse even when no document
// would reach it.
func foldStatic(e Expr, ops ...Expr) (Expr, error) {
	for _, op := range ops {
		if op == nil {
			continue
		}
		if !isConstExpr(op) {
			return e, nil
		}
	}
	v, err := e.Eval(&Ctx{Vars: make([]bson.RawValue, 2)})
	if err != nil {
		return nil, err
	}
	return &foldedExpr{v: v}, nil
}

// foldedExpr is the value of an operator folded at parse time. It is not
// a constExpr: operators that demand a literal operand ($getField's field,
// $literal-only options) check the expression as written, before mongod's
// optimizer runs.
type foldedExpr struct{ v bson.RawValue }

// Eval returns the folded value.
func (e *foldedExpr) Eval(*Ctx) (bson.RawValue, error) { return e.v, nil }

// foldNamed is foldStatic over an operator's named arguments.
func foldNamed(e Expr, args map[string]Expr) (Expr, error) {
	ops := make([]Expr, 0, len(args))
	for _, a := range args {
		ops = append(ops, a)
	}
	return foldStatic(e, ops...)
}

// isConstExpr reports whether e is constant at parse time: a literal, a
// folded operator, or an array or object literal of those.
func isConstExpr(e Expr) bool {
	switch x := e.(type) {
	case *foldedExpr:
		return true
	case *arrayExpr:
		for _, k := range x.elems {
			if !isConstExpr(k) {
				return false
			}
		}
		return true
	case *objectExpr:
		for _, k := range x.vals {
			if !isConstExpr(k) {
				return false
			}
		}
		return true
	}
	_, ok := foldConst(e)
	return ok
}

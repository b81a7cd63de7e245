package projection

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Codes of computed fields in an exclusion projection: an operator
// expression (31252) and a literal or field path (31310).
const (
	errExprInExclusion    mongoerr.Code = 31252
	errLiteralInExclusion mongoerr.Code = 31310
)

// exprEnv is what evaluating computed fields needs: the scope they were
// parsed in, the let variables' slots and values, and $$NOW and
// $$CLUSTER_TIME.
type exprEnv struct {
	sc   *expr.Scope
	vars []slotValue
	now  time.Time
	ct   bson.Timestamp
}

// slotValue is a let variable's slot and value.
type slotValue struct {
	slot int
	v    bson.RawValue
}

// newExprEnv defines env's let variables in a fresh scope.
func newExprEnv(env match.Env) (*exprEnv, error) {
	xe := &exprEnv{sc: expr.NewScope(), now: env.Now, ct: env.ClusterTime}
	xe.sc.SetCollation(env.Collation)
	if len(env.Let) > 0 {
		elems, err := env.Let.Elements()
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid let document: %v", err)
		}
		for _, e := range elems {
			xe.vars = append(xe.vars, slotValue{slot: xe.sc.Define(e.Key()), v: e.Value()})
		}
	}
	return xe, nil
}

// ctx returns a fresh evaluation context with the let variables set; $$NOW
// is the compile-time Now, or the time of the call when none was given.
func (x *exprEnv) ctx() *expr.Ctx {
	c := expr.NewCtx(x.sc)
	if !x.now.IsZero() {
		c.Now = x.now
	}
	c.ClusterTime = x.ct
	for _, sv := range x.vars {
		c.Set(sv.slot, sv.v)
	}
	return c
}

// isExpressionName is mongod's Expression::isExpressionName: a registered
// aggregation operator.
func isExpressionName(name string) bool { return expressionNames[name] || expr.IsOperator(name) }

// parseExpr adds the operator expression obj ({$add: [...]}) as the
// computed field key: mongod's attemptToParseGenericExpression.
func (ctx *parseCtx) parseExpr(parent *pnode, key string, obj []byte) error {
	if ctx.typ == typeExclusion {
		return mongoerr.New(errExprInExclusion, "Cannot use expression other than $meta in exclusion projection")
	}
	ctx.typ = typeInclusion
	e, err := expr.Parse(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: obj}, ctx.sc)
	if err != nil {
		return err
	}
	if err := addAt(parent, key, &pnode{kind: kindExpr, expr: e}); err != nil {
		return err
	}
	ctx.hasExpr = true
	return nil
}

// parseLiteral adds a value that is neither a number, a boolean nor a
// document ("$a", "x", [..], null …) as a computed field: mongod parses it
// as an expression operand, so "$a" is a path and "$$v" a variable.
func (ctx *parseCtx) parseLiteral(parent *pnode, key string, v bson.RawValue) error {
	e, err := expr.Parse(v, ctx.sc)
	if err != nil {
		return err
	}
	if err := addAt(parent, key, &pnode{kind: kindExpr, expr: e}); err != nil {
		return err
	}
	if ctx.typ == typeExclusion {
		return mongoerr.Newf(errLiteralInExclusion, "Cannot use an expression %s: %s in an exclusion projection", key, v.String())
	}
	ctx.typ = typeInclusion
	ctx.hasExpr = true
	return nil
}

// parseSliceOrExpr parses {$slice: ...} as find's $slice and, when that
// syntax does not fit, as the aggregation expression $slice, as mongod
// does; when both fail the error is the expression's, with the find
// syntax's failure in its message.
func (ctx *parseCtx) parseSliceOrExpr(parent *pnode, key string, arg bson.RawValue, obj []byte) error {
	findErr := ctx.parseSlice(parent, key, arg)
	if findErr == nil {
		return nil
	}
	err := ctx.parseExpr(parent, key, obj)
	if err == nil {
		return nil
	}
	fe, ee := mongoerr.As(findErr), mongoerr.As(err)
	if fe == nil || ee == nil {
		return err
	}
	spec := bson.Raw(obj).String()
	return mongoerr.New(ee.Code, fmt.Sprintf("Invalid $slice syntax. The given syntax %s did not match the find() syntax because :: Location%d: %s :: The given syntax did not match the expression $slice syntax. :: caused by :: %s", spec, int(fe.Code), fe.Msg, ee.Msg))
}

// markExprs sets hasExpr on every branch whose subtree holds a computed
// field and reports whether n's does.
func markExprs(n *pnode) bool {
	if n.kind == kindExpr {
		return true
	}
	if n.kind != kindBranch {
		return false
	}
	for _, c := range n.children {
		if markExprs(c) {
			n.hasExpr = true
		}
	}
	return n.hasExpr
}

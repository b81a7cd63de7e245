package match

import (
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Env is what a filter's $expr reads besides the document: the command's
// let variables, each already evaluated to a constant, and its $$NOW and
// $$CLUSTER_TIME, the same for every document.
type Env struct {
	Let         bson.Raw
	Now         time.Time
	ClusterTime bson.Timestamp
	// Collation compares strings in comparisons and in $expr (nil: the
	// simple collation).
	Collation *collation.Collator
}

// CompileEnv is Compile with the command's environment: $expr, allowed at
// the top level and under $and, $or and $nor, has its operand parsed as an
// aggregation expression in which env's let variables are defined. The
// caller has validated the variable names. Errors are Compile's and
// expr.Parse's (17276 for an undefined variable, …).
// https://www.mongodb.com/docs/v7.0/reference/operator/query/expr/
func CompileEnv(filter bson.Raw, env Env) (*Filter, error) {
	if err := bsonkit.Validate(filter); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid filter document: %v", err)
	}
	xe := &exprEnv{sc: expr.NewScope(), now: env.Now, ct: env.ClusterTime, let: map[string]bson.RawValue{}}
	xe.sc.SetCollation(env.Collation)
	if xe.now.IsZero() {
		xe.now = time.Now()
	}
	if len(env.Let) > 0 {
		elems, err := env.Let.Elements()
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid let document: %v", err)
		}
		for _, e := range elems {
			xe.vars = append(xe.vars, slotValue{slot: xe.sc.Define(e.Key()), v: e.Value()})
			xe.let[e.Key()] = e.Value()
		}
	}
	c := &compiler{env: xe, coll: env.Collation}
	root, err := c.parse(filter, levelTop)
	if err != nil {
		return nil, err
	}
	f := &Filter{root: root, paths: c.paths}
	if c.hasExpr {
		f.env = xe
	}
	return f, nil
}

// slotValue is a let variable's slot and value.
type slotValue struct {
	slot int
	v    bson.RawValue
}

// exprEnv holds what evaluating a filter's $expr needs; its pool makes
// the Filter safe for concurrent use without allocating per document.
type exprEnv struct {
	sc   *expr.Scope
	vars []slotValue
	let  map[string]bson.RawValue
	now  time.Time
	ct   bson.Timestamp
	pool sync.Pool
}

// evalState is the state of one evaluation of a filter with $expr: the
// expression context and the first error an $expr raised.
type evalState struct {
	c   *expr.Ctx
	err error
}

func (x *exprEnv) get() *evalState {
	if st, ok := x.pool.Get().(*evalState); ok {
		st.err = nil
		return st
	}
	c := expr.NewCtx(x.sc)
	c.Now, c.ClusterTime = x.now, x.ct
	for _, sv := range x.vars {
		c.Set(sv.slot, sv.v)
	}
	return &evalState{c: c}
}

func (x *exprEnv) put(st *evalState) { x.pool.Put(st) }

// exprNode is {$expr: <expression>}: the document matches when the
// expression's value is truthy.
type exprNode struct {
	e   expr.Expr
	arg bson.RawValue
}

func (n *exprNode) match(doc []byte, st *evalState) (bool, int) {
	if st == nil || st.err != nil {
		return false, -1
	}
	st.c.SetRoot(doc)
	v, err := n.e.Eval(st.c)
	if err != nil {
		st.err = err
		return false, -1
	}
	return expr.Truthy(v), -1
}

// matchValue is never reached: $expr cannot sit under $elemMatch.
func (n *exprNode) matchValue(bson.RawValue) bool { return false }

// parseExpr compiles {$expr: v}. Like mongod's RewriteExpr, an $eq of a
// field path and a constant (also inside the expression's $and) adds a
// $_internalExprEq predicate on that path, which the planner may answer
// with an index; the $expr itself still decides.
func (c *compiler) parseExpr(v bson.RawValue) (node, error) {
	e, err := expr.Parse(v, c.env.sc)
	if err != nil {
		return nil, err
	}
	c.hasExpr = true
	n := &exprNode{e: e, arg: v}
	eqs := c.rewriteEq(v, 0)
	if len(eqs) == 0 {
		return n, nil
	}
	return &andNode{children: append([]node{n}, eqs...)}, nil
}

// internalExprEq is the operator of the predicates RewriteExpr adds.
const internalExprEq = "$_internalExprEq"

// rewriteEq returns the $_internalExprEq predicates implied by the
// expression v: {$eq: [path, constant]} in either order, and those of
// each operand of an $and. depth bounds the recursion.
func (c *compiler) rewriteEq(v bson.RawValue, depth int) []node {
	d, ok := v.DocumentOK()
	if !ok || depth > expr.MaxDepth {
		return nil
	}
	elems, err := d.Elements()
	if err != nil || len(elems) != 1 {
		return nil
	}
	arg := elems[0].Value()
	switch elems[0].Key() {
	case "$and":
		var out []node
		for _, a := range bsonkit.Values(arg.Value) {
			if arg.Type != bson.TypeArray {
				break
			}
			out = append(out, c.rewriteEq(a, depth+1)...)
		}
		return out
	case "$eq":
		if arg.Type != bson.TypeArray {
			return nil
		}
		ops := bsonkit.Values(arg.Value)
		if len(ops) != 2 {
			return nil
		}
		path, ok := fieldPath(ops[0])
		val, okc := c.constant(ops[1])
		if !ok {
			path, ok = fieldPath(ops[1])
			val, okc = c.constant(ops[0])
		}
		if !ok || !okc {
			return nil
		}
		rhs, coll := val, c.coll
		return []node{newLeaf(path, KindExprEq, internalExprEq, rhs, func(v bson.RawValue) bool { return compareMatches(opEQ, v, rhs, coll) })}
	}
	return nil
}

// fieldPath returns the path of a "$a.b" operand (not a variable).
func fieldPath(v bson.RawValue) (string, bool) {
	s, ok := v.StringValueOK()
	if !ok || !strings.HasPrefix(s, "$") || strings.HasPrefix(s, "$$") || len(s) < 2 {
		return "", false
	}
	return s[1:], true
}

// constant returns the value of an operand the rewrite treats as a
// constant: a literal that is not an array, undefined, an expression or a
// path, {$literal: x}, or a let variable.
func (c *compiler) constant(v bson.RawValue) (bson.RawValue, bool) {
	switch v.Type {
	case bson.TypeArray, bson.TypeUndefined, 0:
		return bson.RawValue{}, false
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$$") {
			lv, ok := c.env.let[s[2:]]
			if !ok || lv.Type == bson.TypeArray || lv.Type == bson.TypeUndefined {
				return bson.RawValue{}, false
			}
			return lv, true
		}
		if strings.HasPrefix(s, "$") {
			return bson.RawValue{}, false
		}
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err != nil || len(elems) != 1 || elems[0].Key() != "$literal" {
			return bson.RawValue{}, false
		}
		lv := elems[0].Value()
		if lv.Type == bson.TypeArray || lv.Type == bson.TypeUndefined {
			return bson.RawValue{}, false
		}
		return lv, true
	}
	return v, true
}

package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// pipelineArg converts an array of stage documents (a sub-pipeline
// argument) into stages; errCode/what name the error for a value that is
// not an array of documents.
func pipelineArg(v bson.RawValue, code int, what string) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.Newf(mongoerr.Code(code), "%s must be an array, but found type: %s", what, typeName(v))
	}
	var out []bson.Raw
	for _, sv := range expr.Values(v) {
		d, ok := sv.DocumentOK()
		if !ok {
			return nil, mongoerr.Newf(mongoerr.Code(code), "%s must be an array of objects, but found an element of type: %s", what, typeName(sv))
		}
		out = append(out, d)
	}
	return out, nil
}

// letDefs are the variables a $lookup binds per input document.
type letDefs struct {
	names []string
	slots []int
	exprs []expr.Expr
	spec  bson.Raw
}

// parseLetDefs parses a let document in the outer scope and defines its
// names in the sub-pipeline's scope sub.
func parseLetDefs(outer *parseCtx, sub *parseCtx, let bson.Raw) (*letDefs, error) {
	l := &letDefs{spec: let}
	for _, el := range mustElems(let) {
		if err := expr.ValidateVarName(el.Key()); err != nil {
			return nil, err
		}
		e, err := outer.parseExpr(el.Value(), nil)
		if err != nil {
			return nil, err
		}
		l.names = append(l.names, el.Key())
		l.exprs = append(l.exprs, e)
	}
	for _, n := range l.names {
		slot := sub.scope.Define(n)
		l.slots = append(l.slots, slot)
		sub.vars = append(sub.vars, letVar{name: n, slot: slot})
	}
	return l, nil
}

// bind evaluates the let expressions for doc (in c, whose $$ROOT it sets)
// and returns a context for the sub-pipeline with them bound.
func (l *letDefs) bind(c *expr.Ctx, doc bson.Raw) (*expr.Ctx, error) {
	if l == nil {
		return c, nil
	}
	c.SetRoot(doc)
	vals := make([]bson.RawValue, len(l.exprs))
	for i, e := range l.exprs {
		v, err := e.Eval(c)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	n := &expr.Ctx{Vars: append([]bson.RawValue(nil), c.Vars...), Now: c.Now, ClusterTime: c.ClusterTime, Collation: c.Collation}
	for i, slot := range l.slots {
		n.Set(slot, vals[i])
	}
	return n, nil
}

// andFilters combines two filters; either may be empty.
func andFilters(a, b bson.Raw) bson.Raw {
	if len(a) == 0 || len(mustElems(a)) == 0 {
		return b
	}
	if len(b) == 0 || len(mustElems(b)) == 0 {
		return a
	}
	raw, _ := bson.Marshal(bson.D{{Key: "$and", Value: bson.A{a, b}}})
	return raw
}

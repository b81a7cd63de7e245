package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$replaceRoot", 0, parseReplaceRoot)
	register("$replaceWith", 0, parseReplaceWith)
}

// stageReplaceRoot is {$replaceRoot: {newRoot: expr}} and
// {$replaceWith: expr}: each document is replaced by the expression's
// value, which must be a document (40228).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/replaceRoot/
type stageReplaceRoot struct {
	stageName string
	spec      bson.RawValue
	e         expr.Expr
	dep       expr.Deps
}

// parseReplaceRoot parses $replaceRoot: 40229 for a non-document, 40231
// without newRoot, 40415 for an unknown field.
func parseReplaceRoot(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(40229), "expected an object as specification for $replaceRoot stage, got %s", typeName(spec))
	}
	s := &stageReplaceRoot{stageName: "$replaceRoot", spec: spec}
	for _, el := range mustElems(doc) {
		if el.Key() != "newRoot" {
			return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$replaceRoot.%s' is an unknown field.", el.Key())
		}
		e, err := pc.parseExpr(el.Value(), &s.dep)
		if err != nil {
			return nil, err
		}
		s.e = e
	}
	if s.e == nil {
		return nil, mongoerr.New(mongoerr.Code(40231), "no newRoot specified for the $replaceRoot stage")
	}
	return s, nil
}

func parseReplaceWith(pc *parseCtx, spec bson.RawValue) (stage, error) {
	s := &stageReplaceRoot{stageName: "$replaceWith", spec: spec}
	e, err := pc.parseExpr(spec, &s.dep)
	if err != nil {
		return nil, err
	}
	s.e = e
	return s, nil
}

func (s *stageReplaceRoot) name() string { return s.stageName }

func (s *stageReplaceRoot) explain() bson.D {
	if s.stageName == "$replaceWith" {
		return bson.D{{Key: "$replaceRoot", Value: bson.D{{Key: "newRoot", Value: s.spec}}}}
	}
	return bson.D{{Key: "$replaceRoot", Value: s.spec}}
}

func (s *stageReplaceRoot) deps(d *depSet) bool {
	d.addExpr(&s.dep)
	return true
}

// newRoot evaluates the new root of d.
func (s *stageReplaceRoot) newRoot(c *expr.Ctx, d bson.Raw) (bson.Raw, error) {
	c.SetRoot(d)
	v, err := s.e.Eval(c)
	if err != nil {
		return nil, err
	}
	doc, ok := v.DocumentOK()
	if !ok {
		shown := "missing"
		if v.Type != 0 {
			shown = showValue(v)
		}
		return nil, mongoerr.Newf(mongoerr.Code(40228), "'replacement document' must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s", shown, typeName(v), d.String())
	}
	return doc, nil
}

func (s *stageReplaceRoot) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		d, err := in.Next(ctx)
		if err != nil || d == nil {
			return nil, err
		}
		return s.newRoot(c, d)
	}, close: in.Close}, nil
}

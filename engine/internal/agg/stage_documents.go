package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$documents", flagFirst|flagSource, parseDocuments)
}

// stageDocuments is {$documents: expr}: the documents of an array the
// expression evaluates to once (it may use let variables and $$NOW).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/documents/
type stageDocuments struct {
	spec bson.RawValue
	e    expr.Expr
}

func parseDocuments(pc *parseCtx, spec bson.RawValue) (stage, error) {
	e, err := pc.parseExpr(spec, nil)
	if err != nil {
		return nil, err
	}
	return &stageDocuments{spec: spec, e: e}, nil
}

func (s *stageDocuments) name() string    { return "$documents" }
func (s *stageDocuments) explain() bson.D { return bson.D{{Key: "$documents", Value: s.spec}} }

// open evaluates the array: 5858203 when it is not an array, 40228 for
// an element that is not a document.
func (s *stageDocuments) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	if in != nil {
		in.Close()
	}
	c := rc.exprCtx()
	c.SetRoot(emptyDoc)
	v, err := s.e.Eval(c)
	if err != nil {
		return nil, err
	}
	if v.Type != bson.TypeArray {
		return nil, mongoerr.Newf(mongoerr.Code(5858203), "an array is expected")
	}
	var docs []bson.Raw
	for _, el := range expr.Values(v) {
		d, ok := el.DocumentOK()
		if !ok {
			return nil, mongoerr.Newf(mongoerr.Code(40228), "'newRoot' expression must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'.", showValue(el), typeName(el))
		}
		docs = append(docs, d)
	}
	return NewSliceSource(docs), nil
}

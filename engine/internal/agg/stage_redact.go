package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$redact", 0, parseRedact) }

// stageRedact is {$redact: expr}: the expression decides, for the
// document and then for each embedded document ($$CURRENT rebound to
// it), whether to keep it whole ($$KEEP), drop it ($$PRUNE) or keep its
// scalars and decide again for each embedded document ($$DESCEND).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/redact/
type stageRedact struct {
	spec bson.RawValue
	e    expr.Expr
}

func parseRedact(pc *parseCtx, spec bson.RawValue) (stage, error) {
	e, err := pc.parseExpr(spec, nil)
	if err != nil {
		return nil, err
	}
	return &stageRedact{spec: spec, e: e}, nil
}

func (s *stageRedact) name() string    { return "$redact" }
func (s *stageRedact) explain() bson.D { return bson.D{{Key: "$redact", Value: s.spec}} }

// maxRedactDepth bounds the descent (BSON nesting is bounded anyway).
const maxRedactDepth = 200

// redact returns d redacted, or nil when it is pruned.
func (s *stageRedact) redact(c *expr.Ctx, d bson.Raw, depth int) (bson.Raw, error) {
	c.Vars[expr.SlotCurrent] = expr.Doc(d)
	v, err := s.e.Eval(c)
	if err != nil {
		return nil, err
	}
	switch {
	case v.Type == bson.TypeString && v.StringValue() == "keep":
		return d, nil
	case v.Type == bson.TypeString && v.StringValue() == "prune":
		return nil, nil
	case v.Type == bson.TypeString && v.StringValue() == "descend":
	default:
		return nil, mongoerr.Newf(mongoerr.Code(17053), "$redact's expression should not return anything aside from the variables $KEEP, $DESCEND, and $PRUNE, but returned %s", showValue(v))
	}
	if depth > maxRedactDepth {
		return d, nil
	}
	b := expr.NewDocBuilder()
	for _, el := range mustElems(d) {
		r, keep, err := s.redactValue(c, el.Value(), depth)
		if err != nil {
			return nil, err
		}
		if keep {
			b.Append(el.Key(), r)
		}
	}
	return b.Doc(), nil
}

func (s *stageRedact) redactValue(c *expr.Ctx, v bson.RawValue, depth int) (bson.RawValue, bool, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		r, err := s.redact(c, v.Document(), depth+1)
		if err != nil || r == nil {
			return bson.RawValue{}, false, err
		}
		return expr.Doc(r), true, nil
	case bson.TypeArray:
		ab := expr.NewArrayBuilder(0)
		for _, el := range expr.Values(v) {
			r, keep, err := s.redactValue(c, el, depth+1)
			if err != nil {
				return bson.RawValue{}, false, err
			}
			if keep {
				ab.Append(r)
			}
		}
		return ab.Value(), true, nil
	}
	return v, true, nil
}

func (s *stageRedact) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			c.SetRoot(d)
			r, err := s.redact(c, d, 0)
			if err != nil {
				return nil, err
			}
			if r != nil {
				return r, nil
			}
		}
	}, close: in.Close}, nil
}

package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// $percentile and $median as expression operators (7.0): the input is
// one value or an array of values, whose numbers are ranked as the
// accumulator ranks them; anything else is ignored.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/percentile/#use--percentile-in-a--project-stage
func init() {
	for _, name := range []string{"$percentile", "$median"} {
		expr.RegisterOperator(name, parsePercentileExpr)
	}
}

// parsePercentileExpr parses {$percentile|$median: {input, p, method}}
// with the accumulator's validation; the input is parsed with p so that
// its field paths count as dependencies.
func parsePercentileExpr(p *expr.Parser, name string, arg bson.RawValue) (expr.Expr, error) {
	code := 7429703
	if name == "$median" {
		code = 7436100
	}
	s, err := parsePercentileSpec(nil, p.Scope(), name, arg, code, nil)
	if err != nil {
		return nil, err
	}
	if s.input, err = p.Parse(arg.Document().Lookup("input")); err != nil {
		return nil, err
	}
	return expr.ExprFunc(func(c *expr.Ctx) (bson.RawValue, error) {
		v, err := s.input.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		st := &percentileState{spec: s}
		if v.Type == bson.TypeArray {
			for _, x := range expr.Values(v) {
				_ = st.add(x)
			}
		} else {
			_ = st.add(v)
		}
		return st.result()
	}), nil
}

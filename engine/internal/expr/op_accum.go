package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
)

// AccumState folds values for an accumulator used as an expression
// operator ($sum, $avg, $min, $max, $stdDevPop, $stdDevSamp in $project,
// $addFields …). The aggregation package implements the accumulators and
// registers them here, since it depends on this package and not the other
// way round.
type AccumState interface {
	// Add folds one value (missing has Type 0).
	Add(v bson.RawValue) error
	// Result returns the accumulated value.
	Result() (bson.RawValue, error)
}

// RegisterAccumulator makes the accumulator name an expression operator
// whose state newState makes, with the semantics of mongod's
// ExpressionFromAccumulator: with one operand, an array value is folded
// element by element (not recursively) and any other value is folded as
// it is; with several operands each value is folded as it is, arrays
// included. It must be called from an init function; it panics on a
// duplicate name.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/sum/#use-in--project-stage
func RegisterAccumulator(name string, newState func() AccumState) {
	register(name, func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Operands(arg)
		if err != nil {
			return nil, err
		}
		return p.fold(&fnExpr{args: args, fn: func(c *Ctx, args []Expr) (bson.RawValue, error) {
			st := newState()
			if cs, ok := st.(interface{ SetCollation(*collation.Collator) }); ok {
				cs.SetCollation(c.Collation)
			}
			if len(args) == 1 {
				v, err := args[0].Eval(c)
				if err != nil {
					return bson.RawValue{}, err
				}
				if v.Type == bson.TypeArray {
					for _, el := range Values(v) {
						if err := st.Add(el); err != nil {
							return bson.RawValue{}, err
						}
					}
				} else if err := st.Add(v); err != nil {
					return bson.RawValue{}, err
				}
				return st.Result()
			}
			for _, a := range args {
				v, err := a.Eval(c)
				if err != nil {
					return bson.RawValue{}, err
				}
				if err := st.Add(v); err != nil {
					return bson.RawValue{}, err
				}
			}
			return st.Result()
		}})
	})
}

// RegisterOperator adds an expression operator implemented outside this
// package (the aggregation package's $percentile and $median). parse
// receives the Parser, so operands parsed with p.Parse record their
// dependencies. It must be called from an init function; it panics on a
// duplicate name.
func RegisterOperator(name string, parse func(p *Parser, name string, arg bson.RawValue) (Expr, error)) {
	register(name, parse)
}

// ExprFunc is an Expr made from a function.
type ExprFunc func(c *Ctx) (bson.RawValue, error)

// Eval calls f.
func (f ExprFunc) Eval(c *Ctx) (bson.RawValue, error) { return f(c) }

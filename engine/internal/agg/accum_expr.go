package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

// The accumulators that MongoDB also accepts as expression operators
// ({$sum: "$homework"} or {$max: ["$a", "$b"]} in $project, $addFields,
// $match's $expr …) are registered with the expression package here, from
// the same states $group uses, so both answer alike.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#accumulators---project--addfields--set-
func init() {
	for name, mk := range map[string]func() valueState{
		"$sum":        func() valueState { return &groupSum{} },
		"$avg":        func() valueState { return &groupSum{avg: true} },
		"$min":        func() valueState { return &groupMinMax{sign: -1} },
		"$max":        func() valueState { return &groupMinMax{sign: 1} },
		"$stdDevPop":  func() valueState { return &groupStdDev{} },
		"$stdDevSamp": func() valueState { return &groupStdDev{samp: true} },
	} {
		mk := mk
		expr.RegisterAccumulator(name, func() expr.AccumState { return exprAccum{mk()} })
	}
}

// exprAccum adapts a $group value state to expr.AccumState.
type exprAccum struct{ s valueState }

// Add folds one value.
func (a exprAccum) Add(v bson.RawValue) error { return a.s.add(v) }

// SetCollation makes a $min or $max state compare strings under c.
func (a exprAccum) SetCollation(c *collation.Collator) {
	if cs, ok := a.s.(collated); ok {
		cs.setCollation(c)
	}
}

// Result returns the folded value.
func (a exprAccum) Result() (bson.RawValue, error) { return a.s.result() }

package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerUnary("$sum", func() valueState { return &groupSum{} })
	registerUnary("$avg", func() valueState { return &groupSum{avg: true} })
}

// groupSum is $sum (and $avg with avg set): the numeric values' total;
// non-numeric values are ignored, so a group without numbers sums to 0
// and averages to null.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/sum/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/avg/
type groupSum struct {
	s   numSum
	avg bool
}

func (a *groupSum) add(v bson.RawValue) error { return a.s.add(v) }

func (a *groupSum) result() (bson.RawValue, error) {
	if a.avg {
		return a.s.avg()
	}
	return a.s.value()
}

func (a *groupSum) partial() (bson.RawValue, error) { return a.s.partialDoc(), nil }
func (a *groupSum) merge(p bson.RawValue) error     { return a.s.mergeDoc(p) }
func (a *groupSum) memory() int64                   { return 64 }

var _ = expr.Null

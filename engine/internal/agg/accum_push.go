package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerUnary("$push", func() valueState { return &groupPush{} })
}

// groupPush is $push: every value in input order; missing values are
// left out. https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/push/
type groupPush struct {
	vals  []bson.RawValue
	bytes int64
}

func (a *groupPush) add(v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	a.vals = append(a.vals, v)
	a.bytes += valueSize(v)
	if a.bytes > expr.MaxBSONSize*8 {
		return mongoerr.New(mongoerr.ExceededMemoryLimit, "$push used too much memory and cannot spill to disk.")
	}
	return nil
}

func (a *groupPush) result() (bson.RawValue, error)  { return expr.Array(a.vals), nil }
func (a *groupPush) partial() (bson.RawValue, error) { return expr.Array(a.vals), nil }

func (a *groupPush) merge(p bson.RawValue) error {
	for _, v := range expr.Values(p) {
		if err := a.add(v); err != nil {
			return err
		}
	}
	return nil
}

func (a *groupPush) memory() int64 { return a.bytes }

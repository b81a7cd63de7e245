package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerUnary("$addToSet", func() valueState { return &groupSet{seen: map[string]bool{}} })
}

// groupSet is $addToSet: the distinct values (by BSON equality) in first
// appearance order; missing values are left out. mongod returns them in
// an unspecified order, so scripts sort them.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/addToSet/
type groupSet struct {
	coll  *collation.Collator
	seen  map[string]bool
	vals  []bson.RawValue
	bytes int64
}

func (a *groupSet) setCollation(c *collation.Collator) { a.coll = c }

func (a *groupSet) add(v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	k := keyOfWith(v, a.coll)
	if a.seen[k] {
		return nil
	}
	a.seen[k] = true
	a.vals = append(a.vals, v)
	a.bytes += valueSize(v) + int64(len(k))
	if a.bytes > expr.MaxBSONSize*8 {
		return mongoerr.New(mongoerr.ExceededMemoryLimit, "$addToSet used too much memory and cannot spill to disk.")
	}
	return nil
}

func (a *groupSet) result() (bson.RawValue, error)  { return expr.Array(a.vals), nil }
func (a *groupSet) partial() (bson.RawValue, error) { return expr.Array(a.vals), nil }

func (a *groupSet) merge(p bson.RawValue) error {
	for _, v := range expr.Values(p) {
		if err := a.add(v); err != nil {
			return err
		}
	}
	return nil
}

func (a *groupSet) memory() int64 { return a.bytes }

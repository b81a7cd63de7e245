package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerUnary("$first", func() valueState { return &groupFirstLast{} })
	registerUnary("$last", func() valueState { return &groupFirstLast{last: true} })
}

// groupFirstLast is $first and $last: the value of the first or last
// document of the group in input order; missing becomes null.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/first/
type groupFirstLast struct {
	last bool
	set  bool
	v    bson.RawValue
}

func (a *groupFirstLast) add(v bson.RawValue) error {
	if a.set && !a.last {
		return nil
	}
	if v.Type == 0 {
		v = expr.Null()
	}
	a.v, a.set = v, true
	return nil
}

func (a *groupFirstLast) result() (bson.RawValue, error) {
	if !a.set {
		return expr.Null(), nil
	}
	return a.v, nil
}

func (a *groupFirstLast) partial() (bson.RawValue, error) { return a.result() }
func (a *groupFirstLast) merge(p bson.RawValue) error     { return a.add(p) }
func (a *groupFirstLast) memory() int64                   { return valueSize(a.v) }

package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerUnary("$min", func() valueState { return &groupMinMax{sign: -1} })
	registerUnary("$max", func() valueState { return &groupMinMax{sign: 1} })
}

// groupMinMax is $min (sign -1) and $max (sign 1) in BSON order; null,
// undefined and missing values are ignored, so an empty group gives null.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/min/
type groupMinMax struct {
	sign int
	v    bson.RawValue
	coll *collation.Collator
}

func (a *groupMinMax) setCollation(c *collation.Collator) { a.coll = c }

func (a *groupMinMax) add(v bson.RawValue) error {
	if expr.IsNullish(v) {
		return nil
	}
	if a.v.Type == 0 || bsonkit.CompareWith(v, a.v, a.coll)*a.sign > 0 {
		a.v = v
	}
	return nil
}

func (a *groupMinMax) result() (bson.RawValue, error) {
	if a.v.Type == 0 {
		return expr.Null(), nil
	}
	return a.v, nil
}

func (a *groupMinMax) partial() (bson.RawValue, error) { return a.v, nil }
func (a *groupMinMax) merge(p bson.RawValue) error     { return a.add(p) }
func (a *groupMinMax) memory() int64                   { return valueSize(a.v) }

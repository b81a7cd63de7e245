package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	registerUnary("$mergeObjects", func() valueState { return &groupMerge{} })
}

// groupMerge is $mergeObjects: the documents merged in input order, later
// fields overwriting earlier ones in place; null and missing are ignored,
// anything else fails with 40400.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/mergeObjects/
type groupMerge struct {
	keys []string
	vals map[string]bson.RawValue
}

func (a *groupMerge) add(v bson.RawValue) error {
	if expr.IsNullish(v) {
		return nil
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return mongoerr.Newf(mongoerr.Code(40400), "$mergeObjects requires object inputs, but input %s is of type %s", showValue(v), typeName(v))
	}
	if a.vals == nil {
		a.vals = map[string]bson.RawValue{}
	}
	for _, el := range mustElems(doc) {
		k := el.Key()
		if _, ok := a.vals[k]; !ok {
			a.keys = append(a.keys, k)
		}
		a.vals[k] = el.Value()
	}
	return nil
}

func (a *groupMerge) result() (bson.RawValue, error) {
	b := expr.NewDocBuilder()
	for _, k := range a.keys {
		b.Append(k, a.vals[k])
	}
	if b.Size() > expr.MaxBSONSize {
		return bson.RawValue{}, mongoerr.New(mongoerr.BSONObjectTooLarge, "$mergeObjects result exceeds the maximum BSON size")
	}
	return expr.Doc(b.Doc()), nil
}

func (a *groupMerge) partial() (bson.RawValue, error) { return a.result() }
func (a *groupMerge) merge(p bson.RawValue) error     { return a.add(p) }

func (a *groupMerge) memory() int64 {
	n := int64(0)
	for k, v := range a.vals {
		n += int64(len(k)) + valueSize(v)
	}
	return n
}

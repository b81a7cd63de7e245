package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { registerAccum("$count", parseCountAccum) }

// groupCount is $count: the number of documents in the group, an int
// (a long past 2³¹−1), as {$sum: 1}.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/count-accumulator/
type groupCount struct{ s numSum }

// parseCountAccum parses {$count: {}}: anything but an empty document
// fails with TypeMismatch (14).
func parseCountAccum(_ *parseCtx, name string, arg bson.RawValue, _ *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error) {
	doc, ok := arg.DocumentOK()
	if !ok || len(mustElems(doc)) != 0 {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
	}
	return func(*expr.Ctx) (accumulator, error) { return &groupCount{}, nil }, nil
}

func (a *groupCount) process(*expr.Ctx) error         { return a.s.add(expr.Int32(1)) }
func (a *groupCount) result() (bson.RawValue, error)  { return a.s.value() }
func (a *groupCount) partial() (bson.RawValue, error) { return a.s.partialDoc(), nil }
func (a *groupCount) merge(p bson.RawValue) error     { return a.s.mergeDoc(p) }
func (a *groupCount) memory() int64                   { return 64 }

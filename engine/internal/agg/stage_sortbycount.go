package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
)

func init() { register("$sortByCount", 0, parseSortByCount) }

// stageSortByCount is {$sortByCount: expr}: $group by expr counting
// documents, then $sort by the count descending.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/sortByCount/
type stageSortByCount struct {
	spec  bson.RawValue
	group *stageGroup
	sort  *stageSort
}

// parseSortByCount parses $sortByCount: 40148 for a string that is not a
// $-path or a document that is not an operator expression, 40149 for
// other types.
func parseSortByCount(pc *parseCtx, spec bson.RawValue) (stage, error) {
	switch spec.Type {
	case bson.TypeString:
		if s := spec.StringValue(); len(s) == 0 || s[0] != '$' {
			return nil, mongoerr.New(mongoerr.Code(40148), "the sortByCount field must be defined as a $-prefixed path or an expression inside an object")
		}
	case bson.TypeEmbeddedDocument:
		if !isExprDoc(spec) {
			return nil, mongoerr.New(mongoerr.Code(40147), "the sortByCount field must be defined as a $-prefixed path or an expression inside an object")
		}
	default:
		return nil, mongoerr.New(mongoerr.Code(40149), "the sortByCount field must be specified as a string or as an object")
	}
	gb := expr.NewDocBuilder()
	gb.Append("_id", spec)
	cb := expr.NewDocBuilder()
	cb.Append("$sum", expr.Int32(1))
	gb.Append("count", expr.Doc(cb.Doc()))
	g, err := newGroup(pc, gb.Doc())
	if err != nil {
		return nil, err
	}
	sb := expr.NewDocBuilder()
	sb.Append("count", expr.Int32(-1))
	sspec := sb.Doc()
	o, err := order.Compile(sspec)
	if err != nil {
		return nil, err
	}
	return &stageSortByCount{spec: spec, group: g, sort: &stageSort{spec: sspec, ord: o}}, nil
}

func (s *stageSortByCount) name() string { return "$sortByCount" }

func (s *stageSortByCount) explain() bson.D { return s.explainAll()[1] }

// explainAll shows $sortByCount as mongod runs it: a $group and a $sort.
func (s *stageSortByCount) explainAll() []bson.D {
	return []bson.D{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: s.spec}, {Key: "count", Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$const", Value: 1}}}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "sortKey", Value: s.sort.spec}}}},
	}
}

func (s *stageSortByCount) deps(d *depSet) bool { return s.group.deps(d) }

func (s *stageSortByCount) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	g, err := s.group.open(ctx, rc, in)
	if err != nil {
		return nil, err
	}
	return s.sort.open(ctx, rc, g)
}

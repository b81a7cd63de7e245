package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$count", 0, parseCountStage) }

// stageCount is {$count: "field"}: one document {field: n} with the
// number of input documents, none when there are none.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/count/
type stageCount struct{ field string }

// parseCountStage parses $count: 40156 not a string, 40157 empty, 40158
// $-prefixed, 40159 a NUL byte, 40160 a dot.
func parseCountStage(_ *parseCtx, spec bson.RawValue) (stage, error) {
	if spec.Type != bson.TypeString {
		return nil, mongoerr.New(mongoerr.Code(40156), "the count field must be a non-empty string")
	}
	f := spec.StringValue()
	switch {
	case f == "":
		return nil, mongoerr.New(mongoerr.Code(40157), "the count field must be a non-empty string")
	case f[0] == '$':
		return nil, mongoerr.New(mongoerr.Code(40158), "the count field cannot be a $-prefixed path")
	case strings.IndexByte(f, 0) >= 0:
		return nil, mongoerr.New(mongoerr.Code(40159), "the count field cannot contain a null byte")
	case strings.Contains(f, "."):
		return nil, mongoerr.New(mongoerr.Code(40160), "the count field cannot contain '.'")
	}
	return &stageCount{field: f}, nil
}

func (s *stageCount) name() string        { return "$count" }
func (s *stageCount) explain() bson.D     { return bson.D{{Key: "$count", Value: s.field}} }
func (s *stageCount) deps(d *depSet) bool { return true }

// explainAll shows $count as mongod runs it: a $group and a $project.
func (s *stageCount) explainAll() []bson.D {
	return []bson.D{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$const", Value: nil}}}, {Key: s.field, Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$const", Value: 1}}}}}}}},
		{{Key: "$project", Value: bson.D{{Key: s.field, Value: true}, {Key: "_id", Value: false}}}},
	}
}

func (s *stageCount) open(_ context.Context, _ *runCtx, in Source) (Source, error) {
	done := false
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if done {
			return nil, nil
		}
		done = true
		var sum numSum
		for {
			d, err := in.Next(ctx)
			if err != nil {
				return nil, err
			}
			if d == nil {
				break
			}
			sum.add(expr.Int32(1))
		}
		if sum.n == 0 {
			return nil, nil
		}
		v, _ := sum.value()
		b := expr.NewDocBuilder()
		b.Append(s.field, v)
		return b.Doc(), nil
	}, close: in.Close}, nil
}

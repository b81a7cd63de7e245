package engine_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAggregateExecutorErrorContext checks mongod's context on an error
// raised while an aggregate runs its first batch ("PlanExecutor error
// during aggregation :: caused by :: ...", same code), and none on a
// parse error, which comes before execution.
func TestAggregateExecutorErrorContext(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 3)
	divide := mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "q", Value: bson.D{{Key: "$divide", Value: bson.A{1, "$a"}}}}}}}}
	_, err := c.Aggregate(ctx, divide)
	wantCode(t, err, 2, "BadValue")
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Message != "PlanExecutor error during aggregation :: caused by :: can't $divide by zero" {
		t.Fatalf("execution error: %v", err)
	}
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$nope", Value: 1}}})
	if !errors.As(err, &ce) || strings.Contains(ce.Message, "PlanExecutor") {
		t.Fatalf("parse error: %v, want no executor context", err)
	}
	// A batch of zero runs nothing: no error until the getMore, whose
	// context is getMore's, not the aggregation's.
	cur, err := c.Aggregate(ctx, divide, options.Aggregate().SetBatchSize(0))
	if err != nil {
		t.Fatalf("batchSize 0: %v", err)
	}
	defer cur.Close(ctx)
	cur.Next(ctx)
	if err := cur.Err(); err == nil || strings.Contains(err.Error(), "PlanExecutor error during aggregation") {
		t.Fatalf("getMore error: %v", err)
	}
}

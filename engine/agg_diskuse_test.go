package engine_test

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAggregateSortNoDiskUse is issue 13's failure 5: an aggregate whose
// leading $sort runs as the pushed-down query's blocking sort ignored
// allowDiskUse: false and spilled. Past the sort memory limit it answers
// QueryExceededMemoryLimitNoDiskUseAllowed (292), as mongod does; with the
// default (allowDiskUseByDefault) it spills and answers in order.
func TestAggregateSortNoDiskUse(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("s")
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: (i * 37) % 300}, {Key: "pad", Value: fmt.Sprintf("%0200d", i)}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 10000}}).Err(); err != nil {
		t.Fatal(err)
	}
	sortK := mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "k", Value: 1}}}}}
	_, err := c.Aggregate(ctx, sortK, options.Aggregate().SetAllowDiskUse(false))
	wantCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	// A $match before the sort is pushed down with it.
	matchSort := mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$gte", Value: 0}}}}}}, sortK[0]}
	_, err = c.Aggregate(ctx, matchSort, options.Aggregate().SetAllowDiskUse(false))
	wantCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	cur, err := c.Aggregate(ctx, sortK)
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx, &got); err != nil || len(got) != 300 {
		t.Fatalf("spilled sort: %d documents, %v", len(got), err)
	}
	for i, d := range got {
		if d[1].Value.(int32) != int32(i) {
			t.Fatalf("position %d holds k=%v", i, d[1].Value)
		}
	}
}

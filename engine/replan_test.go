package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// indexOps returns $indexStats' accesses.ops per index name.
func indexOps(t *testing.T, c *mongo.Collection) map[string]int64 {
	t.Helper()
	ctx := ctxT(t)
	cur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$indexStats", Value: bson.D{}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range docs {
		out[d.Lookup("name").StringValue()] = d.Lookup("accesses", "ops").Int64()
	}
	return out
}

// TestCachedPlanIsReplannedWhenItGoesStale caches a plan chosen for a
// selective value, then runs the same shape with a value for which that
// plan is poor: the cached plan overruns its budget and the query is
// planned again, as mongod's CachedPlanStage does.
func TestCachedPlanIsReplannedWhenItGoesStale(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	docs := make([]any, 0, 3000)
	for i := 0; i < 3000; i++ {
		a, b := 2, i%1000 // a=2 everywhere but one document; b nearly unique
		if i == 0 {
			a = 1
		}
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: a}, {Key: "b", Value: b}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	// a=1 is one key; b=0 is three: the a index wins and is cached.
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 0}}); n != 1 {
		t.Fatalf("first query counted %d", n)
	}
	before := indexOps(t, c)
	if before["a_1"] != 1 || before["b_1"] != 0 {
		t.Fatalf("after the first query ops = %v", before)
	}
	// a=2 matches 2999 documents, b=5 three: the cached a plan is stale.
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "a", Value: 2}, {Key: "b", Value: 5}}); n != 3 {
		t.Fatalf("second query counted %d", n)
	}
	after := indexOps(t, c)
	if after["b_1"] != 1 || after["a_1"] != 1 {
		t.Fatalf("the stale cached plan was not replaced: ops = %v", after)
	}
	// The replanned choice is cached in turn and reused.
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "a", Value: 2}, {Key: "b", Value: 7}}); n != 3 {
		t.Fatalf("third query counted %d", n)
	}
	if ops := indexOps(t, c); ops["b_1"] != 2 {
		t.Fatalf("ops after the third query = %v", ops)
	}
}

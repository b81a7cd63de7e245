package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
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

// TestContainedOrUsesIndexUnion plans {a, $or: [{b}, {c}]} with indexes on
// b and c only as the union of two index scans, each branch filtered by a,
// and returns exactly what a collection scan returns.
func TestContainedOrUsesIndexUnion(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	docs := make([]any, 0, 2000)
	for i := 0; i < 2000; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 2}, {Key: "b", Value: i % 500}, {Key: "c", Value: i % 400}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"b", "c"} {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	filter := bson.D{{Key: "a", Value: 0}, {Key: "$or", Value: bson.A{bson.D{{Key: "b", Value: 4}}, bson.D{{Key: "c", Value: 6}}}}}
	res := explaintest.Run(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}})
	if !res.HasStage("OR") || !res.Uses("b_1") || !res.Uses("c_1") || res.HasStage("COLLSCAN") || res.HasStage("SUBPLAN") {
		t.Fatalf("plan = %s", res)
	}
	// b=4: ids 4, 504, 1004, 1504 (all even); c=6: 6, 406, 806, 1206, 1606.
	if res.NReturned() != 9 || res.DocsExamined() != 9 {
		t.Fatalf("nReturned %d, docsExamined %d", res.NReturned(), res.DocsExamined())
	}
	n, err := c.CountDocuments(ctx, filter)
	if err != nil || n != 9 {
		t.Fatalf("count = %d %v", n, err)
	}
	odd := bson.D{{Key: "a", Value: 1}, {Key: "$or", Value: bson.A{bson.D{{Key: "b", Value: 4}}, bson.D{{Key: "c", Value: 6}}}}}
	if n, _ := c.CountDocuments(ctx, odd); n != 0 {
		t.Fatalf("a=1 count = %d, want 0", n)
	}
}

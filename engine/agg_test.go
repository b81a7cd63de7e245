package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// seedN inserts n documents {_id: i, a: i % 10, b: i} into c.
func seedN(t *testing.T, c *mongo.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}}
	}
	if _, err := c.InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
}

// TestAggregateGroupAndCursor runs a $group through the driver with a
// small batch size, so that getMore continues the pipeline's cursor, and
// a zero first batch, which opens a cursor without results.
func TestAggregateGroupAndCursor(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 100)
	cur, err := c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	}, options.Aggregate().SetBatchSize(3))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[9]["_id"] != int32(9) || got[9]["n"] != int32(10) {
		t.Fatalf("groups = %v", got)
	}
	var res bson.Raw
	err = db.RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	if id := res.Lookup("cursor", "id").Int64(); id == 0 {
		t.Fatalf("batchSize 0: cursor id 0, want an open cursor: %v", res)
	}
	if n, _ := res.Lookup("cursor", "firstBatch").Array().Values(); len(n) != 0 {
		t.Fatalf("batchSize 0: first batch %v, want empty", n)
	}
}

// TestAggregateCollectionless runs {aggregate: 1} with $documents, and
// checks that a stage needing a collection is refused there.
func TestAggregateCollectionless(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	cur, err := db.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}}}},
		{{Key: "$match", Value: bson.D{{Key: "x", Value: 2}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil || len(got) != 1 || got[0]["x"] != int32(2) {
		t.Fatalf("$documents: %v %v", got, err)
	}
	_, err = db.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}})
	wantCode(t, err, 73, "InvalidNamespace")
}

// TestAggregateOutMerge writes with $out (replacing the target's
// documents, keeping its indexes) and $merge (into an existing
// collection, on a unique index), and checks the errors of bad targets.
func TestAggregateOutMerge(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 20)
	out := db.Collection("out")
	if _, err := out.InsertOne(ctx, bson.D{{Key: "_id", Value: "old"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$lt", Value: 2}}}}}},
		{{Key: "$out", Value: "out"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	if n, _ := out.CountDocuments(ctx, bson.D{}); n != 4 {
		t.Fatalf("$out: %d documents, want 4", n)
	}
	if n, _ := out.CountDocuments(ctx, bson.D{{Key: "_id", Value: "old"}}); n != 0 {
		t.Fatal("$out kept an old document")
	}
	specs, err := out.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 {
		t.Fatalf("$out indexes: %v %v, want _id_ and a_1", specs, err)
	}

	// $merge into out on _id: update the 4 matching, insert the rest.
	cur, err = c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$lt", Value: 3}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "m", Value: 1}, {Key: "a", Value: 1}}}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: "out"}, {Key: "whenMatched", Value: "merge"}, {Key: "whenNotMatched", Value: "insert"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	if n, _ := out.CountDocuments(ctx, bson.D{}); n != 6 {
		t.Fatalf("$merge: %d documents, want 6", n)
	}
	// "on" a field without a unique index: 51183.
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "out"}, {Key: "on", Value: "a"}}}}})
	wantCode(t, err, 51183, "")
	// $merge failing on a duplicate key in whenMatched "fail".
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "out"}, {Key: "whenMatched", Value: "fail"}}}}})
	wantCode(t, err, 11000, "DuplicateKey")
	// Writing into a system collection.
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$out", Value: "system.x"}}})
	wantCode(t, err, 17385, "")
}

// TestViews creates a view, reads it with find, count, distinct and
// aggregate, lists it, and checks that writes and indexes on it fail with
// CommandNotSupportedOnView (166).
func TestViews(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 30)
	err := db.CreateView(ctx, "v", "c", mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 5}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "a", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := db.Collection("v")
	cur, err := v.Find(ctx, bson.D{{Key: "a", Value: 7}}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0]["_id"] != int32(27) || got[0]["b"] != nil {
		t.Fatalf("find on view = %v", got)
	}
	if n, err := v.CountDocuments(ctx, bson.D{}); err != nil || n != 15 {
		t.Fatalf("countDocuments on view = %d, %v", n, err)
	}
	var cnt struct{ N int64 }
	if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "v"}, {Key: "query", Value: bson.D{{Key: "a", Value: 5}}}}).Decode(&cnt); err != nil || cnt.N != 3 {
		t.Fatalf("count on view = %d, %v", cnt.N, err)
	}
	var dist struct{ Values []int32 }
	if err := db.RunCommand(ctx, bson.D{{Key: "distinct", Value: "v"}, {Key: "key", Value: "a"}}).Decode(&dist); err != nil || len(dist.Values) != 5 {
		t.Fatalf("distinct on view = %v, %v", dist.Values, err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "v"}})
	if err != nil || len(specs) != 1 || specs[0].Type != "view" {
		t.Fatalf("listCollections: %+v %v", specs, err)
	}
	_, err = v.InsertOne(ctx, bson.D{{Key: "a", Value: 1}})
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	_, err = v.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	_, err = v.DeleteMany(ctx, bson.D{})
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	err = v.FindOneAndDelete(ctx, bson.D{}).Err()
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	_, err = v.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	// A view of the view, and $lookup from a view.
	if err := db.CreateView(ctx, "vv", "v", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "a", Value: 9}}}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Collection("vv").CountDocuments(ctx, bson.D{}); err != nil || n != 3 {
		t.Fatalf("view on view: %d, %v", n, err)
	}
	// Writing into a view with $out fails.
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$out", Value: "v"}}})
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	// A view's pipeline may not write.
	err = db.CreateView(ctx, "bad", "c", mongo.Pipeline{{{Key: "$out", Value: "x"}}})
	if err == nil {
		t.Fatal("a view with $out was created")
	}
}

// TestAggregateExplain checks explain's shapes: a pipeline that is all
// query has find's shape; one with other stages has "stages" with the
// pushed-down query in $cursor, whose leading $match examines exactly the
// keys find does.
func TestAggregateExplain(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 200)
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2}}}}}
	find := explaintest.Run(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}})

	plain := explaintest.Run(t, db, bson.D{{Key: "aggregate", Value: "c"},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: filter}}}}, {Key: "cursor", Value: bson.D{}}})
	if _, err := plain.Reply().LookupErr("queryPlanner"); err != nil {
		t.Fatalf("$match-only pipeline: no queryPlanner at the top: %v", plain.Reply())
	}

	var res bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"},
		{Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: filter}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		}}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	stages, err := res.LookupErr("stages")
	if err != nil {
		t.Fatalf("no stages: %v", res)
	}
	vals, _ := stages.Array().Values()
	if len(vals) != 2 {
		t.Fatalf("stages = %v", vals)
	}
	cursor := vals[0].Document().Lookup("$cursor")
	keys := cursor.Document().Lookup("executionStats", "totalKeysExamined").AsInt64()
	if keys != find.KeysExamined() {
		t.Errorf("$cursor examined %d keys, find %d", keys, find.KeysExamined())
	}
	if plan := cursor.Document().Lookup("queryPlanner", "winningPlan"); plan.Type == 0 {
		t.Errorf("$cursor without winningPlan: %v", cursor)
	}
	g := vals[1].Document()
	if _, err := g.LookupErr("$group"); err != nil {
		t.Fatalf("second stage %v, want $group", g)
	}
	if n := g.Lookup("nReturned").AsInt64(); n != 2 {
		t.Errorf("$group nReturned = %d, want 2", n)
	}
	if _, err := g.LookupErr("usedDisk"); err != nil {
		t.Errorf("$group without usedDisk: %v", g)
	}
	// {aggregate, explain: true} answers the explain itself.
	err = db.RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}}}}}}, {Key: "explain", Value: true}}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.LookupErr("stages"); err != nil {
		t.Fatalf("explain: true: %v", res)
	}
}

// TestAggregateMemoryLimitParameter lowers the $group memory limit with
// setParameter: with allowDiskUse false the group fails with
// QueryExceededMemoryLimitNoDiskUseAllowed (292), with the default it
// spills and answers.
func TestAggregateMemoryLimitParameter(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 2000)
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalDocumentSourceGroupMaxMemoryBytes", Value: int64(1000)}}).Err(); err != nil {
		t.Fatal(err)
	}
	var p bson.Raw
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "internalDocumentSourceGroupMaxMemoryBytes", Value: 1}}).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if v := p.Lookup("internalDocumentSourceGroupMaxMemoryBytes").AsInt64(); v != 1000 {
		t.Fatalf("getParameter = %d", v)
	}
	group := mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$b"}, {Key: "s", Value: bson.D{{Key: "$push", Value: "$a"}}}}}}}
	_, err := c.Aggregate(ctx, group, options.Aggregate().SetAllowDiskUse(false))
	wantCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Aggregate(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil || len(got) != 2000 {
		t.Fatalf("spilled $group: %d groups, %v", len(got), err)
	}
	// The profiler records that the $group spilled.
	n, err := db.Collection("system.profile").CountDocuments(ctx, bson.D{{Key: "command.aggregate", Value: "c"}, {Key: "usedDisk", Value: true}})
	if err != nil || n == 0 {
		t.Fatalf("no profile entry with usedDisk: %d, %v", n, err)
	}
}

// TestDensifyDocsParameter lowers internalQueryMaxAllowedDensifyDocs
// with setParameter and sees $densify stop at the new limit (5897900).
func TestDensifyDocsParameter(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "x", Value: 0}}, bson.D{{Key: "x", Value: 100}}}); err != nil {
		t.Fatal(err)
	}
	densify := mongo.Pipeline{{{Key: "$densify", Value: bson.D{{Key: "field", Value: "x"}, {Key: "range", Value: bson.D{{Key: "step", Value: 1}, {Key: "bounds", Value: "full"}}}}}}}
	count := func() (int, error) {
		cur, err := c.Aggregate(ctx, densify)
		if err != nil {
			return 0, err
		}
		var got []bson.Raw
		err = cur.All(ctx, &got)
		return len(got), err
	}
	if n, err := count(); err != nil || n != 101 {
		t.Fatalf("densify 0..100: %d documents, %v", n, err)
	}
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: 50}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := count()
	wantCode(t, err, 5897900, "")
	err = admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: int64(1) << 40}}).Err()
	wantCode(t, err, 2, "BadValue")
}

// TestViewExplain checks that a find on a view is explained as the
// aggregate it runs, with the query on the collection under the view in
// $cursor.
func TestViewExplain(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 50)
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "a", Value: 3}}}}, {{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	var res bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{{Key: "b", Value: 13}}}}},
		{Key: "verbosity", Value: "executionStats"}}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := res.Lookup("stages").Array().Values()
	if err != nil || len(vals) < 2 {
		t.Fatalf("explain find on view: %v", res)
	}
	ns := vals[0].Document().Lookup("$cursor", "queryPlanner", "namespace")
	if s, _ := ns.StringValueOK(); s != "test.c" {
		t.Errorf("$cursor namespace = %v, want test.c", ns)
	}
}

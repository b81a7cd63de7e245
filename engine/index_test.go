package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

func TestCreateListDropIndexes(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 10)
	names, err := c.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "g", Value: 1}, {Key: "n", Value: -1}}},
		{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetUnique(true).SetName("s_unique")},
		{Keys: bson.D{{Key: "x", Value: 1}}, Options: options.Index().SetSparse(true).SetHidden(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[g_1_n_-1 s_unique x_1]" {
		t.Fatalf("names = %v", names)
	}
	specs, err := c.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 || specs[0].Name != "_id_" || specs[2].Unique == nil || !*specs[2].Unique || specs[3].Sparse == nil || !*specs[3].Sparse {
		t.Fatalf("specs = %+v", specs)
	}
	// Re-creating the same index is a no-op.
	var res bson.M
	err = db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "s", Value: 1}}}, {Key: "name", Value: "s_unique"}, {Key: "unique", Value: true}}}}}).Decode(&res)
	if err != nil || res["note"] != "all indexes already exist" || res["numIndexesAfter"] != int32(4) {
		t.Fatalf("re-create: %v %v", res, err)
	}
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetName("other")})
	wantCode(t, err, 85, "IndexOptionsConflict")
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: 1}}, Options: options.Index().SetName("s_unique")})
	wantCode(t, err, 86, "IndexKeySpecsConflict")
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetName("s_unique")})
	wantCode(t, err, 85, "IndexOptionsConflict")
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: "text"}}})
	wantCode(t, err, 238, "NotImplemented")
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: "hashed"}}})
	wantCode(t, err, 238, "NotImplemented")

	if err := c.Indexes().DropOne(ctx, "x_1"); err != nil {
		t.Fatal(err)
	}
	err = c.Indexes().DropOne(ctx, "x_1")
	wantCode(t, err, 27, "IndexNotFound")
	err = c.Indexes().DropOne(ctx, "_id_")
	wantCode(t, err, 72, "InvalidOptions")
	err = db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: bson.D{{Key: "g", Value: 1}, {Key: "n", Value: -1}}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Indexes().DropAll(ctx); err != nil {
		t.Fatal(err)
	}
	specs, _ = c.Indexes().ListSpecifications(ctx)
	if len(specs) != 1 {
		t.Fatalf("after dropAll: %+v", specs)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "listIndexes", Value: "nope"}}).Err()
	wantCode(t, err, 26, "NamespaceNotFound")
}

func TestUniqueIndexOnBuildAndWrite(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	_, err := c.InsertMany(ctx, []any{bson.D{{Key: "e", Value: "a@x"}}, bson.D{{Key: "e", Value: "a@x"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "e", Value: 1}}, Options: options.Index().SetUnique(true)})
	wantCode(t, err, 11000, "DuplicateKey")
	if specs, _ := c.Indexes().ListSpecifications(ctx); len(specs) != 1 {
		t.Fatalf("failed build left an index: %+v", specs)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "e", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "e", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.InsertOne(ctx, bson.D{{Key: "e", Value: "a@x"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("insert dup: %v", err)
	}
	if want := `E11000 duplicate key error collection: test.c index: e_1 dup key: { e: "a@x" }`; we.WriteErrors[0].Message != want {
		t.Fatalf("message %q, want %q", we.WriteErrors[0].Message, want)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "e", Value: "b@x"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateOne(ctx, bson.D{{Key: "e", Value: "b@x"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "e", Value: "a@x"}}}})
	wantCode(t, err, 11000, "")
	// Updating a document without changing its key is fine.
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "e", Value: "b@x"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "z", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
}

func TestIndexLimitsAndParallelArrays(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	for i := 0; i < 63; i++ {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: fmt.Sprintf("f%d", i), Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "f64", Value: 1}}})
	wantCode(t, err, 67, "CannotCreateIndex")

	p := db.Collection("p")
	if _, err := p.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	_, err = p.InsertOne(ctx, bson.D{{Key: "a", Value: bson.A{1, 2}}, {Key: "b", Value: bson.A{3, 4}}})
	wantCode(t, err, 171, "")
	if n, _ := p.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatal("document with parallel arrays was stored")
	}
}

func TestMultikeyIsRecordedAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, client := testenv.Engine(t, engine.Options{Dir: dir})
	ctx := ctxT(t)
	c := client.Database("test").Collection("c")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "tags", Value: bson.A{"a", "b"}}}); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Keys map[string]int64 `bson:"keysPerIndex"`
		OK   bool             `bson:"valid"`
	}
	if err := client.Database("test").RunCommand(ctx, bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if !v.OK || v.Keys["tags_1"] != 2 || v.Keys["_id_"] != 1 {
		t.Fatalf("validate = %+v", v)
	}
	client.Disconnect(ctx)
	db.Close()
	db2, client2 := testenv.Engine(t, engine.Options{Dir: dir})
	_ = db2
	var st struct {
		Count   int64            `bson:"count"`
		NIdx    int32            `bson:"nindexes"`
		Sizes   map[string]int64 `bson:"indexSizes"`
		TotalIx int64            `bson:"totalIndexSize"`
	}
	if err := client2.Database("test").RunCommand(ctx, bson.D{{Key: "collStats", Value: "c"}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Count != 1 || st.NIdx != 2 || st.Sizes["tags_1"] == 0 || st.TotalIx != st.Sizes["tags_1"]+st.Sizes["_id_"] {
		t.Fatalf("collStats = %+v", st)
	}
}

func TestTTLMonitorDeletesExpiredDocuments(t *testing.T) {
	_, client := testenv.Engine(t, engine.Options{TTLInterval: 20 * time.Millisecond})
	ctx := ctxT(t)
	c := client.Database("test").Collection("sessions")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "at", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(60)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "old"}, {Key: "at", Value: now.Add(-2 * time.Minute)}},
		bson.D{{Key: "_id", Value: "oldInArray"}, {Key: "at", Value: bson.A{now.Add(time.Hour), now.Add(-time.Hour)}}},
		bson.D{{Key: "_id", Value: "fresh"}, {Key: "at", Value: now}},
		bson.D{{Key: "_id", Value: "notDate"}, {Key: "at", Value: "yesterday"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var left int64
	for i := 0; i < 1000; i++ { // up to 10 s on a loaded machine
		left, _ = c.CountDocuments(ctx, bson.D{})
		if left == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	cur.All(ctx, &docs)
	if len(docs) != 2 || docs[0]["_id"] != "fresh" || docs[1]["_id"] != "notDate" {
		t.Fatalf("after TTL: %v", docs)
	}
}

func TestCollStatsStage(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 5)
	cur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}, {Key: "count", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Lookup("count").Int64() != 5 || docs[0].Lookup("storageStats", "count").Int64() != 5 || docs[0].Lookup("storageStats", "nindexes").Int32() != 1 {
		t.Fatalf("$collStats = %v", docs)
	}
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "latencyStats", Value: bson.D{}}}}}})
	wantCode(t, err, 238, "NotImplemented")
}

func TestCollModHidesIndexAndChangesTTL(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 20)
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "n", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(100)}); err != nil {
		t.Fatal(err)
	}
	find := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "n", Value: 3}}}}
	if res := explaintest.Run(t, db, find); !res.Uses("n_1") {
		t.Fatalf("before hiding: %s", res)
	}
	var reply bson.M
	err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "n_1"}, {Key: "hidden", Value: true}}}}).Decode(&reply)
	if err != nil || reply["hidden_old"] != false || reply["hidden_new"] != true {
		t.Fatalf("collMod hidden: %v %v", reply, err)
	}
	if res := explaintest.Run(t, db, find); res.Uses("n_1") || !res.HasStage("COLLSCAN") {
		t.Fatalf("hidden index still used: %s", res)
	}
	lc, err := db.RunCommand(ctx, bson.D{{Key: "listIndexes", Value: "c"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	second := bson.Raw(lc.Lookup("cursor", "firstBatch").Array()).Index(1).Value().Document()
	if h, ok := second.Lookup("hidden").BooleanOK(); !ok || !h {
		t.Fatalf("listIndexes = %v", second)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "n", Value: 1}}}, {Key: "hidden", Value: false}, {Key: "expireAfterSeconds", Value: 5}}}}).Decode(&reply)
	if err != nil || reply["expireAfterSeconds_old"] != int32(100) || reply["expireAfterSeconds_new"] != int32(5) {
		t.Fatalf("collMod ttl: %v %v", reply, err)
	}
	if res := explaintest.Run(t, db, find); !res.Uses("n_1") {
		t.Fatalf("after unhiding: %s", res)
	}
	specs, _ := c.Indexes().ListSpecifications(ctx)
	if specs[1].ExpireAfterSeconds == nil || *specs[1].ExpireAfterSeconds != 5 {
		t.Fatalf("ttl after collMod = %+v", specs[1])
	}
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "nope"}, {Key: "hidden", Value: true}}}}).Err()
	wantCode(t, err, 27, "IndexNotFound")
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "nosuch"}, {Key: "validator", Value: bson.D{}}}).Err()
	wantCode(t, err, 26, "NamespaceNotFound")
}

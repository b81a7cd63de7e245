package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestChangeStreamDatabaseAndCluster watches a database and the whole
// deployment: rename and drop events, dropDatabase invalidating the
// database stream but not the cluster one.
func TestChangeStreamDatabaseAndCluster(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	dbs := mustWatch(t, db, nil)
	all := mustWatch(t, client, nil)
	other := client.Database("other")
	if _, err := db.Collection("a").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Collection("b").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.a"}, {Key: "to", Value: "test.a2"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}

	ev := nextEvent(t, dbs)
	wantType(t, ev, "insert")
	ev = nextEvent(t, dbs)
	wantType(t, ev, "rename")
	if to := ev["to"].(bson.M); to["db"] != "test" || to["coll"] != "a2" {
		t.Fatalf("rename to %v", ev)
	}
	wantType(t, nextEvent(t, dbs), "drop")
	ev = nextEvent(t, dbs)
	wantType(t, ev, "dropDatabase")
	if ns := ev["ns"].(bson.M); ns["db"] != "test" || ns["coll"] != nil {
		t.Fatalf("dropDatabase ns %v", ns)
	}
	wantType(t, nextEvent(t, dbs), "invalidate")

	var seen []string
	for range 5 {
		ev := nextEvent(t, all)
		seen = append(seen, ev["operationType"].(string)+":"+ev["ns"].(bson.M)["db"].(string))
	}
	want := []string{"insert:test", "insert:other", "rename:test", "drop:test", "dropDatabase:test"}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("cluster stream saw %v, want %v", seen, want)
		}
	}
	if err := other.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	wantType(t, nextEvent(t, all), "drop")
	wantType(t, nextEvent(t, all), "dropDatabase")
	if all.ID() == 0 {
		t.Fatal("cluster stream closed by dropDatabase")
	}
}

// TestChangeStreamExpandedEvents checks create, createIndexes,
// dropIndexes and modify with showExpandedEvents, and rename's
// operationDescription.
func TestChangeStreamExpandedEvents(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	cs := mustWatch(t, db, nil, options.ChangeStream().SetShowExpandedEvents(true))
	plain := mustWatch(t, db, nil)
	if err := db.CreateCollection(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	c := db.Collection("x")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Indexes().DropOne(ctx, "k_1"); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "x"}, {Key: "validator", Value: bson.D{{Key: "a", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}, {Key: "m.0", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	wantType(t, ev, "create")
	if ev["collectionUUID"] == nil || ev["operationDescription"].(bson.M)["idIndex"] == nil {
		t.Fatalf("create %v", ev)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "createIndexes")
	if ix := ev["operationDescription"].(bson.M)["indexes"].(bson.A); len(ix) != 1 || ix[0].(bson.M)["name"] != "k_1" {
		t.Fatalf("createIndexes %v", ev)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "dropIndexes")
	if ix := ev["operationDescription"].(bson.M)["indexes"].(bson.A); len(ix) != 1 || ix[0].(bson.M)["name"] != "k_1" {
		t.Fatalf("dropIndexes %v", ev)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "modify")
	if ev["operationDescription"].(bson.M)["validator"] == nil {
		t.Fatalf("modify %v", ev)
	}
	wantType(t, nextEvent(t, cs), "insert")
	// Without showExpandedEvents only the insert shows.
	wantType(t, nextEvent(t, plain), "insert")
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m", Value: bson.D{{Key: "0", Value: 2}}}}}}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "update")
	if _, ok := ev["updateDescription"].(bson.M)["disambiguatedPaths"]; !ok {
		t.Fatalf("no disambiguatedPaths with showExpandedEvents: %v", ev)
	}
}

// TestChangeStreamPipeline filters and reshapes events, and checks the
// errors for disallowed stages and a modified _id.
func TestChangeStreamPipeline(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("p")
	cs := mustWatch(t, c, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "fullDocument.keep", Value: true}}}},
		{{Key: "$project", Value: bson.D{{Key: "fullDocument.keep", Value: 1}, {Key: "operationType", Value: 1}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "tag", Value: "x"}}}},
	})
	insertN(t, c, 1, 3)
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "keep", Value: true}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if ev["tag"] != "x" || ev["fullDocument"].(bson.M)["keep"] != true || ev["ns"] != nil {
		t.Fatalf("pipeline output %v", ev)
	}
	for _, stage := range []bson.D{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$_id"}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$limit", Value: 1}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "p"}, {Key: "as", Value: "x"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}}}},
	} {
		_, err := c.Watch(ctx, mongo.Pipeline{stage})
		wantCode(t, err, 20, "IllegalOperation")
	}
	bad := mustWatch(t, c, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}}}}})
	insertN(t, c, 10, 11)
	ctx2, cancel := ctxWithin(5)
	defer cancel()
	if bad.Next(ctx2) {
		t.Fatal("event with _id removed was returned")
	}
	wantCode(t, bad.Err(), 280, "ChangeStreamFatalError")

	// $changeStream elsewhere than first, and on internal namespaces.
	_, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}, {{Key: "$changeStream", Value: bson.D{}}}})
	wantCode(t, err, 40602, "")
	_, err = db.Client().Database("admin").Watch(ctx, mongo.Pipeline{})
	wantCode(t, err, 73, "InvalidNamespace")
	_, err = db.Client().Database("local").Collection("oplog.rs").Watch(ctx, mongo.Pipeline{})
	wantCode(t, err, 73, "InvalidNamespace")
	_, err = c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument("bogus"))
	wantCode(t, err, 2, "BadValue")
}

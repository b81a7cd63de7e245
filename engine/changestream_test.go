package engine_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// nextEvent returns the stream's next event, failing after a few seconds.
func nextEvent(t *testing.T, cs *mongo.ChangeStream) bson.M {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !cs.Next(ctx) {
		t.Fatalf("no event: %v", cs.Err())
	}
	return asM(t, cs.Current)
}

// asM decodes a document with nested documents as bson.M.
func asM(t *testing.T, raw bson.Raw) bson.M {
	t.Helper()
	dec := bson.NewDecoder(bson.NewDocumentReader(bytes.NewReader(raw)))
	dec.DefaultDocumentM()
	var m bson.M
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// noEvent checks that the stream has nothing more: one getMore (the
// stream's maxAwaitTime should be short) returns no event.
func noEvent(t *testing.T, cs *mongo.ChangeStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cs.TryNext(ctx) {
		t.Fatalf("unexpected event %v", cs.Current)
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
}

func mustWatch(t *testing.T, w interface {
	Watch(context.Context, any, ...options.Lister[options.ChangeStreamOptions]) (*mongo.ChangeStream, error)
}, pipeline any, opts ...options.Lister[options.ChangeStreamOptions]) *mongo.ChangeStream {
	t.Helper()
	if pipeline == nil {
		pipeline = mongo.Pipeline{}
	}
	cs, err := w.Watch(ctxT(t), pipeline, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(context.Background()) })
	return cs
}

func wantType(t *testing.T, ev bson.M, typ string) {
	t.Helper()
	if ev["operationType"] != typ {
		t.Fatalf("operationType %v, want %s: %v", ev["operationType"], typ, ev)
	}
}

// TestChangeStreamCollectionEvents watches a collection through insert,
// update, replace, delete and drop, which invalidates the stream.
func TestChangeStreamCollectionEvents(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("cs")
	if err := db.CreateCollection(ctx, "cs"); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil)
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "arr", Value: bson.A{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	wantType(t, ev, "insert")
	if ev["fullDocument"].(bson.M)["a"] != int32(1) || ev["documentKey"].(bson.M)["_id"] != int32(1) {
		t.Fatalf("insert event %v", ev)
	}
	if ns := ev["ns"].(bson.M); ns["db"] != "test" || ns["coll"] != "cs" {
		t.Fatalf("ns %v", ns)
	}
	if _, ok := ev["clusterTime"].(bson.Timestamp); !ok {
		t.Fatalf("clusterTime %T", ev["clusterTime"])
	}
	if _, ok := ev["wallTime"].(bson.DateTime); !ok {
		t.Fatalf("wallTime %T", ev["wallTime"])
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "b", Value: 2}}},
		{Key: "$unset", Value: bson.D{{Key: "a", Value: ""}}},
		{Key: "$pop", Value: bson.D{{Key: "arr", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "update")
	ud := ev["updateDescription"].(bson.M)
	if ud["updatedFields"].(bson.M)["b"] != int32(2) {
		t.Fatalf("updatedFields %v", ud)
	}
	if rf := ud["removedFields"].(bson.A); len(rf) != 1 || rf[0] != "a" {
		t.Fatalf("removedFields %v", ud)
	}
	if ta := ud["truncatedArrays"].(bson.A); len(ta) != 1 || ta[0].(bson.M)["field"] != "arr" || ta[0].(bson.M)["newSize"] != int32(2) {
		t.Fatalf("truncatedArrays %v", ud)
	}
	if _, has := ev["fullDocument"]; has {
		t.Fatalf("update event without updateLookup has fullDocument: %v", ev)
	}
	if _, has := ud["disambiguatedPaths"]; has {
		t.Fatalf("disambiguatedPaths without showExpandedEvents: %v", ud)
	}
	if _, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "r", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "replace")
	if ev["fullDocument"].(bson.M)["r"] != int32(1) {
		t.Fatalf("replace event %v", ev)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "delete")
	if ev["documentKey"].(bson.M)["_id"] != int32(1) {
		t.Fatalf("delete event %v", ev)
	}
	if err := c.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	wantType(t, nextEvent(t, cs), "drop")
	wantType(t, nextEvent(t, cs), "invalidate")
	ctx2, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if cs.Next(ctx2) {
		t.Fatalf("event after invalidate: %v", cs.Current)
	}
	if cs.ID() != 0 {
		t.Fatalf("cursor %d still open after invalidate", cs.ID())
	}
}

// TestChangeStreamPreAndPostImages enables images with collMod and reads
// them as fullDocumentBeforeChange and fullDocument: whenAvailable, and
// checks required on a collection without images.
func TestChangeStreamPreAndPostImages(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("img")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "img"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil, options.ChangeStream().SetFullDocument(options.WhenAvailable).SetFullDocumentBeforeChange(options.Required))
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	wantType(t, ev, "update")
	if ev["fullDocument"].(bson.M)["v"] != int32(2) || ev["fullDocumentBeforeChange"].(bson.M)["v"] != int32(1) {
		t.Fatalf("images %v", ev)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, cs)
	wantType(t, ev, "delete")
	if ev["fullDocumentBeforeChange"].(bson.M)["v"] != int32(2) {
		t.Fatalf("delete pre-image %v", ev)
	}

	// Without images, whenAvailable gives null and required fails.
	plain := db.Collection("plain")
	if _, err := plain.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	avail := mustWatch(t, plain, nil, options.ChangeStream().SetFullDocumentBeforeChange(options.WhenAvailable))
	req := mustWatch(t, plain, nil, options.ChangeStream().SetFullDocumentBeforeChange(options.Required))
	if _, err := plain.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, avail)
	if v, ok := ev["fullDocumentBeforeChange"]; !ok || v != nil {
		t.Fatalf("whenAvailable without images: %v", ev)
	}
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if req.Next(ctx2) {
		t.Fatalf("required without images gave %v", req.Current)
	}
	wantCode(t, req.Err(), 47, "NoMatchingDocument")

	var info struct {
		Options bson.M `bson:"options"`
	}
	cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: "img"}})
	if err != nil {
		t.Fatal(err)
	}
	cur.Next(ctx)
	if err := cur.Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Options["changeStreamPreAndPostImages"] == nil {
		t.Fatalf("listCollections options %v", info.Options)
	}
}

// TestChangeStreamUpdateLookup reads the current document of an update.
func TestChangeStreamUpdateLookup(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("ul")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 5}}}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if ev["fullDocument"].(bson.M)["v"] != int32(5) {
		t.Fatalf("updateLookup %v", ev)
	}
}

// ctxWithin returns a context that ends after n seconds.
func ctxWithin(n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(n)*time.Second)
}

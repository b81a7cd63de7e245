package engine_test

import (
	"regexp"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// eventsOf reads n events and returns them as "type ns.db.ns.coll".
func eventsOf(t *testing.T, cs *mongo.ChangeStream, n int) []bson.M {
	t.Helper()
	out := make([]bson.M, n)
	for i := range out {
		out[i] = nextEvent(t, cs)
	}
	return out
}

// nsOf returns an event's ns as "db.coll" (or "db").
func nsOf(ev bson.M) string {
	ns, _ := ev["ns"].(bson.M)
	if ns == nil {
		return ""
	}
	if c, ok := ns["coll"].(string); ok {
		return ns["db"].(string) + "." + c
	}
	return ns["db"].(string)
}

// TestChangeStreamRenameOntoWatched renames a collection onto a watched
// one with dropTarget: the target's stream sees the rename and is
// invalidated, as the source's is; the database and cluster streams see
// the rename only.
func TestChangeStreamRenameOntoWatched(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	for _, c := range []string{"src", "dst"} {
		if _, err := db.Collection(c).InsertOne(ctx, bson.D{{Key: "_id", Value: c}}); err != nil {
			t.Fatal(err)
		}
	}
	short := options.ChangeStream().SetMaxAwaitTime(50 * time.Millisecond)
	src := mustWatch(t, db.Collection("src"), nil, short)
	dst := mustWatch(t, db.Collection("dst"), nil, short)
	dbs := mustWatch(t, db, nil, short)
	all := mustWatch(t, client, nil, short)
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.src"}, {Key: "to", Value: "test.dst"}, {Key: "dropTarget", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string]*mongo.ChangeStream{"source": src, "target": dst} {
		evs := eventsOf(t, cs, 2)
		if evs[0]["operationType"] != "rename" || nsOf(evs[0]) != "test.src" || evs[0]["to"].(bson.M)["coll"] != "dst" || evs[1]["operationType"] != "invalidate" {
			t.Fatalf("%s stream saw %v", name, evs)
		}
	}
	for name, cs := range map[string]*mongo.ChangeStream{"database": dbs, "cluster": all} {
		ev := nextEvent(t, cs)
		if ev["operationType"] != "rename" || nsOf(ev) != "test.src" {
			t.Fatalf("%s stream saw %v", name, ev)
		}
		noEvent(t, cs)
	}
}

// TestChangeStreamRenameAcrossDatabases renames into another database
// onto a watched collection: as mongod, which copies into a temporary
// collection of the target database and renames that, the target side
// sees a rename from "tmpXXXXX.renameCollection" and the source side the
// drop of the source.
func TestChangeStreamRenameAcrossDatabases(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	sdb, ddb := client.Database("srcdb"), client.Database("dstdb")
	if _, err := sdb.Collection("source").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.Collection("target").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	short := options.ChangeStream().SetMaxAwaitTime(50 * time.Millisecond)
	srcColl := mustWatch(t, sdb.Collection("source"), nil, short)
	dstColl := mustWatch(t, ddb.Collection("target"), nil, short)
	srcDB := mustWatch(t, sdb, nil, short)
	dstDB := mustWatch(t, ddb, nil, short)
	all := mustWatch(t, client, nil, short)
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "srcdb.source"}, {Key: "to", Value: "dstdb.target"}, {Key: "dropTarget", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	tmp := regexp.MustCompile(`^dstdb\.tmp[a-zA-Z0-9]{5}\.renameCollection$`)
	wantRename := func(name string, ev bson.M) {
		t.Helper()
		if ev["operationType"] != "rename" || !tmp.MatchString(nsOf(ev)) || ev["to"].(bson.M)["db"] != "dstdb" || ev["to"].(bson.M)["coll"] != "target" {
			t.Fatalf("%s stream: %v", name, ev)
		}
	}
	wantDrop := func(name string, ev bson.M) {
		t.Helper()
		if ev["operationType"] != "drop" || nsOf(ev) != "srcdb.source" {
			t.Fatalf("%s stream: %v", name, ev)
		}
	}
	evs := eventsOf(t, dstColl, 2)
	wantRename("target collection", evs[0])
	wantType(t, evs[1], "invalidate")
	evs = eventsOf(t, srcColl, 2)
	wantDrop("source collection", evs[0])
	wantType(t, evs[1], "invalidate")
	wantRename("target database", nextEvent(t, dstDB))
	noEvent(t, dstDB)
	wantDrop("source database", nextEvent(t, srcDB))
	noEvent(t, srcDB)
	evs = eventsOf(t, all, 2)
	wantRename("cluster", evs[0])
	wantDrop("cluster", evs[1])
	if evs[0]["_id"].(bson.M)["_data"] == evs[1]["_id"].(bson.M)["_data"] {
		t.Fatal("the rename and the drop share a resume token")
	}
	// Resuming after the rename gives the drop.
	resumed := mustWatch(t, client, nil, options.ChangeStream().SetResumeAfter(evs[0]["_id"]))
	wantDrop("resumed cluster", nextEvent(t, resumed))
}

// TestChangeStreamOutOntoWatched runs $out onto a watched collection,
// which renames its temporary collection onto it: the stream sees the
// rename, then the invalidate, as mongod's metadata notifications test
// expects.
func TestChangeStreamOutOntoWatched(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("in").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("out").InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, db.Collection("out"), nil)
	cur, err := db.Collection("in").Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "out"}}})
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	ev := nextEvent(t, cs)
	if ev["operationType"] != "rename" || ev["to"].(bson.M)["coll"] != "out" {
		t.Fatalf("$out onto the watched collection: %v", ev)
	}
	wantType(t, nextEvent(t, cs), "invalidate")
}

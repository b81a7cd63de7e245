package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// oplogEntries returns the oplog entries of namespace prefix db after ts.
func oplogEntries(t *testing.T, client *mongo.Client, db string, after bson.Timestamp) []bson.M {
	t.Helper()
	ctx := ctxT(t)
	cur, err := client.Database("local").Collection("oplog.rs").Find(ctx, bson.D{
		{Key: "ts", Value: bson.D{{Key: "$gt", Value: after}}},
		{Key: "ns", Value: bson.D{{Key: "$regex", Value: "^" + db + `\.`}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.M
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// operationTime runs ping and returns the reply's operationTime.
func operationTime(t *testing.T, db *mongo.Database) bson.Timestamp {
	t.Helper()
	var r struct {
		OperationTime bson.Timestamp `bson:"operationTime"`
	}
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "ping", Value: 1}}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.OperationTime
}

// TestOplogRecordsEveryWrite writes with each kind of operation and reads
// the entries back from local.oplog.rs with find.
func TestOplogRecordsEveryWrite(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	start := operationTime(t, db)
	c := db.Collection("op")
	if err := db.CreateCollection(ctx, "op"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "c", Value: 1}, {Key: "d", Value: 2}}}, {Key: "arr", Value: bson.A{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "a", Value: 2}, {Key: "b.c", Value: 5}, {Key: "n", Value: "new"}}},
		{Key: "$unset", Value: bson.D{{Key: "b.d", Value: ""}}},
		{Key: "$pop", Value: bson.D{{Key: "arr", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "z", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Indexes().DropOne(ctx, "x_1"); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.op"}, {Key: "to", Value: "test.op2"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("op2").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	end := operationTime(t, db)
	got := oplogEntries(t, client, "test", start)
	want := []struct{ op, o string }{
		{"c", `{"create":"op","idIndex":{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}}`},
		{"i", `{"_id":{"$numberInt":"1"},"a":{"$numberInt":"1"},"b":{"c":{"$numberInt":"1"},"d":{"$numberInt":"2"}},"arr":[{"$numberInt":"1"},{"$numberInt":"2"},{"$numberInt":"3"}]}`},
		{"u", `{"$v":{"$numberInt":"2"},"diff":{"u":{"a":{"$numberInt":"2"}},"i":{"n":"new"},"sb":{"d":{"d":false},"u":{"c":{"$numberInt":"5"}}},"sarr":{"a":true,"l":{"$numberInt":"2"}}}}`},
		{"u", `{"_id":{"$numberInt":"1"},"z":{"$numberInt":"1"}}`},
		{"d", `{"_id":{"$numberInt":"1"}}`},
		{"c", `{"createIndexes":"op","v":{"$numberInt":"2"},"key":{"x":{"$numberInt":"1"}},"name":"x_1"}`},
		{"c", `{"dropIndexes":"op","index":"x_1"}`},
		{"c", `{"renameCollection":"test.op","to":"test.op2","stayTemp":false}`},
		{"c", `{"drop":"op2"}`},
		{"c", `{"create":"op","idIndex":{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}}`},
		{"i", `{"_id":{"$numberInt":"2"}}`},
		{"c", `{"drop":"op"}`},
		{"c", `{"dropDatabase":{"$numberInt":"1"}}`},
	}
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("%v", e)
		}
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	var prev bson.Timestamp
	for i, e := range got {
		o, _ := bson.MarshalExtJSON(e["o"], true, false)
		if e["op"] != want[i].op || string(o) != want[i].o {
			t.Errorf("entry %d: op %v o %s, want %s %s", i, e["op"], o, want[i].op, want[i].o)
		}
		ts := e["ts"].(bson.Timestamp)
		if !prev.Before(ts) {
			t.Errorf("entry %d: ts %v not after %v", i, ts, prev)
		}
		if end.Before(ts) {
			t.Errorf("entry %d: ts %v after the operationTime %v that followed it", i, ts, end)
		}
		prev = ts
		if e["v"] != int64(2) || e["t"] != int64(1) {
			t.Errorf("entry %d: v %v t %v", i, e["v"], e["t"])
		}
		if _, ok := e["wall"].(bson.DateTime); !ok {
			t.Errorf("entry %d: wall %T", i, e["wall"])
		}
	}
}

// TestOplogListedAsCapped checks that local lists oplog.rs as a capped
// collection.
func TestOplogListedAsCapped(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	specs, err := db.Client().Database("local").ListCollectionSpecifications(ctx, bson.D{}, options.ListCollections())
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Name != "oplog.rs" {
		t.Fatalf("local collections = %+v", specs)
	}
	if capped, _ := specs[0].Options.Lookup("capped").BooleanOK(); !capped {
		t.Fatalf("options = %v", specs[0].Options)
	}
}

// TestReplSetResizeOplog checks the resize command's bounds.
func TestReplSetResizeOplog(t *testing.T) {
	_, db := newDB(t)
	admin := db.Client().Database("admin")
	ctx := ctxT(t)
	err := admin.RunCommand(ctx, bson.D{{Key: "replSetResizeOplog", Value: 1}, {Key: "size", Value: 500.0}}).Err()
	wantCode(t, err, 72, "InvalidOptions")
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetResizeOplog", Value: 1}, {Key: "size", Value: 2000.0}}).Err(); err != nil {
		t.Fatal(err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "replSetResizeOplog", Value: 1}, {Key: "size", Value: 2000.0}}).Err()
	wantCode(t, err, 13, "Unauthorized")
	// minRetentionHours keeps entries past the size; negative is refused.
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetResizeOplog", Value: 1}, {Key: "minRetentionHours", Value: 1.5}}).Err(); err != nil {
		t.Fatal(err)
	}
	err = admin.RunCommand(ctx, bson.D{{Key: "replSetResizeOplog", Value: 1}, {Key: "minRetentionHours", Value: -1.0}}).Err()
	wantCode(t, err, 2, "BadValue")
}

package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestTop(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	coll := db.Collection("topc")
	for i := 0; i < 3; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "i", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	coll.FindOne(ctx, bson.D{})
	coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	coll.DeleteOne(ctx, bson.D{})
	var res struct {
		Totals bson.Raw
	}
	if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "top", Value: 1}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	ns, ok := res.Totals.Lookup("test.topc").DocumentOK()
	if !ok {
		t.Fatalf("no test.topc in %v", res.Totals)
	}
	count := func(k string) int64 { return ns.Lookup(k, "count").AsInt64() }
	if count("insert") != 3 || count("queries") != 1 || count("update") != 1 || count("remove") != 1 || count("total") < 6 {
		t.Fatalf("top: %v", ns)
	}
	if count("writeLock") != 5 || count("readLock") < 1 {
		t.Fatalf("locks: %v", ns)
	}
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "top", Value: 1}}).Err(), 13, "Unauthorized")
}

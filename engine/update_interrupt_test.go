package engine_test

import (
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestLongUpdateHonoursMaxTimeMS is issue 13's stall: a $set of 200k
// fields ran to its end under the write lock whatever maxTimeMS said. The
// update stops with MaxTimeMSExpired (50) and leaves the document as it
// was.
func TestLongUpdateHonoursMaxTimeMS(t *testing.T) {
	edb, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	set := make(bson.D, 0, 200_000)
	for i := range 200_000 {
		set = append(set, bson.E{Key: "f" + strconv.Itoa(i), Value: int32(i)})
	}
	// A raw connection: the driver would replace maxTimeMS by its
	// context's deadline.
	res := dialRaw(t, edb).run(bson.D{
		{Key: "update", Value: "c"},
		{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: set}}}}}},
		{Key: "maxTimeMS", Value: int32(1)},
		{Key: "$db", Value: "test"},
	})
	code, _ := res.Lookup("code").AsInt64OK()
	if we, err := res.LookupErr("writeErrors"); err == nil {
		vals, _ := we.Array().Values()
		if len(vals) > 0 {
			code = bson.Raw(vals[0].Document()).Lookup("code").AsInt64()
		}
	}
	if code != 50 {
		t.Fatalf("reply %v, want MaxTimeMSExpired", res)
	}
	var got bson.Raw
	if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if elems, _ := got.Elements(); len(elems) != 1 {
		t.Errorf("document changed: %d fields", len(elems))
	}
}
